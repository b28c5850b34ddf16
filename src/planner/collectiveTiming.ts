/**
 * When a plan's framework runs the collectives whose timing differs between frameworks, as a flag or the training
 * config names it: ZeRO-1/2's gather of the weights their optimizer slices updated (protocol WeightGatherTiming;
 * PlanOptions.forwardGatherStages), and whether the gradient sync runs beside the backward or with nothing beside it
 * (PlanOptions.serialSyncStages), and whether ZeRO-2/3 reduce-scatter every micro-step or accumulate the full gradients
 * until the last (PlanOptions.unshardedAccumulationStages: FSDP's no_sync), and whether ZeRO-0/1 all-reduce on every micro-step
 * (PlanOptions.allReduceEachMicroStepStages: DDP without no_sync). Absent, WAP prices DeepSpeed's gather, the one that
 * hides nothing, and says it assumed it, DDP's and FSDP's bucketed sync beside the backward, PyTorch's own,
 * DeepSpeed's reduce-scatter every micro-step, the accumulation that holds least, and one all-reduce per step.
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

/**
 * Whether `zero`'s gradients are all-reduced on every one of `microSteps` under `stages`
 * (PlanOptions.allReduceEachMicroStepStages): only ZeRO-0/1 keep whole gradients DDP all-reduces, one micro-step
 * syncs once anyway, and a pipeline's micro-batches are one schedule's, which pauses DDP's sync on all but the last
 * (torch.distributed.pipelining stage.py backward_maybe_with_nosync).
 */
export function allReducesEachMicroStep(stages: readonly ZeroStage[] | undefined, zero: ZeroStage, microSteps: number, pipelineStages = 1): boolean {
  return zero <= 1 && microSteps > 1 && pipelineStages <= 1 && !!stages?.includes(zero);
}

const ASSUMED_SYNC_ONCE = "assumed: the micro-steps before the last accumulate locally and the last syncs, as DDP under no_sync() (the HF Trainer, accelerate, Lightning, nanoGPT's require_backward_grad_sync), DeepSpeed and Megatron-LM do; a hand-written DDP loop without no_sync() all-reduces every backward (plan with the script beside the model)";

const ASSUMED_ACCUMULATION = "assumed: each micro-step reduce-scatters and keeps its shard, as DeepSpeed and FSDP outside no_sync do; the HF Trainer and accelerate's accumulate() with FSDP1 keep the full gradients until the last (plan with their config beside the model, or --framework fsdp)";

/**
 * The setup with the collective timings it was priced under, and why: the gather for ZeRO-1/2, a serial sync, and how
 * gradient accumulation syncs (ZeRO-2/3 unsharded or each micro-step; ZeRO-0/1 once or all-reducing each micro-step).
 */
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
  if (setup.zeroStage <= 1 && replicated && setup.gradientAccumulation > 1 && setup.pipelineStages <= 1) {
    const each = allReducesEachMicroStep(options.allReduceEachMicroStepStages, setup.zeroStage, setup.gradientAccumulation);
    const reason = options.allReduceEachMicroStepStages ? (options.allReduceEachMicroStepSource ?? 'the training script') : ASSUMED_SYNC_ONCE;
    out = { ...out, gradientAccumulationSync: each ? 'every-micro-step' : 'once', gradientAccumulationSyncReason: reason };
  }
  return out;
}
