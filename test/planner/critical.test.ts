import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { AnalyzedModel } from '../../src/core/ir';
import type { PlanReport, TimelineEvent } from '../../src/protocol/plan';
import type { PlanOptions } from '../../src/protocol/planOptions';
import { planModel, resolveCluster } from '../../src/planner/index';
import { Engine } from '../../src/planner/simulator/engine';
import { alexnet, resnet50, transformer, vgg16 } from './fixtures';

const opts = (o: Partial<PlanOptions>): PlanOptions => ({ batch: 128, objective: 'throughput', strategies: 'hybrid', optimizer: 'momentum', ...o });

function plan(model: AnalyzedModel, preset: string, o: Partial<PlanOptions>): PlanReport {
  const out = planModel(model, resolveCluster(preset, {}), opts(o));
  assert.ok(out.feasible, out.feasible ? '' : out.reason);
  return out;
}

const isComm = (e: TimelineEvent): boolean => e.lane.startsWith('link:');

/**
 * The flagged events, in time order, must form one chain from 0 to the step
 * time: no two overlap, each hands over to the next on the same GPU lane or
 * through a link event that GPU takes part in, and durations plus the waits
 * between them add up to the step time.
 */
function checkCriticalChain(r: PlanReport, label: string): TimelineEvent[] {
  const path = r.timeline.filter((e) => e.critical).sort((a, b) => a.startMs - b.startMs || a.endMs - b.endMs);
  assert.ok(path.length > 0, `${label}: nothing flagged`);
  // Rounding: timeline times are rounded to 1e-6 ms per event.
  const tol = 1e-6 * (path.length + 2);
  assert.ok(path[0].startMs <= tol, `${label}: the path starts at ${path[0].startMs}, not 0`);
  assert.ok(Math.abs(path[path.length - 1].endMs - r.plan.stepTimeMs) <= tol, `${label}: the path ends before the step`);
  let durations = 0;
  let waits = 0;
  for (let i = 0; i < path.length; i++) {
    const e = path[i];
    durations += e.endMs - e.startMs;
    if (i === 0) continue;
    const p = path[i - 1];
    assert.ok(e.startMs >= p.endMs - 1e-6, `${label}: critical ${p.kind} ${p.layer} [${p.startMs}, ${p.endMs}] overlaps ${e.kind} ${e.layer} [${e.startMs}, ${e.endMs}]`);
    waits += e.startMs - p.endMs;
    const linked = p.lane === e.lane || (isComm(p) && (p.devices ?? [p.device]).includes(e.device)) || (isComm(e) && (e.devices ?? [e.device]).includes(p.device));
    assert.ok(linked, `${label}: ${p.kind} ${p.layer} on ${p.lane} does not lead to ${e.kind} ${e.layer} on ${e.lane}`);
  }
  assert.ok(Math.abs(durations + waits - r.plan.stepTimeMs) <= tol, `${label}: ${durations} + ${waits} ≠ ${r.plan.stepTimeMs}`);
  // The simulator has no idle gaps on its critical path: every start is some predecessor's end.
  assert.ok(waits <= tol, `${label}: waits ${waits}`);
  return path;
}

test('engine: the critical path follows whichever branch held the last task back', () => {
  for (const linkMs of [1, 4]) {
    const eng = new Engine();
    const a = eng.add({ kind: 'forward', layer: 'a', resources: ['gpu:0'], devices: [0], durationMs: 5, deps: [] });
    const b = eng.add({ kind: 'forward', layer: 'b', resources: ['gpu:1'], devices: [1], durationMs: 2, deps: [] });
    const c = eng.add({ kind: 'transfer', layer: 'c', resources: ['link:x'], devices: [0, 1], durationMs: linkMs, deps: [b] });
    const d = eng.add({ kind: 'backward', layer: 'd', resources: ['gpu:0'], devices: [0], durationMs: 1, deps: [c] });
    const run = eng.run();
    // d waits for the later of a (its stream) and b → c (its dependency).
    const viaLink = 2 + linkMs > 5;
    assert.equal(run.makespanMs, Math.max(5, 2 + linkMs) + 1);
    assert.deepEqual([a, b, c, d].map((i) => run.critical[i]), viaLink ? [0, 1, 1, 1] : [1, 0, 0, 1], `link ${linkMs} ms`);
  }
});

