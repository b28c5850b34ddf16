/**
 * The degree space of the 3D search and the pins that narrow it: which tensor,
 * context, pipeline, virtual-stage and micro-batch values a block stack can
 * take on n GPUs, and, for an impossible pin, a reason that names it.
 */
import type { ParallelPins, StrategyMode } from '../../../protocol/plan';
import type { BlockShape, BlockStructure } from './blocks';
import type { FrameworkLimits } from '../../../protocol/planOptions';

export interface SpaceContext {
  structure: BlockStructure;
  shape: BlockShape;
  batch: number;
  gpusPerNode: number;
  clusterGpus: number;
  pins: ParallelPins;
  /** What the named framework runs (../frameworkLimits.ts); absent, every stage and offload. */
  limits?: FrameworkLimits;
  /** 'dp': data parallel (with ZeRO/recompute) only; 'hybrid': adds tensor and context parallel; 'all': adds pipelines. Pins override. */
  mode: StrategyMode;
  /** Micro-batches per step when the caller fixes them (PlanOptions.microBatches). */
  microBatches?: number;
}

export function divisorsOf(n: number): number[] {
  const out: number[] = [];
  for (let i = 1; i * i <= n; i++) {
    if (n % i !== 0) continue;
    out.push(i);
    if (i * i !== n) out.push(n / i);
  }
  return out.sort((a, b) => a - b);
}

function powersOfTwoUpTo(n: number): number[] {
  const out: number[] = [];
  for (let p = 1; p <= n; p *= 2) out.push(p);
  return out;
}

/** Why tensor parallel of degree tp cannot split this block, or undefined. */
export function tpProblem(shape: BlockShape, tp: number): string | undefined {
  if (tp === 1) return undefined;
  if (shape.heads > 0 && shape.heads % tp !== 0) return `${shape.heads} attention heads are not divisible by ${tp}`;
  const bad = shape.linearDims.find((d) => d % tp !== 0);
  if (bad !== undefined) return `a Linear with ${bad} features cannot be split ${tp} ways`;
  return undefined;
}

/**
 * Blocks per pipeline stage: an even split, or Megatron's embedding/loss-aware
 * uneven split (the first and last stage take one block fewer, as if the
 * embedding and the head were a layer each: (L + 2) divisible by pp).
 */
export function stageLayouts(repeats: number, pp: number): number[][] {
  if (pp === 1) return [[repeats]];
  const out: number[][] = [];
  if (repeats % pp === 0) out.push(new Array(pp).fill(repeats / pp));
  if (pp > 2 && (repeats + 2) % pp === 0) {
    const per = (repeats + 2) / pp;
    if (per >= 2) out.push([per - 1, ...new Array(pp - 2).fill(per), per - 1]);
  }
  return out;
}

export function ppProblem(repeats: number, pp: number): string | undefined {
  if (pp > repeats) return `the model has only ${repeats} repeated blocks, fewer than ${pp} stages`;
  if (stageLayouts(repeats, pp).length === 0) return `${repeats} repeated blocks cannot be split into ${pp} stages (neither ${repeats} nor ${repeats} + 2 for the embedding and head is divisible by ${pp})`;
  return undefined;
}

