/**
 * `wap.*` settings, pulled per document with `workspace/configuration` and
 * cached until `workspace/didChangeConfiguration`. Clients without the pull
 * model (some stdio clients) get the pushed settings or the defaults.
 */
import { forwardGatherStagesFor } from '../planner/collectiveTiming';
import { NAMED_FRAMEWORKS, withNamedFramework, type NamedFramework } from '../configs/namedFramework';
import type { Connection } from 'vscode-languageserver';
import { OPTIMIZER_KINDS, type AmpStyle, type Objective, type OptimizerKind, type Precision, type RecomputeMode, type StrategyMode } from '../protocol/plan';
import { DEFAULT_BATCH, type PlanOptions } from '../protocol/planOptions';
import type { PlanControls } from '../protocol/webview';

export interface WapSettings {
  /** A preset id or the path of a cluster spec file; '' = detected local GPUs, else the planner's default preset. */
  cluster: string;
  /** 0: the global batch the launch that trains the model states (launchedSetupHint.ts), else DEFAULT_BATCH. */
  batchSize: number;
  objective: Objective;
  strategies: StrategyMode;
  /** 0 = every GPU of the cluster. */
  maxGpus: number;
  /** 'auto': what the code or a DeepSpeed config beside the model builds, else what the model's kind trains with. */
  optimizer: OptimizerKind | 'auto';
  /** 'auto': the training config next to the model, else the GPU's best. */
  precision: Precision | 'auto';
  /** 'auto': the training config next to the model, else master weights. */
  ampStyle: AmpStyle | 'auto';
  /** When ZeRO-1/2 gather the updated weights; 'auto': the framework the config next to the model names, else after the step. */
  weightGather: 'auto' | 'after-step' | 'next-forward';
  /** The framework that trains the model (configs/namedFramework.ts); 'auto': the config next to the model names it, if any. */
  framework: NamedFramework | 'auto';
  /** 'auto': channels_last when the code always converts the model to it (memoryFormatHint.ts), else the model's layout. */
  memoryFormat: 'channels_first' | 'channels_last' | 'auto';
  /** 'code': full recompute where the training code switches gradient checkpointing on (recomputeHint.ts), else searched; 'auto': searched. */
  recompute: 'code' | 'auto' | RecomputeMode;
  /** Path of the model file config files compare against ('' = the most recently planned model nearby). */
  model: string;
  profile: { enabled: boolean; backend: string };
  /** `wap.python`: interpreter whose site-packages imports are read from ('' = the Python extension's, else python3). */
  python?: string;
  /** `wap.sequenceLengths`: a length histogram file (relative to the workspace) plans are also priced on ('' = none). */
  sequenceLengths: string;
  /** `wap.batching`: how those sequences are batched (longest, bins:W, padded). */
  batching: string;
  /** `wap.padMultiple`: padded lengths are rounded up to a multiple of this. */
  padMultiple: number;
}

export const DEFAULT_SETTINGS: WapSettings = {
  cluster: '',
  batchSize: 0,
  objective: 'throughput',
  strategies: 'hybrid',
  maxGpus: 0,
  optimizer: 'auto',
  precision: 'auto',
  ampStyle: 'auto',
  weightGather: 'auto',
  framework: 'auto',
  memoryFormat: 'auto',
  recompute: 'code',
  model: '',
  profile: { enabled: false, backend: 'auto' },
  python: '',
  sequenceLengths: '',
  batching: 'longest',
  padMultiple: 1,
};

