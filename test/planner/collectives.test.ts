/**
 * Collective times against hand calculations in nccl-tests' conventions
 * (doc/PERFORMANCE.md): t = S · busbw-factor / busbw + steps · α.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { busBandwidthFactor, collectiveMs, collectiveSteps, flatCollectiveMs, groupFabric, linkLevel, type GroupFabric } from '../../src/planner/cost/collectives';
import { Topology } from '../../src/planner/cost/topology';
import { parseClusterSpec, resolveCluster } from '../../src/planner/index';

const close = (a: number, b: number, what: string) => assert.ok(Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(b)), `${what}: ${a} vs ${b}`);
/** 100 GB/s, 5 µs: 1e8 bytes per ms, 0.005 ms per step. */
const nvlink = { busBytesPerMs: 1e8, alphaMs: 0.005 };
const ib = { busBytesPerMs: 2.5e7, alphaMs: 0.01 };

test('busbw factors are nccl-tests’: all-reduce 2(n−1)/n, all-gather/reduce-scatter/all-to-all (n−1)/n', () => {
  assert.equal(busBandwidthFactor('allreduce', 8), 1.75);
  assert.equal(busBandwidthFactor('allgather', 8), 0.875);
  assert.equal(busBandwidthFactor('reducescatter', 4), 0.75);
  assert.equal(busBandwidthFactor('alltoall', 2), 0.5);
  assert.equal(busBandwidthFactor('p2p', 2), 1);
  assert.equal(busBandwidthFactor('allreduce', 1), 0);
  // One rank moves nothing over the bus, whatever the collective, and takes no steps.
  assert.equal(busBandwidthFactor('broadcast', 1), 0);
  assert.equal(busBandwidthFactor('p2p', 1), 0);
  assert.equal(collectiveSteps('p2p', 1, 'ring'), 0);
  assert.equal(collectiveSteps('p2p', 2, 'ring'), 1);
  assert.equal(collectiveSteps('allgather', 8, 'tree'), 7);
  assert.equal(collectiveSteps('broadcast', 8, 'tree'), 3);
});

test('flat ring: 1 GB all-reduce on 8 GPUs at 100 GB/s busbw = 17.5 ms + 14 × 5 µs', () => {
  close(flatCollectiveMs('allreduce', 1e9, 8, nvlink, 'ring'), 17.5 + 14 * 0.005, 'all-reduce');
  // algbw = S / t and busbw = algbw · 2(n−1)/n recovers the link's 100 GB/s once α is negligible.
  const t = flatCollectiveMs('allreduce', 1e12, 8, nvlink, 'ring');
  close(Math.round(((1e12 / t / 1e6) * 1.75) * 1000) / 1000, 100, 'busbw');
  close(flatCollectiveMs('allgather', 1e9, 8, nvlink), 8.75 + 7 * 0.005, 'all-gather of a 1 GB output');
  close(flatCollectiveMs('reducescatter', 1e9, 8, nvlink), 8.75 + 7 * 0.005, 'reduce-scatter of a 1 GB input');
  close(flatCollectiveMs('alltoall', 1e9, 8, nvlink), 8.75 + 7 * 0.005, 'all-to-all');
  close(flatCollectiveMs('p2p', 1e9, 2, nvlink), 10 + 0.005, 'p2p');
});

test('tree all-reduce keeps the bandwidth term and pays 2⌈log2 n⌉ steps; auto takes the faster', () => {
  close(flatCollectiveMs('allreduce', 1e3, 64, ib, 'tree'), (1e3 * 126) / 64 / 2.5e7 + 12 * 0.01, 'tree');
  close(flatCollectiveMs('allreduce', 1e3, 64, ib, 'ring'), (1e3 * 126) / 64 / 2.5e7 + 126 * 0.01, 'ring');
  close(flatCollectiveMs('allreduce', 1e3, 64, ib, 'auto'), flatCollectiveMs('allreduce', 1e3, 64, ib, 'tree'), 'auto');
});

test('hierarchical all-reduce across 4 nodes × 8: RS(8) on S, AR(4) on S/8 over the NICs, AG(8) on S', () => {
  const fabric: GroupFabric = { perNode: 8, nodes: 4, intra: nvlink, inter: ib };
  const S = 8e9;
  const rs = (S * 7) / 8 / 1e8 + 7 * 0.005;
  const arRing = ((S / 8) * 1.5) / 2.5e7 + 6 * 0.01;
  const arTree = ((S / 8) * 1.5) / 2.5e7 + 4 * 0.01;
  close(collectiveMs('allreduce', S, 32, fabric), rs + Math.min(arRing, arTree) + rs, 'hierarchical');
  // Inside one node the intra level is used alone, as a ring.
  close(collectiveMs('allreduce', S, 8, { ...fabric, nodes: 1 }), (S * 1.75) / 1e8 + 14 * 0.005, 'one node');
  // All-gather: across nodes on the 1/8 slice, then inside the node on the whole buffer.
  close(collectiveMs('allgather', S, 32, fabric), ((S / 8) * 0.75) / 2.5e7 + 3 * 0.01 + (S * 7) / 8 / 1e8 + 7 * 0.005, 'all-gather');
  // Nothing to move (a layer without parameters) launches no collective: not even its latency.
  for (const kind of ['allreduce', 'allgather', 'reducescatter'] as const) assert.equal(collectiveMs(kind, 0, 32, fabric), 0, kind);
});