/** Checks every pin that does not depend on the GPU count; the first problem found, naming its flag. */
export function pinProblem(ctx: SpaceContext): string | undefined {
  const p = ctx.pins;
  const { shape, structure } = ctx;
  const positive = (v: number | undefined) => v === undefined || (Number.isInteger(v) && v >= 1);
  for (const [flag, v] of [['--tp', p.tensorParallel], ['--pp', p.pipelineStages], ['--dp', p.dataParallel], ['--cp', p.contextParallel], ['--ep', p.expertParallel], ['--etp', p.expertTensorParallel], ['--micro-batch', p.microBatch]] as const) {
    if (!positive(v)) return `${flag} ${v}: must be a positive integer`;
  }
  if (p.tensorParallel !== undefined) {
    const why = tpProblem(shape, p.tensorParallel);
    if (why) return `--tp ${p.tensorParallel}: ${why}`;
  }
  if (p.pipelineStages !== undefined) {
    const why = ppProblem(structure.repeats, p.pipelineStages);
    if (why) return `--pp ${p.pipelineStages}: ${why}`;
  }
  if (p.contextParallel !== undefined && p.contextParallel > 1 && shape.seq % p.contextParallel !== 0) return `--cp ${p.contextParallel}: the sequence of ${shape.seq} tokens is not divisible by ${p.contextParallel}`;
  if (p.expertParallel !== undefined && p.expertParallel > 1) {
    if (shape.experts === 0) return `--ep ${p.expertParallel}: the model has no mixture-of-experts layers the frontend could read`;
    if (shape.experts % p.expertParallel !== 0) return `--ep ${p.expertParallel}: ${shape.experts} experts are not divisible by ${p.expertParallel}`;
  }
  // At the attention's own TP an expert pin says Megatron's default, which a dense model's config states too.
  if (p.expertTensorParallel !== undefined && p.expertTensorParallel > 1 && p.expertTensorParallel !== p.tensorParallel) {
    if (shape.experts === 0) return `--etp ${p.expertTensorParallel}: the model has no mixture-of-experts layers the frontend could read`;
    if (p.tensorParallel !== undefined && p.tensorParallel % p.expertTensorParallel !== 0) return `--etp ${p.expertTensorParallel}: the expert tensor group lies inside the attention's, and --tp ${p.tensorParallel} is not divisible by it`;
  }
  if (p.expertTensorParallel !== undefined && p.tensorParallel !== undefined && p.expertTensorParallel < p.tensorParallel && p.sequenceParallel === false) {
    return `--etp ${p.expertTensorParallel} below --tp ${p.tensorParallel} needs sequence parallelism: each tensor rank dispatches its own tokens to the experts (Megatron-Core requires it for MoE with TP)`;
  }
  if (p.hybridShard) {
    if (p.zeroStage === 0) return 'HSDP (--hsdp on) shards ZeRO state: it needs --zero 1, 2 or 3, not 0';
    if (ctx.clusterGpus <= ctx.gpusPerNode) return 'HSDP (--hsdp on) shards within a node and replicates across nodes: the cluster has one node';
  }
  if (p.dataParallel !== undefined && ctx.batch % p.dataParallel !== 0) return `--dp ${p.dataParallel}: the global batch ${ctx.batch} is not divisible by ${p.dataParallel}`;
  if (p.microBatch !== undefined && ctx.batch % p.microBatch !== 0) return `--micro-batch ${p.microBatch}: the global batch ${ctx.batch} is not divisible by it`;
  if (p.virtualStages !== undefined && p.virtualStages > 1) {
    if (p.pipelineStages === 1) return `virtual stages ${p.virtualStages}: interleaving needs a pipeline (--pp > 1)`;
    if (p.pipelineStages !== undefined && structure.repeats % (p.pipelineStages * p.virtualStages) !== 0) return `virtual stages ${p.virtualStages}: ${structure.repeats} blocks are not divisible by ${p.pipelineStages} stages × ${p.virtualStages} chunks`;
  }
  const fixed = [p.dataParallel, p.tensorParallel, p.pipelineStages, p.contextParallel].filter((v): v is number => v !== undefined).reduce((a, b) => a * b, 1);
  if (fixed > ctx.clusterGpus) return `dp × tp × pp × cp = ${fixed} pinned GPUs, more than the cluster's ${ctx.clusterGpus}`;
  return undefined;
}

/** The pinned product when dp, tp, pp and cp are all pinned. */
export function fullyPinnedCount(p: ParallelPins): number | undefined {
  if (p.dataParallel === undefined || p.tensorParallel === undefined || p.pipelineStages === undefined || p.contextParallel === undefined) return undefined;
  return p.dataParallel * p.tensorParallel * p.pipelineStages * p.contextParallel;
}

const EVERY_COUNT_UP_TO = 32;

