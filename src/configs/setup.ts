/**
 * The training setup a config states (precision, ZeRO/FSDP, recompute,
 * micro-batch and accumulation, TP/PP/CP degrees), normalised across formats,
 * and its comparison with the plan's `plan.setup`. Each format module reads
 * its own keys into a StatedSetup (with edit closures); this module decides
 * what disagrees, what the fix writes, and what the format cannot say at all.
 */
import type { AmpStyle, Precision, PlanReport, RecomputeMode, TrainingSetup, ZeroStage } from '../protocol/plan';
import type { TokenDispatcher } from '../protocol/planOptions';
import { contradictingComment, flagComments, wordsFor } from './comments';
import type { ConfigFinding, ConfigFix, ConfigFormat, TextEdit, TextRange } from './types';
import type { StatedSerialSync, StatedWeightGather } from './frameworkTimings';
import type { StatedUnshardedAccumulation } from './unshardedAccumulation';

/** One dimension as the config states it. `stated: false` means the format's default applies (the key is absent). */
export interface SetupDim<T> {
  value: T;
  stated: boolean;
  range: TextRange;
  /** Edits that make the config say `next`; undefined when the format cannot write it mechanically here. */
  set?: (next: T, plan?: TrainingSetup) => TextEdit[] | undefined;
  /**
   * When the format only has coarser words (recompute on/off), or a default that follows another dimension (Megatron's
   * expert tensor parallel follows TP): does the plan's value say the same thing?
   */
  matches?: (plan: T, setup?: TrainingSetup) => boolean;
  /**
   * When the format has words for this dimension but not for every plan (FSDP's offload moves the parameters with
   * the optimizer state; DeepSpeed offloads parameters only at ZeRO-3): whether it can say this plan's value. When it
   * cannot, the dimension is not "fixed" into something else: `inexpressible[key]` says what to do instead.
   */
  expressible?: (plan: TrainingSetup) => boolean;
  /** The file that states it when another config hands it over (`deepspeed="ds_config.json"`): fixed there, not here. */
  source?: string;
}

/**
 * A setting that hands part of the setup to another file: accelerate's `deepspeed_config_file`, the Trainer's
 * `deepspeed="ds_config.json"`, Lightning's `DeepSpeedStrategy(config="ds_config.json")`. The format's reader
 * leaves the dimensions that file owns unset; linkedConfig.ts reads them from it.
 */
export interface ConfigLink {
  /** As written, relative to where the job is launched (tried from the config's folder upwards). */
  path: string;
  range: TextRange;
  /** How the config names it, for messages: 'deepspeed_config_file'. */
  key: string;
  /**
   * Who refuses to start when this config and the file state different values ("auto" aside): transformers'
   * HfTrainerDeepSpeedConfig compares micro-batch, accumulation and bf16/fp16 with TrainingArguments.
   */
  mustMatch?: string;
  /**
   * What the file is: a DeepSpeed JSON (the default), or accelerate's own config that a launch names
   * (`accelerate launch --config_file zero3.yaml`), whose plugin — and its deepspeed_config_file — shards.
   */
  format?: 'deepspeed' | 'accelerate';
  /** Where to read it when the config that names it is not this one (a launch script beside a recipe), else `path`. */
  readFrom?: string;
}

export type SetupKey = 'precision' | 'zeroStage' | 'hybridShard' | 'cpuOffload' | 'paramOffload' | 'recompute' | 'tensorParallel' | 'pipelineStages' | 'contextParallel' | 'sequenceParallel' | 'expertParallel' | 'expertTensorParallel';

