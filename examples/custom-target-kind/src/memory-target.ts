/** The kind this plugin owns (dotted: a contributed kind never collides with core's). */
export const memoryKind = 'acme.memory';

/** `memory:<name>` as agents and the handoff write it. */
export const memoryScheme = 'memory:';

/** A notebook the plugin keeps in memory, by name. */
export interface MemoryTarget {
  readonly kind: typeof memoryKind;
  /** The notebook's name (`scratch`): every connection to it reaches the same notebook. */
  readonly name: string;
}

/** Narrows a target to this plugin's kind. */
export function isMemoryTarget(target: { readonly kind: string }): target is MemoryTarget {
  return target.kind === memoryKind;
}