/**
 * GPU counts worth searching up to N: the divisors of a node, whole nodes in
 * powers of two and three times powers of two (how clusters are allocated and
 * how degrees divide), N itself, and the pinned count.
 */
export function candidateCounts(N: number, gpusPerNode: number, pinnedUnit: number): number[] {
  // A small cluster's every count is cheap in closed form, and the scaling curve keeps every point.
  if (N <= EVERY_COUNT_UP_TO) return Array.from({ length: N }, (_, i) => i + 1).filter((n) => n % pinnedUnit === 0);
  const set = new Set<number>([N]);
  for (const d of divisorsOf(gpusPerNode)) set.add(d);
  for (const p of powersOfTwoUpTo(N)) set.add(p);
  for (let k = 1; k * gpusPerNode <= N; k *= 2) {
    set.add(k * gpusPerNode);
    set.add(3 * k * gpusPerNode);
  }
  return [...set].filter((n) => n >= 1 && n <= N && n % pinnedUnit === 0).sort((a, b) => a - b);
}

/** Degrees (tp, cp, pp, dp) for n GPUs under the pins, tensor parallel inside a node unless pinned. */
export function* degreeTuples(ctx: SpaceContext, n: number): Generator<{ tp: number; cp: number; pp: number; dp: number }> {
  const p = ctx.pins;
  const { shape, structure } = ctx;
  const dpOnly = ctx.mode === 'dp';
  const tps = p.tensorParallel !== undefined ? [p.tensorParallel] : dpOnly ? [1] : divisorsOf(ctx.gpusPerNode).filter((t) => !tpProblem(shape, t));
  const cps = p.contextParallel !== undefined ? [p.contextParallel] : dpOnly ? [1] : powersOfTwoUpTo(Math.min(shape.seq, 64)).filter((c) => shape.seq % c === 0 && (c === 1 || shape.heads > 0));
  for (const tp of tps) {
    for (const cp of cps) {
      if (n % (tp * cp) !== 0) continue;
      const rest = n / (tp * cp);
      const pps = p.pipelineStages !== undefined ? [p.pipelineStages] : ctx.mode !== 'all' ? [1] : divisorsOf(rest).filter((s) => !ppProblem(structure.repeats, s));
      for (const pp of pps) {
        if (rest % pp !== 0) continue;
        const dp = rest / pp;
        if (p.dataParallel !== undefined && dp !== p.dataParallel) continue;
        if (ctx.batch % dp !== 0) continue;
        yield { tp, cp, pp, dp };
      }
    }
  }
}

/**
 * Samples per micro-batch for a replica holding batch/dp samples: every divisor (or the pin). A fixed cap (64 once)
 * forced accumulation on fine-tuning batches that fit whole (ViT-B/16 at 128 per A100 planned as 64 × 2, 5% slower);
 * micro-batches too large to fit are pruned by memory before they are timed.
 */
export function microBatchSizes(ctx: SpaceContext, dp: number): number[] {
  const perReplica = ctx.batch / dp;
  if (ctx.microBatches !== undefined) {
    const m = perReplica / ctx.microBatches;
    return Number.isInteger(m) && (ctx.pins.microBatch === undefined || ctx.pins.microBatch === m) ? [m] : [];
  }
  if (ctx.pins.microBatch !== undefined) return perReplica % ctx.pins.microBatch === 0 ? [ctx.pins.microBatch] : [];
  return divisorsOf(perReplica);
}

/** Virtual stages per pipeline stage (interleaved 1F1B needs an even split into pp·v chunks and micro-batches divisible by pp). */
export function virtualStageCounts(ctx: SpaceContext, pp: number, microBatches: number): number[] {
  const pinned = ctx.pins.virtualStages;
  if (pp === 1) return pinned !== undefined && pinned > 1 ? [] : [1];
  const candidates = pinned !== undefined ? [pinned] : [1, 2, 3, 4, 6, 8];
  return candidates.filter((v) => v === 1 || (ctx.structure.repeats % (pp * v) === 0 && microBatches % pp === 0));
}