const OBJECTIVES: readonly Objective[] = ['throughput', 'efficiency'];
const STRATEGIES: readonly StrategyMode[] = ['dp', 'hybrid', 'all'];
const OPTIMIZERS: ReadonlyArray<OptimizerKind | 'auto'> = ['auto', ...OPTIMIZER_KINDS];
const PRECISIONS: ReadonlyArray<Precision | 'auto'> = ['auto', 'fp32', 'tf32', 'fp16', 'bf16', 'fp8'];
const AMP_STYLES: ReadonlyArray<AmpStyle | 'auto'> = ['auto', 'autocast', 'master-weights', 'fp32-gradients', 'pure'];
const WEIGHT_GATHERS: ReadonlyArray<WapSettings['weightGather']> = ['auto', 'after-step', 'next-forward'];
const FRAMEWORKS: ReadonlyArray<WapSettings['framework']> = ['auto', ...NAMED_FRAMEWORKS];
const MEMORY_FORMATS: ReadonlyArray<WapSettings['memoryFormat']> = ['auto', 'channels_first', 'channels_last'];
const RECOMPUTE: ReadonlyArray<WapSettings['recompute']> = ['code', 'auto', 'none', 'selective', 'full'];

function positiveInt(v: unknown, fallback: number, allowZero = false): number {
  const n = typeof v === 'string' ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isFinite(n)) return fallback;
  const i = Math.floor(n);
  return i > 0 || (allowZero && i === 0) ? i : fallback;
}

function oneOf<T extends string>(v: unknown, allowed: readonly T[], fallback: T): T {
  return typeof v === 'string' && (allowed as readonly string[]).includes(v) ? (v as T) : fallback;
}

/** Validates whatever the client sent: wrong types fall back to the defaults rather than failing. */
export function normalizeSettings(raw: unknown): WapSettings {
  const r = (raw && typeof raw === 'object' ? raw : {}) as Record<string, unknown>;
  const profile = (r.profile && typeof r.profile === 'object' ? r.profile : {}) as Record<string, unknown>;
  return {
    cluster: typeof r.cluster === 'string' ? r.cluster.trim() : '',
    batchSize: positiveInt(r.batchSize, DEFAULT_SETTINGS.batchSize),
    objective: oneOf(r.objective, OBJECTIVES, DEFAULT_SETTINGS.objective),
    strategies: oneOf(r.strategies, STRATEGIES, DEFAULT_SETTINGS.strategies),
    maxGpus: r.maxGpus === null ? 0 : positiveInt(r.maxGpus, 0, true),
    optimizer: oneOf(r.optimizer, OPTIMIZERS, DEFAULT_SETTINGS.optimizer),
    precision: oneOf(r.precision, PRECISIONS, DEFAULT_SETTINGS.precision),
    ampStyle: oneOf(r.ampStyle, AMP_STYLES, DEFAULT_SETTINGS.ampStyle),
    weightGather: oneOf(r.weightGather, WEIGHT_GATHERS, DEFAULT_SETTINGS.weightGather),
    framework: oneOf(r.framework, FRAMEWORKS, DEFAULT_SETTINGS.framework),
    memoryFormat: oneOf(r.memoryFormat, MEMORY_FORMATS, DEFAULT_SETTINGS.memoryFormat),
    recompute: oneOf(r.recompute, RECOMPUTE, DEFAULT_SETTINGS.recompute),
    model: typeof r.model === 'string' ? r.model.trim() : '',
    profile: {
      enabled: typeof profile.enabled === 'boolean' ? profile.enabled : DEFAULT_SETTINGS.profile.enabled,
      backend: typeof profile.backend === 'string' && profile.backend ? profile.backend : DEFAULT_SETTINGS.profile.backend,
    },
    python: typeof r.python === 'string' ? r.python.trim() : '',
    sequenceLengths: typeof r.sequenceLengths === 'string' ? r.sequenceLengths.trim() : '',
    // Checked where it is used, so that a typo gets a diagnostic naming it rather than a silent default.
    batching: typeof r.batching === 'string' && r.batching.trim() ? r.batching.trim() : DEFAULT_SETTINGS.batching,
    padMultiple: positiveInt(r.padMultiple, DEFAULT_SETTINGS.padMultiple),
  };
}

