/** Properties of a new element: its own fields (`className`, `textContent`, `title`, …) and `data-*` / ARIA attributes. */
export type ElementProps<K extends keyof HTMLElementTagNameMap> = Partial<
  Omit<HTMLElementTagNameMap[K], 'style' | 'dataset' | 'attributes'>
> & {
  readonly attrs?: Readonly<Record<string, string>>;
};

/**
 * A new element with `props` and `children`. Text is always set as text (`textContent`, text
 * nodes), never parsed as HTML: notebook content reaches the page only this way, or sanitised
 * (markdown), or inside a sandboxed frame (HTML outputs).
 */
export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: ElementProps<K> = {},
  children: readonly (Node | string)[] = [],
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  const { attrs, ...fields } = props;
  Object.assign(node, fields);
  for (const [name, value] of Object.entries(attrs ?? {})) node.setAttribute(name, value);
  node.append(...children);
  return node;
}

const svgNamespace = 'http://www.w3.org/2000/svg';

/** The icons of the page's buttons: one or more SVG paths on a 16×16 grid, drawn with the text colour. */
const iconPaths = {
  run: ['M4.5 2.8v10.4a.6.6 0 0 0 .9.5l8.3-5.2a.6.6 0 0 0 0-1L5.4 2.3a.6.6 0 0 0-.9.5z'],
  stop: ['M3.5 3.5h9v9h-9z'],
  up: ['M8 3.2 3.6 7.6l.9.9L7.4 5.6V13h1.2V5.6l2.9 2.9.9-.9z'],
  down: ['M8 12.8l4.4-4.4-.9-.9-2.9 2.9V3H7.4v7.4L4.5 7.5l-.9.9z'],
  add: ['M7.4 2.5h1.2v4.9h4.9v1.2H8.6v4.9H7.4V8.6H2.5V7.4h4.9z'],
  delete: ['M6 1.8h4v1.4H6z', 'M2.5 3.5h11v1.3h-11z', 'M4 5.6h8l-.7 8.6H4.7z'],
  edit: [
    'M11.3 2.2a1 1 0 0 1 1.4 0l1.1 1.1a1 1 0 0 1 0 1.4L6.3 12.2 3 13l.8-3.3zM10.6 4.4 5 10l-.3 1.3 1.3-.3 5.6-5.6z',
  ],
  back: ['M9.8 3.2 5 8l4.8 4.8.9-.9L6.8 8l3.9-3.9z'],
} as const;

export type IconName = keyof typeof iconPaths;

/** An inline SVG icon (no image request, nothing inline for the CSP to refuse). */
export function icon(name: IconName): SVGSVGElement {
  const svg = document.createElementNS(svgNamespace, 'svg');
  svg.setAttribute('viewBox', '0 0 16 16');
  svg.setAttribute('aria-hidden', 'true');
  svg.setAttribute('class', 'icon');
  for (const d of iconPaths[name]) {
    const path = document.createElementNS(svgNamespace, 'path');
    path.setAttribute('d', d);
    path.setAttribute('fill', 'currentColor');
    path.setAttribute('fill-rule', 'evenodd');
    svg.append(path);
  }
  return svg;
}
