/**
 * How a 3D plan holds its model state across the data-parallel group (data ×
 * context ranks, Megatron's gradient group): ZeRO over the whole group, HSDP
 * (PyTorch FSDP HYBRID_SHARD; ZeRO++ hpZ, Wang et al. 2023) sharded over the
 * group's members inside one node and replicated across nodes, and ZeRO-Offload
 * (Ren et al., USENIX ATC 2021) keeping the optimizer state in host memory.
 *
 * HSDP trades memory for traffic: state is divided by the node's share of the
 * group instead of the whole group, but every sharded collective (gradient
 * reduce-scatter, weight all-gather, ZeRO-3's per-pass gathers) stays on
 * NVLink, and only 1/shards of the gradients crosses the network, all-reduced
 * among the replicas. Offload adds PCIe copies at the GPU's host link:
 * 16-bit gradients down every micro-batch, updated weights up once a step
 * (parameter offload: the weights up for every pass instead).
 */
import type { ClusterSpec } from '../../cluster/spec';
import { DEFAULT_HOST_BANDWIDTH_GBS } from '../../cost/tables';
import { hostCopyMs } from '../../cost/shardedCollectives';
import { precisionBytes } from '../../memory/precision';
import type { AmpStyle, Precision } from '../../../protocol/plan';
import type { Config3D, EstimateContext } from './estimate';
import { groupLink, type Link } from './adapters';

export interface ShardPlan {
  /** GPUs each ZeRO shard set spans (the whole group, or its members in one node under HSDP). */
  shards: number;
  /** Copies of the sharded state (1 without HSDP): each shard is all-reduced over these. */
  replicas: number;
  shardLink: Link;
  replicaLink: Link;
}

/** The data-parallel group's members that share a node: ranks are tp apart (tensor parallel innermost). */
export function membersPerNode(gpusPerNode: number, tp: number, group: number): number {
  return Math.max(1, Math.min(group, Math.floor(gpusPerNode / Math.max(1, tp))));
}

/** HSDP only differs from ZeRO when the group spans nodes and splits evenly into per-node shard sets. */
export function hsdpPossible(gpusPerNode: number, tp: number, group: number): boolean {
  const per = membersPerNode(gpusPerNode, tp, group);
  return group > per && group % per === 0;
}

export function shardPlan(cluster: ClusterSpec, gpusPerNode: number, c: { dp: number; cp: number; tp: number; hsdp?: boolean }, dpLink: Link): ShardPlan {
  const group = c.dp * c.cp;
  if (!c.hsdp || !hsdpPossible(gpusPerNode, c.tp, group)) return { shards: group, replicas: 1, shardLink: dpLink, replicaLink: dpLink };
  const shards = membersPerNode(gpusPerNode, c.tp, group);
  const replicas = group / shards;
  return { shards, replicas, shardLink: groupLink(cluster, gpusPerNode, shards, c.tp), replicaLink: groupLink(cluster, gpusPerNode, replicas, c.tp * shards) };
}

/** Per-step PCIe time of ZeRO-Offload's weights up after the CPU step, for `params` parameters whose optimizer state this GPU owns. */
export function updatedWeightsUpMs(params: number, precision: Precision, hostBandwidthGBs: number | undefined, ampStyle?: AmpStyle): number {
  return offloadCopyMs(params * precisionBytes(precision, ampStyle).weight, hostBandwidthGBs);
}

/** PCIe time of offload's copies of `bytes` (gradient shards down, weight shards up) at the GPU's host link. */
export function offloadCopyMs(bytes: number, hostBandwidthGBs: number | undefined): number {
  return hostCopyMs(bytes, hostBandwidthGBs ?? DEFAULT_HOST_BANDWIDTH_GBS);
}

/** GPUs the ZeRO state is divided over: the data × context group, or its members in one node under HSDP. */
export function shardsOf(ctx: EstimateContext, c: Config3D): number {
  return c.hsdp && hsdpPossible(ctx.gpusPerNode, c.tp, c.dp * c.cp) ? membersPerNode(ctx.gpusPerNode, c.tp, c.dp * c.cp) : c.dp * c.cp;
}