/** Settings plus per-model overrides (the panel's controls) → the planner's options. */
export function toPlanOptions(s: WapSettings, overrides: Partial<PlanControls> = {}): PlanOptions {
  const options: PlanOptions = {
    batch: overrides.batch && overrides.batch > 0 ? Math.floor(overrides.batch) : s.batchSize > 0 ? s.batchSize : DEFAULT_BATCH,
    objective: overrides.objective ?? s.objective,
    strategies: overrides.strategies ?? s.strategies,
    // 'auto': what the files beside the model say (trainingHints.ts), else what the model's kind trains with.
    optimizer: s.optimizer === 'auto' ? 'momentum' : s.optimizer,
  };
  if (overrides.batch && overrides.batch > 0) options.batchSource = "the plan view's batch";
  else if (s.batchSize > 0) options.batchSource = 'the wap.batchSize setting';
  else options.batchAssumed = true;
  if (s.optimizer !== 'auto') options.optimizerSource = 'the wap.optimizer setting';
  else options.optimizerAssumed = true;
  if (s.maxGpus > 0) options.maxGpus = s.maxGpus;
  if (s.precision !== 'auto') {
    options.precision = s.precision;
    options.precisionSource = 'the wap.precision setting';
  }
  if (s.ampStyle !== 'auto') {
    options.ampStyle = s.ampStyle;
    options.ampStyleSource = 'the wap.ampStyle setting';
  }
  // Before wap.weightGather, which overrides the framework's gather when both are set.
  if (s.framework !== 'auto') Object.assign(options, withNamedFramework(options, s.framework, 'the wap.framework setting'));
  if (s.weightGather !== 'auto') {
    options.forwardGatherStages = forwardGatherStagesFor(s.weightGather);
    options.forwardGatherSource = 'the wap.weightGather setting';
  }
  if (s.memoryFormat !== 'auto') {
    options.memoryFormat = s.memoryFormat;
    options.memoryFormatSource = 'the wap.memoryFormat setting';
  }
  if (s.recompute !== 'code') {
    // 'auto' too: the search chooses, whatever gradient checkpointing the code switches on.
    options.recomputeSource = 'the wap.recompute setting';
    if (s.recompute !== 'auto') options.pins = { ...options.pins, recompute: s.recompute };
  }
  if (overrides.gpus && overrides.gpus > 0) options.gpus = Math.floor(overrides.gpus);
  return options;
}

export function controlsOf(options: PlanOptions): PlanControls {
  return { gpus: options.gpus, objective: options.objective, strategies: options.strategies, batch: options.batch };
}

export class SettingsCache {
  private readonly byUri = new Map<string, Promise<WapSettings>>();
  private pushed: unknown;
  pullSupported = false;

  constructor(private readonly connection: Connection) {}

  /** Settings for one document; the first call per URI asks the client, later calls hit the cache. */
  get(uri: string): Promise<WapSettings> {
    let p = this.byUri.get(uri);
    if (!p) {
      p = this.fetch(uri);
      this.byUri.set(uri, p);
    }
    return p;
  }

  /** On didChangeConfiguration: forget everything; `settings` is the push-model payload, if any. */
  clear(pushed?: unknown): void {
    this.byUri.clear();
    if (pushed && typeof pushed === 'object' && 'wap' in pushed) this.pushed = (pushed as { wap: unknown }).wap;
  }

  setInitial(settings: unknown): void {
    if (settings !== undefined) this.pushed = settings;
  }

  private async fetch(uri: string): Promise<WapSettings> {
    if (!this.pullSupported) return normalizeSettings(this.pushed);
    try {
      const raw: unknown = await this.connection.workspace.getConfiguration({ scopeUri: uri, section: 'wap' });
      return normalizeSettings(raw ?? this.pushed);
    } catch (err) {
      this.connection.console.warn(`wap: could not read settings for ${uri}: ${String(err)}; using defaults`);
      this.byUri.delete(uri);
      return normalizeSettings(this.pushed);
    }
  }
}
