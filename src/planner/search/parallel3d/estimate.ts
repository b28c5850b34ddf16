/**
 * The closed-form cost of one 3D configuration: memory per GPU on its fullest
 * pipeline stage (checked first, so configurations that cannot fit are never
 * timed) and step time from the pipeline formula
 *   T = M·max_s w_s + (Σ_s w_s − max_s w_s) / v
 * (w_s: one micro-batch through stage s; with equal stages this is
 * (M + (p−1)/v)·w, the interleaved-1F1B bubble (p−1)/(v·M) of Narayanan et
 * al., SC'21), plus the data-parallel gradient sync the last backward cannot
 * hide and the optimizer step. The simulator replays the winner event by event.
 */
import type { AmpStyle, MemoryBreakdown, GatheringStage, OptimizerKind, Precision, RecomputeMode, ZeroStage } from '../../../protocol/plan';
import type { TokenDispatcher } from '../../../protocol/planOptions';
import type { ClusterSpec, GpuSpec } from '../../cluster/spec';
import { hostUpdateMs, updateMs, type AttentionKernel } from '../../cost/compute';
// The defining modules, not the room's index: under the test runner's module wrapper every re-exported name is a
// getter, and these run for each of the 3D search's millions of configurations.
import { CONTEXT_BYTES } from '../../memory/index';
import { frozenHeldBytes } from '../../memory/model';
import { optimizerStateBytes } from '../../memory/optimizerState';
import { activationBytes, gradientBytes, weightBytes, groupLink, modelStateBytes, p2pMs, type Link } from './adapters';
import type { BlockShape, BlockStructure } from './blocks';
import { shardsOf, updatedWeightsUpMs } from './sharding';
import { gradSync, nextForwardExposedMs } from './gradientSync';
import { groupCost, type CostEnv, type Degrees, type GroupCost } from './blockCost';
import { expertLinksOf, expertShardsOver } from './expertLayout';
import { accumulatesUnsharded } from '../../collectiveTiming';

export interface Config3D {
  n: number;
  dp: number;
  tp: number;
  pp: number;
  cp: number;
  ep: number;
  /** Expert tensor parallel (expertLayout.ts); absent: tp, Megatron's default. */
  etp?: number;
  /** Virtual stages (model chunks) per pipeline stage; 1 is plain 1F1B. */
  v: number;
  sp: boolean;
  /** Samples per micro-batch per replica. */
  mb: number;
  /** Micro-batches per step per replica (gradient accumulation steps). */
  microBatches: number;
  zero: ZeroStage;
  recompute: RecomputeMode;
  /** Blocks per pipeline stage. */
  blocksPerStage: number[];
  /** HSDP: ZeRO state sharded within a node, replicated across nodes (sharding.ts). */
  hsdp?: boolean;
  /** Optimizer state and gradients in host memory (ZeRO-Offload): a last resort, paid over PCIe and on the CPU every step. */
  offload?: boolean;
  /** Parameters and gradients in host memory too (ZeRO-Infinity offload_param, FSDP CPUOffload); set with `offload`. */
  paramOffload?: boolean;
}

