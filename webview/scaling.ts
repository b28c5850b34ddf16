/**
 * Scaling view: predicted samples/s and energy per sample against GPU count,
 * from report.scaling. The chosen count is ringed, the baselines (1 GPU,
 * pure data parallel, OWT) are drawn for comparison, and counts where nothing
 * fits are marked ✕ on the axis with their reason in the tooltip and table.
 */
import { max } from 'd3-array';
import { axisBottom, axisLeft } from 'd3-axis';
import { scaleLinear } from 'd3-scale';
import { select } from 'd3-selection';
import { line, symbol, symbolSquare, symbolTriangle } from 'd3-shape';
import type { BaselineResult, PlanOutcome, ScalingPoint } from '../src/protocol/plan';
import { clear, el, svgEl } from './dom';
import { fmtJoules, fmtMs, fmtRate } from './format';
import { TableToggle, type TableSpec } from './textTable';
import { hideTooltip, showTooltip } from './tooltip';

type Metric = { key: 'samplesPerSec' | 'energyJPerSample'; title: string; unit: string; fmt: (v: number) => string };
const METRICS: Metric[] = [
  { key: 'samplesPerSec', title: 'Throughput', unit: 'samples/s', fmt: fmtRate },
  { key: 'energyJPerSample', title: 'Energy per sample', unit: 'J / sample', fmt: fmtJoules },
];
const BASELINES: Array<{ key: 'singleGpu' | 'dataParallel' | 'owt'; label: string; shape: 'line' | 'square' | 'triangle' }> = [
  { key: 'singleGpu', label: '1 GPU', shape: 'line' },
  { key: 'dataParallel', label: 'pure data parallel', shape: 'square' },
  { key: 'owt', label: 'data parallel for convolutions, model parallel for FC layers (OWT)', shape: 'triangle' },
];
const H = 230;
const M = { top: 22, right: 22, bottom: 40, left: 72 };

/** Axis labels: whole numbers, in mJ when every value is below 1 J. */
function axisValue(m: Metric, v: number, top: number): string {
  if (m.key === 'energyJPerSample') return top < 1 ? `${Math.round(v * 1000)} mJ` : `${+v.toFixed(2)} J`;
  return v.toLocaleString('en-US');
}

function pointFacts(p: ScalingPoint): Array<[string, string]> {
  if (!p.feasible) return [['Feasible', 'no'], ['Why', p.reason ?? 'nothing fits']];
  const f: Array<[string, string]> = [
    ['Throughput', fmtRate(p.samplesPerSec)],
    ['Step time', fmtMs(p.stepTimeMs)],
    ['Energy', `${fmtJoules(p.energyJPerSample)} per sample`],
  ];
  if (p.summary) f.push(['Plan', p.summary]);
  return f;
}

export class ScalingView {
  readonly root: HTMLElement;
  private readonly charts: HTMLElement;
  private readonly summary: HTMLElement;
  private readonly table = new TableToggle('scaling', 'scaling curve');
  private outcome: PlanOutcome | undefined;
  /** Width from the last ResizeObserver report: reading clientWidth mid-update would force a layout. */
  private observedWidth = 0;

  constructor() {
    this.charts = el('div', { class: 'sc-charts' });
    this.summary = el('p', { class: 'view-summary' });
    this.root = el(
      'section',
      { class: 'view', id: 'scaling-view', 'aria-labelledby': 'scaling-title' },
      el('div', { class: 'view-head' }, el('h2', { id: 'scaling-title' }, 'Scaling'), this.legend(), this.table.button),
      this.summary,
      this.charts,
      this.table.region,
    );
    new ResizeObserver((entries) => {
      const width = entries[entries.length - 1].contentRect.width;
      if (width === this.observedWidth) return;
      this.observedWidth = width;
      if (this.outcome) this.draw(this.outcome);
    }).observe(this.charts);
  }

  private legend(): HTMLElement {
    return el(
      'ul',
      { class: 'legend', 'aria-label': 'Scaling legend' },
      el('li', {}, el('span', { class: 'swatch sc-swatch-plan' }), 'WAP plan'),
      el('li', {}, el('span', { class: 'swatch sc-swatch-chosen' }), 'chosen'),
      el('li', {}, el('span', { class: 'swatch sc-swatch-single' }), '1 GPU'),
      el('li', {}, el('span', { class: 'swatch sc-swatch-dp' }), 'pure DP'),
      el('li', { title: 'Krizhevsky\'s "one weird trick": data parallel convolutions, model parallel fully-connected layers' }, el('span', { class: 'swatch sc-swatch-owt' }), 'conv data + FC model parallel (OWT)'),
      el('li', {}, el('span', { class: 'sc-x' }, '✕'), 'infeasible'),
    );
  }

