/**
 * The 3D search's view of the shared models: collectives (cost/collectives.ts,
 * NCCL busbw conventions, hierarchical across nodes), model-state bytes
 * (memory/model.ts, ZeRO's 2 + 2 + K) and precision (memory/precision.ts).
 * A group of ranks is described by its size and the stride between its ranks
 * in Megatron's order (tensor innermost, then context, data, pipeline), which
 * is what decides how many of them share a node.
 */
import type { AmpStyle, OptimizerKind, Precision, ZeroStage } from '../../../protocol/plan';
import type { ClusterSpec, GpuSpec } from '../../cluster/spec';
import { collectiveMs, linkLevel, type GroupFabric } from '../../cost/collectives';
// The defining modules, not the room's index: under the test runner's module wrapper every re-exported name is a
// getter, and these run for each of the 3D search's millions of configurations.
import { modelStateBytes as sharedModelStateBytes, type MemorySetup } from '../../memory/model';
import { peakTflops as sharedPeakTflops, precisionBytes } from '../../memory/precision';

/** A group's fabric and the timeline lane its collectives are drawn on. */
export interface Link {
  fabric: GroupFabric;
  lane: string;
}

export function groupLink(cluster: ClusterSpec, gpusPerNode: number, size: number, stride: number): Link {
  const perNode = Math.max(1, Math.min(size, Math.floor(gpusPerNode / Math.max(1, stride))));
  const nodes = Math.ceil(size / perNode);
  const fabric: GroupFabric = { perNode, nodes, intra: linkLevel(cluster.intraNode), inter: linkLevel(cluster.interNode) };
  const lane = nodes > 1 ? `link:${cluster.interNode.name ?? 'inter'}` : `link:${cluster.intraNode.name ?? 'intra'}`;
  return { fabric, lane };
}

export function allReduceMs(bytes: number, p: number, link: Link): number {
  return collectiveMs('allreduce', bytes, p, link.fabric);
}

/** All-gather (or reduce-scatter) of a `bytes` buffer that each rank holds 1/p of. */
export function allGatherMs(bytes: number, p: number, link: Link): number {
  return collectiveMs('allgather', bytes, p, link.fabric);
}

/** All-to-all where each rank sends `bytes` spread over the others (expert dispatch). */
export function allToAllMs(bytes: number, p: number, link: Link): number {
  return collectiveMs('alltoall', bytes, p, link.fabric);
}

/** One point-to-point send between neighbours of the group (pipeline activations, ring-attention KV). */
export function p2pMs(bytes: number, link: Link): number {
  if (bytes <= 0) return 0;
  const level = link.fabric.nodes > 1 ? link.fabric.inter : link.fabric.intra;
  return bytes / level.busBytesPerMs + level.alphaMs;
}

/** Bytes per element of activations at a precision. */
export function activationBytes(precision: Precision): number {
  return precisionBytes(precision).activation;
}

/** Bytes per parameter of the gradients data parallelism reduces (fp32 under autocast: `.grad` has the parameter's dtype). */
export function gradientBytes(precision: Precision, style?: AmpStyle): number {
  return precisionBytes(precision, style).gradient;
}

/** Bytes per parameter of the weights ZeRO-3 gathers (fp32 under autocast, which keeps fp32 parameters). */
export function weightBytes(precision: Precision, style?: AmpStyle): number {
  return precisionBytes(precision, style).weight;
}

/** The precision's peak (the planner has already checked it exists or said where a default came from). */
export function peakTflops(gpu: GpuSpec, precision: Precision): { tflops: number; fallback: boolean } {
  return { tflops: sharedPeakTflops(gpu, precision).tflops, fallback: false };
}

/**
 * `shards`: GPUs the ZeRO state is divided over (HSDP: the node's share of the group, already applied by the caller);
 * `offload`: the optimizer state (`cpu`) or also the parameters and gradients (`params`) in host memory;
 * `castParams`: the parameters autocast casts (all when not said).
 */
export function modelStateBytes(params: number, precision: Precision, optimizer: OptimizerKind, zero: ZeroStage, shards: number, offload: { cpu?: boolean; params?: boolean } = {}, ampStyle?: AmpStyle, castParams = params): { weights: number; gradients: number; optimizer: number } {
  return sharedModelStateBytes(params, memorySetup(precision, optimizer, zero, offload, ampStyle), shards, castParams);
}

function memorySetup(precision: Precision, optimizer: OptimizerKind, zero: ZeroStage, offload: { cpu?: boolean; params?: boolean }, ampStyle?: AmpStyle): MemorySetup {
  return { precision, ...(ampStyle ? { ampStyle } : {}), optimizer, zeroStage: zero, hybridShard: false, recompute: 'none', cpuOffload: !!offload.cpu || !!offload.params, paramOffload: !!offload.params };
}