export interface EstimateContext {
  structure: BlockStructure;
  shape: BlockShape;
  cluster: ClusterSpec;
  gpu: GpuSpec;
  gpusPerNode: number;
  precision: Precision;
  /** How 16-bit training holds its tensors (absent: master weights). */
  ampStyle?: AmpStyle;
  optimizer: OptimizerKind;
  /** The ZeRO stages whose updated weights are gathered in the next forward (PlanOptions.forwardGatherStages); absent: none. */
  forwardGatherStages?: readonly GatheringStage[];
  /** The ZeRO stages whose gradient sync runs with nothing beside it (PlanOptions.serialSyncStages); absent: none. */
  serialSyncStages?: readonly ZeroStage[];
  /** The ZeRO stages that accumulate unsharded gradients until the last micro-batch (PlanOptions.unshardedAccumulationStages); absent: none. */
  unshardedAccumulationStages?: readonly ZeroStage[];
  /** The ZeRO stages (0, 1) that all-reduce on every micro-batch (PlanOptions.allReduceEachMicroStepStages); absent: none. */
  allReduceEachMicroStepStages?: readonly ZeroStage[];
  modelDtypeBytes: number;
  /** Memory a plan may use per GPU, workspace included (device memory less the allocator's fragmentation margin). */
  usableBytes: number;
  deviceBytes: number;
  /** The spec's host memory per GPU for offloaded state (cluster/spec.ts hostMemoryBytes); absent: not checked. */
  hostBytesPerGpu?: number;
  attention?: AttentionKernel;
  /** How tokens reach other GPUs' experts (PlanOptions.tokenDispatcher); absent: all-to-all. */
  tokenDispatcher?: TokenDispatcher;
  /** Sharded gradients reduce-scattered in fp32 (PlanOptions.gradientReduceInFp32). */
  gradientReduceInFp32?: boolean;
  cache: Map<string, { block: GroupCost; prefix: GroupCost; suffix: GroupCost }>;
}

export interface StageTimes {
  /** One micro-batch through the stage (all its chunks): forward, backward (incl. recompute) and communication, ms. */
  forwardMs: number;
  backwardMs: number;
  recomputeMs: number;
  tpMs: number;
  p2pMs: number;
  params: number;
  /** Of params, the experts' (already divided by ep and etp): their gradients sync over the expert-data-parallel group. */
  expertParams: number;
  /** Bytes of the stage's frozen weights (quantized ones at their own size): ZeRO-3 gathers them as it gathers the rest. */
  frozenBytes: number;
  /**
   * The units ZeRO-3 gathers the stage's weights in, one collective each per pass: one per block, and one for the
   * embedding or head the stage holds. FSDP wraps each block as a unit (auto-wrap by block class, torchtitan's
   * fully_shard per block) with the root as the last; DeepSpeed's ZeRO-3 fetches per submodule, finer still.
   */
  units: number;
}

export interface Estimate {
  stepMs: number;
  pipelineMs: number;
  gradSyncMs: number;
  updateMs: number;
  memory: MemoryBreakdown;
  /** Host memory per GPU that offload fills on the fullest stage (0 without offload). */
  hostBytes: number;
  fits: boolean;
  /** The representative stages (first, a middle one, last) in that order. */
  stages: StageTimes[];
}

export interface Links {
  tp: Link;
  cp: Link;
  dp: Link;
  pp: Link;
  ep: Link;
  /** The expert tensor and expert-data-parallel groups (expertLayout.ts). */
  etp: Link;
  edp: Link;
  tpEp: Link;
}


/**
 * The ranks ZeRO shards an expert's state over: of the shard group, those holding the same experts, each expert-parallel
 * group of ep ranks holding all of them once (Megatron-Core's expert-data-parallel group, dp·cp/ep; torchtitan's FSDP
 * over the data ranks left to experts). Sharding the experts' 1/ep share over the whole group again counted
 * DeepSeek-V3 on 16 GPUs with EP 16 at a sixteenth of its optimizer state.
 */
export function expertShardsOf(ctx: EstimateContext, c: Config3D): number {
  return expertShardsOver(shardsOf(ctx, c), c);
}

export function linksFor(ctx: EstimateContext, c: Pick<Config3D, 'tp' | 'cp' | 'dp' | 'ep' | 'etp'>): Links {
  const g = ctx.gpusPerNode;
  const tp = groupLink(ctx.cluster, g, c.tp, 1);
  // Gradients are synchronised over data × context ranks (Megatron folds CP into the gradient group).
  const dp = groupLink(ctx.cluster, g, c.dp * c.cp, c.tp);
  // Experts laid out as the dense layers (no EP, split as TP): their groups are the tensor and data groups, which a
  // dense model's search (millions of configurations at 1,024 GPUs) need not build again.
  const experts = c.ep === 1 && (c.etp ?? c.tp) === c.tp ? { ep: groupLink(ctx.cluster, g, 1, c.tp), etp: tp, edp: dp, tpEp: tp } : expertLinksOf(ctx.cluster, g, c);
  return { ...experts, tp, cp: groupLink(ctx.cluster, g, c.cp, c.tp), dp, pp: groupLink(ctx.cluster, g, 2, c.tp * c.cp * c.dp) };
}

