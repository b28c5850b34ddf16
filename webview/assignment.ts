/**
 * Device-assignment view: one row per layer in model order, one column per
 * GPU, cells coloured by strategy (pipeline stages alternate two shades and
 * are labelled S0, S1, …), and a stacked bar of the layer's time per
 * iteration in the timeline's event-kind colours. The two colour sets are
 * disjoint (see media/webview.css) and each has its own legend. Rows are keyboard
 * reachable with a roving tabindex; click or Enter reveals the source line.
 */
import { max } from 'd3-array';
import { select } from 'd3-selection';
import type { LayerPlan, PlanReport } from '../src/protocol/plan';
import { clear, el } from './dom';
import { fmtBytes, fmtDevices, fmtMs } from './format';
import { layerFacts, layerTotalMs, strategyLabel } from './layerFacts';
import { KIND_LABEL } from './theme';
import { TableToggle, type TableSpec } from './textTable';
import { hideTooltip, showTooltip, showTooltipFor } from './tooltip';

export interface AssignmentCallbacks {
  reveal(layer: LayerPlan): void;
}

/** Time-bar segments: the same kinds, labels and colour classes as the timeline's events. */
const SEGMENTS: Array<{ key: 'forwardMs' | 'backwardMs' | 'allreduceMs' | 'transferMs'; kind: 'forward' | 'backward' | 'allreduce' | 'transfer' }> = [
  { key: 'forwardMs', kind: 'forward' },
  { key: 'backwardMs', kind: 'backward' },
  { key: 'allreduceMs', kind: 'allreduce' },
  { key: 'transferMs', kind: 'transfer' },
];

function cellLabel(l: LayerPlan, device: number): string {
  const i = l.devices.indexOf(device);
  switch (l.strategy) {
    case 'data':
      return 'D';
    case 'model':
      return `M${i}`;
    case 'hybrid':
      return 'H';
    case 'pipeline':
      return `S${l.stage}`;
  }
}

function strategyClass(l: LayerPlan): string {
  return l.strategy === 'pipeline' ? `pipeline stage-${l.stage % 6}` : l.strategy;
}

export class AssignmentView {
  readonly root: HTMLElement;
  private readonly grid: HTMLElement;
  private readonly empty: HTMLElement;
  private readonly table = new TableToggle('assignment', 'device assignment');
  private layers: LayerPlan[] = [];
  private focusIndex = 0;

  constructor(private readonly callbacks: AssignmentCallbacks) {
    this.grid = el('div', { class: 'as-grid', role: 'grid', 'aria-label': 'Device assignment: one row per layer, one column per GPU', 'aria-readonly': 'true' });
    this.empty = el('p', { class: 'empty', hidden: true });
    this.root = el(
      'section',
      { class: 'view', id: 'assignment-view', 'aria-labelledby': 'assignment-title' },
      el('div', { class: 'view-head' }, el('h2', { id: 'assignment-title' }, 'Device assignment'), this.legend(), this.timeLegend(), this.table.button),
      this.empty,
      el('div', { class: 'as-scroll' }, this.grid),
      this.table.region,
    );
    this.grid.addEventListener('keydown', (e) => this.onKey(e));
  }

  private legend(): HTMLElement {
    const items: Array<[string, string]> = [
      ['data', 'data parallel'],
      ['model', 'model parallel'],
      ['hybrid', 'hybrid'],
      ['pipeline stage-0', 'pipeline stages'],
    ];
    return el(
      'ul',
      { class: 'legend as-strategy-legend', 'aria-label': 'Strategy colours (GPU cells)' },
      el('li', { class: 'legend-title', 'aria-hidden': 'true' }, 'GPU cells:'),
      ...items.map(([cls, label]) => el('li', { 'data-strategy': cls.split(' ')[0] }, el('span', { class: `swatch as-cell-fill ${cls}` }), label)),
    );
  }

  /** The time bar's colours, drawn with the timeline legend's swatch classes so the two cannot drift apart. */
  private timeLegend(): HTMLElement {
    return el(
      'ul',
      { class: 'legend as-time-legend', 'aria-label': 'Time bar colours' },
      el('li', { class: 'legend-title', 'aria-hidden': 'true' }, 'Time bar:'),
      ...SEGMENTS.map((s) => el('li', { 'data-kind': s.kind }, el('span', { class: `swatch bar kind-${s.kind}` }), KIND_LABEL[s.kind])),
    );
  }

