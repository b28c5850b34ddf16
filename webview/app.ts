/**
 * Assembles the page (header, controls, status line, the three views) and
 * routes host messages to them. Views update in place on every 'plan'.
 */
import type { LayerPlan, PlanOutcome, PlanReport } from '../src/protocol/plan';
import type { PlanControls, ToWebviewMessage, WebviewPersistedState } from '../src/protocol/webview';
import { batchText } from '../src/protocol/setupText';
import { AssignmentView } from './assignment';
import { ControlsBar } from './controls';
import { clear, el } from './dom';
import { fmtBytes, fmtJoules, fmtMemoryBreakdown, fmtMs, fmtRate, fmtSetup } from './format';
import type { Host } from './host';
import { IncompleteBanner } from './incompleteBanner';
import { ScalingView } from './scaling';
import { watchTheme } from './theme';
import { TimelineView } from './timeline';
import { createButton } from './toolkit';

type ViewId = NonNullable<WebviewPersistedState['view']>;
const VIEW_IDS: Record<ViewId, string> = { assignment: 'assignment-view', timeline: 'timeline-view', scaling: 'scaling-view' };

export class App {
  private readonly title = el('h1', {}, 'WAP plan');
  private readonly subtitle = el('p', { class: 'subtitle' });
  private readonly stats = el('dl', { class: 'stats' });
  private readonly status = el('p', { class: 'status', role: 'status', 'aria-live': 'polite', id: 'wap-status' });
  private readonly incomplete = new IncompleteBanner();
  private readonly diagnostics = el('ul', { class: 'diagnostics', 'aria-label': 'Planner diagnostics' });
  private readonly controls: ControlsBar;
  private readonly assignment: AssignmentView;
  private readonly timeline: TimelineView;
  private readonly scaling = new ScalingView();
  private outcome: PlanOutcome | undefined;
  private state: WebviewPersistedState;
  private restoredView = false;

  constructor(private readonly host: Host, root: HTMLElement) {
    this.state = host.getState() ?? {};
    this.controls = new ControlsBar({
      replan: (controls) => this.replan(controls),
      exportTrace: () => host.post({ type: 'exportTrace' }),
      applyToConfig: () => host.post({ type: 'applyToConfig' }),
      invalid: (message) => this.setStatus(message, 'error'),
    });
    this.assignment = new AssignmentView({ reveal: (l) => this.reveal(l) });
    this.timeline = new TimelineView({ reveal: (name) => this.revealByName(name) });
    this.assignment.wire();

    const headerTools = el('div', { class: 'header-tools' });
    if (!host.inVsCode) {
      document.body.classList.add('wap-standalone');
      const toggle = createButton('Light theme', 'secondary');
      toggle.id = 'btn-theme';
      toggle.addEventListener('click', () => {
        const light = document.body.classList.toggle('wap-light');
        toggle.textContent = light ? 'Dark theme' : 'Light theme';
      });
      headerTools.append(toggle);
    }
    const nav = el('nav', { class: 'view-nav', 'aria-label': 'Views' });
    for (const [id, label] of [['assignment', 'Device assignment'], ['timeline', 'Timeline'], ['scaling', 'Scaling']] as Array<[ViewId, string]>) {
      const a = el('a', { href: `#${VIEW_IDS[id]}`, 'data-view': id }, label);
      a.addEventListener('click', () => this.persist({ view: id }));
      nav.append(a);
    }
    root.append(
      el('header', { class: 'wap-header' }, el('div', { class: 'title-block' }, this.title, this.subtitle), headerTools),
      this.incomplete.root,
      this.stats,
      this.controls.root,
      this.status,
      this.diagnostics,
      nav,
      this.assignment.root,
      this.timeline.root,
      this.scaling.root,
    );
    if (this.state.controls) this.controls.show(this.state.controls, this.state.controls.gpus ?? 1, false);
    watchTheme(() => this.timeline.retheme());
  }

  handle(message: ToWebviewMessage): void {
    switch (message.type) {
      case 'plan':
        this.showPlan(message.outcome, message.controls, message.maxGpus, message.modelUri);
        break;
      case 'busy':
        this.setStatus(message.message, 'busy');
        break;
      case 'error':
        this.setStatus(message.message, 'error');
        break;
    }
  }

  private showPlan(outcome: PlanOutcome, controls: PlanControls, maxGpus: number, modelUri: string | undefined): void {
    this.outcome = outcome;
    this.title.textContent = outcome.model;
    this.controls.show(controls, maxGpus, outcome.feasible);
    this.incomplete.update(outcome);
    this.showStats(outcome);
    clear(this.diagnostics);
    for (const d of outcome.diagnostics ?? []) {
      this.diagnostics.append(el('li', { class: `diag ${d.severity}` }, el('span', { class: 'diag-sev' }, d.severity), d.line ? `line ${d.line}: ${d.message}` : d.message));
    }
    if (outcome.feasible) {
      this.assignment.update(outcome);
      this.timeline.update(outcome);
      this.setStatus('', 'idle');
    } else {
      const msg = `No plan fits: ${outcome.reason}`;
      this.assignment.showEmpty(msg);
      this.timeline.showEmpty(msg);
      this.setStatus(msg, 'error');
    }
    this.scaling.update(outcome, maxGpus);
    this.persist({ model: outcome.model, controls, ...(modelUri ? { modelUri } : {}) });
    if (!this.restoredView && this.state.view) {
      this.restoredView = true;
      document.getElementById(VIEW_IDS[this.state.view])?.scrollIntoView();
    }
  }

