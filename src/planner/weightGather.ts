/**
 * When a plan's ZeRO-1/2 gather the weights their optimizer slices updated (protocol WeightGatherTiming): the
 * framework's way, as a flag or the training config names it (PlanOptions.forwardGatherStages). Absent, WAP prices
 * DeepSpeed's way, the one that hides nothing, and the report says it assumed it, so a plan is never optimistic
 * about a framework nobody named.
 */
import type { GatheringStage, TrainingSetup, WeightGatherTiming, ZeroStage } from '../protocol/plan';
import type { PlanOptions } from '../protocol/planOptions';

const ASSUMED = "assumed: DeepSpeed's way, which hides nothing; FSDP's SHARD_GRAD_OP and Megatron's --overlap-param-gather gather in the next forward (--weight-gather next-forward)";

/** Whether `zero`'s updated weights are gathered in the next forward under `stages` (PlanOptions.forwardGatherStages). */
export function gathersInForward(stages: readonly GatheringStage[] | undefined, zero: ZeroStage): boolean {
  return (zero === 1 || zero === 2) && !!stages?.includes(zero);
}

/** The setup with its gather timing and why, where it has one: ZeRO-1/2 sharded over two or more ranks. */
export function withWeightGather(setup: TrainingSetup, options: PlanOptions): TrainingSetup {
  if ((setup.zeroStage !== 1 && setup.zeroStage !== 2) || (setup.shardGroup ?? 0) < 2) return setup;
  const timing: WeightGatherTiming = gathersInForward(options.forwardGatherStages, setup.zeroStage) ? 'next-forward' : 'after-step';
  const reason = options.forwardGatherStages ? (options.forwardGatherSource ?? '--weight-gather') : ASSUMED;
  return { ...setup, weightGather: timing, weightGatherReason: reason };
}
