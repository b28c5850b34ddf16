/**
 * Which physical GPUs a plan on n GPUs uses, and what links connect a group.
 * The fastest GPUs come first (stable by index), so a plan on n GPUs of a
 * heterogeneous cluster uses the n fastest; a layer split evenly over a group
 * runs at the pace of its slowest member.
 */
import { gpuMemoryBytes, type ClusterSpec, type GpuSpec } from '../cluster/spec';
import { collectiveMs, linkLevel, type CollectiveAlgorithm, type CollectiveKind, type GroupFabric } from './collectives';

export interface GroupLink {
  /** Point-to-point bytes per millisecond between two members (the slowest hop; host-staged links already halved). */
  bytesPerMs: number;
  alphaMs: number;
  /** Timeline lane: 'link:pcie', 'link:nvlink-node1', 'link:ib'. */
  lane: string;
  /** How the group sits on the fabric, for collectives (intra-/inter-node levels). */
  fabric: GroupFabric;
}

export class Topology {
  /** Logical device i → physical GPU. */
  readonly gpus: GpuSpec[];
  private readonly linkCache = new Map<string, GroupLink>();

  constructor(readonly cluster: ClusterSpec) {
    this.gpus = [...cluster.gpus].sort((a, b) => b.tflops - a.tflops || a.index - b.index);
  }

  get size(): number {
    return this.gpus.length;
  }

  /**
   * The pace of a group that splits work evenly: the lowest TFLOP/s and the
   * lowest memory bandwidth among these logical devices. The two minima can
   * sit on different boards (a compute-rich GDDR card beside an HBM one), and
   * memory-bound layers wait for the slower memory, so the result may combine
   * them; for a homogeneous group it is the GPU itself.
   */
  slowest(devices: readonly number[]): GpuSpec {
    let s = this.gpus[devices[0]];
    let bandwidth = s.memoryBandwidthGBs;
    for (const d of devices) {
      if (this.gpus[d].tflops < s.tflops) s = this.gpus[d];
      bandwidth = Math.min(bandwidth, this.gpus[d].memoryBandwidthGBs);
    }
    return bandwidth < s.memoryBandwidthGBs ? { ...s, memoryBandwidthGBs: bandwidth } : s;
  }

  /**
   * How many GPUs' shares of a node's host memory and DRAM bandwidth each rank of `devices` gets: a spec states the
   * node's over all its GPUs, and a plan on fewer of them leaves the rest to its ranks (the fullest node decides).
   */
  hostShare(devices: readonly number[]): number {
    const ranks = new Map<number, number>();
    for (const d of devices) ranks.set(this.gpus[d].node, (ranks.get(this.gpus[d].node) ?? 0) + 1);
    let share = Infinity;
    for (const [node, count] of ranks) share = Math.min(share, this.gpus.filter((g) => g.node === node).length / count);
    return Number.isFinite(share) ? Math.max(1, share) : 1;
  }

  /** The smallest memory among these logical devices, bytes. */
  minMemoryBytes(devices: readonly number[]): number {
    let m = Infinity;
    for (const d of devices) m = Math.min(m, gpuMemoryBytes(this.gpus[d]));
    return m;
  }

  /** The link a collective over `devices` runs on: inter-node when it spans nodes (the ring's slowest hop). */
  link(devices: readonly number[]): GroupLink {
    const key = devices.join(',');
    const hit = this.linkCache.get(key);
    if (hit) return hit;
    const perNodeCount = new Map<number, number>();
    for (const d of devices) perNodeCount.set(this.gpus[d].node, (perNodeCount.get(this.gpus[d].node) ?? 0) + 1);
    const intraSpec = this.cluster.intraNode;
    const interSpec = this.cluster.interNode;
    const intra = linkLevel(intraSpec);
    const inter = linkLevel(interSpec);
    const fabric: GroupFabric = { perNode: Math.max(...perNodeCount.values()), nodes: perNodeCount.size, intra, inter };
    let link: GroupLink;
    if (perNodeCount.size > 1) {
      link = {
        bytesPerMs: Math.min(inter.busBytesPerMs, intra.busBytesPerMs),
        alphaMs: Math.max(inter.alphaMs, intra.alphaMs),
        lane: `link:${interSpec.name ?? 'inter'}`,
        fabric,
      };
    } else {
      const node = [...perNodeCount.keys()][0];
      const base = intraSpec.name ?? 'intra';
      link = { bytesPerMs: intra.busBytesPerMs, alphaMs: intra.alphaMs, lane: this.cluster.nodes > 1 ? `link:${base}-node${node}` : `link:${base}`, fabric };
    }
    this.linkCache.set(key, link);
    return link;
  }
}

/** A collective over p ranks of this group link (see cost/collectives.ts for the byte conventions). */
export function groupCollectiveMs(kind: CollectiveKind, bytes: number, p: number, link: GroupLink, algorithm: CollectiveAlgorithm = 'auto'): number {
  return collectiveMs(kind, bytes, p, link.fabric, algorithm);
}

/** All-reduce of a per-rank buffer of `bytes` over p ranks: NCCL's ring or tree, whichever is faster, hierarchical across nodes. */
export function allReduceMs(bytes: number, p: number, link: GroupLink): number {
  return collectiveMs('allreduce', bytes, p, link.fabric);
}

export function range(start: number, count: number, stride = 1): number[] {
  return Array.from({ length: count }, (_, i) => start + i * stride);
}
