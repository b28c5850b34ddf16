/**
 * The plan report: what `wap plan --json` prints, what the LSP `wap/plan`
 * request returns, what the webview draws and what config quick-fixes read.
 * Declared once here; the field names are a public contract (see issue #3).
 * Types and the lists of their allowed values: no imports from node, vscode or tfjs.
 */

export type StrategyKind = 'data' | 'model' | 'hybrid' | 'pipeline';
export type Objective = 'throughput' | 'efficiency';
export type StrategyMode = 'dp' | 'hybrid' | 'all';
/**
 * The state an optimizer keeps per parameter: none (plain SGD), one buffer (momentum, RMSprop, Adagrad, Lion) or two
 * (Adam and its variants), at full width or 8-bit block-wise quantized (bitsandbytes' 8-bit optimizers).
 */
export type OptimizerKind = 'sgd' | 'momentum' | 'adam' | 'momentum8bit' | 'adam8bit';
/** Every OptimizerKind, for the flags and settings that take one. */
export const OPTIMIZER_KINDS: readonly OptimizerKind[] = ['sgd', 'momentum', 'adam', 'momentum8bit', 'adam8bit'];

/** Numeric precision of training: 'bf16'/'fp16'/'fp8' mean mixed precision (fp32 master weights and optimizer state). */
export type Precision = 'fp32' | 'tf32' | 'fp16' | 'bf16' | 'fp8';
/**
 * How 16-bit training holds its tensors:
 * - 'autocast': fp32 parameters, gradients and optimizer state; torch.autocast casts per op, some ops run in fp32
 *   (accelerate's mixed_precision, Lightning "-mixed", the HF Trainer, DeepLearningExamples' native AMP);
 * - 'master-weights': 16-bit weights and gradients with an fp32 master copy in the optimizer (DeepSpeed, Megatron-LM
 *   at fp16, FSDP MixedPrecision, apex O2);
 * - 'fp32-gradients': 16-bit weights with gradients accumulated and all-reduced in fp32, and the fp32 master copy
 *   (Megatron-LM at bf16, which sets accumulate_allreduce_grads_in_fp32 unless --grad-reduce-in-bf16: 18 bytes a
 *   parameter with Adam, where master-weights holds 16);
 * - 'pure': 16-bit weights, gradients and optimizer state, no fp32 copy (Lightning "bf16-true", `model.to(torch.bfloat16)`).
 */
export type AmpStyle = 'autocast' | 'master-weights' | 'fp32-gradients' | 'pure';
/** ZeRO stage on the data-parallel axis: 1 shards optimizer state, 2 also gradients, 3 also weights (FSDP FULL_SHARD). */
export type ZeroStage = 0 | 1 | 2 | 3;
/**
 * When ZeRO-1/2 all-gather the weights each rank's optimizer slice updated, which depends on the framework:
 * - 'after-step': inside the optimizer step, with nothing computing beside it (DeepSpeed stage_1_and_2.py step()'s
 *   all_gather_dp_groups; PyTorch's ZeroRedundancyOptimizer; Megatron's distributed optimizer without
 *   --overlap-param-gather);
 * - 'next-forward': as the next forward reaches each unit, behind the compute before it (FSDP SHARD_GRAD_OP and FSDP2
 *   reshard_after_forward=False reshard after the backward and gather in the forward; Megatron
 *   --overlap-param-gather dispatches each bucket's gather for the next forward).
 */
export type WeightGatherTiming = 'after-step' | 'next-forward';
/** The ZeRO stages that keep whole weights, and so gather each rank's updated slice once per step. */
export type GatheringStage = 1 | 2;
/** Activation recompute: 'selective' is Korthikanti et al. (recompute attention's softmax/dropout only); 'full' recomputes each block. */
export type RecomputeMode = 'none' | 'selective' | 'full';

/**
 * Parallel and memory-saving dimensions a user can pin (`--tp 4 --zero 2 …`,
 * or read from their training config). An absent field is searched.
 */
