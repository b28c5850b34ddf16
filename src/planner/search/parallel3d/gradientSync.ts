/**
 * What a 3D configuration's data-parallel traffic adds to its step: the gradient sync after the last micro-batch
 * (all-reduce, or ZeRO's reduce-scatter, the experts' over their own group), what ZeRO-2/3 and a DDP loop without
 * no_sync add over the earlier micro-batches, offload's PCIe copies, and ZeRO-1/2's gather of the updated weights
 * after the step or behind the next forward. The estimate (estimate.ts) and the replay (schedule.ts) both price it here.
 */
import { overlapExtraMs } from '../../cost/overlap';
import { accumulatesUnsharded, allReducesEachMicroStep, gathersInForward, syncsSerially } from '../../collectiveTiming';
import { allGatherMs, allReduceMs, gradientBytes, weightBytes } from './adapters';
import type { Config3D, EstimateContext, Links, StageTimes } from './estimate';
import { expertGroupCollectiveMs } from './expertLayout';
import { offloadCopyMs, shardPlan, shardsOf } from './sharding';

/**
 * Gradient sync after the last micro-batch, over the data × context ranks: an all-reduce (ZeRO 0) or a
 * reduce-scatter of gradients to their owners (ZeRO ≥ 1; HSDP then all-reduces each shard across the replicas).
 * Buckets overlap the last micro-batch's backward (PyTorch DDP, Li et al., VLDB 2020), which runs slower beside
 * them (cost/overlap.ts). Under ZeRO 0 and 1 the accumulation steps before it do not sync, unless DDP runs without
 * no_sync (earlierAllReducesMs); `shardedMs` is what ZeRO-2/3 add over the micro-batches (shardedPerMicroMs, below),
 * those all-reduces, and offload's PCIe copies (offloadedCopiesMs).
 * ZeRO-1/2 keep whole weights, so the owners' updated slices are all-gathered after the optimizer step
 * (`afterStepMs`): DeepSpeed's step() does it before returning (stage_1_and_2.py, all_gather_dp_groups), nothing
 * computing beside it, which with the reduce-scatter is the all-reduce's ring volume (Rajbhandari et al. §5).
 * FSDP SHARD_GRAD_OP and Megatron's --overlap-param-gather gather them in the next forward instead
 * (ctx.forwardGatherStages): `nextForwardMs`, which that forward hides as far as it can (nextForwardExposedMs).
 * ZeRO-3 gathers weights when the next forward uses them (counted per micro-batch) instead.
 */
export function gradSync(ctx: EstimateContext, c: Config3D, stage: StageTimes, links: Links): { totalMs: number; exposedMs: number; shardedMs: number; afterStepMs: number; nextForwardMs: number } {
  const p = c.dp * c.cp;
  // FSDP's reduce_dtype=float32 reduce-scatters sharded gradients at 4 bytes whatever their own dtype.
  const reduced = c.zero >= 1 && ctx.gradientReduceInFp32 ? 4 : gradientBytes(ctx.precision, ctx.ampStyle);
  const bytes = stage.params * reduced;
  // The experts' gradients are reduced over their own expert-data-parallel group (expertLayout.ts), the rest over dp·cp.
  const expertBytes = stage.expertParams * reduced;
  const dense = bytes - expertBytes;
  const expertMs = expertGroupCollectiveMs(expertBytes, c.zero, c, links.edp);
  const g = c.zero >= 1 ? shardPlan(ctx.cluster, ctx.gpusPerNode, c, links.dp) : undefined;
  const totalMs = expertMs + (g ? allGatherMs(dense, g.shards, g.shardLink) + (g.replicas > 1 ? allReduceMs(dense / g.shards, g.replicas, g.replicaLink) : 0) : allReduceMs(dense, p, links.dp));
  // DeepSpeed's way (ctx.serialSyncStages): after the backward, or on its stream, the sync hides behind nothing.
  const serial = syncsSerially(ctx.serialSyncStages, c.zero);
  const exposedMs = serial ? totalMs : overlapExtraMs(totalMs, stage.backwardMs);
  // Offload's PCIe copies and DDP's all-reduces on the micro-batches before the last: spread over the micro-batches.
  const spreadMs = offloadedCopiesMs(ctx, c, stage) + earlierAllReducesMs(ctx, c, stage, links, dense, expertBytes, serial);
  if (!g) return { totalMs, exposedMs, shardedMs: spreadMs, afterStepMs: 0, nextForwardMs: 0 };
  const trainedWeights = stage.params * weightBytes(ctx.precision, ctx.ampStyle);
  const expertWeights = stage.expertParams * weightBytes(ctx.precision, ctx.ampStyle);
  const updatedGatherMs = c.zero <= 2 ? allGatherMs(trainedWeights - expertWeights, g.shards, g.shardLink) + expertGroupCollectiveMs(expertWeights, c.zero, c, links.edp) : 0;
  const inForward = gathersInForward(ctx.forwardGatherStages, c.zero);
  // ZeRO-3 gathers every weight it holds a shard of, frozen ones too (a LoRA base is most of them); gradients only the
  // trained. One collective per unit: each pays the collective's latency (cost/collectives.ts), which one gather of
  // the whole stage would pay once.
  const units = Math.max(1, stage.units);
  // The experts' shards gather, and their gradients reduce-scatter, over the experts' own group, as at the last step.
  const gatherMs = units * (allGatherMs((trainedWeights - expertWeights + stage.frozenBytes) / units, g.shards, g.shardLink) + expertGroupCollectiveMs(expertWeights / units, c.zero, c, links.edp));
  const reduceScatterMs = allGatherMs(dense, g.shards, g.shardLink) + expertMs;
  const shardedMs = shardedPerMicroMs(c, stage, gatherMs, reduceScatterMs, serial, accumulatesUnsharded(ctx.unshardedAccumulationStages, c.zero, c.microBatches)) + spreadMs;
  return { totalMs, exposedMs, shardedMs, afterStepMs: inForward ? 0 : updatedGatherMs, nextForwardMs: inForward ? updatedGatherMs : 0 };
}

