/**
 * The plan's training setup (precision, ZeRO/FSDP stage, offload, recompute, micro-batch and accumulation) in the
 * words of the DeepSpeed and Accelerate configs WAP exports, so an exported config trains as the plan was priced,
 * and WAP's own check reads it back without a difference (deepspeedSetup.ts, accelerateSetup.ts are the readers).
 * What a format has no key for is a note, never dropped.
 */
import type { AmpStyle, PlanReport, TrainingSetup, ZeroStage } from '../protocol/plan';

export interface SetupWords<T> {
  value: T;
  /** What the config cannot say, and what to do instead. */
  notes: string[];
}

export const isSixteen = (s: TrainingSetup): boolean => s.precision === 'bf16' || s.precision === 'fp16' || s.precision === 'fp8';

/**
 * What an engine's config does with the plan's precision that the plan did not price: TF32 is switched on in code,
 * and a 16-bit plan held otherwise than the engine holds it (`runsAs`) needs --amp-style to be priced as it runs.
 */
export function precisionNotes(s: TrainingSetup, engine: string, runsAs: AmpStyle): string[] {
  const notes: string[] = [];
  if (s.precision === 'tf32') notes.push('TF32 is switched on in code (torch.backends.cuda.matmul.allow_tf32 = True), not in this config.');
  const held = s.ampStyle ?? 'master-weights';
  if (!isSixteen(s) || held === runsAs) return notes;
  const runs = runsAs === 'fp32-gradients' ? 'fp32 master weights and fp32 gradients' : 'fp32 master weights';
  notes.push(runsAs === 'autocast'
    ? `This config trains 16 bits as torch.autocast does; the plan holds them as ${held}: plan with --amp-style autocast to price it as it runs.`
    : `The plan holds 16-bit tensors as ${held}; ${engine} keeps ${runs}: plan with --amp-style ${runsAs} to price it as it runs.`);
  return notes;
}

/**
 * Degrees no launcher config can state (the torch-parallelize export writes them). Tensor-parallel layers are
 * already named by the exports' model-parallel note.
 */
function degreeNotes(s: TrainingSetup, label: string): string[] {
  const degrees = [
    s.pipelineStages > 1 && label === 'Accelerate' ? `${s.pipelineStages} pipeline stages` : '',
    s.contextParallel > 1 ? `context parallel ${s.contextParallel}` : '',
    s.expertParallel > 1 ? `expert parallel ${s.expertParallel} (set where the MoE layers are built, e.g. deepspeed.moe.layer.MoE(ep_size=${s.expertParallel}))` : '',
  ].filter(Boolean);
  return degrees.length ? [`The plan uses ${degrees.join(', ')}, which ${label === 'Accelerate' ? 'an' : 'a'} ${label} config cannot say: see \`wap export --format torch-parallelize\` or Megatron-LM arguments.`] : [];
}

function recomputeNote(s: TrainingSetup, where: string): string[] {
  return s.recompute === 'none' ? [] : [`The plan recomputes activations (${s.recompute}): switch it on ${where}.`];
}

/** Micro-batch and accumulation as the plan runs them, when they are whole numbers. */
export function plannedBatchSplit(report: PlanReport): { micro: number; accumulation: number } | undefined {
  const s = report.plan.setup;
  if (!s || !Number.isInteger(s.microBatch) || s.microBatch < 1 || !Number.isInteger(s.gradientAccumulation) || s.gradientAccumulation < 1) return undefined;
  return { micro: s.microBatch, accumulation: s.gradientAccumulation };
}

/**
 * What an FSDP-based config (accelerate's fsdp_offload_params, torchtitan's enable_cpu_offload) does with the plan's
 * offload: its one switch moves parameters, gradients and optimizer state together, so it says the plan's
 * parameter offload, and a plan offloading the optimizer state alone is written without offload, with this note.
 */
export function fsdpOffloadNotes(s: TrainingSetup, engine: string): string[] {
  return s.cpuOffload && !s.paramOffload
    ? [`The plan offloads the optimizer state alone, which ${engine} cannot (its offload moves the parameters and gradients too): written without offload; plan with --offload params to price ${engine}'s offload, or export --format deepspeed (offload_optimizer).`]
    : [];
}