/** The degrees a configuration's block costs depend on. */
export function degreesOf(c: Config3D): Degrees {
  return { tp: c.tp, cp: c.cp, ep: c.ep, ...(c.etp !== undefined ? { etp: c.etp } : {}), sp: c.sp, mb: c.mb };
}

export function costsFor(ctx: EstimateContext, deg: Degrees, links: Links): { block: GroupCost; prefix: GroupCost; suffix: GroupCost } {
  const key = `${deg.tp}/${deg.cp}/${deg.ep}/${deg.etp ?? deg.tp}/${deg.sp ? 1 : 0}/${deg.mb}/${links.tp.lane}/${links.cp.lane}/${links.ep.lane}/${links.etp.lane}`;
  const hit = ctx.cache.get(key);
  if (hit) return hit;
  const env: CostEnv = { gpu: ctx.gpu, precision: ctx.precision, ...(ctx.ampStyle ? { ampStyle: ctx.ampStyle } : {}), modelDtypeBytes: ctx.modelDtypeBytes, shape: ctx.shape, tpLink: links.tp, cpLink: links.cp, epLink: links.ep, etpLink: links.etp, tpEpLink: links.tpEp, ...(ctx.tokenDispatcher ? { dispatcher: ctx.tokenDispatcher } : {}), attention: ctx.attention };
  const r = { block: groupCost(ctx.structure.block, deg, env, true), prefix: groupCost(ctx.structure.prefix, deg, env, false), suffix: groupCost(ctx.structure.suffix, deg, env, false) };
  ctx.cache.set(key, r);
  return r;
}

function savedPerBlock(b: GroupCost, r: RecomputeMode): number {
  return r === 'full' ? b.savedFull : r === 'selective' ? b.savedSelective : b.savedNone;
}

/**
 * The stages that differ: the first (embedding, most micro-batches in flight),
 * the second standing for every middle stage (same blocks, fewer in flight than
 * the first) and the last (head). Costing these three keeps a 128-stage
 * pipeline as cheap to estimate as a 3-stage one.
 */
export function representativeStages(pp: number): Array<{ s: number; count: number }> {
  if (pp === 1) return [{ s: 0, count: 1 }];
  if (pp === 2) return [{ s: 0, count: 1 }, { s: 1, count: 1 }];
  return [{ s: 0, count: 1 }, { s: 1, count: pp - 2 }, { s: pp - 1, count: 1 }];
}

/**
 * Memory per GPU of stage s. 1F1B keeps pp − s micro-batches in flight on
 * stage s; interleaving adds (p−1)/(p·v) (Korthikanti et al., 2022, §4.2.3).
 * The first stage also holds the embedding, the last the head.
 */
