/**
 * Tiny DOM helpers. Every piece of plan data enters the page through
 * textContent or setAttribute, never through innerHTML, so a layer named
 * `<img onerror=…>` stays text.
 */
export type Attrs = Record<string, string | number | boolean | undefined>;

export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Attrs = {},
  ...children: Array<Node | string | null | undefined>
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === false) continue;
    node.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children) if (c !== null && c !== undefined) node.append(c);
  return node;
}

const SVG_NS = 'http://www.w3.org/2000/svg';
export function svgEl<K extends keyof SVGElementTagNameMap>(tag: K, attrs: Attrs = {}): SVGElementTagNameMap[K] {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs)) if (v !== undefined && v !== false) node.setAttribute(k, String(v));
  return node;
}

export function clear(node: Element): void {
  while (node.firstChild) node.removeChild(node.firstChild);
}

/** A definition list of facts (label → value), used by tooltips and hovers. */
export function factList(facts: Array<[string, string]>): HTMLElement {
  const dl = el('dl', { class: 'facts' });
  for (const [k, v] of facts) dl.append(el('dt', {}, k), el('dd', {}, v));
  return dl;
}