  private showStats(o: PlanOutcome): void {
    clear(this.stats);
    const add = (k: string, v: string, tooltip?: string): void => void this.stats.append(el('div', { class: 'stat', ...(tooltip ? { title: tooltip } : {}) }, el('dt', {}, k), el('dd', {}, v)));
    const cluster = `${o.cluster.name} · ${o.cluster.gpus} × ${o.cluster.gpuNames[0] ?? 'GPU'}${o.cluster.nodes > 1 ? ` on ${o.cluster.nodes} nodes` : ''}`;
    if (!o.feasible) {
      this.subtitle.textContent = `batch ${o.batch} · ${cluster}`;
      this.subtitle.title = batchText(o);
      add('Plan', 'infeasible');
      return;
    }
    const r: PlanReport = o;
    this.subtitle.textContent = `${r.file ? `${r.file} · ` : ''}batch ${r.batch}${r.batchAssumed ? ' (assumed)' : ''} · ${r.optimizer} · ${cluster}`;
    // The full story (who states the batch) is a hover away; the subtitle stays one line.
    this.subtitle.title = batchText(r);
    add('GPUs', String(r.plan.gpus));
    add('Step time', fmtMs(r.plan.stepTimeMs));
    add('Throughput', fmtRate(r.plan.samplesPerSec));
    add('Energy', `${fmtJoules(r.plan.energyJPerSample)} / sample`);
    add('Peak memory', `${fmtBytes(Math.max(0, ...r.plan.memoryPerGpuBytes))} / GPU`);
    const setup = r.plan.setup;
    if (setup) {
      add('Setup', fmtSetup(setup));
      this.stats.lastElementChild?.setAttribute('title', `${setup.precision}: ${setup.precisionReason}${setup.ampStyle ? `\n${setup.ampStyle}: ${setup.ampStyleReason ?? ''}` : ''}${setup.fitsThrough ? `\nfits only through ${setup.fitsThrough}` : ''}`);
      add('MFU', `${(setup.mfu * 100).toFixed(1)}%`);
      add('Memory / GPU', fmtMemoryBreakdown(setup.memoryPerGpu));
    }
    const mix = r.lengthMix;
    if (mix) {
      add('On data lengths', `${fmtRate(mix.samplesPerSec)} · ${mix.speedup.toFixed(2)}× padded`, `${mix.source ?? 'the data'}: mean ${mix.meanTokens.toFixed(0)} tokens, ${(mix.paddingFraction * 100).toFixed(0)}% padding; ${mix.batching}${mix.notes.length ? `\n${mix.notes.join('\n')}` : ''}`);
    }
    const dp = r.baselines.dataParallel;
    // Comparing a plan with itself says nothing: only a plan that differs from plain data parallelism on every GPU gets the ratio.
    const isThatBaseline = r.plan.gpus === dp.gpus && r.plan.layers.every((l) => l.strategy === 'data');
    if (dp.feasible && dp.samplesPerSec > 0 && !isThatBaseline) {
      add(`vs data parallel on ${dp.gpus} GPUs`, `${(r.plan.samplesPerSec / dp.samplesPerSec).toFixed(2)}× faster`, `Plain data parallelism on all ${dp.gpus} GPUs: ${fmtRate(dp.samplesPerSec)}`);
    }
    const s = r.search;
    add(
      'Search',
      s.exact ? 'best plan (exhaustive)' : 'good plan (time-bounded)',
      `${s.method}${s.bound ? ` · ${s.bound}` : ''} · ${s.configurationsEvaluated.toLocaleString('en-US')} configurations evaluated in ${fmtMs(s.elapsedMs)}`,
    );
    const measured = r.costSources.measured ?? 0;
    const estimated = r.costSources.analytical ?? 0;
    add('Layer times', measured === 0 ? 'estimated' : estimated === 0 ? 'measured' : `${measured} measured, ${estimated} estimated`, 'Estimated: analytical cost model. Measured: timing trials (WAP: Profile Layers).');
  }

  private setStatus(text: string, kind: 'idle' | 'busy' | 'error'): void {
    this.status.textContent = text;
    this.status.dataset.kind = kind;
    this.status.hidden = text === '';
  }

  private replan(controls: PlanControls): void {
    this.host.post({ type: 'replan', controls });
    this.persist({ controls });
    this.setStatus(this.host.inVsCode ? 'Re-planning…' : 'This is a static report: re-planning needs the WAP extension or `wap plan` with the new options.', 'busy');
  }

  private reveal(l: LayerPlan): void {
    this.host.post({ type: 'reveal', layer: l.name, line: l.line, ...(l.file ? { file: l.file } : {}) });
  }

  private revealByName(name: string): void {
    const layer = this.outcome?.feasible ? this.outcome.plan.layers.find((l) => l.name === name) : undefined;
    if (layer) this.reveal(layer);
  }

  private persist(patch: Partial<WebviewPersistedState>): void {
    this.state = { ...this.state, ...patch };
    this.host.setState(this.state);
  }
}