export function stageMemory(ctx: EstimateContext, c: Config3D, costs: Costs, s: number): MemoryBreakdown {
  const { block, prefix, suffix } = costs;
  const shards = shardsOf(ctx, c);
  const last = c.pp - 1;
  const interleave = c.v > 1 ? 1 + (c.pp - 1) / (c.pp * c.v) : 1;
  const blocks = c.blocksPerStage[s];
  const state = stageModelState(ctx, c, costs, s, { cpu: c.offload, params: c.paramOffload }, shards);
  // FSDP's no_sync: the stage's full gradients stay on the GPU, offloaded or not, until the last micro-batch's
  // reduce-scatter (memory/model.ts MemorySetup.unshardedGradients), the experts' too (each GPU's own 1/ep of them).
  if (shards > 1 && ctx.unshardedAccumulationStages && accumulatesUnsharded(ctx.unshardedAccumulationStages, c.zero, c.microBatches)) state.gradients = onStage(costs, c, s, 'params') * gradientBytes(ctx.precision, ctx.ampStyle);
  // Frozen weights: no gradient or optimizer state; ZeRO-3 shards them with the rest, parameter offload moves them
  // to host memory with the rest (memory/model.ts frozenWeightBytes).
  if (!c.paramOffload) state.weights += stageFrozenOnGpu(ctx, c, costs, s, shards);
  const inFlight = Math.min(c.microBatches, c.pp - s) * interleave;
  const acts = inFlight * (blocks * savedPerBlock(block, c.recompute) + (s === 0 ? prefix.savedNone : 0) + (s === last ? suffix.savedNone : 0));
  // Workspace as the memory model counts it: the CUDA context, ZeRO-3's gathered (or parameter offload's fetched)
  // current and prefetched block, and under full recompute the block whose activations are rebuilt for the backward in progress.
  const blockWeightBytes = weightBytes(ctx.precision, ctx.ampStyle);
  const gathered = (c.zero >= 3 && shards > 1) || c.paramOffload ? 2 * (block.params * blockWeightBytes + frozenHeldBytes(block.frozenParams, blockWeightBytes, { params: block.quantizedParams, bytes: block.quantizedBytes })) : 0;
  const workspace = CONTEXT_BYTES + gathered + (c.recompute === 'full' ? block.savedNone : 0);
  const total = state.weights + state.gradients + state.optimizer + acts + workspace;
  return { weights: state.weights, gradients: state.gradients, optimizer: state.optimizer, activations: acts, workspace, total };
}

/** Host memory per GPU that offload fills on stage s: what the GPU would otherwise hold of its model state (and frozen weights). */
export function stageHostBytes(ctx: EstimateContext, c: Config3D, costs: Costs, s: number): number {
  if (!c.offload && !c.paramOffload) return 0;
  // What the GPU would hold without offload, less what it holds with it (memory/model.ts offloadedHostBytes), with
  // the experts sharded over their own group.
  const shards = shardsOf(ctx, c);
  const total = (m: { weights: number; gradients: number; optimizer: number }) => m.weights + m.gradients + m.optimizer;
  const kept = total(stageModelState(ctx, c, costs, s, { cpu: false, params: false }, shards));
  const left = total(stageModelState(ctx, c, costs, s, { cpu: c.offload, params: c.paramOffload }, shards));
  return kept - left + (c.paramOffload ? stageFrozenOnGpu(ctx, c, costs, s, shards) : 0);
}

/** GPUs' shares of a node's host memory and DRAM bandwidth each of n ranks gets (Topology.hostShare, ranks packed per node). */
export function hostShareOf(ctx: EstimateContext, n: number): number {
  return Math.max(1, ctx.gpusPerNode / Math.min(n, ctx.gpusPerNode));
}

/** Host memory each of n ranks may fill with offloaded state; undefined when the spec does not say. */
export function hostCapOf(ctx: EstimateContext, n: number): number | undefined {
  return ctx.hostBytesPerGpu === undefined ? undefined : ctx.hostBytesPerGpu * hostShareOf(ctx, n);
}

/** Host memory per GPU on the stage that offloads most. */
function hostBytesOf(ctx: EstimateContext, c: Config3D, costs: Costs): number {
  if (!c.offload && !c.paramOffload) return 0;
  return Math.max(...representativeStages(c.pp).map(({ s }) => stageHostBytes(ctx, c, costs, s)));
}

/** Memory on the fullest stage (the representative stages stand for all: middle stages hold fewer micro-batches than the first). */
export function memoryOf(ctx: EstimateContext, c: Config3D, costs: Costs): MemoryBreakdown {
  let worst: MemoryBreakdown | undefined;
  for (const { s } of representativeStages(c.pp)) {
    const m = stageMemory(ctx, c, costs, s);
    if (!worst || m.total > worst.total) worst = m;
  }
  return worst!;
}

/** A block-cost quantity over stage s: its blocks, plus the embedding on the first stage and the head on the last. */
function onStage(costs: Costs, c: Config3D, s: number, key: 'params' | 'castParams' | 'frozenParams' | 'expertParams' | 'expertCastParams' | 'expertFrozenParams' | 'quantizedParams' | 'quantizedBytes'): number {
  return c.blocksPerStage[s] * costs.block[key] + (s === 0 ? costs.prefix[key] : 0) + (s === c.pp - 1 ? costs.suffix[key] : 0);
}