export interface ParallelPins {
  dataParallel?: number;
  tensorParallel?: number;
  pipelineStages?: number;
  contextParallel?: number;
  expertParallel?: number;
  /** Ranks each routed expert is split over (Megatron's --expert-tensor-parallel-size); absent: searched, tp or 1. */
  expertTensorParallel?: number;
  /** Interleaved 1F1B: model chunks per pipeline stage (Megatron's virtual stages). */
  virtualStages?: number;
  sequenceParallel?: boolean;
  zeroStage?: ZeroStage;
  /** Shard within a node and replicate across nodes (HSDP / ZeRO++ hpZ). */
  hybridShard?: boolean;
  recompute?: RecomputeMode;
  /** Samples per GPU per forward/backward; gradient accumulation fills the global batch. */
  microBatch?: number;
  /** Optimizer state and gradients in host memory, the CPU stepping the optimizer (ZeRO-Offload): slow, a last resort. */
  cpuOffload?: boolean;
  /**
   * Parameters and gradients in host memory as well as the optimizer state (DeepSpeed ZeRO-3 `offload_param`,
   * FSDP `CPUOffload(offload_params=True)`): each forward and backward fetches the weights over PCIe. Slower still;
   * it implies cpuOffload.
   */
  paramOffload?: boolean;
}

/** Memory per GPU by what holds it (bytes). */
export interface MemoryBreakdown {
  weights: number;
  gradients: number;
  optimizer: number;
  activations: number;
  workspace: number;
  total: number;
}

/** The training setup a plan chose (or was pinned to), reported flat as issue #12 asks. */
export interface TrainingSetup {
  precision: Precision;
  /** Why this precision: 'from ds_config.json (bf16.enabled)', 'H100 has bf16 tensor cores', '--precision'. */
  precisionReason: string;
  /** For 16-bit precisions: how the training holds its tensors, and why (absent for fp32/tf32). */
  ampStyle?: AmpStyle;
  ampStyleReason?: string;
  zeroStage: ZeroStage;
  /** ZeRO-1/2 over more than one rank: when the updated weights are gathered, and who says so (the framework's way). */
  weightGather?: WeightGatherTiming;
  weightGatherReason?: string;
  /**
   * Data parallel where the framework syncs gradients with nothing computing beside them (PlanOptions.serialSyncStages):
   * 'serial', and who says so; absent, the gradient buckets run beside the backward.
   */
  gradientSync?: 'serial';
  gradientSyncReason?: string;
  /**
   * Gradient accumulation over more than one rank. ZeRO-2/3: 'unsharded' where the framework keeps every
   * micro-step's full gradients until one reduce-scatter at the last (FSDP's no_sync;
   * PlanOptions.unshardedAccumulationStages), 'every-micro-step' where each micro-step reduce-scatters and keeps only
   * its shard. ZeRO-0/1: 'once' where the micro-steps before the last accumulate locally and the last syncs (DDP under
   * no_sync), 'every-micro-step' where each micro-step's backward all-reduces (a DDP loop without no_sync;
   * PlanOptions.allReduceEachMicroStepStages). And who says so.
   */
  gradientAccumulationSync?: 'unsharded' | 'every-micro-step' | 'once';
  gradientAccumulationSyncReason?: string;
  hybridShard: boolean;
  /**
   * Ranks the ZeRO state is sharded over when zeroStage > 0: dataParallel × contextParallel, or under HSDP the
   * members in one node (the state is then replicated dataParallel × contextParallel ÷ shardGroup times).
   */
  shardGroup?: number;
  recompute: RecomputeMode;
  cpuOffload: boolean;
  /** Parameters and gradients in host memory too (ParallelPins.paramOffload); cpuOffload is then true as well. */
  paramOffload: boolean;
  microBatch: number;
  gradientAccumulation: number;
  dataParallel: number;
  tensorParallel: number;
  pipelineStages: number;
  virtualStages: number;
  contextParallel: number;
  expertParallel: number;
  /** Ranks each routed expert is split over, for a model with experts: the attention's tensorParallel (Megatron's default) or fewer. */
  expertTensorParallel?: number;
  /** How the plan priced a block's local experts, for a model with experts: one grouped GEMM per projection, or a loop of one per expert. */
  expertsKernel?: 'grouped' | 'loop';
  /** How the plan moved tokens to other GPUs' experts, for a model with experts (PlanOptions.tokenDispatcher), and who says so. */
  tokenDispatcher?: 'alltoall' | 'allgather';
  tokenDispatcherReason?: string;
  sequenceParallel: boolean;
  /**
   * A per-layer plan that mixes configurations (OWT: convolutions data parallel, classifier model parallel) reports
   * the one holding most parameters above, and the others here, most parameters first, with the layers each covers.
   */
  otherDegrees?: Array<{ dataParallel: number; tensorParallel: number; layers: number }>;
  /**
   * Model FLOPs utilisation: the FLOPs the model needs per second ÷ (GPUs × the precision's peak). Causal attention
   * counts its unmasked triangle (planner/cost/modelFlops.ts), so no plan reports more than its GPUs can run.
   */
  mfu: number;
  memoryPerGpu: MemoryBreakdown;
  /** Under offload: the host memory each GPU's rank fills with what it offloads (bytes). */
  hostMemoryPerGpu?: number;
  /** When the plan fits only through a memory-saving dimension: which one, and what it costs. */
  fitsThrough?: string;
}

