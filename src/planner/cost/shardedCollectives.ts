/**
 * The collectives ZeRO/FSDP adds, through the collectives model (NCCL busbw
 * conventions, hierarchical across nodes: cost/collectives.ts). An all-reduce
 * is a reduce-scatter followed by an all-gather, each moving (p−1)/p of the
 * buffer. ZeRO-3 replaces the gradient all-reduce by one reduce-scatter and
 * adds a parameter all-gather in forward and another in backward: 3 × (p−1)/p
 * instead of 2 × (p−1)/p, the ZeRO paper's 1.5× (Rajbhandari et al. 2020, §7.2.2).
 */
import { groupCollectiveMs, type GroupLink } from './topology';

/** All-gather of a buffer of `bytes` (the gathered size) over p GPUs. */
export function allGatherMs(bytes: number, p: number, link: GroupLink): number {
  if (p <= 1 || bytes <= 0) return 0;
  return groupCollectiveMs('allgather', bytes, p, link);
}

/** Reduce-scatter of a buffer of `bytes` (the full size) over p GPUs: the same traffic as an all-gather. */
export function reduceScatterMs(bytes: number, p: number, link: GroupLink): number {
  if (p <= 1 || bytes <= 0) return 0;
  return groupCollectiveMs('reducescatter', bytes, p, link);
}

/** Host↔GPU copy of `bytes` over PCIe at `gbs` GB/s (ZeRO-Offload's gradient download and weight upload). */
export function hostCopyMs(bytes: number, gbs: number): number {
  return bytes > 0 ? bytes / (gbs * 1e6) : 0;
}
