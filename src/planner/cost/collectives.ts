/**
 * Collective communication times, α-β, in NCCL's own conventions so that a
 * number here can be checked against an `nccl-tests` run:
 *
 * - algbw = S / t, where S is the buffer size nccl-tests prints;
 * - busbw = algbw × factor, the per-GPU link bandwidth the algorithm needs:
 *   all-reduce 2(n−1)/n, all-gather and reduce-scatter (n−1)/n (S = the whole
 *   gathered / scattered buffer), all-to-all (n−1)/n, broadcast/p2p 1
 *   (NVIDIA nccl-tests, doc/PERFORMANCE.md).
 *
 * So t = S · factor / busbw + steps · α, where busbw is what the link delivers
 * (a LinkLevel) and steps is the algorithm's count of dependent hops: a ring
 * all-reduce has 2(n−1), NCCL's double binary tree 2⌈log2 n⌉ with the same
 * bandwidth term (Sanders et al. 2009; NVIDIA, "Massively Scale Your Deep
 * Learning Training with NCCL 2.4", 2019: trees keep full bandwidth and cut
 * latency from linear to logarithmic).
 *
 * A group spanning nodes runs hierarchically, as NCCL does on rail-connected
 * clusters: reduce-scatter inside each node, all-reduce of the node's 1/g
 * shard across nodes (each local rank on its own NIC, in parallel), all-gather
 * inside each node. Each phase uses its own level's busbw and α.
 */
import type { LinkSpec } from '../cluster/spec';

export type CollectiveKind = 'allreduce' | 'allgather' | 'reducescatter' | 'alltoall' | 'broadcast' | 'p2p';
export type CollectiveAlgorithm = 'ring' | 'tree' | 'auto';

/** What one level of the fabric delivers to a rank. */
export interface LinkLevel {
  /** Achievable bus bandwidth per GPU (NCCL busbw), bytes per millisecond. */
  busBytesPerMs: number;
  /** Latency of one dependent step (one hop of a ring or tree), ms. */
  alphaMs: number;
}

/** How a group of ranks sits on the fabric. */
export interface GroupFabric {
  /** Ranks per node (the largest node's count when nodes are uneven). */
  perNode: number;
  nodes: number;
  intra: LinkLevel;
  inter: LinkLevel;
}

/** nccl-tests' busbw / algbw factor for n ranks. */
export function busBandwidthFactor(kind: CollectiveKind, n: number): number {
  if (n <= 1) return 0;
  switch (kind) {
    case 'allreduce':
      return (2 * (n - 1)) / n;
    case 'allgather':
    case 'reducescatter':
    case 'alltoall':
      return (n - 1) / n;
    case 'broadcast':
    case 'p2p':
      return 1;
  }
}

/** Dependent steps (each paying α) of the algorithm over n ranks. */
export function collectiveSteps(kind: CollectiveKind, n: number, algorithm: 'ring' | 'tree'): number {
  if (n <= 1) return 0;
  if (kind === 'p2p') return 1;
  const log = Math.ceil(Math.log2(n));
  if (algorithm === 'tree' && (kind === 'allreduce' || kind === 'broadcast')) return kind === 'allreduce' ? 2 * log : log;
  // all-to-all as n−1 pairwise exchanges; ring all-gather / reduce-scatter n−1 hops; ring all-reduce both.
  return kind === 'allreduce' ? 2 * (n - 1) : n - 1;
}

/** One level, flat: S · factor / busbw + steps · α. `bytes` follows nccl-tests' S (see the file comment). */
export function flatCollectiveMs(kind: CollectiveKind, bytes: number, n: number, level: LinkLevel, algorithm: CollectiveAlgorithm = 'auto'): number {
  if (n <= 1 || !(bytes > 0)) return 0;
  const beta = (bytes * busBandwidthFactor(kind, n)) / level.busBytesPerMs;
  const hasTree = kind === 'allreduce' || kind === 'broadcast';
  const ring = beta + collectiveSteps(kind, n, 'ring') * level.alphaMs;
  if (!hasTree || algorithm === 'ring') return ring;
  const tree = beta + collectiveSteps(kind, n, 'tree') * level.alphaMs;
  return algorithm === 'tree' ? tree : Math.min(ring, tree);
}

