/**
 * When a plan's framework runs the collectives whose timing differs between frameworks, as a flag or the training
 * config names it: ZeRO-1/2's gather of the weights their optimizer slices updated (protocol WeightGatherTiming;
 * PlanOptions.forwardGatherStages), and whether the gradient sync runs beside the backward or with nothing beside it
 * (PlanOptions.serialSyncStages), and whether ZeRO-2/3 reduce-scatter every micro-step or accumulate the full gradients
 * until the last (PlanOptions.unshardedAccumulationStages: FSDP's no_sync). Absent, WAP prices DeepSpeed's gather, the
 * one that hides nothing, and says it assumed it, DDP's and FSDP's bucketed sync beside the backward, PyTorch's own,
 * and DeepSpeed's reduce-scatter every micro-step, the accumulation that holds least.
 */
import type { GatheringStage, TrainingSetup, WeightGatherTiming, ZeroStage } from '../protocol/plan';
import type { PlanOptions } from '../protocol/planOptions';

const ASSUMED_GATHER = "assumed: DeepSpeed's way, which hides nothing; FSDP's SHARD_GRAD_OP and Megatron's --overlap-param-gather gather in the next forward (--weight-gather next-forward)";

/** The stages `--weight-gather` / `wap.weightGather` name: both that gather, the one way. */
export function forwardGatherStagesFor(timing: WeightGatherTiming): GatheringStage[] {
  return timing === 'next-forward' ? [1, 2] : [];
}

/** Whether `zero`'s updated weights are gathered in the next forward under `stages` (PlanOptions.forwardGatherStages). */
export function gathersInForward(stages: readonly GatheringStage[] | undefined, zero: ZeroStage): boolean {
  return (zero === 1 || zero === 2) && !!stages?.includes(zero);
}

/** Whether `zero`'s gradient sync runs with nothing computing beside it under `stages` (PlanOptions.serialSyncStages). */
export function syncsSerially(stages: readonly ZeroStage[] | undefined, zero: ZeroStage): boolean {
  return !!stages?.includes(zero);
}

/**
 * Whether `zero`'s gradients are accumulated unsharded over `microSteps` under `stages`
 * (PlanOptions.unshardedAccumulationStages): only ZeRO-2/3 shard gradients, and one micro-step has nothing to accumulate.
 */
export function accumulatesUnsharded(stages: readonly ZeroStage[] | undefined, zero: ZeroStage, microSteps: number): boolean {
  return zero >= 2 && microSteps > 1 && !!stages?.includes(zero);
}

const ASSUMED_ACCUMULATION = "assumed: each micro-step reduce-scatters and keeps its shard, as DeepSpeed and FSDP outside no_sync do; the HF Trainer and accelerate's accumulate() with FSDP1 keep the full gradients until the last (plan with their config beside the model, or --framework fsdp)";

/** The setup with the collective timings it was priced under, and why: the gather for ZeRO-1/2, a serial sync. */
export function withCollectiveTimings(setup: TrainingSetup, options: PlanOptions): TrainingSetup {
  let out = setup;
  const replicated = setup.dataParallel * setup.contextParallel > 1;
  if ((setup.zeroStage === 1 || setup.zeroStage === 2) && (setup.shardGroup ?? 0) >= 2) {
    const timing: WeightGatherTiming = gathersInForward(options.forwardGatherStages, setup.zeroStage) ? 'next-forward' : 'after-step';
    const reason = options.forwardGatherStages ? (options.forwardGatherSource ?? '--weight-gather') : ASSUMED_GATHER;
    out = { ...out, weightGather: timing, weightGatherReason: reason };
  }
  if (replicated && syncsSerially(options.serialSyncStages, setup.zeroStage)) out = { ...out, gradientSync: 'serial', gradientSyncReason: options.serialSyncSource ?? 'the training framework' };
  if (setup.zeroStage >= 2 && (setup.shardGroup ?? 0) >= 2 && setup.gradientAccumulation > 1) {
    const unsharded = accumulatesUnsharded(options.unshardedAccumulationStages, setup.zeroStage, setup.gradientAccumulation);
    const reason = options.unshardedAccumulationStages ? (options.unshardedAccumulationSource ?? 'the training framework') : ASSUMED_ACCUMULATION;
    out = { ...out, gradientAccumulationSync: unsharded ? 'unsharded' : 'every-micro-step', gradientAccumulationSyncReason: reason };
  }
  return out;
}