/** Bytes of stage s's frozen weights, quantized ones at their own size (memory/model.ts frozenHeldBytes). */
function stageFrozenBytes(ctx: EstimateContext, c: Config3D, costs: Costs, s: number): number {
  const quantized = { params: onStage(costs, c, s, 'quantizedParams'), bytes: onStage(costs, c, s, 'quantizedBytes') };
  return frozenHeldBytes(onStage(costs, c, s, 'frozenParams'), weightBytes(ctx.precision, ctx.ampStyle), quantized);
}

/** Stage s's frozen weights on one GPU: ZeRO-3 shards the experts' over their own group, the rest over the shard group. */
function stageFrozenOnGpu(ctx: EstimateContext, c: Config3D, costs: Costs, s: number, shards: number): number {
  const frozen = stageFrozenBytes(ctx, c, costs, s);
  // The search's inner loop (no closures here: each would be a new function per call): a dense model takes the one
  // division it always did.
  if (costs.block.expertFrozenParams === 0) return frozen / frozenShards(c, shards);
  const expertBytes = onStage(costs, c, s, 'expertFrozenParams') * weightBytes(ctx.precision, ctx.ampStyle);
  return (frozen - expertBytes) / frozenShards(c, shards) + expertBytes / frozenShards(c, expertShardsOf(ctx, c));
}

/** What ZeRO divides frozen weights by: the shard group at ZeRO-3, nothing below. */
function frozenShards(c: Config3D, shards: number): number {
  return c.zero >= 3 && shards > 1 ? shards : 1;
}

/** Stage s's model state on one GPU: the dense parameters' sharded over the shard group, the experts' over theirs. */
function stageModelState(ctx: EstimateContext, c: Config3D, costs: Costs, s: number, offload: { cpu?: boolean; params?: boolean }, shards: number): { weights: number; gradients: number; optimizer: number } {
  const params = onStage(costs, c, s, 'params');
  const castParams = onStage(costs, c, s, 'castParams');
  // Experts live in the repeated blocks only (the embedding and head are dense): a dense model skips their split.
  if (costs.block.expertParams === 0) return modelStateBytes(params, ctx.precision, ctx.optimizer, c.zero, shards, offload, ctx.ampStyle, castParams);
  const expertParams = onStage(costs, c, s, 'expertParams');
  const expertCast = onStage(costs, c, s, 'expertCastParams');
  const dense = modelStateBytes(params - expertParams, ctx.precision, ctx.optimizer, c.zero, shards, offload, ctx.ampStyle, castParams - expertCast);
  const experts = modelStateBytes(expertParams, ctx.precision, ctx.optimizer, c.zero, expertShardsOf(ctx, c), offload, ctx.ampStyle, expertCast);
  return { weights: dense.weights + experts.weights, gradients: dense.gradients + experts.gradients, optimizer: dense.optimizer + experts.optimizer };
}

/** Every stage's memory per GPU, stage 0 first (for the report; the search only needs the fullest). */
export function memoryPerStage(ctx: EstimateContext, c: Config3D, costs: Costs): MemoryBreakdown[] {
  return Array.from({ length: c.pp }, (_, s) => stageMemory(ctx, c, costs, s));
}

