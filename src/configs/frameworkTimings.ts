/**
 * When a config's framework runs the collectives whose timing differs between frameworks, as the config readers
 * that know the framework state it: ZeRO-1/2's gather of the weights their optimizer slices updated (protocol
 * WeightGatherTiming; DeepSpeed's, after the step, is the planner's default, said by a DeepSpeed config so that the
 * plan names it rather than assumes it), and a gradient sync with nothing beside it (DeepSpeed's).
 */
import type { GatheringStage, ZeroStage } from '../protocol/plan';

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

/** DeepSpeed ZeRO-1/2 gather the updated weights inside the optimizer step (stage_1_and_2.py step(): all_gather_dp_groups). */
export const DEEPSPEED_WEIGHT_GATHER: StatedWeightGather = { inForward: [], why: 'DeepSpeed gathers the updated weights inside its optimizer step' };

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

export interface StatedSerialSync {
  /** The ZeRO stages whose gradient sync the framework runs with nothing computing beside it. */
  stages: ZeroStage[];
  why: string;
}

/**
 * DeepSpeed's engine reduces gradients after the backward without ZeRO (backward() then allreduce_gradients(),
 * buffered) and at ZeRO-1 (no backward hooks: DeepSpeed #1246, "there is no overlapping"); ZeRO-2 reduces in backward
 * hooks, on a stream of its own only with overlap_comm (stage_1_and_2.py average_tensor: else the current stream),
 * whose default is on at ZeRO-3 alone (DeepSpeedZeroConfig). `overlapComm` as the config states it, if it does.
 */
export function deepspeedSerialSync(overlapComm: boolean | undefined): StatedSerialSync {
  const stages: ZeroStage[] = [0, 1];
  if (overlapComm !== true) stages.push(2);
  if (overlapComm === false) stages.push(3);
  const stage2 = overlapComm === true ? 'ZeRO-2 reduces beside the backward (overlap_comm)' : 'ZeRO-2 on the backward\'s own stream (overlap_comm off)';
  return { stages, why: `DeepSpeed: without ZeRO and at ZeRO-1 gradients are reduced after the backward; ${stage2}` };
}

/** Lightning's DeepSpeedStrategy (its "deepspeed_stage_N" names too) passes overlap_comm=True unless told otherwise. */
export function lightningDeepSpeedSerialSync(overlapComm: boolean | undefined): StatedSerialSync {
  const sync = deepspeedSerialSync(overlapComm ?? true);
  return { ...sync, why: `Lightning's DeepSpeedStrategy (overlap_comm ${overlapComm === false ? 'off' : 'on, its default'}); ${sync.why}` };
}

/**
 * Megatron-LM all-reduces (or, with the distributed optimizer, reduce-scatters) the gradients after the backward
 * unless --overlap-grad-reduce dispatches each bucket as its gradients are ready (Megatron Core's
 * DistributedDataParallelConfig overlap_grad_reduce, off by default). With the flag: no stage, as DDP.
 */
export function megatronSerialSync(overlapGradReduce: boolean): StatedSerialSync {
  return overlapGradReduce
    ? { stages: [], why: 'Megatron --overlap-grad-reduce reduces each bucket beside the backward' }
    : { stages: [0, 1, 2, 3], why: 'Megatron without --overlap-grad-reduce reduces the gradients after the backward' };
}

/** What a config that names its framework's gather but no serial sync (FSDP's) says of the sync: beside the backward. */
export const OVERLAPPED_SYNC: StatedSerialSync = { stages: [], why: 'gradients reduced beside the backward' };
