/**
 * The memory room's API. `memoryPerGpu` is what a search calls to prune by
 * memory before simulating (the per-layer cost tables use the same pieces).
 */
import type { MemoryBreakdown } from '../../protocol/plan';
import { breakdown, modelStateBytes, shardCount, type MemorySetup } from './model';
import { precisionBytes } from './precision';

export * from './model';
export { fullWidthOptimizer, isEightBitOptimizer, optimizerStateBytes, optimizerStateCopies } from './optimizerState';
export { chooseAmpStyle, choosePrecision, choosePrecisionFor, hasTf32TensorCores, isMixed, peakTflops, precisionBytes, PrecisionError, savedBytesAtPrecision, type PrecisionBytes, type PrecisionChoice } from './precision';
export { hasAttentionScores, keptActivations, largestSegmentBytesPerSample, fusedAttention, recomputePlan, savedUnderKernel, scoreElementsPerSample, selectiveRecomputeFraction, type RecomputePlan } from './recompute';

/** How a GPU's share of the model is cut. */
export interface ParallelDegrees {
  /** Data-parallel group size (the ZeRO axis). */
  dataParallel: number;
  /** Members of the data-parallel group inside one node (HSDP shards over these); default dataParallel. */
  dataParallelPerNode?: number;
}

/** What one GPU holds before ZeRO: its parameters (after tensor/pipeline division) and activations. */
export interface GpuShare {
  /** Trainable parameters on this GPU before data-parallel sharding (after TP/PP/EP division). */
  params: number;
  /** Of those, the ones autocast casts to 16 bits each forward (core/autocast.ts); absent: all of them. */
  castParams?: number;
  /** Saved activation bytes of all micro-batches alive at once, in the setup's precision, after recompute. */
  activationBytes: number;
  /**
   * Largest unit of parameters gathered at once under ZeRO-3 or fetched from host memory under parameter offload
   * (an FSDP unit / one layer), before sharding.
   * FSDP keeps the unit in use and the prefetched next one: 2 units of 16-bit weights.
   */
  largestGatherParams?: number;
  /** Other transient buffers (the recomputed segment under full recompute), bytes. */
  extraWorkspace?: number;
}

/**
 * Framework context per process: the CUDA context with its loaded kernels, and
 * cuBLAS/cuDNN handles. PyTorch measured the context alone at 287 MB with lazy
 * module loading and 667 MB without (pytorch/pytorch#86509, torch 1.13, which
 * made lazy loading its default; CUDA ≥ 12.2 defaults to it too). 0.5 GB is
 * the lazy context plus the library handles and their workspaces.
 */
export const CONTEXT_BYTES = 0.5e9;
/**
 * Fraction of device memory the caching allocator strands in fragments. GMLake
 * (Guo et al., ASPLOS 2024) recovered 9.2 GB on average of A100-80GB memory
 * (up to 25 GB) across eight LLMs trained with recompute, ZeRO, offload and
 * LoRA by stitching the allocator's free fragments: 9.2 / 80 ≈ 0.115.
 */
export const FRAGMENTATION_FRACTION = 9.2 / 80;

/** Bytes per GPU: weights, gradients, optimizer state, activations, workspace (context + gather/recompute buffers). */
export function memoryPerGpu(share: GpuShare, setup: MemorySetup, degrees: ParallelDegrees): MemoryBreakdown {
  const shards = shardCount(degrees.dataParallel, degrees.dataParallelPerNode ?? degrees.dataParallel, setup.hybridShard);
  const states = modelStateBytes(share.params, setup, shards, share.castParams);
  // Offloaded parameters are fetched unit by unit like ZeRO-3's gathers, even on one GPU.
  const gather = (shards > 1 && setup.zeroStage === 3) || setup.paramOffload ? 2 * (share.largestGatherParams ?? 0) * precisionBytes(setup.precision, setup.ampStyle).weight : 0;
  return breakdown({ ...states, activations: share.activationBytes, workspace: CONTEXT_BYTES + gather + (share.extraWorkspace ?? 0) });
}

/** Does a breakdown fit a device of `deviceBytes`, leaving the allocator's fragmentation margin? */
export function fitsOn(m: MemoryBreakdown, deviceBytes: number): boolean {
  return m.total <= deviceBytes * (1 - FRAGMENTATION_FRACTION);
}

export type { MemorySetup };