  update(outcome: PlanOutcome, maxGpus: number): void {
    this.outcome = outcome;
    const chosen = outcome.feasible ? outcome.plan.gpus : undefined;
    const best = outcome.scaling.filter((p) => p.feasible).sort((a, b) => b.samplesPerSec - a.samplesPerSec)[0];
    this.summary.textContent =
      (chosen !== undefined ? `Chosen: ${chosen} GPU${chosen === 1 ? '' : 's'} (${outcome.feasible ? outcome.objective : ''} objective). ` : 'No feasible plan at the requested settings. ') +
      (best ? `Highest predicted throughput: ${fmtRate(best.samplesPerSec)} on ${best.gpus} GPUs. ` : '') +
      `Up to ${maxGpus} GPUs considered.`;
    this.draw(outcome);
    this.table.setContent(() => [this.tableSpec(outcome)]);
  }

  private draw(outcome: PlanOutcome): void {
    clear(this.charts);
    const width = Math.max(260, Math.floor((this.observedWidth || this.charts.clientWidth || 800) / 2) - 12);
    for (const m of METRICS) this.charts.append(this.chart(outcome, m, width));
  }

  private chart(outcome: PlanOutcome, m: Metric, width: number): SVGSVGElement {
    const pts = [...outcome.scaling].sort((a, b) => a.gpus - b.gpus);
    const baselines = outcome.feasible ? outcome.baselines : undefined;
    const chosen = outcome.feasible ? outcome.plan.gpus : undefined;
    const maxN = Math.max(1, max(pts, (p) => p.gpus) ?? 1, chosen ?? 1);
    const values = pts.filter((p) => p.feasible).map((p) => p[m.key]);
    if (baselines) for (const b of BASELINES) if (baselines[b.key].feasible) values.push(baselines[b.key][m.key]);
    const x = scaleLinear()
      .domain(maxN === 1 ? [0.5, 1.5] : [1, maxN])
      .range([M.left, width - M.right]);
    const y = scaleLinear()
      .domain([0, (max(values) ?? 1) * 1.12 || 1])
      .range([H - M.bottom, M.top])
      .nice();
    const svg = svgEl('svg', { class: `sc-chart sc-${m.key}`, width, height: H, role: 'img', 'aria-label': `${m.title} (${m.unit}) against GPU count` });
    const s = select(svg);
    const ticks = Math.min(maxN, Math.max(2, Math.floor(width / 50)));
    s.append('g').attr('class', 'axis').attr('transform', `translate(0,${H - M.bottom})`).call(axisBottom(x).ticks(ticks).tickFormat((v) => (Number.isInteger(Number(v)) ? String(v) : '')));
    s.append('g').attr('class', 'axis').attr('transform', `translate(${M.left},0)`).call(axisLeft(y).ticks(5).tickFormat((v) => axisValue(m, Number(v), y.domain()[1])));
    s.append('text').attr('class', 'axis-label').attr('x', (M.left + width - M.right) / 2).attr('y', H - 6).attr('text-anchor', 'middle').text('GPUs');
    s.append('text').attr('class', 'axis-label').attr('transform', `translate(13,${(H - M.bottom + M.top) / 2}) rotate(-90)`).attr('text-anchor', 'middle').text(`${m.title} (${m.unit})`);

    if (baselines?.singleGpu.feasible) {
      const v = y(baselines.singleGpu[m.key]);
      s.append('line').attr('class', 'sc-baseline sc-single').attr('x1', M.left).attr('x2', width - M.right).attr('y1', v).attr('y2', v);
    }
    const path = line<ScalingPoint>()
      .defined((p) => p.feasible)
      .x((p) => x(p.gpus))
      .y((p) => y(p[m.key]));
    s.append('path').attr('class', 'sc-line').attr('d', path(pts) ?? '');

    const show = (e: MouseEvent, title: string, facts: Array<[string, string]>): void => showTooltip(title, facts, { x: e.clientX, y: e.clientY });
    if (baselines) {
      for (const b of BASELINES) {
        const r: BaselineResult = baselines[b.key];
        if (!r.feasible) continue;
        const g = s
          .append('path')
          .attr('class', `sc-baseline-pt sc-${b.key}`)
          .attr('data-baseline', b.key)
          .attr('data-gpus', r.gpus)
          .attr('transform', `translate(${x(r.gpus)},${y(r[m.key])})`)
          .attr('d', symbol(b.shape === 'triangle' ? symbolTriangle : symbolSquare, b.shape === 'line' ? 36 : 64)() ?? '');
        g.on('mousemove', (e: MouseEvent) => show(e, `${b.label} on ${r.gpus} GPU${r.gpus === 1 ? '' : 's'}`, pointFacts({ ...r }))).on('mouseleave', hideTooltip);
      }
    }
    for (const p of pts) {
      if (p.feasible) {
        const isChosen = p.gpus === chosen;
        s.append('circle')
          .attr('class', isChosen ? 'sc-pt chosen' : 'sc-pt')
          .attr('data-gpus', p.gpus)
          .attr('data-chosen', String(isChosen))
          .attr('data-feasible', 'true')
          .attr('cx', x(p.gpus))
          .attr('cy', y(p[m.key]))
          .attr('r', isChosen ? 6 : 4)
          .attr('aria-label', `${p.gpus} GPUs: ${m.fmt(p[m.key])}${isChosen ? ' (chosen)' : ''}`)
          .on('mousemove', (e: MouseEvent) => show(e, `${p.gpus} GPU${p.gpus === 1 ? '' : 's'}${isChosen ? ' · chosen' : ''}`, pointFacts(p)))
          .on('mouseleave', hideTooltip);
        if (isChosen) {
          s.append('circle').attr('class', 'sc-chosen-ring').attr('cx', x(p.gpus)).attr('cy', y(p[m.key])).attr('r', 11);
          s.append('text')
            .attr('class', 'sc-chosen-label')
            .attr('x', x(p.gpus))
            .attr('y', y(p[m.key]) - 16)
            .attr('text-anchor', x(p.gpus) > width - 70 ? 'end' : 'middle')
            .text(`chosen: ${m.fmt(p[m.key])}`);
        }
      } else {
        s.append('text')
          .attr('class', 'sc-x sc-infeasible')
          .attr('data-gpus', p.gpus)
          .attr('data-feasible', 'false')
          .attr('x', x(p.gpus))
          .attr('y', H - M.bottom - 6)
          .attr('text-anchor', 'middle')
          .attr('aria-label', `${p.gpus} GPUs: infeasible, ${p.reason ?? ''}`)
          .text('✕')
          .on('mousemove', (e: MouseEvent) => show(e, `${p.gpus} GPU${p.gpus === 1 ? '' : 's'} · infeasible`, pointFacts(p)))
          .on('mouseleave', hideTooltip);
      }
    }
    return svg;
  }