/** Where a layer's compute time came from: always said, never implied. */
export interface CostSource {
  kind: 'analytical' | 'measured';
  /** For measured costs: 'tfjs-node-gpu' | 'tfjs-node' | 'wasm' | 'cpu' | 'torch'. */
  backend?: string;
  /** The device that ran the trial, e.g. 'NVIDIA H200' or 'CPU (wasm-simd)'. */
  device?: string;
  /** The batch the trial ran at, when it differs from the planned one (costs are scaled). */
  measuredBatch?: number;
}

export interface LayerPlan {
  name: string;
  /** 1-based line of the layer's definition. */
  line: number;
  /** The file that line is in, when the layer is defined in an imported module (not the planned file). */
  file?: string;
  type: string;
  strategy: StrategyKind;
  dataDegree: number;
  modelDegree: number;
  /** Global GPU indices this layer runs on. */
  devices: number[];
  /** Pipeline stage index; 0 when there is no pipeline. */
  stage: number;
  /** What model parallelism splits: 'outputs' (Linear out features), 'channels' (conv out channels), 'heads' (attention), 'inputs'. */
  splitDim?: 'outputs' | 'channels' | 'heads' | 'inputs';
  /** Per-iteration times on one of its devices (ms). */
  forwardMs: number;
  backwardMs: number;
  /** Gradient bytes all-reduced per iteration by this layer (0 when not data-parallel or no params). */
  allreduceBytes: number;
  allreduceMs: number;
  /** Layout-change (redistribution) cost into this layer, ms. */
  transferMs: number;
  memoryBytesPerGpu: number;
  params: number;
  activationBytes: number;
  costSource: CostSource;
  /** One sentence: why this configuration beats the best alternative, e.g. "all-reduce 151 MB ≫ compute 2 ms". */
  reason: string;
  /** The best alternative configuration considered and its cost, for explanations. */
  alternative?: { strategy: StrategyKind; dataDegree: number; modelDegree: number; costMs: number };
}

export type TimelineKind = 'forward' | 'backward' | 'allreduce' | 'transfer' | 'update' | 'allgather' | 'reducescatter' | 'recompute' | 'alltoall';

export interface TimelineEvent {
  /**
   * The GPU whose lane holds the event. For communication events this is the
   * lowest participating GPU; `lane` names the link channel that carried it.
   */
  device: number;
  kind: TimelineKind;
  layer: string;
  startMs: number;
  endMs: number;
  /** 'gpu:3' for compute; 'link:<name>' (e.g. 'link:pcie', 'link:node0-node1') for communication. */
  lane: string;
  /** All GPUs taking part (communication, or a model-parallel compute group). */
  devices?: number[];
  bytes?: number;
  /** Micro-batch index for pipelines. */
  microBatch?: number;
  /** On the critical path of the simulated iteration. */
  critical?: boolean;
}

export interface ScalingPoint {
  gpus: number;
  feasible: boolean;
  /** Why nothing fits on this many GPUs (only when infeasible). */
  reason?: string;
  /** The training script's own assert refuses this count, and `reason` names it (planner/runGpuCounts.ts). */
  refusedByScript?: true;
  samplesPerSec: number;
  stepTimeMs: number;
  energyJPerSample: number;
  /** Which strategies the best plan at this count uses, e.g. 'data+model'. */
  summary?: string;
}

export interface BaselineResult {
  gpus: number;
  feasible: boolean;
  reason?: string;
  samplesPerSec: number;
  stepTimeMs: number;
  energyJPerSample: number;
}

export interface PlanSummary {
  gpus: number;
  stepTimeMs: number;
  samplesPerSec: number;
  energyJPerSample: number;
  /** What each GPU holds at its peak, the CUDA context included (the most loaded one is setup.memoryPerGpu's total). */
  memoryPerGpuBytes: number[];
  layers: LayerPlan[];
  /**
   * layersPerStage: model layers per stage for per-layer pipelines; for block stacks (search.method 'parallel3d'),
   * repeated blocks (transformer layers) per stage, embedding and head not counted. virtualStages: interleaved chunks per stage.
   * memoryPerStageBytes: memory per GPU of each stage (block stacks; memoryPerGpuBytes repeats it for every GPU of the stage).
   */
  pipeline?: { stages: number; microBatches: number; schedule: '1f1b' | 'gpipe' | 'interleaved-1f1b'; bubbleFraction: number; layersPerStage?: number[]; virtualStages?: number; memoryPerStageBytes?: number[] };
  /** Precision, ZeRO, recompute, micro-batching and the DP×TP×PP×CP degrees of this plan. */
  setup?: TrainingSetup;
}