/**
 * A collective over n ranks laid out as `fabric` (perNode × nodes). Within one
 * node it is flat on the intra-node level; across nodes it composes the phases
 * named in the file comment. `bytes` is nccl-tests' S for the whole group.
 */
export function collectiveMs(kind: CollectiveKind, bytes: number, n: number, fabric: GroupFabric, algorithm: CollectiveAlgorithm = 'auto'): number {
  if (n <= 1 || !(bytes > 0)) return 0;
  const g = Math.max(1, Math.min(fabric.perNode, n));
  const N = fabric.nodes;
  // Inside a node NCCL's tree is a chain through the node's GPUs, as many steps as the ring: ring it is.
  if (N <= 1) return flatCollectiveMs(kind, bytes, n, fabric.intra, 'ring');
  if (g <= 1) return flatCollectiveMs(kind, bytes, n, fabric.inter, algorithm);
  switch (kind) {
    case 'allreduce':
      // RS inside the node on S, AR across nodes on S/g (one NIC per local rank), AG inside the node on S.
      return (
        flatCollectiveMs('reducescatter', bytes, g, fabric.intra, 'ring') +
        flatCollectiveMs('allreduce', bytes / g, N, fabric.inter, algorithm) +
        flatCollectiveMs('allgather', bytes, g, fabric.intra, 'ring')
      );
    case 'allgather':
    case 'reducescatter':
      // Across nodes on the 1/g slice each local rank owns, then inside the node on the whole buffer.
      return flatCollectiveMs(kind, bytes / g, N, fabric.inter) + flatCollectiveMs(kind, bytes, g, fabric.intra, 'ring');
    case 'broadcast':
      return flatCollectiveMs('broadcast', bytes, N, fabric.inter, algorithm) + flatCollectiveMs('broadcast', bytes, g, fabric.intra, 'ring');
    case 'alltoall': {
      // Each rank sends S/n to every peer: (g−1) of them over the node's fabric, (n−g) over its NIC, concurrently.
      const intraBytes = (bytes * (g - 1)) / n;
      const interBytes = (bytes * (n - g)) / n;
      return Math.max(intraBytes / fabric.intra.busBytesPerMs, interBytes / fabric.inter.busBytesPerMs) + (n - 1) * Math.max(fabric.intra.alphaMs, fabric.inter.alphaMs);
    }
    case 'p2p':
      return bytes / fabric.inter.busBytesPerMs + fabric.inter.alphaMs;
  }
}

/**
 * What a link spec delivers to a collective. With peer-to-peer (NVLink, or
 * PCIe between GPUs that allow it) the spec's bandwidth and latency are used
 * as they are. Without it (`p2p: false`: consumer GPUs such as TITAN Xp or
 * GeForce cards, or P2P disabled across a CPU root complex) NCCL falls back to
 * its SHM transport: the sender copies into a pinned host buffer and the
 * receiver copies out of it, so every byte crosses PCIe twice, once up and
 * once down, and the CPU's memory once each way (NCCL docs, "NCCL_P2P_DISABLE"
 * and "NCCL_SHM_DISABLE"; NVIDIA CUDA C Programming Guide, "Peer-to-Peer Memory
 * Access": without peer access, cudaMemcpyPeer stages through host memory).
 * The two copies are store-and-forward per chunk, so a hop sees half the
 * link's bandwidth and pays the PCIe latency twice plus the host handshake.
 */
export function linkLevel(spec: LinkSpec): LinkLevel {
  const staged = spec.p2p === false;
  const bandwidthGBs = staged ? spec.bandwidthGBs / 2 : spec.bandwidthGBs;
  const latencyUs = staged ? 2 * spec.latencyUs + HOST_HANDSHAKE_US : spec.latencyUs;
  return { busBytesPerMs: bandwidthGBs * 1e6, alphaMs: latencyUs / 1000 };
}

/**
 * A host-staged step also waits for the CPU-visible flag that says the chunk
 * landed in host memory (NCCL's SHM FIFO): one more PCIe round trip, ~1 µs on
 * PCIe 3.0 (PCI-SIG; measured DMA round trips are 0.6–1 µs).
 */
const HOST_HANDSHAKE_US = 1;
