/**
 * Timeline view: a Gantt chart of one simulated training iteration, one lane
 * per GPU plus one per link. Bars are painted on a canvas (20,000 events
 * redraw within a frame); lanes, axis, legend and the text table are DOM/SVG.
 * Zoom and pan with d3-zoom (wheel, drag, or +/−/arrow keys on the focused chart).
 */
import { axisTop } from 'd3-axis';
import { scaleLinear, type ScaleLinear } from 'd3-scale';
import { select, type Selection } from 'd3-selection';
import { zoom, zoomIdentity, type D3ZoomEvent, type ZoomBehavior, type ZoomTransform } from 'd3-zoom';
import type { PlanReport, TimelineEvent } from '../src/protocol/plan';
import { clear, el, svgEl } from './dom';
import { fmtBytes, fmtDevices, fmtMs } from './format';
import { KIND_LABEL, KINDS, readPalette, type Palette } from './theme';
import type { TimelineKind } from '../src/protocol/plan';

const ALWAYS_LISTED: ReadonlySet<TimelineKind> = new Set(['forward', 'backward', 'allreduce', 'transfer', 'update']);
import { createButton, createCheckbox, isChecked, onChange } from './toolkit';
import { drawTimeline, type LaneBox } from './timelineDraw';
import { buildTimeline, hitTest, type TimelineModel } from './timelineModel';
import { TableToggle, type TableSpec } from './textTable';
import { hideTooltip, showTooltip } from './tooltip';

const AXIS_H = 24;
const LABEL_W = 150;

export interface TimelineCallbacks {
  reveal(layerName: string): void;
}

function eventFacts(e: TimelineEvent): Array<[string, string]> {
  const f: Array<[string, string]> = [
    ['Kind', KIND_LABEL[e.kind] ?? e.kind],
    ['Lane', e.lane],
    ['Start', fmtMs(e.startMs)],
    ['End', fmtMs(e.endMs)],
    ['Duration', fmtMs(e.endMs - e.startMs)],
  ];
  if (e.bytes !== undefined) f.push(['Bytes', fmtBytes(e.bytes)]);
  if (e.devices?.length) f.push(['Devices', fmtDevices(e.devices)]);
  if (e.microBatch !== undefined) f.push(['Micro-batch', String(e.microBatch)]);
  f.push(['Critical path', e.critical ? 'yes' : 'no']);
  return f;
}

export class TimelineView {
  readonly root: HTMLElement;
  private readonly labels: HTMLElement;
  private readonly plot: HTMLElement;
  private readonly canvas: HTMLCanvasElement;
  private readonly axisSvg: SVGSVGElement;
  private readonly summary: HTMLElement;
  private readonly empty: HTMLElement;
  private readonly dimToggle: HTMLElement;
  private readonly table = new TableToggle('timeline', 'timeline');
  private readonly zoomer: ZoomBehavior<HTMLCanvasElement, unknown>;
  private readonly canvasSel: Selection<HTMLCanvasElement, unknown, null, undefined>;
  private model: TimelineModel | undefined;
  private boxes: LaneBox[] = [];
  private xBase: ScaleLinear<number, number> = scaleLinear();
  private x: ScaleLinear<number, number> = scaleLinear();
  private width = 0;
  private height = 0;
  private palette: Palette | undefined;
  /** Plot width from the last ResizeObserver report: reading clientWidth mid-update would force a layout. */
  private observedWidth = 0;

