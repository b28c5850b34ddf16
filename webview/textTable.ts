/**
 * Text alternatives: every view carries a table of the same numbers behind a
 * toggle button. Tables are built lazily on first open (a 20,000-event
 * timeline should not pay for its table unless someone asks for it).
 */
import { clear, el } from './dom';
import { createButton } from './toolkit';

export interface TableSpec {
  caption: string;
  columns: string[];
  rows: Array<Array<string | number>>;
}

export function renderTable(spec: TableSpec): HTMLTableElement {
  const table = el('table', { class: 'wap-table' });
  table.append(el('caption', {}, spec.caption));
  const head = el('tr');
  for (const c of spec.columns) head.append(el('th', { scope: 'col' }, c));
  table.append(el('thead', {}, head));
  const body = el('tbody');
  const frag = document.createDocumentFragment();
  for (const r of spec.rows) {
    const tr = el('tr');
    r.forEach((v, i) => tr.append(i === 0 ? el('th', { scope: 'row' }, String(v)) : el('td', {}, String(v))));
    frag.append(tr);
  }
  body.append(frag);
  table.append(body);
  return table;
}

/** A toggle button plus a region that shows the tables produced by `build` when opened. */
export class TableToggle {
  readonly button: HTMLElement;
  readonly region: HTMLElement;
  private open = false;
  private build: () => TableSpec[] = () => [];

  constructor(id: string, label: string) {
    this.region = el('div', { class: 'wap-table-region', id: `${id}-table`, hidden: true });
    this.button = createButton(`Show ${label} as table`, 'secondary');
    this.button.setAttribute('aria-controls', this.region.id);
    this.button.setAttribute('aria-expanded', 'false');
    this.button.classList.add('table-toggle');
    this.button.addEventListener('click', () => this.setOpen(!this.open, label));
  }

  setContent(build: () => TableSpec[]): void {
    this.build = build;
    if (this.open) this.fill();
  }

  private setOpen(open: boolean, label: string): void {
    this.open = open;
    this.region.hidden = !open;
    this.button.setAttribute('aria-expanded', String(open));
    this.button.textContent = `${open ? 'Hide' : 'Show'} ${label} as table`;
    if (open) this.fill();
    else clear(this.region);
  }

  private fill(): void {
    clear(this.region);
    for (const spec of this.build()) this.region.append(renderTable(spec));
  }
}
