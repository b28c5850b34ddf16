/**
 * Memory per GPU: weights, gradients, optimizer state, activations kept for
 * backward (per micro-batch in flight), and a workspace margin for the CUDA
 * context, cuDNN/cuBLAS workspaces and allocator fragmentation.
 */
import type { OptimizerKind } from '../../protocol/plan';

/** Optimizer state copies per parameter: SGD none, momentum one buffer, Adam two moments. */
export function optimizerStateCopies(o: OptimizerKind): number {
  return o === 'adam' ? 2 : o === 'momentum' ? 1 : 0;
}

/** Fraction of device memory reserved for allocator fragmentation and workspaces. */
export const WORKSPACE_FRACTION = 0.08;
/** CUDA context and library handles, bytes. */
export const CONTEXT_BYTES = 0.5e9;

export function usableBytes(deviceMemoryBytes: number): number {
  return Math.max(0, deviceMemoryBytes * (1 - WORKSPACE_FRACTION) - CONTEXT_BYTES);
}

export function gb(bytes: number): string {
  return `${(bytes / 1e9).toFixed(bytes >= 1e10 ? 0 : 1)} GB`;
}

export function mb(bytes: number): string {
  return bytes >= 1e9 ? gb(bytes) : `${(bytes / 1e6).toFixed(bytes >= 1e7 ? 0 : 1)} MB`;
}
