/**
 * Plans models: in the background after every clean analysis (analytical
 * costs, cheap), and on request with panel overrides, progress and
 * cancellation. Background plans run one at a time so typing in one file does
 * not starve the others; a newer edit cancels an outdated one.
 */
import { readFileSync } from 'node:fs';
import type { AnalysisResult, AnalyzedModel, AnalyzeOptions } from '../core/ir';
import { planModelAsync, type ClusterSpec } from '../planner';
import { ClientCommands } from '../protocol/commands';
import type { PlanOutcome } from '../protocol/plan';
import type { PlanOptions } from '../protocol/planOptions';
import type { PlanControls } from '../protocol/webview';
import type { PlanResult } from '../protocol/lsp';
import type { Environment } from './environment';
import { hasErrors, modelStructureKey, type ModelDocument, type PlanEntry } from './modelDocs';
import { withTrainingHints } from './trainingHints';
import { addLengthMixFromSettings, lengthMixKey } from './lengthMixSetting';
import { findRemedies } from './remedies';
import { controlsOf, toPlanOptions, type SettingsCache, type WapSettings } from './settings';

export interface Cancel {
  readonly isCancellationRequested: boolean;
}

export interface PlanJobOptions {
  overrides?: Partial<PlanControls>;
  cancel?: Cancel;
  onProgress?: (done: number, total: number) => void;
}

export class CancelledError extends Error {
  override name = 'Cancelled';
  constructor() {
    super('cancelled');
  }
}

export function isCancelled(err: unknown): boolean {
  return err instanceof Error && err.name === 'Cancelled';
}

export class PlanService {
  private queue: Promise<void> = Promise.resolve();
  private sequence = 0;

  constructor(
    private readonly settings: SettingsCache,
    private readonly env: Environment,
    private readonly planned: (doc: ModelDocument, model: string, entry: PlanEntry) => void,
    /** The document read again with other analysis options (wap.sequenceLengths plans the model at other lengths). */
    private readonly analyzeWith?: (doc: ModelDocument, options: AnalyzeOptions) => AnalysisResult,
  ) {}

  /** Plans one model now and records the plan on the document. */
  async plan(doc: ModelDocument, model: AnalyzedModel, job: PlanJobOptions = {}): Promise<PlanResult> {
    // Taken before any await: an edit analysed while this plan runs must not be mistaken for what it planned.
    const analyzedVersion = doc.analyzedVersion;
    const signatures = new Map(doc.signaturesOf(model));
    const settings = await this.settings.get(doc.uri);
    // The panel always sends its whole control set, so a new set replaces the old one: merging would
    // keep an earlier fixed GPU count when the user goes back to "Auto" (which sends no `gpus`).
    const overrides = job.overrides ?? doc.overrides.get(model.name) ?? {};
    const options = withTrainingHints(toPlanOptions(settings, overrides), doc.uri);
    const cluster = await this.env.cluster(settings);
    const profile = doc.profiles.get(model.name);
    const key = planKey(model, options, cluster.key, profile?.createdAt, settings);
    const outcome: PlanOutcome = await this.env.track(async () => {
      const planned = await planModelAsync(model, cluster.spec, options, { profile, cancel: job.cancel, onProgress: job.onProgress });
      if (!job.cancel?.isCancellationRequested) await addLengthMixFromSettings(planned, { settings, options, cluster: cluster.spec, measured: profile !== undefined, modelAt: (tokens) => this.modelAt(doc, model.name, tokens), readFile: (p) => readFileSync(this.env.resolvePath(p), 'utf8') });
      return planned;
    });
    if (job.cancel?.isCancellationRequested) throw new CancelledError();
    const maxGpus = clusterGpuCount(cluster.spec, outcome);
    const entry: PlanEntry = { outcome, signatures, key, controls: controlsOf(options), maxGpus, clusterNote: cluster.note, plannedAt: Date.now() + this.sequence++ / 1000, analyzedVersion };
    // The requester still gets its answer; the document keeps whichever plan is of the newer text.
    const existing = doc.plans.get(model.name);
    if (existing && existing.analyzedVersion > analyzedVersion) return { outcome, model: model.name, controls: entry.controls, maxGpus };
    doc.plans.set(model.name, entry);
    if (job.overrides) doc.overrides.set(model.name, overrides);
    this.env.clearError();
    this.planned(doc, model.name, entry);
    if (!outcome.feasible) void this.attachRemedies(doc, model, entry, cluster.spec, options, job.cancel);
    return { outcome, model: model.name, controls: entry.controls, maxGpus };
  }

