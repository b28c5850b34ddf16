/**
 * Thin adapters over the collective, memory and precision models this search
 * needs. They stand in until the shared models land (collectives:
 * src/planner/cost/collectives.ts, memory: src/planner/cost/memory*.ts,
 * precision peaks on the GPU spec); then these bodies become calls into them.
 * Nothing here is tuned: α-β ring costs, ZeRO's per-parameter byte counts.
 */
import type { OptimizerKind, Precision, ZeroStage } from '../../../protocol/plan';
import type { ClusterSpec, GpuSpec } from '../../cluster/spec';
import { optimizerStateCopies } from '../../cost/memory';

/** A link as bytes per ms and per-message latency. */
export interface Link {
  bytesPerMs: number;
  alphaMs: number;
  lane: string;
}

/**
 * The link a group of `size` ranks spaced `stride` apart runs on, in Megatron's
 * rank order (tensor innermost, then context, data, pipeline): it stays inside a
 * node when size·stride fits in one, else it takes the inter-node link (the
 * ring's slowest hop; every GPU of a DGX-class node has its own NIC).
 */
export function groupLink(cluster: ClusterSpec, gpusPerNode: number, size: number, stride: number): Link {
  const intra = cluster.intraNode;
  if (size <= 1 || size * stride <= gpusPerNode) return { bytesPerMs: intra.bandwidthGBs * 1e6, alphaMs: intra.latencyUs / 1000, lane: `link:${intra.name ?? 'intra'}` };
  const inter = cluster.interNode;
  return {
    bytesPerMs: Math.min(inter.bandwidthGBs, intra.bandwidthGBs) * 1e6,
    alphaMs: Math.max(inter.latencyUs, intra.latencyUs) / 1000,
    lane: `link:${inter.name ?? 'inter'}`,
  };
}

/** Ring all-reduce (NCCL's busbw convention): 2(p−1)/p · bytes / bw + 2(p−1)·α. */
export function allReduceMs(bytes: number, p: number, link: Link): number {
  if (p <= 1 || bytes <= 0) return 0;
  return ((2 * (p - 1)) / p) * (bytes / link.bytesPerMs) + 2 * (p - 1) * link.alphaMs;
}

/** Ring all-gather or reduce-scatter of a `bytes` tensor (each rank holds bytes/p): (p−1)/p · bytes / bw + (p−1)·α. */
export function allGatherMs(bytes: number, p: number, link: Link): number {
  if (p <= 1 || bytes <= 0) return 0;
  return ((p - 1) / p) * (bytes / link.bytesPerMs) + (p - 1) * link.alphaMs;
}

/** All-to-all where each rank sends `bytes` spread over the others (expert dispatch). */
export function allToAllMs(bytes: number, p: number, link: Link): number {
  if (p <= 1 || bytes <= 0) return 0;
  return ((p - 1) / p) * (bytes / link.bytesPerMs) + (p - 1) * link.alphaMs;
}

/** One point-to-point send (pipeline activations, ring-attention KV). */
export function p2pMs(bytes: number, link: Link): number {
  return bytes <= 0 ? 0 : bytes / link.bytesPerMs + link.alphaMs;
}

/** Bytes per element of activations, weights and gradients at a precision. */
export function activationBytes(precision: Precision): number {
  return precision === 'fp32' || precision === 'tf32' ? 4 : 2;
}

/**
 * Peak TFLOP/s of `gpu` at `precision`: the spec's per-precision peak when it
 * has one (the `peakTflops` field the precision work adds), else its fp32 peak
 * with `fallback` set so the report says the costs are fp32.
 */
export function peakTflops(gpu: GpuSpec, precision: Precision): { tflops: number; fallback: boolean } {
  const perPrecision = (gpu as GpuSpec & { peakTflops?: Partial<Record<Precision, number>> }).peakTflops;
  const p = perPrecision?.[precision];
  if (typeof p === 'number' && p > 0) return { tflops: p, fallback: false };
  return { tflops: gpu.tflops, fallback: precision !== 'fp32' };
}

/**
 * Model-state bytes per parameter held on one GPU (Rajbhandari et al., ZeRO,
 * SC'20, §3 and Fig. 1): mixed precision keeps 16-bit weights and gradients
 * plus fp32 master weights and optimizer state (2 + 2 + 4 + 4·copies); fp32
 * keeps 4 + 4 + 4·copies. ZeRO stage 1 shards the optimizer state (and the
 * master copy) over `shards` ranks, stage 2 also the gradients, stage 3 also the weights.
 */
export function modelStateBytes(params: number, precision: Precision, optimizer: OptimizerKind, zero: ZeroStage, shards: number): { weights: number; gradients: number; optimizer: number } {
  const w = activationBytes(precision);
  const mixed = w === 2;
  const optimizerPerParam = 4 * optimizerStateCopies(optimizer) + (mixed ? 4 : 0);
  return {
    weights: (params * w) / (zero >= 3 ? shards : 1),
    gradients: (params * w) / (zero >= 2 ? shards : 1),
    optimizer: (params * optimizerPerParam) / (zero >= 1 ? shards : 1),
  };
}
