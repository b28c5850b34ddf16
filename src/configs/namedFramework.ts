/**
 * The training framework a user names (`--framework`, the wap.framework setting) when no config beside the model
 * says it: how it times the collectives that differ between frameworks (frameworkTimings.ts, as the config readers
 * state them) and what it can run at all (PlanOptions.frameworkLimits), so the plan is one the framework runs.
 */
import type { ZeroStage } from '../protocol/plan';
import type { FrameworkLimits, PlanOptions } from '../protocol/planOptions';
import { DEEPSPEED_WEIGHT_GATHER, FSDP_WEIGHT_GATHER, OVERLAPPED_SYNC, deepspeedSerialSync, megatronSerialSync, megatronWeightGather, type StatedSerialSync, type StatedWeightGather } from './frameworkTimings';
import { REDUCED_EACH_MICRO_STEP, type StatedUnshardedAccumulation } from './unshardedAccumulation';

export type NamedFramework = 'ddp' | 'fsdp' | 'deepspeed' | 'megatron';
export const NAMED_FRAMEWORKS: readonly NamedFramework[] = ['ddp', 'fsdp', 'deepspeed', 'megatron'];

interface FrameworkRuns {
  gather: StatedWeightGather;
  /** Its gradient sync with nothing beside it, where it has one. */
  sync: StatedSerialSync;
  /** Whether its ZeRO-2/3 accumulate unsharded over the micro-steps (FSDP's no_sync) or reduce every micro-step. */
  accumulation: StatedUnshardedAccumulation;
  limits: Omit<FrameworkLimits, 'why'>;
  /** What it runs, in words, for a pin it cannot. */
  runs: string;
}

const ALL_STAGES: ZeroStage[] = [0, 1, 2, 3];

const FRAMEWORKS: Readonly<Record<NamedFramework, FrameworkRuns>> = {
  // DistributedDataParallel reduces buckets from backward hooks; ZeroRedundancyOptimizer, its ZeRO-1, all-gathers
  // the updated parameters at the end of step() (torch.distributed.optim.ZeroRedundancyOptimizer); neither offloads.
  ddp: {
    gather: { inForward: [], why: "PyTorch DDP: ZeRO-1 is ZeroRedundancyOptimizer, which gathers after its step" },
    sync: { ...OVERLAPPED_SYNC, why: 'PyTorch DDP: gradients reduced in buckets beside the backward' },
    accumulation: REDUCED_EACH_MICRO_STEP,
    limits: { zeroStages: [0, 1], optimizerOffload: false, paramOffload: false },
    runs: 'PyTorch DDP runs no ZeRO beyond ZeroRedundancyOptimizer (ZeRO-1), and no CPU offload',
  },
  // NO_SHARD, SHARD_GRAD_OP, FULL_SHARD (and HYBRID_SHARD); ZeRO-1 through ZeroRedundancyOptimizer; CPUOffload moves
  // parameters and gradients with the optimizer step (torch FSDP docs, "CPUOffload").
  fsdp: {
    gather: FSDP_WEIGHT_GATHER,
    sync: { ...OVERLAPPED_SYNC, why: 'FSDP: gradients reduce-scattered beside the backward' },
    // The way most FSDP runs accumulate: the HF Trainer and accelerate's accumulate() with FSDP1 (FSDP2 under
    // accelerate, Lightning and torchtitan reduce every micro-step). The plan that holds the most gradient memory, so
    // no plan said to fit needs more; a config beside the model says which its run does (unshardedAccumulation.ts).
    accumulation: { stages: [2, 3], why: "FSDP as the HF Trainer and accelerate's accumulate() run it (FSDP1): the micro-steps before the last under no_sync(), full gradients until one reduce-scatter; FSDP2 under accelerate, Lightning and torchtitan reduce every micro-step (their config beside the model says so)" },
    limits: { zeroStages: ALL_STAGES, optimizerOffload: true, paramOffload: true },
    runs: 'FSDP runs every stage',
  },
  // The engine's defaults: overlap_comm off below ZeRO-3 (DeepSpeedZeroConfig), offload_optimizer / offload_param.
  deepspeed: {
    gather: DEEPSPEED_WEIGHT_GATHER,
    sync: deepspeedSerialSync(undefined),
    accumulation: { ...REDUCED_EACH_MICRO_STEP, why: "DeepSpeed: ZeRO-2/3 reduce each micro-step's gradients into their partitions" },
    limits: { zeroStages: ALL_STAGES, optimizerOffload: true, paramOffload: true },
    runs: 'DeepSpeed runs every stage',
  },
  // Megatron-LM's own data parallelism: its distributed optimizer is ZeRO-1 (--use-distributed-optimizer), whose state
  // Megatron Core offloads with --optimizer-cpu-offload; no parameter offload. Deeper sharding runs through its FSDP
  // paths (--use-torch-fsdp2, Megatron-FSDP), FSDP's way: --framework fsdp prices that. Priced with the overlap flags
  // WAP's export writes (--overlap-grad-reduce --overlap-param-gather).
  megatron: {
    gather: megatronWeightGather(true),
    sync: megatronSerialSync(true),
    accumulation: REDUCED_EACH_MICRO_STEP,
    limits: { zeroStages: [0, 1], optimizerOffload: true, paramOffload: false },
    runs: "Megatron-LM's distributed optimizer is ZeRO-1 and offloads only the optimizer state (--optimizer-cpu-offload); deeper sharding is its FSDP path (--use-torch-fsdp2), planned with --framework fsdp",
  },
};

/** The options priced and searched the way `framework` runs, `source` saying who named it ('--framework'). */
export function withNamedFramework(options: PlanOptions, framework: NamedFramework, source: string): PlanOptions {
  const f = FRAMEWORKS[framework];
  return {
    ...options,
    forwardGatherStages: f.gather.inForward,
    forwardGatherSource: `${source} (${f.gather.why})`,
    serialSyncStages: f.sync.stages,
    serialSyncSource: `${source} (${f.sync.why})`,
    unshardedAccumulationStages: f.accumulation.stages,
    unshardedAccumulationSource: `${source} (${f.accumulation.why})`,
    frameworkLimits: { ...f.limits, why: `${source} ${framework}: ${f.runs}` },
  };
}
