/**
 * One shared tooltip for all views. Content is built from DOM nodes
 * (textContent), positioned near the pointer or the focused element and
 * kept inside the viewport.
 */
import { clear, el, factList } from './dom';

let tip: HTMLElement | null = null;

function node(): HTMLElement {
  if (!tip) {
    tip = el('div', { class: 'wap-tooltip', role: 'tooltip', id: 'wap-tooltip', hidden: true });
    document.body.append(tip);
  }
  return tip;
}

export function showTooltip(title: string, facts: Array<[string, string]>, at: { x: number; y: number }): void {
  const t = node();
  clear(t);
  t.append(el('div', { class: 'wap-tooltip-title' }, title), factList(facts));
  t.hidden = false;
  const pad = 12;
  const w = t.offsetWidth;
  const h = t.offsetHeight;
  let x = at.x + pad;
  let y = at.y + pad;
  if (x + w > window.innerWidth - 4) x = Math.max(4, at.x - w - pad);
  if (y + h > window.innerHeight - 4) y = Math.max(4, at.y - h - pad);
  t.style.left = `${x}px`;
  t.style.top = `${y}px`;
}

export function showTooltipFor(target: Element, title: string, facts: Array<[string, string]>): void {
  const r = target.getBoundingClientRect();
  showTooltip(title, facts, { x: r.left + Math.min(r.width, 240), y: r.bottom - 6 });
}

export function hideTooltip(): void {
  if (tip) tip.hidden = true;
}