test('host-staged PCIe (p2p: false): half the bandwidth, twice the latency plus a handshake; pcie4 is host-staged, NVLink presets are not', () => {
  assert.deepEqual(linkLevel({ bandwidthGBs: 10, latencyUs: 10, p2p: false }), { busBytesPerMs: 5e6, alphaMs: 0.021 });
  assert.deepEqual(linkLevel({ bandwidthGBs: 10, latencyUs: 10 }), { busBytesPerMs: 1e7, alphaMs: 0.01 });
  assert.equal(resolveCluster('pcie4').intraNode.p2p, false);
  assert.notEqual(resolveCluster('a100x8').intraNode.p2p, false);
  const topo = new Topology(resolveCluster('pcie4'));
  // 100 MB all-reduce on 4 TITAN Xp: 1.5 × 100 MB / 5 GB/s + 6 × 21 µs.
  close(collectiveMs('allreduce', 1e8, 4, topo.link([0, 1, 2, 3]).fabric), 30 + 6 * 0.021, 'pcie4');
  assert.throws(() => parseClusterSpec({ gpusPerNode: 2, gpu: { tflops: 1, memoryGB: 1, memoryBandwidthGBs: 1 }, intraNode: { bandwidthGBs: 1, p2p: 'no' } }, 't'), /intraNode\.p2p must be true or false/);
});

test('one rank per node: every collective runs on the network alone, whatever the node fabric would cost', () => {
  const inter = { busBytesPerMs: 25e6, alphaMs: 0.005 };
  const slowNode = { busBytesPerMs: 1e6, alphaMs: 1 };
  const fabric = { perNode: 1, nodes: 4, intra: slowNode, inter };
  for (const kind of ['allreduce', 'allgather', 'reducescatter', 'alltoall', 'broadcast'] as const) {
    close(collectiveMs(kind, 1e8, 4, fabric), flatCollectiveMs(kind, 1e8, 4, inter), kind);
  }
});

test('topology: a group spanning nodes gets the hierarchical fabric; a node-local one the intra level', () => {
  const topo = new Topology(resolveCluster('h100x16-2node'));
  const all = topo.link(Array.from({ length: 16 }, (_, i) => i));
  assert.deepEqual([all.fabric.perNode, all.fabric.nodes], [8, 2]);
  const local = topo.link([0, 1, 2, 3]);
  assert.deepEqual([local.fabric.perNode, local.fabric.nodes], [4, 1]);
  // Uneven: 3 GPUs in node 0 and 1 in node 1; the fuller node's count is the one its ranks share.
  const uneven = topo.link([5, 6, 7, 8]);
  assert.deepEqual([uneven.fabric.perNode, uneven.fabric.nodes], [3, 2]);
  // Lanes: a node's own NVLink on a multi-node cluster, plain 'nvlink' on a one-node one, the network across nodes.
  assert.equal(local.lane, 'link:nvlink-node0');
  assert.equal(uneven.lane, 'link:ib');
  assert.equal(new Topology(resolveCluster('a100x8')).link([0, 1]).lane, 'link:nvlink');
  assert.ok(collectiveMs('allreduce', 1e9, 16, all.fabric) > collectiveMs('allreduce', 1e9, 8, topo.link([0, 1, 2, 3, 4, 5, 6, 7]).fabric));
});

test('groupFabric: a group described by shape costs as the same group of devices', () => {
  const cluster = resolveCluster('h100x16-2node');
  const topo = new Topology(cluster);
  const devices = [0, 1, 2, 3, 8, 9, 10, 11];
  for (const kind of ['allreduce', 'allgather', 'reducescatter', 'alltoall'] as const) {
    close(collectiveMs(kind, 1e9, 8, groupFabric(cluster, 4, 2)), collectiveMs(kind, 1e9, 8, topo.link(devices).fabric), kind);
  }
});