/** Times of one micro-batch through stage s, given the block costs. */
export function stageTime(ctx: EstimateContext, c: Config3D, costs: { block: GroupCost; prefix: GroupCost; suffix: GroupCost }, links: Links, s: number): StageTimes {
  const { block, prefix, suffix } = costs;
  const recompute = c.recompute === 'full' ? block.recomputeFullMs + block.tpForwardMs : c.recompute === 'selective' ? block.recomputeSelectiveMs : 0;
  const bytes = activationBytes(ctx.precision);
  // Megatron's scatter/gather optimisation sends 1/tp of the boundary activation and all-gathers it on the receiving side over NVLink.
  const boundary = (c.mb * ctx.shape.seq * ctx.shape.hidden * bytes) / (c.cp * c.tp);
  const hop = c.pp > 1 ? p2pMs(boundary, links.pp) : 0;
  const k = c.blocksPerStage[s];
  const first = s === 0;
  const lastStage = s === c.pp - 1;
  const f = k * (block.forwardMs + block.cpForwardMs + block.epMs / 2) + (first ? prefix.forwardMs : 0) + (lastStage ? suffix.forwardMs : 0);
  const b = k * (block.backwardMs + block.cpBackwardMs + block.epMs / 2) + (first ? prefix.backwardMs : 0) + (lastStage ? suffix.backwardMs : 0);
  const units = k + (first || lastStage ? 1 : 0);
  return { forwardMs: f, backwardMs: b, recomputeMs: k * recompute, tpMs: k * (block.tpForwardMs + block.tpBackwardMs), p2pMs: 2 * c.v * hop, params: onStage(costs, c, s, 'params'), expertParams: onStage(costs, c, s, 'expertParams'), frozenBytes: stageFrozenBytes(ctx, c, costs, s), units };
}

export function workOf(s: StageTimes): number {
  return s.forwardMs + s.backwardMs + s.recomputeMs + s.tpMs + s.p2pMs;
}

export type Costs = { block: GroupCost; prefix: GroupCost; suffix: GroupCost };

export function estimate(ctx: EstimateContext, c: Config3D, pruneByMemory = true): Estimate {
  const links = linksFor(ctx, c);
  return estimateWith(ctx, c, costsFor(ctx, degreesOf(c), links), links, pruneByMemory);
}

/** estimate() with the links and block costs already looked up (the search's inner loop). */
export function estimateWith(ctx: EstimateContext, c: Config3D, costs: Costs, links: Links, pruneByMemory: boolean): Estimate {
  const memory = memoryOf(ctx, c, costs);
  const hostBytes = hostBytesOf(ctx, c, costs);
  const hostCap = hostCapOf(ctx, c.n);
  const fits = memory.total <= ctx.usableBytes && (hostCap === undefined || hostBytes <= hostCap);
  // Pruned: memory only, never timed.
  if (!fits && pruneByMemory) return { stepMs: Infinity, pipelineMs: Infinity, gradSyncMs: 0, updateMs: 0, memory, hostBytes, fits, stages: [] };
  const stages: StageTimes[] = [];
  let max = 0;
  let sum = 0;
  let maxStage: StageTimes | undefined;
  for (const { s, count } of representativeStages(c.pp)) {
    const st = stageTime(ctx, c, costs, links, s);
    stages.push(st);
    const w = workOf(st);
    sum += w * count;
    if (!maxStage || w > max) {
      max = w;
      maxStage = st;
    }
  }
  const pipelineMs = c.microBatches * max + (sum - max) / c.v;
  const sync = gradSync(ctx, c, maxStage!, links);
  const shards = c.zero >= 1 ? shardsOf(ctx, c) : 1;
  // Offloaded, the step's update is the CPU optimizer step, then the updated weights up over PCIe; with the parameters
  // offloaded too, the weights come up in the passes (offloadedCopiesMs).
  const stateBytes = optimizerStateBytes(ctx.optimizer, 4);
  const cpuStep = c.offload ? (hostUpdateMs(maxStage!.params / shards, stateBytes, ctx.gpu, hostShareOf(ctx, c.n)) ?? 0) : 0;
  const upd = c.paramOffload ? cpuStep : c.offload ? cpuStep + updatedWeightsUpMs(maxStage!.params / shards, ctx.precision, ctx.gpu.hostBandwidthGBs, ctx.ampStyle) : updateMs(maxStage!.params / shards, stateBytes, ctx.gpu, 4);
  const gatherMs = sync.afterStepMs + nextForwardExposedMs(sync.nextForwardMs, maxStage!, c);
  const stepMs = pipelineMs + sync.exposedMs + sync.shardedMs + upd + gatherMs;
  return { stepMs, pipelineMs, gradSyncMs: sync.exposedMs + sync.shardedMs + gatherMs, updateMs: upd, memory, hostBytes, fits, stages };
}