export interface StatedSetup {
  precision?: SetupDim<Precision>;
  /**
   * How the run holds its 16-bit tensors, where the launcher decides it (the Trainer without DeepSpeed runs forward
   * under torch.autocast over fp32 parameters; with DeepSpeed, 16-bit weights and fp32 masters), and why.
   */
  ampStyle?: { value: AmpStyle; why: string };
  zeroStage?: SetupDim<ZeroStage>;
  /** When the framework the config runs gathers ZeRO-1/2's updated weights (frameworkTimings.ts); absent: DeepSpeed's way. */
  weightGather?: StatedWeightGather;
  /** The stages whose gradient sync the framework runs with nothing beside it (frameworkTimings.ts); absent: none. */
  serialSync?: StatedSerialSync;
  /** The ZeRO stages the framework accumulates unsharded under no_sync (unshardedAccumulation.ts); absent: each micro-step reduces. */
  unshardedAccumulation?: StatedUnshardedAccumulation;
  /**
   * The ZeRO stages (0, 1) whose every micro-step all-reduces, and why: [0, 1] for a DDP loop that accumulates without
   * no_sync(), [] for one that pauses the sync (torchScriptAccumulation.ts); absent: not said.
   */
  microStepAllReduce?: { stages: ZeroStage[]; why: string };
  /** How the framework runs a block's experts (Megatron's --moe-grouped-gemm), where the config says; absent: as the model's code does. */
  expertsKernel?: { grouped: boolean; why: string };
  /** Sharded gradients reduce-scattered in fp32 whatever the training precision (torchtitan's mixed_precision_reduce). */
  gradientReduceInFp32?: { why: string };
  /** How the framework dispatches tokens to other GPUs' experts, where the config says (Megatron's --moe-token-dispatcher-type). */
  tokenDispatcher?: { kind: TokenDispatcher; why: string };
  hybridShard?: SetupDim<boolean>;
  cpuOffload?: SetupDim<boolean>;
  /** Parameters and gradients in host memory too (DeepSpeed offload_param, FSDP's offload); true implies cpuOffload. */
  paramOffload?: SetupDim<boolean>;
  recompute?: SetupDim<RecomputeMode>;
  tensorParallel?: SetupDim<number>;
  pipelineStages?: SetupDim<number>;
  contextParallel?: SetupDim<number>;
  sequenceParallel?: SetupDim<boolean>;
  /** Expert-parallel degree, where the format states one (Megatron's --expert-model-parallel-size, torchtitan's expert_parallel_degree). */
  expertParallel?: SetupDim<number>;
  /** Ranks each routed expert is split over (Megatron's --expert-tensor-parallel-size, torchtitan's expert_tensor_parallel_degree). */
  expertTensorParallel?: SetupDim<number>;
  dataParallel?: SetupDim<number>;
  microBatch?: SetupDim<number>;
  gradientAccumulation?: SetupDim<number>;
  /** The training batch over all replicas, when the format states it (DeepSpeed train_batch_size, Megatron --global-batch-size). */
  globalBatch?: SetupDim<number>;
  /**
   * The tokens per sample the config trains on (`max_seq_length: 2048`, LLaMA-Factory's `cutoff_len`, axolotl's
   * `sequence_len`, Megatron's `--seq-length`, torchtitan's `seq_len`): the model it is compared with is read at it.
   */
  tokensPerSample?: { value: number; key: string; range: TextRange };
  /** Dimensions this format has no words for, with what to use instead (shown when the plan needs them). */
  inexpressible: Partial<Record<SetupKey, string>>;
  /** Where a finding about the whole setup points. */
  anchor: TextRange;
  /** The format's name in messages, e.g. 'DeepSpeed config'. */
  label: string;
  /** GPUs the config launches on, when it says (num_processes, devices × num_nodes…). */
  world?: number;
  /** The launch script `world` was read from, when the config itself does not say it (launchedBy.ts). */
  worldFrom?: string;
  /**
   * Settings the config states that change memory or step time and WAP does not model (NVMe offload, parameters
   * offloaded without the optimizer state),
   * each with where it is and what the plan leaves out: the config's plan is approximate, and says so. `short` is a
   * whole phrase ("NVMe offload not modelled", "tensor parallelism not read"): the "your config (approximate: …)" line
   * joins them as they are.
   */
  unmodelled?: Array<{ range: TextRange; message: string; short: string }>;
  /**
   * Writes several dimensions at once, for formats whose single edits clash
   * (two JSON insertions into one object). Keys are SetupKey or 'microBatch'/'gradientAccumulation'.
   */
  writeAll?: (changes: Array<[string, unknown]>) => TextEdit[] | undefined;
  /**
   * Nothing in the config states the ZeRO stage or offload (the Trainer's arguments without `fsdp` or `deepspeed`):
   * its values are defaults, which a launcher that shards itself (`accelerate launch --config_file zero3.yaml`)
   * replaces.
   */
  shardingByDefault?: boolean;
  /** The DeepSpeed config this setup hands its ZeRO stage and offload to (and precision and batch, where not "auto"). */
  link?: ConfigLink;
  /** Values this config and its linked file both state and disagree on, where the launcher refuses the mismatch. */
  conflicts?: Array<{ range: TextRange; message: string }>;
}

