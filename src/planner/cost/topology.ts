/**
 * Which physical GPUs a plan on n GPUs uses, and what links connect a group.
 * The fastest GPUs come first (stable by index), so a plan on n GPUs of a
 * heterogeneous cluster uses the n fastest; a layer split evenly over a group
 * runs at the pace of its slowest member.
 */
import type { ClusterSpec, GpuSpec } from '../cluster/spec';

export interface GroupLink {
  /** Bytes per millisecond. */
  bytesPerMs: number;
  alphaMs: number;
  /** Timeline lane: 'link:pcie', 'link:nvlink-node1', 'link:ib'. */
  lane: string;
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

  /** The smallest memory among these logical devices, bytes. */
  minMemoryBytes(devices: readonly number[]): number {
    let m = Infinity;
    for (const d of devices) m = Math.min(m, this.gpus[d].memoryGB * 1e9);
    return m;
  }

  /** The link a collective over `devices` runs on: inter-node when it spans nodes (the ring's slowest hop). */
  link(devices: readonly number[]): GroupLink {
    const key = devices.join(',');
    const hit = this.linkCache.get(key);
    if (hit) return hit;
    const nodes = new Set(devices.map((d) => this.gpus[d].node));
    const intra = this.cluster.intraNode;
    let link: GroupLink;
    if (nodes.size > 1) {
      const inter = this.cluster.interNode;
      link = {
        bytesPerMs: Math.min(inter.bandwidthGBs, intra.bandwidthGBs) * 1e6,
        alphaMs: Math.max(inter.latencyUs, intra.latencyUs) / 1000,
        lane: `link:${inter.name ?? 'inter'}`,
      };
    } else {
      const node = [...nodes][0];
      const base = intra.name ?? 'intra';
      link = { bytesPerMs: intra.bandwidthGBs * 1e6, alphaMs: intra.latencyUs / 1000, lane: this.cluster.nodes > 1 ? `link:${base}-node${node}` : `link:${base}` };
    }
    this.linkCache.set(key, link);
    return link;
  }
}

/** Ring all-reduce, α-β: 2(p−1)/p · bytes/bw + 2(p−1)·α. */
export function allReduceMs(bytes: number, p: number, link: GroupLink): number {
  if (p <= 1 || bytes <= 0) return 0;
  return ((2 * (p - 1)) / p) * (bytes / link.bytesPerMs) + 2 * (p - 1) * link.alphaMs;
}

export function range(start: number, count: number, stride = 1): number[] {
  return Array.from({ length: count }, (_, i) => start + i * stride);
}
