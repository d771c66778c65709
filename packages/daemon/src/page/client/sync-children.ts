/**
 * Makes `parent`'s children exactly `nodes`, in order, moving as little as it can: nodes that stay
 * are left where they are when already in place (a moved frame would load again, a moved editor
 * lose its focus), the others are inserted or moved, the rest removed.
 */
export function syncChildren(parent: Element, nodes: readonly Node[]): void {
  const wanted = new Set(nodes);
  for (const child of [...parent.childNodes]) if (!wanted.has(child)) child.remove();
  nodes.forEach((node, index) => {
    const at = parent.childNodes[index] ?? null;
    if (at !== node) parent.insertBefore(node, at);
  });
}