test('critical path: one chain whose durations add up to the step time', () => {
  const cases: Array<[string, PlanReport]> = [
    ['alexnet/pcie4/hybrid', plan(alexnet(), 'pcie4', {})],
    ['alexnet/pcie4/dp×4', plan(alexnet(), 'pcie4', { strategies: 'dp', gpus: 4 })],
    ['vgg16/pcie4/hybrid', plan(vgg16(), 'pcie4', {})],
    ['resnet50/h100x16-2node/hybrid', plan(resnet50([1, 1, 1, 1]), 'h100x16-2node', { batch: 256 })],
    // Only a pipeline fits this one in 12 GB GPUs with Adam (outcomes.test.ts checks that), so it is one.
    ['transformer/pcie4/pipeline', plan(transformer(24, 512, 2048, 16), 'pcie4', { strategies: 'all', batch: 16, gpus: 4, microBatches: 8, optimizer: 'adam' })],
  ];
  for (const [label, r] of cases) checkCriticalChain(r, label);
  // The pipeline case really is a pipeline, so the chain crosses stages through their transfers.
  const pipe = cases[cases.length - 1][1];
  assert.ok(pipe.plan.pipeline && pipe.plan.pipeline.stages >= 2, 'the pipeline case is a pipeline');
  const path = checkCriticalChain(pipe, 'pipeline');
  assert.ok(new Set(path.filter((e) => !isComm(e)).map((e) => e.lane)).size >= 2, 'the pipeline path stays on one stage');
});

test('critical path: a lockstep data-parallel plan flags one GPU lane, not all four', () => {
  const r = plan(alexnet(), 'pcie4', { strategies: 'dp', gpus: 4, pins: { zeroStage: 0 } });
  assert.equal(r.plan.gpus, 4);
  const compute = r.timeline.filter((e) => !isComm(e));
  const flagged = compute.filter((e) => e.critical);
  assert.ok(flagged.length > 0);
  assert.deepEqual([...new Set(flagged.map((e) => e.lane))], ['gpu:0']);
  // Each flagged step has unflagged twins on the other three lanes (same layer, same times).
  for (const e of flagged) {
    const twins = compute.filter((x) => x !== e && x.kind === e.kind && x.layer === e.layer && x.startMs === e.startMs && x.endMs === e.endMs);
    assert.deepEqual(twins.map((x) => x.lane).sort(), ['gpu:1', 'gpu:2', 'gpu:3']);
    assert.ok(twins.every((x) => !x.critical));
  }
  // The gradient all-reduce is communication the step waits on: the last one is on the path.
  const lastAllreduce = r.timeline.filter((e) => e.kind === 'allreduce').sort((a, b) => b.endMs - a.endMs)[0];
  assert.ok(lastAllreduce?.critical, 'the last all-reduce is on the path');
  // Under ZeRO-1 the step ends with the updated weights' all-gather, which nothing overlaps: it is on the path too.
  const z1 = plan(alexnet(), 'pcie4', { strategies: 'dp', gpus: 4, pins: { zeroStage: 1 } });
  const last = [...z1.timeline].sort((a, b) => b.endMs - a.endMs)[0]!;
  assert.equal(last.kind, 'allgather');
  assert.ok(last.critical, 'the after-step gather ends the step, on the path');
  assert.ok(z1.timeline.some((e) => e.kind === 'reducescatter') && !z1.timeline.some((e) => e.kind === 'allreduce'), 'ZeRO-1 reduce-scatters its gradients');
});

test('critical path: AlexNet and VGG-16 plans flag fewer events than they have', () => {
  for (const make of [alexnet, vgg16]) {
    for (const strategies of ['hybrid', 'dp'] as const) {
      const r = plan(make(), 'pcie4', { strategies, gpus: 4 });
      const flagged = r.timeline.filter((e) => e.critical).length;
      assert.ok(flagged > 0 && flagged < r.timeline.length, `${make().name}/${strategies}: ${flagged} of ${r.timeline.length}`);
      // Compute runs on 4 lanes but is flagged on one: at most a quarter of compute events plus the link events.
      const computeEvents = r.timeline.filter((e) => !isComm(e)).length;
      const linkEvents = r.timeline.length - computeEvents;
      assert.ok(flagged <= computeEvents / 4 + linkEvents, `${make().name}/${strategies}: ${flagged} flagged`);
    }
  }
});
