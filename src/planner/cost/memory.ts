/**
 * Memory per GPU: weights, gradients, optimizer state, activations kept for
 * backward (per micro-batch in flight), and a workspace margin for the CUDA
 * context, cuDNN/cuBLAS workspaces and allocator fragmentation.
 */
import { CONTEXT_BYTES, FRAGMENTATION_FRACTION } from '../memory/index';

export { CONTEXT_BYTES };
/** Fraction of device memory reserved for allocator fragmentation and workspaces. */
export const WORKSPACE_FRACTION = FRAGMENTATION_FRACTION;

export function usableBytes(deviceMemoryBytes: number): number {
  return Math.max(0, deviceMemoryBytes * (1 - WORKSPACE_FRACTION) - CONTEXT_BYTES);
}

export function gb(bytes: number): string {
  return `${(bytes / 1e9).toFixed(bytes >= 1e10 ? 0 : 1)} GB`;
}

export function mb(bytes: number): string {
  return bytes >= 1e9 ? gb(bytes) : `${(bytes / 1e6).toFixed(bytes >= 1e7 ? 0 : 1)} MB`;
}
