/**
 * The planner's public API. Other rooms (CLI, LSP server, webview host,
 * configs) import from here only.
 */
export type { ClusterSpec, GpuSpec, LinkSpec } from './cluster/spec';
export { ClusterSpecError, gpuMemoryBytes, parseClusterSpec } from './cluster/spec';
export { CLUSTER_PRESETS, DEFAULT_PRESET, type ClusterPreset } from './cluster/presets';
export { resolveCluster, type ResolveContext } from './cluster/resolve';
export { planModel, planModelAsync, type PlanExtras, type AsyncPlanExtras } from './planner';
export { accumulatesUnsharded, allReducesEachMicroStep, forwardGatherStagesFor, gathersInForward, syncsSerially } from './collectiveTiming';
export { toChromeTrace } from './trace';
export { formatPlanTable } from './format';
export { setupLines } from './format';
export { memoryPerGpu, fitsOn, transformerLayerActivationBytes, stateBytesPerParam, modelStateBytes, choosePrecision, peakTflops, PrecisionError, fullWidthOptimizer } from './memory/index';
export type { MemorySetup, ParallelDegrees, GpuShare, TransformerShape } from './memory/index';
export { lengthMix, parseLengthHistogram, parseBatching, describeBatching, LengthMixError, type Batching, type LengthHistogram, type LengthMix } from './lengths/lengthMix';
export { priceOverLengths, pinsOfSetup, microBatchOf } from './lengths/overLengths';
