/**
 * Cost tables for one device group and batch: per layer, every configuration
 * with its compute, communication and memory; per edge, the layout-change
 * cost between any two configurations. The search sees only these numbers
 * (node cost + edge cost, additive as in OptCNN); the simulator reuses the
 * components to lay out a timeline.
 *
 * This file is the tables' contract (their shape, the setup they assume, and
 * how an assignment is scored against them), which the searches, simulator
 * and report read; building them is tableBuilder.ts, so those readers do not
 * depend on the costing code.
 */
import type { AnalyzedLayer } from '../../core/ir';
import type { CostSource, GatheringStage, OptimizerKind, StrategyMode, ZeroStage } from '../../protocol/plan';
import type { AttentionKernel } from './compute';
import type { LayerConfig, Layout } from './configs';
import type { MemorySetup, RecomputePlan } from '../memory/index';
import type { ProfileCosts } from './profileCosts';
import type { GroupLink } from './topology';

/** The training setup a table is costed under: precision and memory savers, plus gradient accumulation. */
export interface TableSetup extends MemorySetup {
  /** Micro-steps per iteration (gradient accumulation); each runs batch/(d·microSteps) samples per GPU. */
  microSteps: number;
  /** The ZeRO stages whose updated weights are gathered in the next forward (PlanOptions.forwardGatherStages); absent: none. */
  forwardGatherStages?: readonly GatheringStage[];
  /** The ZeRO stages whose gradient sync runs with nothing beside it (PlanOptions.serialSyncStages); absent: none. */
  serialSyncStages?: readonly ZeroStage[];
  /** Sharded gradients reduce-scattered in fp32 (PlanOptions.gradientReduceInFp32). */
  gradientReduceInFp32?: boolean;
  /** The ZeRO stages that accumulate unsharded gradients until the last micro-step (PlanOptions.unshardedAccumulationStages); absent: none. */
  unshardedAccumulationStages?: readonly ZeroStage[];
  /** The ZeRO stages (0, 1) that all-reduce on every micro-step (PlanOptions.allReduceEachMicroStepStages); absent: none. */
  allReduceEachMicroStepStages?: readonly ZeroStage[];
}

export function defaultSetup(optimizer: OptimizerKind): TableSetup {
  return { precision: 'fp32', optimizer, zeroStage: 0, hybridShard: false, recompute: 'none', cpuOffload: false, paramOffload: false, microSteps: 1 };
}

/**
 * PCIe 3.0 x16 achieved host↔GPU rate (≈ 80% of 15.75 GB/s, PCI Express Base Specification 3.0), for GPUs
 * whose spec gives no hostBandwidthGBs: the slowest bus such a GPU is likely on.
 */
export const DEFAULT_HOST_BANDWIDTH_GBS = 12;

/** How a data-parallel group shards ZeRO state: over `shards` GPUs on `shardLink`, replicated `replicas` times (HSDP). */
export interface ShardGroup {
  shards: number;
  shardLink: GroupLink;
  replicas: number;
  replicaLink: GroupLink;
}

export interface NodeOption {
  config: LayerConfig;
  inLayout: number;
  outLayout: number;
  forwardMs: number;
  backwardMs: number;
  /** Model-parallel collectives inside the layer (Megatron f/g, input-grad reduction). */
  mpForwardMs: number;
  mpBackwardMs: number;
  allreduceBytes: number;
  allreduceMs: number;
  updateMs: number;
  /** ZeRO-3: parameters all-gathered before the forward and again before the backward (bytes per pass, ms per iteration per pass). */
  gatherBytes: number;
  gatherMs: number;
  /**
   * ZeRO-1/2: the updated weights all-gathered from their owners once per iteration (bytes gathered, ms): after the
   * optimizer step, or, for a stage in setup.forwardGatherStages, before this layer's first forward, prefetched behind
   * the compute before it (the simulator places it either way); 0 otherwise.
   */
  stepGatherBytes: number;
  stepGatherMs: number;
  /**
   * Parameter offload: this GPU's weight shard copied up from host memory before each pass (ms per iteration per
   * pass, like gatherMs; gatherBytes is then the unit fetched even without ZeRO-3). Any offload: its reduced
   * gradient shard copied down (ms per iteration). 0 without offload.
   */
  hostUploadMs: number;
  hostDownloadMs: number;
  /** Bytes this GPU's rank keeps in host memory for the layer under offload (memory/model.ts offloadedHostBytes). */
  hostBytes: number;
  /** Forward work recomputed before the backward (activation recompute), ms per iteration. */
  recomputeMs: number;
  /** Activation bytes the recompute brings back to life while this layer's backward runs (one micro-batch). */
  recomputedBytes: number;
  /** Model-state and activation bytes per GPU; memoryBytes is their sum. */
  memory: { weights: number; gradients: number; optimizer: number; activations: number };
  memoryBytes: number;
  /** Surrogate cost the search minimises: everything above, serialised. */
  timeMs: number;
}