  constructor(private readonly callbacks: TimelineCallbacks) {
    this.labels = el('div', { class: 'tl-labels', role: 'list', 'aria-label': 'Lanes' });
    this.canvas = el('canvas', { class: 'tl-canvas', tabindex: 0, role: 'img' });
    this.axisSvg = svgEl('svg', { class: 'tl-axis', height: AXIS_H, 'aria-hidden': 'true' });
    this.plot = el('div', { class: 'tl-plot' }, this.axisSvg, this.canvas);
    this.summary = el('p', { class: 'view-summary' });
    this.empty = el('p', { class: 'empty', hidden: true });
    this.dimToggle = createCheckbox('tl-dim', 'Dim events off the critical path', false);
    const reset = createButton('Reset zoom', 'secondary');
    reset.addEventListener('click', () => this.canvasSel.call(this.zoomer.transform, zoomIdentity));
    onChange(this.dimToggle, () => this.redraw());
    this.root = el(
      'section',
      { class: 'view', id: 'timeline-view', 'aria-labelledby': 'timeline-title' },
      el('div', { class: 'view-head' }, el('h2', { id: 'timeline-title' }, 'Predicted timeline (one iteration)'), this.legend(), this.table.button),
      this.summary,
      this.empty,
      el('div', { class: 'tl-tools' }, this.dimToggle, reset, el('span', { class: 'hint' }, 'Wheel or +/− to zoom, drag or ←/→ to pan, 0 to reset.')),
      el('div', { class: 'tl-body' }, el('div', { class: 'tl-labels-col' }, el('div', { class: 'tl-axis-spacer' }), this.labels), this.plot),
      this.table.region,
    );
    this.canvasSel = select(this.canvas);
    this.zoomer = zoom<HTMLCanvasElement, unknown>()
      .scaleExtent([1, 1])
      .on('zoom', (e: D3ZoomEvent<HTMLCanvasElement, unknown>) => this.onZoom(e.transform));
    this.canvasSel.call(this.zoomer);
    this.wirePointer();
    new ResizeObserver((entries) => {
      this.observedWidth = entries[entries.length - 1].contentRect.width;
      this.resize();
    }).observe(this.plot);
  }

  private legend(): HTMLElement {
    const items = KINDS.map((k) => el('li', { 'data-kind': k }, el('span', { class: `swatch bar kind-${k}` }), KIND_LABEL[k]));
    items.push(el('li', {}, el('span', { class: 'swatch critical' }), 'critical path'));
    items.push(el('li', {}, el('span', { class: 'swatch idle' }), 'idle'));
    return el('ul', { class: 'legend', 'aria-label': 'Event colours' }, ...items);
  }

  showEmpty(message: string): void {
    this.model = undefined;
    this.empty.textContent = message;
    this.empty.hidden = false;
    this.summary.textContent = '';
    clear(this.labels);
    this.plot.hidden = true;
    this.table.setContent(() => []);
  }

  update(report: PlanReport): void {
    this.empty.hidden = true;
    this.plot.hidden = false;
    const model = buildTimeline(report.timeline, report.plan.gpus, report.plan.stepTimeMs);
    this.model = model;
    const laneH = model.lanes.length > 24 ? 14 : 24;
    let top = 0;
    this.boxes = model.lanes.map((l) => {
      const h = l.kind === 'gpu' ? laneH : Math.max(12, laneH - 6);
      const box = { top, height: h };
      top += h + 2;
      return box;
    });
    this.height = Math.max(top, 20);
    clear(this.labels);
    const span = model.endMs || 1;
    model.lanes.forEach((l, i) => {
      const busy = Math.min(100, (l.busyMs / span) * 100);
      const node = el(
        'div',
        { class: `tl-lane ${l.kind}`, role: 'listitem', 'data-lane': l.id, 'data-kind': l.kind, 'data-top': this.boxes[i].top, 'data-height': this.boxes[i].height, 'data-events': l.events.length },
        el('span', { class: 'tl-lane-name', title: l.label }, l.label),
        el('span', { class: 'tl-lane-busy', title: `${l.events.length} events, busy ${fmtMs(l.busyMs)} of ${fmtMs(span)}` }, l.kind === 'gpu' ? `${busy.toFixed(0)}% busy` : `${busy.toFixed(0)}%`),
      );
      node.style.setProperty('top', `${this.boxes[i].top}px`);
      node.style.setProperty('height', `${this.boxes[i].height}px`);
      this.labels.append(node);
    });
    this.labels.style.setProperty('height', `${this.height}px`);
    const gpuLanes = model.lanes.filter((l) => l.kind === 'gpu');
    const avgBusy = gpuLanes.length ? gpuLanes.reduce((a, l) => a + l.busyMs, 0) / gpuLanes.length / span : 0;
    this.summary.textContent = `${model.eventCount.toLocaleString('en-US')} events over ${fmtMs(model.endMs)} · GPUs busy ${(avgBusy * 100).toFixed(0)}% on average · ${model.criticalCount} events on the critical path`;
    this.canvas.dataset.events = String(model.eventCount);
    this.canvas.setAttribute(
      'aria-label',
      `Gantt chart: ${gpuLanes.length} GPU lanes and ${model.lanes.length - gpuLanes.length} link lanes, ${model.eventCount} events over ${fmtMs(model.endMs)}. Use the table toggle for the numbers.`,
    );
    this.table.setContent(() => this.tableSpecs(report));
    // Kinds beyond the classic five (ZeRO gathers, recompute, expert all-to-all) appear in the legend only when the plan has them.
    for (const item of Array.from(this.root.querySelectorAll<HTMLElement>('.legend li[data-kind]'))) {
      const kind = item.dataset.kind as TimelineKind;
      item.hidden = !ALWAYS_LISTED.has(kind) && !model.lanes.some((l) => l.counts[kind] > 0);
    }
    this.resize(true);
  }