/** Zero-length insertions at one offset become one edit, so a fix never clashes with itself. */
export function mergeInsertions(edits: TextEdit[]): TextEdit[] {
  const out: TextEdit[] = [];
  for (const e of edits) {
    const same = out.find((o) => o.start === e.start && o.end === o.start && e.end === e.start);
    if (same) same.newText += e.newText;
    else out.push({ ...e });
  }
  return out;
}

const PRECISION_WORDS: Record<Precision, string> = { fp32: 'fp32', tf32: 'tf32', fp16: 'fp16', bf16: 'bf16', fp8: 'fp8' };

/** "ZeRO-2 + bf16 + TP 2": the plan's choices a reader cares about, defaults left out. */
export function describeSetup(s: Partial<TrainingSetup>): string {
  const parts: string[] = [];
  if (s.zeroStage) parts.push(`${s.hybridShard ? 'HSDP ' : ''}ZeRO-${s.zeroStage}`);
  if (s.paramOffload) parts.push('parameter offload');
  else if (s.cpuOffload) parts.push('CPU offload');
  if (s.precision) parts.push(PRECISION_WORDS[s.precision]);
  if (s.tensorParallel && s.tensorParallel > 1) parts.push(`TP ${s.tensorParallel}${s.sequenceParallel ? ' + SP' : ''}`);
  if (s.pipelineStages && s.pipelineStages > 1) parts.push(`PP ${s.pipelineStages}`);
  if (s.contextParallel && s.contextParallel > 1) parts.push(`CP ${s.contextParallel}`);
  if (s.expertParallel && s.expertParallel > 1) parts.push(`EP ${s.expertParallel}`);
  if (s.recompute && s.recompute !== 'none') parts.push(`${s.recompute} recompute`);
  return parts.join(' + ');
}

const DIM_NAMES: Record<SetupKey, string> = {
  precision: 'precision', zeroStage: 'ZeRO stage', hybridShard: 'hybrid sharding', cpuOffload: 'CPU offload', paramOffload: 'parameter offload', recompute: 'activation recompute',
  tensorParallel: 'tensor parallelism', pipelineStages: 'pipeline parallelism', contextParallel: 'context parallelism', sequenceParallel: 'sequence parallelism',
  expertParallel: 'expert parallelism', expertTensorParallel: 'expert tensor parallelism',
};

function showValue(key: SetupKey, v: unknown): string {
  switch (key) {
    case 'zeroStage': return `ZeRO ${v as number}`;
    case 'hybridShard': return v ? 'hybrid sharding' : 'no hybrid sharding';
    case 'cpuOffload': return v ? 'CPU offload' : 'no offload';
    case 'paramOffload': return v ? 'parameter offload' : 'no parameter offload';
    case 'recompute': return `recompute ${v as string}`;
    case 'tensorParallel': return `TP ${v as number}`;
    case 'pipelineStages': return `PP ${v as number}`;
    case 'contextParallel': return `CP ${v as number}`;
    case 'expertParallel': return `EP ${v as number}`;
    case 'expertTensorParallel': return `experts split over ${v as number} tensor rank${v === 1 ? '' : 's'}`;
    case 'sequenceParallel': return v ? 'sequence parallel' : 'no sequence parallel';
    default: return String(v);
  }
}

/** Whether the plan's value of `key` is the format's default "off" (no need to say it when the format cannot). */
function isOff(key: SetupKey, v: unknown): boolean {
  if (key === 'precision') return v === 'fp32' || v === 'tf32';
  if (typeof v === 'number') return key === 'zeroStage' ? v === 0 : v <= 1;
  if (key === 'recompute') return v === 'none';
  return v === false;
}

/** How prose says a dimension's old value ("stage 0", "fp32", "TP 2"): plain numbers alone would match too much. */
function proseFor(key: SetupKey, v: unknown): string[] {
  if (key === 'precision') return wordsFor(v);
  if (key === 'zeroStage') return [`stage ${v}`, `stage-${v}`, `zero-${v}`, `zero ${v}`, `zero${v}`, ...(v === 0 ? ['plain data parallel', 'no sharding', 'ddp', 'no_shard', 'full replica'] : [])];
  if (key === 'tensorParallel') return [`tp ${v}`, `tp=${v}`, `tp${v}`];
  if (key === 'pipelineStages') return [`pp ${v}`, `pp=${v}`, `${v} stages`];
  if (key === 'expertParallel') return [`ep ${v}`, `ep=${v}`, `ep${v}`];
  if (key === 'recompute' && typeof v === 'string') return v === 'none' ? ['no recompute', 'no checkpointing'] : [`${v} recompute`];
  return [];
}