  showEmpty(message: string): void {
    this.layers = [];
    clear(this.grid);
    this.empty.textContent = message;
    this.empty.hidden = false;
    this.table.setContent(() => []);
  }

  update(report: PlanReport): void {
    this.empty.hidden = true;
    const gpus = report.plan.gpus;
    this.layers = report.plan.layers;
    this.grid.style.setProperty('--gpus', String(gpus));
    this.grid.setAttribute('aria-rowcount', String(this.layers.length + 2));
    this.grid.setAttribute('aria-colcount', String(gpus + 3));
    const maxMs = max(this.layers, layerTotalMs) || 1;
    const gpuIdx = Array.from({ length: gpus }, (_, i) => i);

    const grid = select(this.grid);
    grid
      .selectAll<HTMLElement, null>('div.as-head')
      .data([null])
      .join((enter) => enter.append('div').attr('class', 'as-head').attr('role', 'row'))
      .each(function () {
        clear(this);
        this.append(el('span', { role: 'columnheader', class: 'as-name-head' }, 'Layer'), el('span', { role: 'columnheader', class: 'as-strategy-head' }, 'Strategy'));
        for (const g of gpuIdx) this.append(el('span', { role: 'columnheader', class: 'as-gpu-head', title: report.cluster.gpuNames[g] ?? `GPU ${g}` }, String(g)));
        this.append(el('span', { role: 'columnheader' }, 'Time / iteration'));
      });

    const self = this;
    grid
      .selectAll<HTMLElement, LayerPlan>('div.as-row')
      .data(this.layers, (d) => d.name)
      .join((enter) => enter.append('div').attr('class', 'as-row').attr('role', 'row'))
      .order()
      .each(function (l, i) {
        self.fillRow(this, l, i, gpuIdx, maxMs);
      });

    grid
      .selectAll<HTMLElement, null>('div.as-foot')
      .data([null])
      .join((enter) => enter.append('div').attr('class', 'as-foot').attr('role', 'row'))
      .raise()
      .each(function () {
        clear(this);
        this.append(el('span', { role: 'rowheader', class: 'as-name-head' }, 'Memory / GPU'), el('span', { role: 'cell', class: 'as-strategy-head' }, ''));
        for (const g of gpuIdx) {
          const b = report.plan.memoryPerGpuBytes[g] ?? 0;
          this.append(el('span', { role: 'cell', class: 'as-mem', title: `GPU ${g}: ${fmtBytes(b)}` }, (b / 1e9).toFixed(1)));
        }
        this.append(el('span', { role: 'cell', class: 'as-mem-note' }, 'GB per GPU (weights, optimizer state, activations)'));
      });

    this.focusIndex = Math.min(this.focusIndex, Math.max(0, this.layers.length - 1));
    this.setRoving(this.focusIndex, false);
    this.table.setContent(() => [this.tableSpec(report)]);
  }

  private fillRow(row: HTMLElement, l: LayerPlan, index: number, gpuIdx: number[], maxMs: number): void {
    clear(row);
    const total = layerTotalMs(l);
    row.dataset.layer = l.name;
    row.dataset.line = String(l.line);
    row.dataset.index = String(index);
    row.dataset.strategy = l.strategy;
    row.setAttribute('aria-rowindex', String(index + 2));
    row.setAttribute('aria-label', `${l.name}, line ${l.line}: ${strategyLabel(l)}, ${fmtDevices(l.devices)}, ${fmtMs(total)} per iteration`);
    row.append(
      el(
        'span',
        { role: 'rowheader', class: 'as-name' },
        el('span', { class: 'as-layer' }, l.name),
        el('span', { class: 'as-type' }, `${l.type} · L${l.line}`),
        // Shown instead of the Strategy column when the view is too narrow for it (see media/webview.css).
        el('span', { class: 'as-strategy-inline', 'aria-hidden': 'true' }, strategyLabel(l)),
      ),
      el('span', { role: 'cell', class: 'as-strategy' }, strategyLabel(l)),
    );
    const cls = strategyClass(l);
    for (const g of gpuIdx) {
      const on = l.devices.includes(g);
      row.append(
        el('span', { role: 'cell', class: on ? `as-cell as-cell-fill ${cls}` : 'as-cell', 'data-gpu': g, 'aria-label': on ? `GPU ${g}: ${cellLabel(l, g)}` : `GPU ${g}: idle` }, on ? cellLabel(l, g) : ''),
      );
    }
    const bar = el('span', { class: 'as-bar' });
    for (const s of SEGMENTS) {
      const v = l[s.key];
      if (v <= 0) continue;
      const seg = el('span', { class: `seg ${s.kind}`, 'data-kind': s.kind });
      seg.style.setProperty('width', `${(v / maxMs) * 100}%`);
      bar.append(seg);
    }
    row.append(el('span', { role: 'cell', class: 'as-time' }, bar, el('span', { class: 'as-ms' }, fmtMs(total))));
  }