  private resize(resetZoom = false): void {
    if (!this.model) return;
    const width = Math.max(100, Math.floor(this.observedWidth || this.plot.clientWidth));
    const dpr = window.devicePixelRatio || 1;
    const widthChanged = width !== this.width;
    this.width = width;
    // The backing store is device pixels (crisp at any zoom); assigning width/height reallocates and clears it, so only on change.
    const pxW = Math.round(width * dpr);
    const pxH = Math.round(this.height * dpr);
    if (this.canvas.width !== pxW) this.canvas.width = pxW;
    if (this.canvas.height !== pxH) this.canvas.height = pxH;
    this.canvas.style.setProperty('width', `${width}px`);
    this.canvas.style.setProperty('height', `${this.height}px`);
    this.axisSvg.setAttribute('width', String(width));
    const pad = this.model.endMs * 0.01;
    this.xBase = scaleLinear().domain([-pad, this.model.endMs + pad]).range([0, width]);
    const minWindowMs = 0.002;
    this.zoomer
      .scaleExtent([1, Math.max(10, (this.model.endMs + 2 * pad) / minWindowMs)])
      .extent([[0, 0], [width, this.height]])
      .translateExtent([[0, 0], [width, this.height]]);
    if (resetZoom || widthChanged) this.canvasSel.call(this.zoomer.transform, zoomIdentity);
    else this.redraw();
  }

  private onZoom(t: ZoomTransform): void {
    this.x = t.rescaleX(this.xBase);
    hideTooltip();
    this.redraw();
  }

  /** Repaints bars and axis for the current zoom; synchronous so a zoom step costs exactly one draw. */
  redraw(): void {
    if (!this.model || this.width === 0) return;
    const t0 = performance.now();
    this.palette = this.palette ?? readPalette();
    const ctx = this.canvas.getContext('2d');
    if (!ctx) return;
    const counts = drawTimeline({
      ctx,
      model: this.model,
      boxes: this.boxes,
      x: this.x,
      width: this.width,
      height: this.height,
      dpr: window.devicePixelRatio || 1,
      palette: this.palette,
      dimNonCritical: isChecked(this.dimToggle),
    });
    const axis = axisTop(this.x)
      .ticks(Math.max(2, Math.floor(this.width / 90)))
      .tickFormat((v) => fmtMs(Number(v)))
      .tickSizeOuter(0);
    let g = this.axisSvg.querySelector('g');
    if (!g) this.axisSvg.append((g = svgEl('g', { transform: `translate(0,${AXIS_H - 1})` })));
    select(g as SVGGElement).call(axis);
    const [d0, d1] = this.x.domain();
    const ds = this.canvas.dataset;
    ds.domainStart = String(d0);
    ds.domainEnd = String(d1);
    for (const k of KINDS) ds[`drawn${k[0].toUpperCase()}${k.slice(1)}`] = String(counts[k]);
    ds.drawnTotal = String(counts.total);
    ds.drawnCritical = String(counts.critical);
    ds.drawnRects = String(counts.rects);
    ds.lastDrawMs = (performance.now() - t0).toFixed(3);
  }