/** DeepSpeed keys for the plan's precision, ZeRO stage and offloads (empty without a setup). */
export function deepspeedSetupKeys(report: PlanReport): SetupWords<Record<string, unknown>> {
  const s = report.plan.setup;
  if (!s) return { value: {}, notes: [] };
  const value: Record<string, unknown> = {};
  const notes: string[] = [];
  // DeepSpeed's bf16/fp16 modes keep 16-bit weights with an fp32 master copy in the optimizer.
  if (s.precision === 'bf16' || s.precision === 'fp8') value.bf16 = { enabled: true };
  if (s.precision === 'fp16') value.fp16 = { enabled: true };
  if (s.precision === 'fp8') notes.push('fp8 GEMMs come from Transformer Engine layers in the model; this config trains the rest in bf16.');
  // DeepSpeed's bf16/fp16 optimizers keep the fp32 master copy.
  notes.push(...precisionNotes(s, 'DeepSpeed', 'master-weights'));
  // DeepSpeed offloads parameters at ZeRO-3 only (on one GPU, stage 3 shards nothing: the plan's memory stands).
  const stage: ZeroStage = s.paramOffload ? 3 : report.plan.gpus > 1 ? s.zeroStage : 0;
  if (s.paramOffload && report.plan.gpus > 1 && s.zeroStage < 3) notes.push(`DeepSpeed offloads parameters (offload_param) only at ZeRO-3: written as stage 3, which also shards what the plan's ZeRO-${s.zeroStage} keeps whole; plan with --zero 3 to price it as it runs.`);
  // A plan priced with its gradient buckets beside the backward: DeepSpeed does that at ZeRO-2 only with overlap_comm
  // (off by default below ZeRO-3), and never without ZeRO or at ZeRO-1, which reduce after the backward.
  const overlapped = report.plan.gpus > 1 && s.dataParallel * s.contextParallel > 1 && s.gradientSync !== 'serial';
  value.zero_optimization = {
    stage,
    ...(s.cpuOffload && stage > 0 ? { offload_optimizer: { device: 'cpu' } } : {}),
    ...(s.paramOffload ? { offload_param: { device: 'cpu' } } : {}),
    ...(overlapped && stage === 2 ? { overlap_comm: true } : {}),
  };
  if (overlapped && stage <= 1) notes.push(afterBackwardNote(stage));
  if (s.weightGather === 'next-forward') notes.push('The plan gathers the updated weights behind the next forward, as FSDP or Megatron run it; DeepSpeed gathers them inside its optimizer step, so expect a slower step: plan with this config beside the model to price DeepSpeed\'s way.');
  if (s.hybridShard) notes.push(`The plan shards within a node (HSDP, over ${s.shardGroup ?? 'a node\'s'} ranks); DeepSpeed's nearest is ZeRO++ (zero_hpz_partition_size), not written here.`);
  notes.push(...recomputeNote(s, 'in the model code (model.gradient_checkpointing_enable() or deepspeed.checkpointing.checkpoint); this config alone does not'));
  notes.push(...degreeNotes(s, 'DeepSpeed'));
  return { value, notes };
}

/** What a plan priced with its gradient sync beside the backward does not run as under DeepSpeed at ZeRO-0/1. */
function afterBackwardNote(stage: ZeroStage): string {
  return `The plan's step overlaps the gradient sync with the backward, as DDP and FSDP run it; DeepSpeed ${stage === 0 ? 'without ZeRO' : 'at ZeRO-1'} reduces gradients after the backward, so expect a slower step: plan with this config beside the model to price DeepSpeed's way.`;
}

/** FSDP's names for a ZeRO stage (accelerateSetup.ts reads them back); ZeRO-1 has none. */
function fsdpStrategy(zero: ZeroStage, hybrid: boolean): string | undefined {
  if (zero === 3) return hybrid ? 'HYBRID_SHARD' : 'FULL_SHARD';
  if (zero === 2) return hybrid ? 'HYBRID_SHARD_ZERO2' : 'SHARD_GRAD_OP';
  return undefined;
}

/**
 * Accelerate's lines for the plan's engine and precision: MULTI_GPU for plain data parallelism, FSDP for ZeRO-2/3
 * (sharding strategy, activation checkpointing, offload), its DeepSpeed plugin for ZeRO-1 (FSDP has no
 * optimizer-only sharding). `mixed_precision` runs the forward under torch.autocast.
 */
export function accelerateSetupLines(report: PlanReport, processes: number): SetupWords<string[]> {
  const s = report.plan.setup;
  if (!s) return { value: [`distributed_type: ${processes > 1 ? 'MULTI_GPU' : "'NO'"}`, `mixed_precision: 'no' # the plan states no precision`], notes: [] };
  const notes: string[] = [];
  const lines: string[] = [];
  const zero: ZeroStage = processes > 1 ? s.zeroStage : 0;
  const fsdp = fsdpStrategy(zero, s.hybridShard);
  if (processes <= 1) lines.push(`distributed_type: 'NO'`);
  else if (fsdp) {
    lines.push('distributed_type: FSDP', 'fsdp_config:', `  fsdp_sharding_strategy: ${fsdp}`, `  fsdp_activation_checkpointing: ${s.recompute !== 'none'}`, `  fsdp_offload_params: ${s.paramOffload}`);
    notes.push(...fsdpOffloadNotes(s, 'FSDP'));
  } else if (zero === 1) {
    lines.push('distributed_type: DEEPSPEED', 'deepspeed_config:', '  zero_stage: 1', `  offload_optimizer_device: ${s.cpuOffload ? 'cpu' : 'none'}`, `  gradient_accumulation_steps: ${s.gradientAccumulation}`);
    if (s.paramOffload) notes.push('DeepSpeed offloads parameters only at ZeRO-3; this ZeRO-1 config keeps them on the GPU: plan with --zero 3 to train with parameter offload.');
    if (s.gradientSync !== 'serial') notes.push(afterBackwardNote(1));
    notes.push(...recomputeNote(s, 'in the script (model.gradient_checkpointing_enable())'));
  } else {
    lines.push('distributed_type: MULTI_GPU');
    notes.push(...recomputeNote(s, 'in the script (model.gradient_checkpointing_enable())'));
  }
  if (!fsdp && zero !== 1 && s.cpuOffload) notes.push(`The plan keeps ${s.paramOffload ? 'parameters, gradients and optimizer state' : 'the optimizer state'} in CPU memory, which Accelerate switches on only with FSDP (fsdp_offload_params) or its DeepSpeed plugin: export --format deepspeed to train it.`);
  lines.push(`mixed_precision: ${isSixteen(s) ? s.precision : "'no'"}`);
  // Under its DeepSpeed plugin Accelerate hands mixed precision to DeepSpeed (fp32 master weights), else to autocast.
  const deepspeedPlugin = zero === 1 && !fsdp && processes > 1;
  notes.push(...precisionNotes(s, deepspeedPlugin ? 'Accelerate with DeepSpeed' : 'Accelerate', deepspeedPlugin ? 'master-weights' : 'autocast'));
  notes.push(...degreeNotes(s, 'Accelerate'));
  return { value: lines, notes };
}
