/**
 * Which framework's way a config's ZeRO-1/2 gather the weights their optimizer slices updated (protocol
 * WeightGatherTiming), as the config readers that know the framework state it. DeepSpeed's (after the step) is the
 * planner's default, so only the frameworks that differ, and Megatron, whose flag decides, are said here.
 */
import type { GatheringStage } from '../protocol/plan';

export interface StatedWeightGather {
  /** The ZeRO stages the framework gathers in the next forward; its others, after the step. */
  inForward: GatheringStage[];
  /** Why, for the plan's report: the framework and what it does. */
  why: string;
}

/**
 * FSDP (torch ShardingStrategy SHARD_GRAD_OP "unshards before the forward … and only reshards them after the
 * backward computation"; FSDP2 reshard_after_forward=False alike): the parameters sharded after one backward are
 * gathered as the next forward reaches each wrapped unit, behind the compute before it. FSDP has no ZeRO-1: in
 * PyTorch that is DDP with ZeroRedundancyOptimizer, whose step() ends with the gather.
 */
export const FSDP_WEIGHT_GATHER: StatedWeightGather = { inForward: [2], why: 'FSDP: SHARD_GRAD_OP gathers unit by unit in the next forward; ZeRO-1 is ZeroRedundancyOptimizer, after its step' };

/**
 * Megatron's distributed optimizer all-gathers the updated parameters after its step, unless --overlap-param-gather
 * dispatches each bucket's gather for the next forward (Megatron Core's DistributedDataParallelConfig
 * overlap_param_gather; NeMo's communication-overlap guide: one chunk exposed).
 */
export function megatronWeightGather(overlapParamGather: boolean): StatedWeightGather {
  return overlapParamGather
    ? { inForward: [1], why: '--overlap-param-gather gathers each bucket in the next forward' }
    : { inForward: [], why: 'the distributed optimizer gathers after its step without --overlap-param-gather' };
}