const precisionClass = (p: unknown): unknown => (p === 'tf32' ? 'fp32' : p);

const SETUP_KEYS: SetupKey[] = ['precision', 'zeroStage', 'hybridShard', 'cpuOffload', 'paramOffload', 'recompute', 'tensorParallel', 'pipelineStages', 'contextParallel', 'sequenceParallel', 'expertParallel', 'expertTensorParallel'];

/**
 * Where expert parallelism is set when a format has no words for it: the frameworks that run it state it in their
 * launch (Megatron, torchtitan) or where the MoE layers are built (DeepSpeed's deepspeed.moe.layer.MoE(ep_size=…)).
 */
const EXPERTS_ELSEWHERE = 'expert parallelism is set where the MoE layers are built (DeepSpeed MoE\'s ep_size) or by a framework that runs it (Megatron-LM\'s --expert-model-parallel-size, torchtitan\'s expert_parallel_degree)';

/**
 * The batch split the plan's micro-batch implies at the config's own global
 * batch: the global batch stays, micro-batch and accumulation move.
 */
export function keepGlobalBatch(global: number, planMicro: number, dataParallel: number): { micro: number; accumulation: number } | undefined {
  const perReplica = global / Math.max(1, dataParallel);
  if (!Number.isInteger(perReplica) || perReplica < 1) return undefined;
  // The largest micro-batch not above the plan's that divides the per-replica batch: memory stays within the plan's.
  for (let m = Math.min(planMicro, perReplica); m >= 1; m--) if (perReplica % m === 0) return { micro: m, accumulation: perReplica / m };
  return undefined;
}

/** The config's global batch: stated, else micro × accumulation × data-parallel degree when all are known. */
/** The data-parallel degree a setup states, or its GPUs over the model-parallel degrees when that is whole. */
/**
 * The data-parallel ranks a config's batch arithmetic names where it states no count: DeepSpeed checks
 * train_batch_size = train_micro_batch_size_per_gpu × gradient_accumulation_steps × data-parallel ranks and stops
 * otherwise (deepspeed/runtime/config.py), so a config that writes all three runs on one count only.
 */
export function impliedDataParallel(s: StatedSetup): number | undefined {
  const [global, micro, steps] = [s.globalBatch, s.microBatch, s.gradientAccumulation];
  if (!global?.stated || !micro?.stated || !steps?.stated) return undefined;
  const dp = global.value / (micro.value * steps.value);
  return Number.isInteger(dp) && dp >= 1 ? dp : undefined;
}

export function statedDataParallel(s: StatedSetup): number | undefined {
  if (s.dataParallel) return s.dataParallel.value;
  if (s.world === undefined) return impliedDataParallel(s);
  const dp = s.world / ((s.tensorParallel?.value ?? 1) * (s.pipelineStages?.value ?? 1) * (s.contextParallel?.value ?? 1));
  return Number.isInteger(dp) ? dp : undefined;
}

export function statedGlobalBatch(s: StatedSetup, dataParallel: number | undefined): number | undefined {
  if (s.globalBatch) return s.globalBatch.value;
  const dp = s.dataParallel?.value ?? dataParallel;
  if (s.microBatch && dp !== undefined) return s.microBatch.value * (s.gradientAccumulation?.value ?? 1) * dp;
  return undefined;
}

/**
 * What the setup says with or without a plan: one warning per stated setting WAP does not model (the reader learns
 * what is left out), one error per value a linked file contradicts (the launcher refuses to start).
 */
export function setupNotes(format: ConfigFormat, stated: StatedSetup): ConfigFinding[] {
  return [
    ...(stated.conflicts ?? []).map((c): ConfigFinding => ({ format, severity: 'error', code: 'linked-config-conflict', range: c.range, message: c.message })),
    ...(stated.unmodelled ?? []).map((u): ConfigFinding => ({ format, severity: 'warning', code: 'setup-unmodelled', range: u.range, message: u.message })),
  ];
}