  private rows(): HTMLElement[] {
    return Array.from(this.grid.querySelectorAll<HTMLElement>('div.as-row'));
  }

  private setRoving(index: number, focus: boolean): void {
    const rows = this.rows();
    if (rows.length === 0) return;
    this.focusIndex = Math.max(0, Math.min(rows.length - 1, index));
    rows.forEach((r, i) => r.setAttribute('tabindex', i === this.focusIndex ? '0' : '-1'));
    if (focus) rows[this.focusIndex].focus();
  }

  private onKey(e: KeyboardEvent): void {
    const row = (e.target as HTMLElement).closest<HTMLElement>('div.as-row');
    if (!row) return;
    const i = Number(row.dataset.index);
    const moves: Record<string, number> = { ArrowDown: i + 1, ArrowUp: i - 1, Home: 0, End: this.layers.length - 1, PageDown: i + 10, PageUp: i - 10 };
    if (e.key in moves) {
      e.preventDefault();
      this.setRoving(moves[e.key], true);
    } else if (e.key === 'Enter' || e.key === ' ') {
      e.preventDefault();
      this.callbacks.reveal(this.layers[i]);
    } else if (e.key === 'Escape') hideTooltip();
  }

  /** Pointer and focus handlers are delegated once on the grid. */
  wire(): void {
    const layerOf = (t: EventTarget | null): { row: HTMLElement; layer: LayerPlan } | undefined => {
      const row = (t as HTMLElement | null)?.closest?.<HTMLElement>('div.as-row');
      if (!row) return undefined;
      const layer = this.layers[Number(row.dataset.index)];
      return layer ? { row, layer } : undefined;
    };
    this.grid.addEventListener('click', (e) => {
      const hit = layerOf(e.target);
      if (!hit) return;
      this.setRoving(Number(hit.row.dataset.index), true);
      this.callbacks.reveal(hit.layer);
    });
    this.grid.addEventListener('mousemove', (e) => {
      const hit = layerOf(e.target);
      if (hit) showTooltip(`${hit.layer.name} (line ${hit.layer.line})`, layerFacts(hit.layer), { x: e.clientX, y: e.clientY });
      else hideTooltip();
    });
    this.grid.addEventListener('mouseleave', hideTooltip);
    this.grid.addEventListener('focusin', (e) => {
      const hit = layerOf(e.target);
      if (!hit) return;
      this.focusIndex = Number(hit.row.dataset.index);
      showTooltipFor(hit.row, `${hit.layer.name} (line ${hit.layer.line})`, layerFacts(hit.layer));
    });
    this.grid.addEventListener('focusout', hideTooltip);
  }

  private tableSpec(report: PlanReport): TableSpec {
    return {
      caption: `Device assignment of ${report.model} on ${report.plan.gpus} GPUs`,
      columns: ['Layer', 'Line', 'Type', 'Strategy', 'Devices', 'Forward', 'Backward', 'All-reduce', 'Transfer', 'Parameters', 'Activations', 'Memory / GPU', 'Cost source', 'Why'],
      rows: report.plan.layers.map((l) => [
        l.name,
        l.line,
        l.type,
        strategyLabel(l),
        fmtDevices(l.devices),
        fmtMs(l.forwardMs),
        fmtMs(l.backwardMs),
        l.allreduceBytes > 0 ? `${fmtBytes(l.allreduceBytes)} / ${fmtMs(l.allreduceMs)}` : 'none',
        fmtMs(l.transferMs),
        l.params,
        fmtBytes(l.activationBytes),
        fmtBytes(l.memoryBytesPerGpu),
        l.costSource.kind,
        l.reason,
      ]),
    };
  }
}