  /** Finds what would make an infeasible model fit, then re-publishes while that plan is still the current one. */
  private async attachRemedies(doc: ModelDocument, model: AnalyzedModel, entry: PlanEntry, cluster: ClusterSpec, options: PlanOptions, cancel: PlanJobOptions['cancel']): Promise<void> {
    try {
      const remedies = await this.env.track(() => findRemedies(model, cluster, options, cancel, ClientCommands.selectCluster));
      if (doc.plans.get(model.name) !== entry) return;
      entry.remedies = remedies;
      this.planned(doc, model.name, entry);
    } catch (err) {
      if (!(err instanceof Error && err.name === 'Cancelled')) this.env.reportError(`finding a batch that fits ${model.name}`, err);
    }
  }

  /** Queues analytical plans for every clean model of the document whose inputs changed. */
  scheduleBackground(doc: ModelDocument): void {
    const version = doc.analyzedVersion;
    const cancel = { isCancellationRequested: false };
    if (doc.backgroundCancel) doc.backgroundCancel.isCancellationRequested = true;
    doc.backgroundCancel = cancel;
    this.queue = this.queue.then(async () => {
      for (const model of doc.models) {
        if (cancel.isCancellationRequested || doc.analyzedVersion !== version) return;
        // Keep the last good plan while the file is half-typed: a syntax error anywhere can reshape every model.
        if (hasErrors(model) || doc.analysis?.diagnostics.some((d) => d.severity === 'error')) continue;
        try {
          if (await this.isCurrent(doc, model)) continue;
          await this.plan(doc, model, { cancel });
        } catch (err) {
          if (!isCancelled(err)) this.env.reportError(`planning ${model.name}`, err);
        }
      }
    });
  }

  /** Resolves when every queued background plan has finished (tests and the config check wait on it). */
  idle(): Promise<void> {
    return this.queue;
  }

  /** Whether the recorded plan is of this model as it is now, with the current settings, cluster and profile. */
  async isCurrent(doc: ModelDocument, model: AnalyzedModel): Promise<boolean> {
    const entry = doc.plans.get(model.name);
    if (!entry) return false;
    const settings = await this.settings.get(doc.uri);
    const options = withTrainingHints(toPlanOptions(settings, doc.overrides.get(model.name) ?? {}), doc.uri);
    const cluster = await this.env.cluster(settings);
    const profile = doc.profiles.get(model.name);
    return entry.key === planKey(model, options, cluster.key, profile?.createdAt, settings);
  }

  /**
   * The model read at the tokens per sample a training config states (`cutoff_len: 2048`) and planned as its own plan
   * is, without becoming the document's plan: the config is compared with the model at the length it trains on.
   * Kept per model version, length, settings and cluster, since every edit of the config asks again.
   */
  async planAtLength(doc: ModelDocument, name: string, tokens: number, source: string): Promise<{ outcome: PlanOutcome; model: AnalyzedModel } | undefined> {
    const model = this.modelAt(doc, name, tokens, source);
    if (!model) return undefined;
    const settings = await this.settings.get(doc.uri);
    const options = withTrainingHints(toPlanOptions(settings, doc.overrides.get(name) ?? {}), doc.uri);
    const cluster = await this.env.cluster(settings);
    // One entry per model and length: an older version's plan is never asked for again, so it is replaced.
    const slot = JSON.stringify([doc.uri, name, tokens]);
    const key = `${doc.analyzedVersion}|${source}|${planKey(model, options, cluster.key, undefined, settings)}`;
    const cached = this.atLength.get(slot);
    if (cached?.key === key) return cached.result;
    const outcome = await this.env.track(() => planModelAsync(model, cluster.spec, options, {}));
    this.atLength.set(slot, { key, result: { outcome, model } });
    return { outcome, model };
  }

  private readonly atLength = new Map<string, { key: string; result: { outcome: PlanOutcome; model: AnalyzedModel } }>();

  /** The model called `name` in the document read at `tokens` per sequence (`source` says who states them, when not the user). */
  private modelAt(doc: ModelDocument, name: string, tokens: number, source?: string): AnalyzedModel | undefined {
    return this.analyzeWith?.(doc, { sequenceLength: tokens, ...(source ? { sequenceSource: source } : {}) }).models.find((m) => m.name === name);
  }
}

/** What a plan depends on: a recorded plan with the same key is current. */
function planKey(model: AnalyzedModel, options: PlanOptions, clusterKey: string, profileCreatedAt: string | undefined, settings: WapSettings): string {
  return `${modelStructureKey(model)}#${JSON.stringify(options)}#${clusterKey}#${profileCreatedAt ?? ''}#${lengthMixKey(settings)}`;
}

function clusterGpuCount(spec: unknown, outcome: PlanOutcome): number {
  const s = spec as { gpus?: unknown; nodes?: Array<{ gpus?: unknown }> };
  if (typeof s.gpus === 'number') return s.gpus;
  if (Array.isArray(s.gpus)) return s.gpus.length;
  return outcome.cluster.gpus;
}
