import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CLUSTER_PRESETS, ClusterSpecError, parseClusterSpec, resolveCluster } from '../../src/planner/index';

const simple = {
  name: '4x TITAN Xp over PCIe', nodes: 1, gpusPerNode: 4,
  gpu: { name: 'TITAN Xp', tflops: 12.1, memoryGB: 12, memoryBandwidthGBs: 548, powerW: 250, idlePowerW: 60 },
  intraNode: { bandwidthGBs: 10, latencyUs: 10 },
  interNode: { bandwidthGBs: 12.5, latencyUs: 5 },
};

test('the simple form from the issue is accepted and normalised', () => {
  const c = parseClusterSpec(simple, 'file:x.json');
  assert.equal(c.gpus.length, 4);
  assert.deepEqual(c.gpus.map((g) => [g.index, g.node]), [[0, 0], [1, 0], [2, 0], [3, 0]]);
  assert.equal(c.gpus[2].tflops, 12.1);
  assert.equal(c.intraNode.bandwidthGBs, 10);
  assert.equal(c.source, 'file:x.json');
});

test('heterogeneous nodes and groups forms', () => {
  const gpuA = { name: 'A', tflops: 20, memoryGB: 40, memoryBandwidthGBs: 1500, powerW: 300, idlePowerW: 40 };
  const gpuB = { name: 'B', tflops: 10, memoryGB: 16, memoryBandwidthGBs: 900, powerW: 250, idlePowerW: 30 };
  const c = parseClusterSpec({ name: 'mixed', nodes: [{ gpus: [{ ...gpuA, count: 2 }] }, { gpus: [{ ...gpuB, count: 3 }] }], intraNode: { bandwidthGBs: 100, latencyUs: 3 }, interNode: { bandwidthGBs: 12.5, latencyUs: 5 } }, 'inline');
  assert.equal(c.nodes, 2);
  assert.deepEqual(c.gpus.map((g) => `${g.node}:${g.name}`), ['0:A', '0:A', '1:B', '1:B', '1:B']);
  const g = parseClusterSpec({ groups: [{ ...gpuA, count: 1, node: 0 }, { ...gpuB, count: 2, node: 1 }], intraNode: { bandwidthGBs: 10, latencyUs: 1 }, interNode: { bandwidthGBs: 5, latencyUs: 5 } }, 'inline');
  assert.equal(g.gpus.length, 3);
  assert.equal(g.gpus[2].node, 1);
});

test('a bad spec gets an error naming the field', () => {
  const bad = (mut: (o: any) => void, field: RegExp) => {
    const o = structuredClone(simple) as any;
    mut(o);
    assert.throws(() => parseClusterSpec(o, 'x'), (e: unknown) => e instanceof ClusterSpecError && field.test(e.message));
  };
  bad((o) => (o.gpu.tflops = -1), /^gpu\.tflops must be a positive number$/);
  bad((o) => (o.gpu.tflops = 'fast'), /gpu\.tflops/);
  bad((o) => delete o.gpu.memoryGB, /gpu\.memoryGB/);
  bad((o) => (o.gpusPerNode = 2.5), /gpusPerNode must be a positive integer/);
  bad((o) => (o.intraNode = 3), /intraNode must be an object/);
  bad((o) => (o.interNode.bandwidthGBs = 0), /interNode\.bandwidthGBs/);
  bad((o) => (o.gpu.idlePowerW = 900), /gpu\.idlePowerW/);
  assert.throws(() => parseClusterSpec({ name: 'x', nodes: [{ gpus: [{ tflops: 1, memoryGB: 1, memoryBandwidthGBs: 1, count: 0 }] }], intraNode: { bandwidthGBs: 1 } }, 'x'), /nodes\[0\]\.gpus\[0\]\.count/);
});

test('presets exist with sources and sane numbers', () => {
  for (const id of ['pcie4', 'dgx1-v100', 'a100x8', 'h100x8', 'h100x16-2node']) {
    const p = CLUSTER_PRESETS[id];
    assert.ok(p, id);
    assert.ok(p.source.length > 10);
  }
  assert.equal(CLUSTER_PRESETS.pcie4.spec.gpus.length, 4);
  assert.equal(CLUSTER_PRESETS['h100x16-2node'].spec.gpus.length, 16);
  assert.equal(CLUSTER_PRESETS['h100x16-2node'].spec.nodes, 2);
  assert.equal(CLUSTER_PRESETS['h100x16-2node'].spec.interNode.bandwidthGBs, 50);
});

test('resolveCluster: preset, default, file, inline, local', () => {
  assert.equal(resolveCluster('a100x8', {}).gpus.length, 8);
  assert.equal(resolveCluster(undefined, {}).source, 'default');
  const fromFile = resolveCluster('cluster.json', { readFile: (p) => (p === 'cluster.json' ? JSON.stringify(simple) : '') });
  assert.equal(fromFile.source, 'file:cluster.json');
  assert.throws(() => resolveCluster('bad.json', { readFile: () => '{ nope' }), /not valid JSON/);
  assert.throws(() => resolveCluster('nonsense', {}), /unknown cluster 'nonsense'/);
  assert.throws(() => resolveCluster('local', {}), /no local GPUs detected \(nvidia-smi not found or reported none\); choose a preset/);
  const local = resolveCluster('local', { localGpus: [{ name: 'NVIDIA H200', memoryGB: 141 }, { name: 'NVIDIA H200', memoryGB: 141 }] });
  assert.equal(local.gpus.length, 2);
  assert.equal(local.gpus[0].memoryGB, 141);
  assert.notEqual(local.intraNode.p2p, false, 'datacenter boards keep PCIe peer-to-peer');
  const consumer = resolveCluster('local', { localGpus: [{ name: 'NVIDIA GeForce RTX 4090', memoryGB: 24 }, { name: 'NVIDIA GeForce RTX 4090', memoryGB: 24 }] });
  assert.equal(consumer.intraNode.p2p, false, 'GeForce boards are host-staged');
  assert.ok(local.gpus[0].tflops > 50);
});
