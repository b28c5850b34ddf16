import { test } from 'node:test';
import assert from 'node:assert/strict';
import { planModel, resolveCluster, toChromeTrace } from '../../src/planner/index';
import { buildCostTables } from '../../src/planner/cost/tableBuilder';
import { Topology, range } from '../../src/planner/cost/topology';
import { simulateIteration } from '../../src/planner/simulator/iteration';
import type { PlanReport } from '../../src/protocol/plan';
import { ModelBuilder, alexnet, resnet50, transformer } from './fixtures';

/** The α-β ring all-reduce, written out independently of the planner. */
function ring(bytes: number, d: number, bwGBs: number, latencyUs: number): number {
  return ((2 * (d - 1)) / d) * (bytes / (bwGBs * 1e6)) + 2 * (d - 1) * (latencyUs / 1000);
}

test('simulator step time for DP-n equals the closed form', () => {
  const cluster = resolveCluster('pcie4', {});
  const topo = new Topology(cluster);
  for (const n of [1, 2, 4]) {
    // One layer: F + B + AR + U.
    const one = new ModelBuilder('one', [4096]);
    one.linear('fc', 'x', 4096);
    const t1 = buildCostTables(one.build(), topo, range(0, n), 64, { mode: 'dp', optimizer: 'sgd' });
    const o = t1.options[0][0];
    // pcie4 has no peer-to-peer: host-staged hops deliver half of 10 GB/s and pay 2 × 10 µs + 1 µs per step.
    const ar = n > 1 ? ring(4096 * 4097 * 4, n, 5, 21) : 0;
    assert.ok(Math.abs(o.allreduceMs - ar) < 1e-12);
    const run1 = simulateIteration(t1, new Int32Array(1));
    assert.ok(Math.abs(run1.makespanMs - (o.forwardMs + o.backwardMs + ar + o.updateMs)) < 1e-9, `n=${n}`);

    // Two layers, one bucket each: F1 + F2 + B2 + max(B1, AR2) + AR1 + U.
    const two = new ModelBuilder('two', [4096]);
    two.linear('fc2', two.linear('fc1', 'x', 4096), 4096);
    const t2 = buildCostTables(two.build(), topo, range(0, n), 64, { mode: 'dp', optimizer: 'momentum' });
    const [a, b] = [t2.options[0][0], t2.options[1][0]];
    const run2 = simulateIteration(t2, new Int32Array(2), { bucketBytes: 1 });
    const closed = a.forwardMs + b.forwardMs + b.backwardMs + Math.max(a.backwardMs, b.allreduceMs) + a.allreduceMs + a.updateMs + b.updateMs;
    assert.ok(Math.abs(run2.makespanMs - closed) < 1e-9, `n=${n}: ${run2.makespanMs} vs ${closed}`);
    if (n > 1) assert.ok(b.allreduceMs > 0 && a.backwardMs > 0);
  }
});

function checkTimeline(r: PlanReport): void {
  const step = r.plan.stepTimeMs;
  const byLane = new Map<string, Array<[number, number]>>();
  for (const e of r.timeline) {
    assert.ok(e.startMs >= 0 && e.endMs <= step + 1e-6 && e.endMs >= e.startMs, `${e.kind} ${e.layer} [${e.startMs}, ${e.endMs}] outside [0, ${step}]`);
    if (e.lane.startsWith('gpu:')) {
      assert.equal(e.lane, `gpu:${e.device}`);
      const list = byLane.get(e.lane) ?? [];
      list.push([e.startMs, e.endMs]);
      byLane.set(e.lane, list);
    } else assert.match(e.lane, /^link:/);
  }
  for (const [lane, list] of byLane) {
    list.sort((x, y) => x[0] - y[0]);
    for (let i = 1; i < list.length; i++) assert.ok(list[i][0] >= list[i - 1][1] - 1e-6, `${lane} runs two compute events at once`);
  }
  assert.ok(r.timeline.some((e) => e.critical));
  const last = Math.max(...r.timeline.map((e) => e.endMs));
  assert.ok(Math.abs(last - step) < 1e-6);
}