  private tableSpec(outcome: PlanOutcome): TableSpec {
    const chosen = outcome.feasible ? outcome.plan.gpus : undefined;
    const rows: Array<Array<string | number>> = [...outcome.scaling]
      .sort((a, b) => a.gpus - b.gpus)
      .map((p) => [
        `${p.gpus}${p.gpus === chosen ? ' (chosen)' : ''}`,
        p.feasible ? 'yes' : 'no',
        p.feasible ? fmtRate(p.samplesPerSec) : '–',
        p.feasible ? fmtMs(p.stepTimeMs) : '–',
        p.feasible ? fmtJoules(p.energyJPerSample) : '–',
        p.feasible ? (p.summary ?? '') : (p.reason ?? ''),
      ]);
    if (outcome.feasible) {
      for (const b of BASELINES) {
        const r = outcome.baselines[b.key];
        rows.push([`${b.label} baseline (${r.gpus})`, r.feasible ? 'yes' : 'no', r.feasible ? fmtRate(r.samplesPerSec) : '–', r.feasible ? fmtMs(r.stepTimeMs) : '–', r.feasible ? fmtJoules(r.energyJPerSample) : '–', r.reason ?? '']);
      }
    }
    return { caption: `Predicted scaling of ${outcome.model} at batch ${outcome.batch}`, columns: ['GPUs', 'Feasible', 'Throughput', 'Step time', 'Energy / sample', 'Plan or reason'], rows };
  }
}
