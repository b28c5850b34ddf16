import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseClusterSpec, planModel, resolveCluster } from '../../src/planner/index';
import { buildCostTables } from '../../src/planner/cost/tableBuilder';
import { Topology, range } from '../../src/planner/cost/topology';
import { redistribution } from '../../src/planner/cost/layout';
import { simulateIteration } from '../../src/planner/simulator/iteration';
import { ModelBuilder } from './fixtures';

const link = { bandwidthGBs: 10, latencyUs: 10 };
const gpu = (name: string, tflops: number, memoryBandwidthGBs: number) => ({ name, tflops, memoryGB: 16, memoryBandwidthGBs, powerW: 250, idlePowerW: 30 });

test('a mixed group runs memory-bound layers at its slowest memory, not the slowest-TFLOP/s board', () => {
  // A: more TFLOP/s, slower memory; B: the reverse. A relu is memory-bound on both.
  const mixed = new Topology(parseClusterSpec({ groups: [gpu('A', 20, 300), gpu('B', 10, 900)], intraNode: link }, 'inline'));
  const bottleneck = new Topology(parseClusterSpec({ groups: [{ ...gpu('C', 10, 300), count: 2 }], intraNode: link }, 'inline'));
  const m = new ModelBuilder('relu', [4096]);
  m.act('relu', m.linear('fc', 'x', 4096));
  const model = m.build();
  const on = (topo: Topology) => buildCostTables(model, topo, range(0, 2), 256, { mode: 'dp', optimizer: 'sgd' }).options[1][0];
  assert.equal(mixed.slowest([0, 1]).tflops, 10);
  assert.equal(mixed.slowest([0, 1]).memoryBandwidthGBs, 300);
  assert.ok(Math.abs(on(mixed).forwardMs - on(bottleneck).forwardMs) < 1e-12, `${on(mixed).forwardMs} vs ${on(bottleneck).forwardMs}`);
  assert.ok(Math.abs(on(mixed).updateMs - on(bottleneck).updateMs) < 1e-12);
});

test('a layout change inside each model group uses the intra-node link, not the inter-node one', () => {
  const cluster = resolveCluster('h100x16-2node', {});
  const topo = new Topology(cluster);
  const m = new ModelBuilder('mlp', [4096]);
  m.linear('fc2', m.linear('fc1', 'x', 4096), 4096);
  const t = buildCostTables(m.build(), topo, range(0, 16), 64, { mode: 'hybrid', optimizer: 'sgd' });
  const find = (layer: number) => t.options[layer].findIndex((o) => o.config.d === 2 && o.config.k === 8 && o.config.split === 'out');
  const [o1, o2] = [find(0), find(1)];
  assert.ok(o1 >= 0 && o2 >= 0);
  // fc1's output is sharded 1/16 per GPU; fc2 needs its batch half in full: 7/16 missing, from 7 peers
  // of its own 8-GPU model group (one node, NVLink). The gradient goes back with nothing missing.
  const bytes = t.edges[0].bytes;
  const nvlink = cluster.intraNode;
  const expected = (bytes * 7) / 16 / (nvlink.bandwidthGBs * 1e6) + (7 * nvlink.latencyUs) / 1000;
  assert.ok(Math.abs(t.edgeCost(0, o1, o2) - expected) < 1e-9, `${t.edgeCost(0, o1, o2)} vs ${expected}`);
  const [fwd, bwd] = t.edgeCostParts(0, o1, o2);
  assert.ok(Math.abs(fwd - expected) < 1e-9 && Math.abs(bwd) < 1e-9);
  // The simulator puts that transfer on the node's NVLink lane, where IB all-reduces do not delay it.
  const choice = Int32Array.from([o1, o2]);
  const run = simulateIteration(t, choice);
  const lanes = run.tasks.filter((x) => x.kind === 'transfer' && x.bytes === bytes).map((x) => x.resources[0]);
  assert.deepEqual(lanes, ['link:nvlink-node0']);
});

test('a layout change that needs rows from the other node runs on the whole group\'s link, not the model group\'s', () => {
  const cluster = resolveCluster('h100x16-2node', {});
  const topo = new Topology(cluster);
  const m = new ModelBuilder('mlp', [4096]);
  m.linear('fc2', m.linear('fc1', 'x', 4096), 4096);
  const t = buildCostTables(m.build(), topo, range(0, 16), 64, { mode: 'hybrid', optimizer: 'sgd' });
  const find = (layer: number, d: number, k: number) => t.options[layer].findIndex((o) => o.config.d === d && o.config.k === k && o.config.split === 'out');
  // fc1 split 2 × 8 (one batch half per node), fc2 split 1 × 16: every GPU needs the whole batch, half of it from the other node.
  const [o1, o2] = [find(0, 2, 8), find(1, 1, 16)];
  assert.ok(o1 >= 0 && o2 >= 0);
  const f = redistribution({ d: 2, k: 8, sharded: true }, { d: 1, k: 16, sharded: false });
  const whole = topo.link(range(0, 16));
  assert.ok(whole.bytesPerMs < topo.link(range(0, 8)).bytesPerMs, 'the two-node group is slower than one node');
  const expected = (t.edges[0].bytes * f.fraction) / whole.bytesPerMs + f.sources * whole.alphaMs;
  const [fwd] = t.edgeCostParts(0, o1, o2);
  assert.ok(Math.abs(fwd - expected) < 1e-9 * expected, `${fwd} vs ${expected}`);
});

test('a fractional node index is called a non-negative integer, since node 0 is allowed', () => {
  const g = gpu('A', 10, 500);
  assert.throws(() => parseClusterSpec({ groups: [{ ...g, node: 1.5 }], intraNode: link }, 'x'), /^ClusterSpecError: groups\[0\]\.node must be a non-negative integer$/);
  assert.equal(parseClusterSpec({ groups: [{ ...g, node: 0 }], intraNode: link }, 'x').gpus[0].node, 0);
});

test('a plan over mixed GPU models says the batch is split evenly, so the faster boards wait for the slowest', () => {
  const m = new ModelBuilder('mlp', [1024]);
  m.linear('fc', 'x', 1024);
  const mixed = parseClusterSpec({ groups: [gpu('Fast', 20, 900), gpu('Slow', 10, 600)], intraNode: link }, 'inline');
  const out = planModel(m.build(), mixed, { batch: 64, objective: 'throughput', strategies: 'dp', optimizer: 'sgd', gpus: 2 });
  assert.ok(out.feasible);
  assert.ok(out.diagnostics.some((d) => d.severity === 'info' && d.message === "the plan mixes Fast and Slow: frameworks split the batch evenly over the ranks, so each step runs at the Slow's pace and the Fast wait for it"), out.diagnostics.map((d) => d.message).join('\n'));
  // On one GPU (the first, Fast) nothing is mixed; nor on identical boards.
  const one = planModel(m.build(), mixed, { batch: 64, objective: 'throughput', strategies: 'dp', optimizer: 'sgd', gpus: 1 });
  assert.ok(one.feasible && !one.diagnostics.some((d) => /the plan mixes/.test(d.message)));
});