  /** Theme changed: re-read colours. */
  retheme(): void {
    this.palette = undefined;
    this.redraw();
  }

  private eventAt(clientX: number, clientY: number): TimelineEvent | undefined {
    if (!this.model) return undefined;
    const r = this.canvas.getBoundingClientRect();
    const px = clientX - r.left;
    const py = clientY - r.top;
    const i = this.boxes.findIndex((b) => py >= b.top && py < b.top + b.height);
    if (i < 0) return undefined;
    const tol = Math.abs(this.x.invert(3) - this.x.invert(0));
    return hitTest(this.model.lanes[i], this.x.invert(px), tol);
  }

  private wirePointer(): void {
    this.canvas.addEventListener('mousemove', (e) => {
      if (e.buttons) return;
      const ev = this.eventAt(e.clientX, e.clientY);
      this.canvas.classList.toggle('over-event', Boolean(ev));
      if (ev) showTooltip(ev.layer, eventFacts(ev), { x: e.clientX, y: e.clientY });
      else hideTooltip();
    });
    this.canvas.addEventListener('mouseleave', hideTooltip);
    this.canvas.addEventListener('click', (e) => {
      const ev = this.eventAt(e.clientX, e.clientY);
      if (ev) this.callbacks.reveal(ev.layer);
    });
    this.canvas.addEventListener('keydown', (e) => {
      const cx = this.width / 2;
      const step = this.width * 0.15;
      const actions: Record<string, () => void> = {
        '+': () => this.canvasSel.call(this.zoomer.scaleBy, 1.5, [cx, 0]),
        '=': () => this.canvasSel.call(this.zoomer.scaleBy, 1.5, [cx, 0]),
        '-': () => this.canvasSel.call(this.zoomer.scaleBy, 1 / 1.5, [cx, 0]),
        ArrowLeft: () => this.canvasSel.call(this.zoomer.translateBy, step / this.currentK(), 0),
        ArrowRight: () => this.canvasSel.call(this.zoomer.translateBy, -step / this.currentK(), 0),
        '0': () => this.canvasSel.call(this.zoomer.transform, zoomIdentity),
      };
      const act = actions[e.key];
      if (act) {
        e.preventDefault();
        act();
      }
    });
  }

  private currentK(): number {
    const [d0, d1] = this.x.domain();
    const [b0, b1] = this.xBase.domain();
    return (b1 - b0) / (d1 - d0 || 1);
  }

  private tableSpecs(report: PlanReport): TableSpec[] {
    const m = this.model;
    if (!m) return [];
    const lanes: TableSpec = {
      caption: 'Lanes: busy and idle time per iteration',
      columns: ['Lane', 'Busy', 'Idle', ...KINDS.map((k) => KIND_LABEL[k])],
      rows: m.lanes.map((l) => [l.label, fmtMs(l.busyMs), fmtMs(Math.max(0, m.endMs - l.busyMs)), ...KINDS.map((k) => l.counts[k])]),
    };
    const events: TableSpec = {
      caption: `All ${m.eventCount} events of one iteration of ${report.model}`,
      columns: ['Lane', 'Kind', 'Layer', 'Start', 'End', 'Duration', 'Bytes', 'Critical'],
      rows: m.lanes.flatMap((l) =>
        l.events.map((e) => [l.label, KIND_LABEL[e.kind] ?? e.kind, e.layer, fmtMs(e.startMs), fmtMs(e.endMs), fmtMs(e.endMs - e.startMs), e.bytes !== undefined ? fmtBytes(e.bytes) : '', e.critical ? 'yes' : '']),
      ),
    };
    return [lanes, events];
  }
}