export interface ClusterSummary {
  name: string;
  gpus: number;
  nodes: number;
  gpuNames: string[];
  /** 'preset:<id>' | 'file:<path>' | 'local' | 'default'; where the cluster came from. */
  source: string;
}

export interface SearchInfo {
  /** 'parallel3d': the DP×TP×PP×CP(×EP) search over a stack of repeated blocks (transformers); the others search per layer. */
  method: 'chain-dp' | 'dag-dp' | 'local-search' | 'brute-force' | 'parallel3d';
  exact: boolean;
  /** For local search: the bound that stopped it (iterations or ms) and the gap it can prove. */
  bound?: string;
  configurationsEvaluated: number;
  elapsedMs: number;
}

export interface PlanDiagnostic {
  severity: 'error' | 'warning' | 'info';
  message: string;
  layer?: string;
  line?: number;
}

/** A successful plan. */
/**
 * The planned model is known to be incomplete (layers WAP could not map or
 * shape, constructs it dropped or guessed): the plan covers only what was read.
 */
export interface IncompleteModelInfo {
  /** "incomplete: 3 layers opaque" — what surfaces show. */
  summary: string;
  opaqueLayers: number;
  unshapedLayers: number;
  reasons: string[];
}

/** A sequence model's tokens per sample as planned, and where the number came from. */
export interface PlanSequence {
  tokens: number;
  /** '--seq-len', '--input', 'stated in the code', or 'assumed: <why>' (e.g. a config's max_position_embeddings). */
  source: string;
}

/**
 * The plan's throughput on variable-length data (`--seq-lengths`): the plan is made at the model's length, and
 * its batches run at the padded lengths a length histogram and a batching policy give.
 */
export interface LengthMixReport {
  /** How batches are padded, in words. */
  batching: string;
  /** Where the histogram came from (a file path). */
  source?: string;
  sequences: number;
  /** Real tokens per sequence. */
  meanTokens: number;
  /** Tokens per sequence as run, padding included. */
  meanPaddedTokens: number;
  paddingFraction: number;
  /** Sequences longer than the model's length, truncated to it. */
  truncatedFraction: number;
  /** Each priced length: its share of micro-batches and the step time of a step made of such batches. */
  groups: Array<{ tokens: number; share: number; stepTimeMs: number }>;
  stepTimeMs: number;
  samplesPerSec: number;
  /** Real (not padding) tokens per second. */
  tokensPerSec: number;
  /** samplesPerSec ÷ the plan's, where every sequence runs at the model's length. */
  speedup: number;
  /** What the pricing approximates. */
  notes: string[];
}

export interface PlanReport {
  feasible: true;
  /** Set when the model is known to be incomplete; absent for a model read in full. */
  incomplete?: IncompleteModelInfo;
  /** Set for sequence models: the tokens per sample the plan is for. */
  sequence?: PlanSequence;
  model: string;
  file?: string;
  batch: number;
  /** Who chose the batch (see PlanOptions.batchSource); absent for a caller that did not say. */
  batchSource?: string;
  /** True when nothing chose it: the caller's default, which the report says it assumed. */
  batchAssumed?: boolean;
  objective: Objective;
  strategies: StrategyMode;
  optimizer: OptimizerKind;
  cluster: ClusterSummary;
  plan: PlanSummary;
  baselines: { singleGpu: BaselineResult; dataParallel: BaselineResult; owt: BaselineResult };
  scaling: ScalingPoint[];
  timeline: TimelineEvent[];
  search: SearchInfo;
  /** Set with `--seq-lengths`: the throughput on the data's own lengths. */
  lengthMix?: LengthMixReport;
  /** Summary of cost sources, e.g. { analytical: 12, measured: 3 }. */
  costSources: Record<string, number>;
  diagnostics: PlanDiagnostic[];
}

/** Nothing fits: the planner says why rather than throwing. */
export interface InfeasiblePlan {
  feasible: false;
  incomplete?: IncompleteModelInfo;
  sequence?: PlanSequence;
  model: string;
  batch: number;
  batchSource?: string;
  batchAssumed?: boolean;
  cluster: ClusterSummary;
  reason: string;
  scaling: ScalingPoint[];
  diagnostics: PlanDiagnostic[];
}

export type PlanOutcome = PlanReport | InfeasiblePlan;
