/**
 * The training framework a user names (`--framework`, the wap.framework setting) when no config beside the model
 * says it: how it times the collectives that differ between frameworks (frameworkTimings.ts, as the config readers
 * state them) and what it can run at all (PlanOptions.frameworkLimits), so the plan is one the framework runs.
 */
import type { ZeroStage } from '../protocol/plan';
import type { FrameworkLimits, PlanOptions } from '../protocol/planOptions';
import { DEEPSPEED_WEIGHT_GATHER, FSDP_WEIGHT_GATHER, OVERLAPPED_SYNC, deepspeedSerialSync, megatronSerialSync, megatronWeightGather, type StatedSerialSync, type StatedWeightGather } from './frameworkTimings';

export type NamedFramework = 'ddp' | 'fsdp' | 'deepspeed' | 'megatron';
export const NAMED_FRAMEWORKS: readonly NamedFramework[] = ['ddp', 'fsdp', 'deepspeed', 'megatron'];

interface FrameworkRuns {
  gather: StatedWeightGather;
  /** Its gradient sync with nothing beside it, where it has one. */
  sync: StatedSerialSync;
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
    limits: { zeroStages: [0, 1], optimizerOffload: false, paramOffload: false },
    runs: 'PyTorch DDP runs no ZeRO beyond ZeroRedundancyOptimizer (ZeRO-1), and no CPU offload',
  },
  // NO_SHARD, SHARD_GRAD_OP, FULL_SHARD (and HYBRID_SHARD); ZeRO-1 through ZeroRedundancyOptimizer; CPUOffload moves
  // parameters and gradients with the optimizer step (torch FSDP docs, "CPUOffload").
  fsdp: {
    gather: FSDP_WEIGHT_GATHER,
    sync: { ...OVERLAPPED_SYNC, why: 'FSDP: gradients reduce-scattered beside the backward' },
    limits: { zeroStages: ALL_STAGES, optimizerOffload: true, paramOffload: true },
    runs: 'FSDP runs every stage',
  },
  // The engine's defaults: overlap_comm off below ZeRO-3 (DeepSpeedZeroConfig), offload_optimizer / offload_param.
  deepspeed: {
    gather: DEEPSPEED_WEIGHT_GATHER,
    sync: deepspeedSerialSync(undefined),
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
    frameworkLimits: { ...f.limits, why: `${source} ${framework}: ${f.runs}` },
  };
}