/** NVMe offload (DeepSpeed's ZeRO-Infinity), planned as CPU offload: `what` names the key and what it moves. */
export function nvmeUnmodelled(range: TextRange, what: string): { range: TextRange; message: string; short: string } {
  return { range, short: 'NVMe offload not modelled', message: `${what}: WAP plans it as CPU offload (host memory over PCIe); the NVMe reads and writes each step are not modelled (step time under-stated)` };
}

/**
 * Parameters offloaded with the optimizer state kept on the GPU (DeepSpeed allows it): the planner offloads the
 * optimizer state with the parameters, so the config's plan is approximate and says so.
 */
export function paramsWithoutOptimizerUnmodelled(range: TextRange, what: string): { range: TextRange; message: string; short: string } {
  return { range, short: 'parameter offload without optimizer offload not modelled', message: `${what} offloads the parameters but not the optimizer state: WAP plans parameter offload with the optimizer state on the CPU too (memory under-stated, optimizer step priced on the CPU)` };
}

/**
 * Findings for a config's setup against the plan's. Nothing about dimensions when the planner
 * did not report a setup (older planner): the GPU-count comparison still runs.
 */
export function compareSetup(format: ConfigFormat, text: string, stated: StatedSetup, plan: PlanReport): ConfigFinding[] {
  const findings: ConfigFinding[] = setupNotes(format, stated);
  const reported = plan.plan.setup;
  if (!reported) return findings;
  // A planner from before parameter offload reports none: it kept the parameters on the GPU.
  const want: TrainingSetup = { ...reported, paramOffload: reported.paramOffload ?? false };
  const differs: Array<{ key: SetupKey; from: unknown; to: unknown; dim: SetupDim<unknown> }> = [];
  const cannot: Array<{ key: SetupKey; to: unknown; instead: string }> = [];
  for (const key of SETUP_KEYS) {
    const to = want[key];
    // A dimension the plan has no value for (expert tensor parallel on a model without experts) is not compared.
    if (to === undefined) continue;
    const dim = stated[key] as SetupDim<unknown> | undefined;
    if (dim?.expressible && !dim.expressible(want)) {
      // One setting may say two dimensions (FSDP's offload): one note for it.
      const instead = stated.inexpressible[key] ?? `the ${stated.label} has no words for it`;
      if (!cannot.some((c) => c.instead === instead)) cannot.push({ key, to, instead });
    } else if (dim) {
      // No config has a word for tf32: fp32 training runs its matmuls in tf32 where torch allows it.
      const same = key === 'precision' ? precisionClass(dim.value) === precisionClass(to) : dim.value === to;
      if (dim.matches ? !dim.matches(to, want) : !same) differs.push({ key, from: dim.value, to, dim });
    } else {
      const instead = stated.inexpressible[key] ?? (key === 'expertParallel' ? EXPERTS_ELSEWHERE : undefined);
      if (instead !== undefined && !isOff(key, to)) cannot.push({ key, to, instead });
    }
  }
  for (const c of cannot) {
    findings.push({
      format, severity: 'info', code: 'cannot-express', range: stated.anchor,
      message: `The plan uses ${showValue(c.key, c.to)}, which a ${stated.label} cannot express: ${c.instead}`,
    });
  }
  let edits: TextEdit[] = [];
  const unwritable: string[] = [];
  /** Dimensions another file states (a linked DeepSpeed JSON): that file's own check offers their fix. */
  const elsewhere: Array<{ name: string; source: string }> = [];
  const changes: Array<[string, unknown]> = [];
  // One switch that says two dimensions (FSDP's offload) shares its `set`: it runs once, its edits count for both.
  const ran = new Map<NonNullable<SetupDim<unknown>['set']>, TextEdit[] | undefined>();
  for (const d of differs) {
    const set = d.dim.set;
    const e = set && ran.has(set) ? (ran.get(set) ? [] : undefined) : set?.(d.to, want);
    if (set) ran.set(set, ran.get(set) ?? e);
    if (e) {
      // Two dimensions written by one key (an FSDP strategy says ZeRO stage and hybrid) make the same edit: keep it once.
      edits.push(...e.filter((x) => !edits.some((y) => y.start === x.start && y.end === x.end && y.newText === x.newText)));
      changes.push([d.key, d.to]);
    } else if (d.dim.source) elsewhere.push({ name: DIM_NAMES[d.key], source: d.dim.source });
    else unwritable.push(DIM_NAMES[d.key]);
  }
  // Micro-batch and accumulation follow the plan, at the config's own global batch.
  let batchNote = '';
  const global = statedGlobalBatch(stated, want.dataParallel);
  const dpChanges = stated.dataParallel ? stated.dataParallel.value !== want.dataParallel : false;
  if (stated.microBatch && global !== undefined && (stated.microBatch.value !== want.microBatch || dpChanges || differs.length > 0)) {
    const split = keepGlobalBatch(global, want.microBatch, want.dataParallel);
    const microChanges = split && split.micro !== stated.microBatch.value;
    const accumChanges = split && split.accumulation !== (stated.gradientAccumulation?.value ?? 1);
    if (split && (microChanges || accumChanges)) {
      const m = microChanges ? stated.microBatch.set?.(split.micro, want) : [];
      const a = accumChanges ? stated.gradientAccumulation?.set?.(split.accumulation, want) : [];
      if (m && a) {
        edits.push(...m, ...a);
        if (microChanges) changes.push(['microBatch', split.micro]);
        if (accumChanges) changes.push(['gradientAccumulation', split.accumulation]);
        batchNote = `micro-batch ${split.micro} × accumulation ${split.accumulation}, `;
      }
    }
  }
  const real = differs;
  if (real.length === 0 && !batchNote) return findings;
  if (stated.writeAll && changes.length > 0) edits = stated.writeAll(changes) ?? [];
  edits = mergeInsertions(edits);
  // What a linked file states is named once, after its dimensions: "ZeRO 3, CPU offload (in ds_z3.json)".
  const linked = real.filter((d) => d.dim.source);
  const yours = [
    ...real.filter((d) => !d.dim.source).map((d) => showValue(d.key, d.from)),
    ...(linked.length ? [`${linked.map((d) => showValue(d.key, d.from)).join(', ')} (in ${linked[0]!.dim.source})`] : []),
  ].join(', ');
  const planned = real.map((d) => showValue(d.key, d.to)).join(', ');
  const first = real[0]?.dim ?? stated.microBatch!;
  const fix: ConfigFix | undefined = edits.length > 0
    ? flagComments({
      title: `Use the plan's ${describeSetup(Object.fromEntries(changes.filter(([k]) => k in DIM_NAMES)) as Partial<TrainingSetup>) || 'setup'} (${batchNote}keeps the global batch${global !== undefined ? ` ${global}` : ''})${unwritable.length ? `; ${unwritable.join(', ')} cannot be written in this ${stated.label} and stays` : ''}${elsewhere.length ? `; ${elsewhere.map((e) => e.name).join(', ')} stays as ${elsewhere[0]!.source} sets it: change it there` : ''}`,
      edits,
      preferred: true,
    }, real.map((d) => contradictingComment(text, d.dim.range, proseFor(d.key, d.from))))
    : undefined;
  findings.push({
    format, severity: 'warning', code: 'setup-differs', range: first.range, fix,
    message: real.length > 0
      ? `This ${stated.label} trains with ${yours}; the plan for ${plan.model} on '${plan.cluster.name}' uses ${planned}${want.fitsThrough ? ` (${want.fitsThrough})` : ''}`
      : stated.microBatch!.value !== want.microBatch
        ? `This ${stated.label}'s micro-batch ${stated.microBatch!.value} differs from the plan's ${want.microBatch}`
        // Only the replicas differ: the same micro-batch on fewer GPUs needs more accumulation for the same batch.
        : `This ${stated.label} trains on ${stated.dataParallel!.value} data-parallel replicas; the plan uses ${want.dataParallel}`,
  });
  return findings;
}

/**
 * The explicit, separately titled fix that changes the training batch itself
 * to the plan's (never preferred: it changes what is trained).
 */
export function changeBatchFix(stated: StatedSetup, plan: PlanReport): ConfigFix | undefined {
  const g = stated.globalBatch;
  if (!g?.set || g.value === plan.batch) return undefined;
  const edits = g.set(plan.batch);
  return edits ? { title: `Change the training batch to the plan's ${plan.batch} (changes training: learning rate and schedule may need retuning)`, edits, changesTraining: true } : undefined;
}