test('tree broadcast pays ⌈log2 n⌉ steps (a tree all-reduce twice that); a ring broadcast n−1; busbw factor 1', () => {
  // 1 kB over 64 ranks of IB: the bandwidth term S · 1 / busbw, then the α steps.
  close(flatCollectiveMs('broadcast', 1e3, 64, ib, 'tree'), 1e3 / 2.5e7 + 6 * 0.01, 'tree broadcast');
  close(flatCollectiveMs('broadcast', 1e3, 64, ib, 'ring'), 1e3 / 2.5e7 + 63 * 0.01, 'ring broadcast');
  close(flatCollectiveMs('broadcast', 1e3, 64, ib), 1e3 / 2.5e7 + 6 * 0.01, 'auto takes the tree');
  // 5 ranks: ⌈log2 5⌉ = 3 (not 2): the ceiling matters on a non-power of two.
  close(flatCollectiveMs('allreduce', 1e3, 5, ib, 'tree'), (1e3 * 1.6) / 2.5e7 + 6 * 0.01, 'tree all-reduce on 5');
  // All-gather has no tree in NCCL: asking for one still runs the ring.
  close(flatCollectiveMs('allgather', 1e9, 8, nvlink, 'tree'), 8.75 + 7 * 0.005, 'all-gather ignores tree');
  // One rank or no bytes: nothing to do.
  assert.equal(flatCollectiveMs('allreduce', 1e9, 1, nvlink), 0);
  assert.equal(flatCollectiveMs('allreduce', 0, 8, nvlink), 0);
  assert.equal(collectiveMs('allreduce', 1e9, 1, { perNode: 8, nodes: 4, intra: nvlink, inter: ib }), 0);
});

test('hierarchical broadcast, reduce-scatter, all-to-all and p2p across 4 nodes × 8', () => {
  const fabric: GroupFabric = { perNode: 8, nodes: 4, intra: nvlink, inter: ib };
  const S = 8e9;
  // Broadcast: across the 4 nodes (tree: 2 steps, ring: 3 — auto takes the tree), then a ring inside the node.
  close(collectiveMs('broadcast', S, 32, fabric), S / 2.5e7 + 2 * 0.01 + S / 1e8 + 7 * 0.005, 'broadcast');
  // Reduce-scatter, like all-gather: the 1/8 slice across nodes, the whole buffer inside.
  close(collectiveMs('reducescatter', S, 32, fabric), ((S / 8) * 0.75) / 2.5e7 + 3 * 0.01 + (S * 7) / 8 / 1e8 + 7 * 0.005, 'reduce-scatter');
  // All-to-all: each rank sends S/32 to each of 31 peers, 7 over NVLink and 24 over IB at once; 31 α of the slower level.
  close(collectiveMs('alltoall', S, 32, fabric), Math.max((S * 7) / 32 / 1e8, (S * 24) / 32 / 2.5e7) + 31 * 0.01, 'all-to-all');
  // The IB share dominates; with a fast NIC the NVLink share would (the max picks the slower of the two).
  const fastNic: GroupFabric = { ...fabric, inter: { busBytesPerMs: 1e10, alphaMs: 0.001 } };
  close(collectiveMs('alltoall', S, 32, fastNic), (S * 7) / 32 / 1e8 + 31 * 0.005, 'all-to-all, NVLink-bound');
  // Point-to-point across nodes: one hop on the NIC.
  close(collectiveMs('p2p', 1e9, 2, { perNode: 1, nodes: 2, intra: nvlink, inter: ib }), 1e9 / 2.5e7 + 0.01, 'p2p, one rank per node');
  close(collectiveMs('p2p', 1e9, 16, { perNode: 8, nodes: 2, intra: nvlink, inter: ib }), 1e9 / 2.5e7 + 0.01, 'p2p between nodes');
  // A group of more ranks per node than it has (perNode 8, n 4 across 2 nodes) uses min(perNode, n) = 4 local ranks.
  close(
    collectiveMs('allgather', S, 4, { perNode: 8, nodes: 2, intra: nvlink, inter: ib }),
    ((S / 4) * 0.5) / 2.5e7 + 0.01 + (S * 3) / 4 / 1e8 + 3 * 0.005,
    'all-gather with perNode clamped to n',
  );
  // One rank per node: flat on the inter level, where auto may take the tree.
  close(collectiveMs('allreduce', 1e3, 64, { perNode: 1, nodes: 64, intra: nvlink, inter: ib }), (1e3 * 126) / 64 / 2.5e7 + 12 * 0.01, 'flat inter');
});

test('inside one node every collective is flat on the node fabric: the NIC (slower, higher latency) is never paid', () => {
  const oneNode: GroupFabric = { perNode: 8, nodes: 1, intra: nvlink, inter: ib };
  for (const kind of ['allreduce', 'allgather', 'reducescatter', 'broadcast', 'alltoall', 'p2p'] as const) {
    const n = kind === 'p2p' ? 2 : 8;
    const ms = collectiveMs(kind, 64e6, n, oneNode);
    const flat = flatCollectiveMs(kind, 64e6, n, nvlink, 'ring');
    assert.ok(Math.abs(ms - flat) <= 1e-9 * flat, `${kind}: ${ms} vs flat NVLink ${flat}`);
  }
});
