/**
 * What the planner is asked: the options the CLI flags, the LSP settings and the plan view's controls map onto.
 * The report it answers with is plan.ts; both are the contract between the server, the CLI and the extension.
 */
import type { AmpStyle, Objective, OptimizerKind, ParallelPins, Precision, StrategyMode, GatheringStage, ZeroStage } from './plan';

/**
 * The global batch planned when no flag, setting or launch that trains the model states one: the WAP paper's
 * (AlexNet at minibatch 128), one default for the CLI and the editor.
 */
export const DEFAULT_BATCH = 128;

/** Options the planner takes; the CLI, the LSP settings and the webview controls all map onto these. */
export interface PlanOptions {
  /** The global batch (samples a step over every replica). */
  batch: number;
  /**
   * Who chose it: '--batch', 'the wap.batchSize setting', the plan view's control, or the launch that trains the model
   * ("run.sh's Hugging Face Trainer command line: micro-batch 4 × data-parallel 8", configs/launchedSetupHint.ts).
   * With `batchAssumed`, why nothing did ("… state different global batches (large.sh 64, small.sh 16)").
   */
  batchSource?: string;
  /** Set by a caller that defaulted `batch`: a launch or config that trains the model may still state it. */
  batchAssumed?: boolean;
  /**
   * The data-parallel replicas the launch that trains the model starts, where it states no batch of its own: a
   * per-process batch the model's code states is multiplied by it (planner/codeBatch.ts).
   */
  launchReplicas?: { count: number; source: string };
  objective: Objective;
  strategies: StrategyMode;
  optimizer: OptimizerKind;
  /**
   * Where the optimizer came from: '--optimizer', 'the wap.optimizer setting', or what the code or training config
   * states ('model.py:287 (torch.optim.AdamW)'). Absent: assumed, and the plan says so.
   */
  optimizerSource?: string;
  /**
   * Set by a caller that defaulted `optimizer` (no flag, setting, code or config said one): the planner then prices
   * what the model's kind trains with (planner/optimizerChoice.ts) and says it assumed it.
   */
  optimizerAssumed?: boolean;
  /** Upper bound on GPUs to use (defaults to all in the cluster). */
  maxGpus?: number;
  /** Force exactly this many GPUs (the CLI's --gpus, the webview's GPU control). */
  gpus?: number;
  /** Efficiency objective: the smallest n within this fraction of the best throughput (default 0.05). */
  efficiencyTolerance?: number;
  /** Micro-batches for pipeline plans (default: chosen by the search). */
  microBatches?: number;
  /** Training precision; absent: from the training config next to the model, else the GPU's best (see TrainingSetup.precisionReason). */
  precision?: Precision;
  /** Where an explicit precision came from, for the report (e.g. 'accelerate_config.yaml mixed_precision'). */
  precisionSource?: string;
  /**
   * Why no stated precision was taken, said beside the default the plan falls back to: the launches that train
   * the model state different ones ("run_ds.sh fp32, run_ds_fp16_z1.sh fp16", configs/launchedSetupHint.ts).
   */
  precisionUnsettled?: string;
  /** How 16-bit training holds its tensors; absent: from the training config, else 'master-weights'. */
  ampStyle?: AmpStyle;
  /** Where an explicit ampStyle came from, for the report. */
  ampStyleSource?: string;
  /**
   * The ZeRO stages whose updated weights the training's framework gathers in the next forward, the others after the
   * step (TrainingSetup.weightGather): FSDP [2] (SHARD_GRAD_OP; its ZeRO-1 is ZeroRedundancyOptimizer), Megatron with
   * --overlap-param-gather [1]. Absent: none, DeepSpeed's way, the one that hides nothing.
   */
  forwardGatherStages?: GatheringStage[];
  /** Who says it: '--weight-gather', or the config that names the framework ('fsdp.yaml (FSDP …)'). */
  forwardGatherSource?: string;
  /**
   * The ZeRO stages whose gradient sync the training's framework runs with nothing computing beside it
   * (TrainingSetup.gradientSync): DeepSpeed reduces after the backward without ZeRO and at ZeRO-1, and at ZeRO-2 on
   * the backward's own stream unless overlap_comm. Absent: none, DDP's and FSDP's way (buckets beside the backward).
   */
  serialSyncStages?: ZeroStage[];
  /** Who says it: the config that names the framework ('ds_config.json (DeepSpeed: …)'). */
  serialSyncSource?: string;
  /**
   * The ZeRO stages whose gradients the training's framework accumulates unsharded over the micro-steps before the
   * last, reduce-scattering once (FSDP under `no_sync()` / `set_requires_gradient_sync(False)`: the HF Trainer and
   * accelerate's `accumulate()` with FSDP1) (TrainingSetup.gradientAccumulationSync): [2, 3]. Absent: none, each
   * micro-step reduce-scatters and keeps its shard (DeepSpeed ZeRO-2/3, FSDP outside no_sync).
   */
  unshardedAccumulationStages?: ZeroStage[];
  /** Who says it: the config that names the framework ('fsdp.yaml (accelerate FSDP1: …)'), or '--framework fsdp'. */
  unshardedAccumulationSource?: string;
  /**
   * The ZeRO stages with whole gradients (0, and 1 as DDP with ZeroRedundancyOptimizer runs it) whose every
   * micro-step all-reduces them (TrainingSetup.gradientAccumulationSync): a DDP loop that calls backward() on each
   * micro-step without `no_sync()` or `require_backward_grad_sync = False`, so DDP's reducer syncs every backward
   * (torch nn/parallel/distributed.py forward: prepare_for_backward whenever require_backward_grad_sync): [0, 1].
   * Absent or []: one all-reduce per optimizer step, as DDP under no_sync on the micro-steps before the last (the HF
   * Trainer, accelerate, Lightning, nanoGPT's require_backward_grad_sync), DeepSpeed and Megatron-LM run it.
   */
  allReduceEachMicroStepStages?: ZeroStage[];
  /** Who says it: 'train.py (line 41: loss.backward() every micro-step, no no_sync() …)'. */
  allReduceEachMicroStepSource?: string;
  /**
   * How the training framework runs a block's experts, where its config says (Megatron-LM's --moe-grouped-gemm):
   * one grouped GEMM per projection, or a loop of one GEMM per expert. Absent: as the model's code runs them.
   */
  expertsKernel?: 'grouped' | 'loop';
  /** Who says it ('pretrain.sh (Megatron-LM --moe-grouped-gemm: GroupedMLP)'). */
  expertsKernelSource?: string;
  /**
   * How the training framework moves tokens to the experts of other GPUs (Megatron-LM's --moe-token-dispatcher-type):
   * an all-to-all of each token to its top-k experts' ranks, or an all-gather of every rank's tokens over the
   * expert × expert-tensor group (Megatron's default). Absent: all-to-all, as torchtitan and Megatron's recommended
   * setting with expert parallelism run.
   */
  tokenDispatcher?: TokenDispatcher;
  /** Who says it ('pretrain.sh (Megatron-LM without --moe-token-dispatcher-type: allgather)'). */
  tokenDispatcherSource?: string;
  /**
   * Sharded (ZeRO ≥ 1) gradients reduce-scattered in fp32 whatever the training precision: FSDP's
   * MixedPrecision(Policy) reduce_dtype=float32, torchtitan's default mixed_precision_reduce. Absent: in the
   * gradients' own dtype (precisionBytes).
   */
  gradientReduceInFp32?: boolean;
  /** Who says it ('llama3_8b.toml (torchtitan's mixed_precision_reduce float32, its default)'). */
  gradientReduceSource?: string;
  /** What the training framework the user named can run (`--framework`): absent, every ZeRO stage and offload. */
  frameworkLimits?: FrameworkLimits;
  /** Fixed dimensions; the search fills in the rest. */
  pins?: ParallelPins;
  /**
   * How attention runs: 'fused' (FlashAttention / PyTorch ≥ 2 SDPA, the default: scores stay on chip) or
   * 'unfused' (eager attention, Megatron-LM before 2022: the T×T scores go through HBM between kernels).
   */
  attentionKernel?: 'fused' | 'unfused';
  /** Where `attentionKernel` came from when the code says it (`train.py:12 (attn_implementation="eager")`). */
  attentionSource?: string;
  /**
   * How conv activations are stored at run time: PyTorch's default is 'channels_first' (NCHW), which tensor-core
   * precisions pay transposes for; `model.to(memory_format=torch.channels_last)` is 'channels_last'. Default: the model's layout.
   */
  memoryFormat?: 'channels_first' | 'channels_last';
  /** Where `memoryFormat` came from when the code says it (`train.py:12 (model.to(memory_format=torch.channels_last))`). */
  memoryFormatSource?: string;
  /**
   * Who chose recompute: '--recompute' (even `auto`, which leaves it to the search), or the code that switches
   * gradient checkpointing on (`train.py:40 (model.gradient_checkpointing_enable())`), which pins `pins.recompute`.
   */
  recomputeSource?: string;
  /** Set with `recomputeSource` when the training code chose (configs/recomputeHint.ts), not a flag or setting. */
  recomputeFromCode?: boolean;
}

/**
 * The ZeRO stages and CPU offloads a training framework runs (configs/namedFramework.ts): PyTorch DDP has ZeRO-1 only
 * as ZeroRedundancyOptimizer and no offload; Megatron's distributed optimizer is ZeRO-1, with optimizer offload.
 */
export interface FrameworkLimits {
  zeroStages: ZeroStage[];
  optimizerOffload: boolean;
  paramOffload: boolean;
  /** Who names the framework and what it runs, for an infeasible pin's reason. */
  why: string;
}

/** How an MoE layer's tokens reach the experts on other GPUs (PlanOptions.tokenDispatcher). */
export type TokenDispatcher = 'alltoall' | 'allgather';