/**
 * DDP without no_sync (ctx.allReduceEachMicroStepStages): each micro-batch before the last all-reduces the stage's
 * whole gradients over the data × context ranks beside its own backward, as the last one's sync does; under
 * ZeroRedundancyOptimizer (ZeRO-1) too, DDP's reducer being unaware of it: only the last sync is the sharded one.
 */
function earlierAllReducesMs(ctx: EstimateContext, c: Config3D, stage: StageTimes, links: Links, denseBytes: number, expertBytes: number, serial: boolean): number {
  if (!allReducesEachMicroStep(ctx.allReduceEachMicroStepStages, c.zero, c.microBatches, c.pp)) return 0;
  const allReduce = allReduceMs(denseBytes, c.dp * c.cp, links.dp) + expertGroupCollectiveMs(expertBytes, 0, c, links.edp);
  return (c.microBatches - 1) * (serial ? allReduce : overlapExtraMs(allReduce, stage.backwardMs));
}

/**
 * What the updated weights' gather in the next forward adds to the step: it runs beside the stage's first forward
 * chunk, which slows beside it, and exposes what outlasts that (cost/overlap.ts). The replay prices it the same way.
 */
export function nextForwardExposedMs(nextForwardMs: number, stage: StageTimes, c: Config3D): number {
  return overlapExtraMs(nextForwardMs, stage.forwardMs / c.v);
}

/**
 * Offload's PCIe copies during the passes, as far as the compute does not hide them: every micro-batch sends its
 * reduced gradient shard down to the CPU optimizer (ZeRO-Offload, Ren et al., USENIX ATC 2021 §4), and under parameter
 * offload fetches the stage's weight shard from host memory for its forward and again for its backward (ZeRO-Infinity,
 * Rajbhandari et al., SC 2021 §5; FSDP reshards after forward). The copies run on the GPU's own PCIe link, beside the
 * NVLink collectives, so they overlap the micro-batch's compute on their own.
 */
function offloadedCopiesMs(ctx: EstimateContext, c: Config3D, stage: StageTimes): number {
  if (!c.offload && !c.paramOffload) return 0;
  const shards = shardsOf(ctx, c);
  const weightShard = (stage.params * weightBytes(ctx.precision, ctx.ampStyle) + stage.frozenBytes) / (c.zero >= 3 ? shards : 1);
  const gradientShard = (stage.params * gradientBytes(ctx.precision, ctx.ampStyle)) / (c.zero >= 1 ? shards : 1);
  const perMicro = offloadCopyMs((c.paramOffload ? 2 * weightShard : 0) + gradientShard, ctx.gpu.hostBandwidthGBs);
  return c.microBatches * overlapExtraMs(perMicro, stage.forwardMs + stage.backwardMs);
}

/**
 * What sharded gradients and weights expose over a step's micro-batches, given one all-gather of the stage's weights
 * and one reduce-scatter of its gradients (the same ring traffic per byte) over the shard group. ZeRO-3 all-gathers the weights for
 * every forward and every backward (Rajbhandari et al., SC 2020, §5.3; FSDP re-gathers after resharding); prefetch
 * hides them behind that micro-batch's compute, which runs slower beside them (cost/overlap.ts). ZeRO-2 and -3
 * keep only their gradient shard, so every micro-batch before the last also reduce-scatters its gradients during its backward (DeepSpeed stage 2 reduces each
 * micro-step's buckets; FSDP outside no_sync), on the same link as the gathers; the last one's is in gradSync.
 * `unsharded` (FSDP's no_sync): those micro-batches keep their full gradients and reduce nothing; ZeRO-3 still
 * gathers for each of them (FSDP1 FULL_SHARD reshards under no_sync, _runtime_utils.py _should_free_in_backward;
 * FSDP2 unless set_reshard_after_backward(False)).
 */
function shardedPerMicroMs(c: Config3D, stage: StageTimes, gatherMs: number, reduceScatterMs: number, serial = false, unsharded = false): number {
  if (c.zero < 2) return 0;
  const earlier = Math.max(0, c.microBatches - 1);
  const reducing = unsharded ? 0 : earlier;
  if (c.zero === 2) return reducing * (serial ? reduceScatterMs : overlapExtraMs(reduceScatterMs, stage.backwardMs));
  const compute = stage.forwardMs + stage.backwardMs;
  return overlapExtraMs(2 * gatherMs, compute) + reducing * overlapExtraMs(2 * gatherMs + reduceScatterMs, compute) + (earlier - reducing) * overlapExtraMs(2 * gatherMs, compute);
}