test('timelines: within [0, step], one compute event per device at a time; trace JSON valid', () => {
  const cases: Array<[() => ReturnType<typeof alexnet>, string, 'dp' | 'hybrid' | 'all', number]> = [
    [alexnet, 'pcie4', 'hybrid', 128],
    [alexnet, 'pcie4', 'dp', 128],
    [() => resnet50([1, 1, 1, 1]), 'h100x16-2node', 'hybrid', 256],
    [() => transformer(8, 256, 1024, 16), 'pcie4', 'all', 32],
  ];
  for (const [make, preset, mode, batch] of cases) {
    const out = planModel(make(), resolveCluster(preset, {}), { batch, objective: 'throughput', strategies: mode, optimizer: 'adam' });
    assert.ok(out.feasible);
    checkTimeline(out);
    const trace = JSON.parse(JSON.stringify(toChromeTrace(out)));
    assert.equal(trace.displayTimeUnit, 'ms');
    const xs = trace.traceEvents.filter((e: any) => e.ph === 'X');
    assert.equal(xs.length, out.timeline.length);
    for (const e of xs) {
      assert.equal(typeof e.name, 'string');
      assert.ok(Number.isFinite(e.ts) && Number.isFinite(e.dur) && e.dur >= 0 && Number.isInteger(e.pid) && Number.isInteger(e.tid));
      assert.ok(e.ts + e.dur <= out.plan.stepTimeMs * 1000 + 1e-3);
    }
    assert.ok(trace.traceEvents.some((e: any) => e.ph === 'M' && e.name === 'process_name' && e.args.name === 'GPU 0'));
  }
});

test('energy per sample follows busy and idle power', () => {
  const out = planModel(alexnet(), resolveCluster('pcie4', {}), { batch: 128, objective: 'throughput', strategies: 'dp', optimizer: 'sgd', gpus: 1 });
  assert.ok(out.feasible);
  // One GPU busy the whole step (no communication): energy = step · powerW / batch.
  const busy = out.timeline.reduce((s, e) => s + (e.endMs - e.startMs), 0);
  const idle = out.plan.stepTimeMs - busy;
  const expected = ((busy * 250 + idle * 60) / 1000) / 128;
  assert.ok(Math.abs(out.plan.energyJPerSample - expected) < 1e-9);
});

test('gradient buckets: each all-reduce waits for its gradients, buckets serialise on the link, the last one is exposed', () => {
  const topo = new Topology(resolveCluster('pcie4', {}));
  const m = new ModelBuilder('mlp', [2048]);
  let x = 'x';
  for (let i = 0; i < 6; i++) x = m.linear(`fc${i}`, x, 2048);
  const t = buildCostTables(m.build(), topo, range(0, 4), 256, { mode: 'dp', optimizer: 'momentum' });
  // 2048×2049 fp32 ≈ 16.8 MB a layer: DDP's 1 MiB first bucket takes fc5 alone, then its 25 MiB cap closes a
  // bucket every two layers: [fc5] [fc4 fc3] [fc2 fc1] [fc0].
  const run = simulateIteration(t, new Int32Array(6));
  const ar = run.tasks.map((task, i) => ({ task, i })).filter(({ task }) => task.kind === 'allreduce');
  assert.deepEqual(ar.map(({ task }) => task.deps.length), [1, 2, 2, 1]);
  const bwdEnd = new Map(run.tasks.map((task, i) => [task, i] as const).filter(([task]) => task.kind === 'backward').map(([task, i]) => [task.layer, run.end[i]]));
  for (const { task, i } of ar) {
    for (const d of task.deps) assert.ok(run.start[i] >= run.end[d] - 1e-12);
    assert.ok(task.bytes! <= 2 * 2048 * 2049 * 4);
  }
  for (let k = 1; k < ar.length; k++) assert.ok(run.start[ar[k].i] >= run.end[ar[k - 1].i] - 1e-12, 'buckets overlap on the link');
  // The first bucket overlaps the remaining backward; the last cannot: it starts after fc0's backward.
  assert.ok(run.start[ar[0].i] < bwdEnd.get('fc0')!);
  const lastAr = ar[ar.length - 1].i;
  assert.ok(run.start[lastAr] >= bwdEnd.get('fc0')! - 1e-12 && run.end[lastAr] > bwdEnd.get('fc0')!);
  const update = run.tasks.findIndex((task) => task.kind === 'update');
  assert.ok(run.start[update] >= run.end[lastAr] - 1e-12);
  // Not a free overlap: the step is longer than compute alone by at least the exposed last bucket.
  let compute = 0;
  run.tasks.forEach((task) => (compute += task.kind === 'forward' || task.kind === 'backward' || task.kind === 'update' ? task.durationMs : 0));
  assert.ok(run.makespanMs >= compute + run.tasks[lastAr].durationMs - 1e-9);
});