export interface PlanEdge {
  from: number;
  to: number;
  /** Whole-batch tensor bytes on this edge. */
  bytes: number;
}

export interface TableOptions {
  mode: StrategyMode;
  optimizer: OptimizerKind;
  profile?: ProfileCosts;
  /** Micro-batches whose activations are alive at once (pipelines); 1 otherwise. */
  activationCopies?: number;
  /** Cost only layers [from, to) (a pipeline stage); the others get no options and must not be read. */
  layerRange?: readonly [number, number];
  /** Force these configurations (baselines): return undefined to use the mode's list. */
  configsFor?: (layer: AnalyzedLayer, n: number) => LayerConfig[] | undefined;
  /** Precision and memory savers (default: fp32, nothing saved, no accumulation). */
  setup?: TableSetup;
  /** How attention runs (fused unless the plan says otherwise). */
  attention?: AttentionKernel;
  /** How conv activations are stored at run time (default: the model's layout, PyTorch NCHW, Keras NHWC). */
  memoryFormat?: 'channels_first' | 'channels_last';
  /** fp32 convolutions on TF32 tensor cores, the framework's default (cost/compute.ts ComputeOptions). */
  tf32Convolutions?: boolean;
  /**
   * Tables built for the same model, topology, devices, batch and options whose setup differs only in what shards or
   * offloads the model state (ZeRO stage, HSDP, offload, optimizer): their compute is reused and only the sync,
   * update and memory re-priced. Ignored when anything else differs (sameCompute in tableBuilder.ts checks).
   */
  sameComputeAs?: CostTables;
}

export interface CostTables {
  devices: number[];
  n: number;
  batch: number;
  layers: AnalyzedLayer[];
  options: NodeOption[][];
  sources: CostSource[];
  edges: PlanEdge[];
  /** Edge indices into each layer / out of each layer. */
  inEdges: number[][];
  outEdges: number[][];
  /** True when a layer reads another layer's output (so input gradients are needed). */
  hasProducer: boolean[];
  layouts: Layout[];
  /** Per layout pair (a·L + b): forward + backward redistribution fraction and peer count. */
  pairFraction: Float64Array;
  pairSources: Float64Array;
  link: GroupLink;
  /**
   * Per layout pair (a·L + b): the link the redistribution runs on. A change
   * that keeps the batch split (same d, hence same k) stays inside each
   * contiguous model group, often one node, so it need not pay the
   * inter-node link the whole group spans.
   */
  pairLink: GroupLink[];
  edgeCost(edge: number, fromOption: number, toOption: number): number;
  /**
   * Layout-pair cost of moving this edge's tensor (L×L, a·L + b, 0 on the
   * diagonal); edgeCost(e, p, o) = edgeLayoutCost(e)[outLayouts[from][p]·L + inLayouts[to][o]].
   * Shared by edges of equal size, so the searches' inner loops read typed arrays only.
   */
  edgeLayoutCost(edge: number): Float64Array;
  /** Per layer, each option's input / output layout index. */
  inLayouts: Int32Array[];
  outLayouts: Int32Array[];
  /** The same cost split into the forward move of the tensor and the backward move of its gradient. */
  edgeCostParts(edge: number, fromOption: number, toOption: number): [number, number];
  dataGroupLink(c: LayerConfig): GroupLink;
  modelGroupLink(c: LayerConfig): GroupLink;
  /** The setup these costs assume. */
  setup: TableSetup;
  /** ZeRO sharding of a configuration's data-parallel group. */
  shardGroup(c: LayerConfig): ShardGroup;
  /** Full-recompute segments, when the setup recomputes. */
  recompute?: RecomputePlan;
  /** What the tables were built from, for TableOptions.sameComputeAs. */
  builtFrom: { topo: unknown; options: TableOptions };
}

/** Sum of node and edge costs of an assignment (option index per layer): what the search minimises. */
export function assignmentCost(t: CostTables, choice: ArrayLike<number>, nodeCost?: (layer: number, option: number) => number): number {
  let s = 0;
  for (let i = 0; i < t.layers.length; i++) s += nodeCost ? nodeCost(i, choice[i]) : t.options[i][choice[i]].timeMs;
  for (let e = 0; e < t.edges.length; e++) s += t.edgeCost(e, choice[t.edges[e].from], choice[t.edges[e].to]);
  return s;
}

/** Peak memory per device of an assignment (every layer occupies every device of the group). */
export function assignmentMemory(t: CostTables, choice: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < t.layers.length; i++) s += t.options[i][choice[i]].memoryBytes;
  return s;
}
