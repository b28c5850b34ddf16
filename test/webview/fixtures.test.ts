/**
 * The hand-written fixture plans follow src/protocol/plan.ts and agree with
 * themselves (timeline inside the step, lanes named by contract, chosen point
 * present in the scaling curve), so the browser tests check real shapes.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadFixture } from './browser';

const STRATEGIES = new Set(['data', 'model', 'hybrid', 'pipeline']);
const KINDS = new Set(['forward', 'backward', 'allreduce', 'transfer', 'update']);
const LAYER_NUMBERS = ['line', 'dataDegree', 'modelDegree', 'stage', 'forwardMs', 'backwardMs', 'allreduceBytes', 'allreduceMs', 'transferMs', 'memoryBytesPerGpu', 'params', 'activationBytes'] as const;

for (const name of ['plan-alexnet-pcie4', 'plan-vgg16-hybrid-2x2']) {
  test(`${name} matches the plan report contract`, () => {
    const r = loadFixture(name);
    assert.equal(r.feasible, true);
    assert.ok(['throughput', 'efficiency'].includes(r.objective));
    assert.ok(['dp', 'hybrid', 'all'].includes(r.strategies));
    assert.ok(['sgd', 'momentum', 'adam'].includes(r.optimizer));
    assert.equal(r.cluster.gpuNames.length, r.cluster.gpus);
    assert.equal(r.plan.memoryPerGpuBytes.length, r.plan.gpus);
    for (const l of r.plan.layers) {
      assert.ok(STRATEGIES.has(l.strategy), l.name);
      for (const k of LAYER_NUMBERS) assert.equal(typeof l[k], 'number', `${l.name}.${k}`);
      assert.ok(l.devices.every((d) => d >= 0 && d < r.plan.gpus));
      assert.equal(l.devices.length, l.dataDegree * l.modelDegree, `${l.name}: devices = data × model`);
      assert.ok(['analytical', 'measured'].includes(l.costSource.kind));
      assert.ok(l.reason.length > 10);
    }
    for (const e of r.timeline) {
      assert.ok(KINDS.has(e.kind));
      assert.match(e.lane, /^(gpu:\d+|link:.+)$/);
      if (e.kind === 'allreduce' || e.kind === 'transfer') assert.match(e.lane, /^link:/);
      else assert.equal(e.lane, `gpu:${e.device}`);
      assert.ok(e.startMs >= 0 && e.endMs >= e.startMs && e.endMs <= r.plan.stepTimeMs + 1e-9, `${e.layer} ${e.kind}`);
    }
    const lastEnd = Math.max(...r.timeline.map((e) => e.endMs));
    assert.equal(lastEnd, r.plan.stepTimeMs);
    assert.ok(Math.abs(r.plan.samplesPerSec - (r.batch / r.plan.stepTimeMs) * 1000) < 0.1);
    const chosen = r.scaling.find((p) => p.gpus === r.plan.gpus);
    assert.ok(chosen?.feasible);
    assert.equal(chosen.samplesPerSec, r.plan.samplesPerSec);
    assert.ok(r.timeline.some((e) => e.critical));
  });
}
