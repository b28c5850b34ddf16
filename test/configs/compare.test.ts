/**
 * The plan-vs-launch comparison shared by every format (src/configs/compare.ts),
 * on small hand-built plans: how a GPU count maps onto machines, the sentence that
 * explains the plan's choice, and the fixes' edits.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkDeviceIds, compareLaunch, planTarget, requestedWorld, resizeDeviceIds, scalingMessage } from '../../src/configs/compare';
import type { ConfigValue, LaunchSettings, TextEdit } from '../../src/configs/types';
import type { PlanReport } from '../../src/protocol/plan';

interface Point { gpus: number; feasible: boolean; samplesPerSec: number; energyJPerSample?: number; reason?: string }
/** Only the fields compare.ts reads. */
function report(gpus: number, samplesPerSec: number, cluster: { gpus: number; nodes: number }, scaling: Point[] = [], energyJPerSample = 0): PlanReport {
  return {
    plan: { gpus, samplesPerSec, energyJPerSample, layers: [] },
    cluster: { name: 'c', ...cluster },
    scaling: scaling.map((p) => ({ energyJPerSample: 0, ...p })),
  } as unknown as PlanReport;
}
/** A settable value at [start, start + 1). */
const val = <T>(value: T, start: number): ConfigValue<T> => ({
  value,
  range: { start, end: start + 1 },
  set: (next: T): TextEdit[] => [{ start, end: start + 1, newText: Array.isArray(next) ? next.join(',') : String(next) }],
});

test('planTarget: the plan’s GPUs over machines of the cluster’s size', () => {
  const two8 = { gpus: 16, nodes: 2 };
  assert.deepEqual(planTarget(report(8, 1, two8)), { gpus: 8, nodes: 1, perNode: 8, gpusPerNode: 8 });
  assert.deepEqual(planTarget(report(12, 1, two8)), { gpus: 12, nodes: 2, perNode: 6, gpusPerNode: 8 });
  assert.deepEqual(planTarget(report(16, 1, two8)), { gpus: 16, nodes: 2, perNode: 8, gpusPerNode: 8 });
  // 9 GPUs on 8-GPU machines need 2 machines, and 9 does not split evenly over them.
  assert.deepEqual(planTarget(report(9, 1, two8)), { gpus: 9, nodes: 2, perNode: undefined, gpusPerNode: 8 });
  assert.deepEqual(planTarget(report(3, 1, { gpus: 4, nodes: 1 })), { gpus: 3, nodes: 1, perNode: 3, gpusPerNode: 4 });
});

test('device ids keep the user’s choice: drop from the end, add the lowest unused', () => {
  assert.deepEqual(resizeDeviceIds([3, 1, 5], 2), [3, 1]);
  assert.deepEqual(resizeDeviceIds([3, 1, 5], 3), [3, 1, 5]);
  assert.deepEqual(resizeDeviceIds([3, 1, 5], 5), [3, 1, 5, 0, 2]);
  assert.deepEqual(resizeDeviceIds([], 2), [0, 1]);
});

test('requested world size: a stated total, else per-machine × machines', () => {
  assert.equal(requestedWorld({ total: val(16, 0), perNode: val(4, 2) }), 16);
  assert.equal(requestedWorld({ perNode: val(4, 0), nodes: val(2, 2) }), 8);
  assert.equal(requestedWorld({ perNode: val(4, 0) }), 4);
  assert.equal(requestedWorld({ deviceIds: val([0, 1, 2], 0), nodes: val(2, 2) }), 6);
  assert.equal(requestedWorld({ nodes: val(2, 0) }), undefined);
});

test('scaling sentences: infeasible, beyond the cluster, more GPUs than planned, fewer', () => {
  const c = { gpus: 16, nodes: 2 };
  const points: Point[] = [
    { gpus: 1, feasible: false, samplesPerSec: 0 },
    { gpus: 4, feasible: false, samplesPerSec: 0, reason: 'out of memory' },
    { gpus: 2, feasible: true, samplesPerSec: 50 },
    { gpus: 16, feasible: true, samplesPerSec: 90, energyJPerSample: 2 },
  ];
  const r = report(8, 100, c, points, 1);
  assert.deepEqual(scalingMessage(4, r), { severity: 'error', message: '4 processes requested, but the model does not fit on 4 GPUs (out of memory); the plan uses 8' });
  assert.deepEqual(scalingMessage(1, r), { severity: 'error', message: '1 process requested, but the model does not fit on 1 GPU; the plan uses 8' });
  assert.deepEqual(scalingMessage(32, r), { severity: 'warning', message: "32 processes requested, but cluster 'c' has 16 GPUs; the plan uses 8" });
  // 16 GPUs: slower (90 vs 100) and twice the energy per sample.
  assert.equal(scalingMessage(16, r).message, '16 processes requested; the plan reaches the best throughput on 8 GPUs and saves 50% energy (16 GPUs are slower: 90.0 vs 100 samples/s)');
  // A faster feasible point elsewhere: the plan (chosen for energy) reaches 100/125 of it.
  const faster = report(8, 100, c, [...points, { gpus: 12, feasible: true, samplesPerSec: 125 }], 1);
  assert.equal(scalingMessage(16, faster).message, '16 processes requested; the plan reaches 80% of the best throughput on 8 GPUs and saves 50% energy (16 GPUs are slower: 90.0 vs 100 samples/s)');
  // An infeasible point's throughput does not count as the best.
  // As fast as the plan, not slower: no "are slower" clause.
  const tie = report(8, 100, c, [{ gpus: 16, feasible: true, samplesPerSec: 100, energyJPerSample: 2 }], 1);
  assert.equal(scalingMessage(16, tie).message, '16 processes requested; the plan reaches the best throughput on 8 GPUs and saves 50% energy');
  const ghost = report(8, 100, c, [...points, { gpus: 12, feasible: false, samplesPerSec: 125 }], 1);
  assert.match(scalingMessage(16, ghost).message, /reaches the best throughput/);
  // 199/200 = 99.5 %: rounds to "the best"; a 0.5 % energy saving is still named, 0.4 % is not.
  const near = report(8, 199, c, [{ gpus: 16, feasible: true, samplesPerSec: 200, energyJPerSample: 1 }], 0.995);
  assert.equal(scalingMessage(16, near).message, '16 processes requested; the plan reaches the best throughput on 8 GPUs and saves 1% energy');
  const tiny = report(8, 199, c, [{ gpus: 16, feasible: true, samplesPerSec: 200, energyJPerSample: 1 }], 0.996);
  assert.equal(scalingMessage(16, tiny).message, '16 processes requested; the plan reaches the best throughput on 8 GPUs');
  // Fewer GPUs than planned: the speed-up over the requested count.
  assert.deepEqual(scalingMessage(2, r), { severity: 'warning', message: '2 processes requested; the plan uses 8 GPUs for 2.0× the throughput (100 vs 50.0 samples/s)' });
  // A small gain keeps its second decimal rather than reading as "1.0×".
  const close = report(8, 100, c, [...points, { gpus: 6, feasible: true, samplesPerSec: 95 }], 1);
  assert.equal(scalingMessage(6, close).message, '6 processes requested; the plan uses 8 GPUs for 1.05× the throughput (100 vs 95.0 samples/s)');
  assert.equal(scalingMessage(3, r).message, '3 processes requested; the plan uses 8 GPUs (100 samples/s)');
  assert.equal(scalingMessage(2, report(1, 12.345, { gpus: 1, nodes: 1 })).message, "2 processes requested, but cluster 'c' has 1 GPUs; the plan uses 1");
  assert.equal(scalingMessage(2, report(1, 12.345, { gpus: 2, nodes: 1 })).message, '2 processes requested; the plan reaches the best throughput on 1 GPU');
});

test('device ids against the processes per machine', () => {
  const few = checkDeviceIds('torchrun', { perNode: val(4, 0), deviceIds: val([0, 1], 5) }, '--nproc_per_node', 'CUDA_VISIBLE_DEVICES');
  assert.equal(few.length, 1);
  assert.equal(few[0]!.severity, 'error');
  assert.equal(few[0]!.message, 'CUDA_VISIBLE_DEVICES lists 2 GPU(s) but --nproc_per_node starts 4 processes per machine: some processes get no GPU');
  assert.deepEqual(few[0]!.fix?.edits, [{ start: 5, end: 6, newText: '0,1,2,3' }]);
  const many = checkDeviceIds('torchrun', { perNode: val(2, 0), deviceIds: val([0, 1, 2], 5) }, 'n', 'ids');
  assert.equal(many[0]!.severity, 'warning');
  assert.equal(many[0]!.message, 'ids lists 3 GPUs but n starts only 2 processes per machine');
  assert.deepEqual(many[0]!.fix?.edits, [{ start: 5, end: 6, newText: '0,1' }]);
  assert.deepEqual(checkDeviceIds('torchrun', { perNode: val(2, 0), deviceIds: val([0, 1], 5) }, 'n', 'ids'), []);
  // A total over machines: 8 processes on 2 machines is 4 per machine.
  const total = checkDeviceIds('accelerate', { total: val(8, 0), nodes: val(2, 2), deviceIds: val([0, 1], 5) }, 'num_processes', 'gpu_ids');
  assert.match(total[0]!.message, /starts 4 processes per machine/);
  assert.deepEqual(checkDeviceIds('accelerate', { total: val(7, 0), nodes: val(2, 2), deviceIds: val([0, 1], 5) }, 'n', 'ids'), []);
  // More per machine than the plan's machines have: no fix (the node-count finding fixes it).
  const over = checkDeviceIds('torchrun', { perNode: val(4, 0), deviceIds: val([0, 1], 5) }, 'n', 'ids', 2);
  assert.match(over[0]!.message, /the plan's machines have only 2 GPUs each/);
  assert.equal(over[0]!.fix, undefined);
  assert.ok(checkDeviceIds('torchrun', { perNode: val(2, 0), deviceIds: val([0], 5) }, 'n', 'ids', 2)[0]!.fix);
});

test('compareLaunch: GPU count, too many and too few machines, with their edits', () => {
  const oneNode = report(8, 100, { gpus: 8, nodes: 1 });
  const describe = () => 'd';
  const count = compareLaunch('torchrun', { perNode: val(4, 10), deviceIds: val([0, 1, 2, 3], 20) }, oneNode, describe);
  assert.deepEqual(count.map((f) => f.code), ['gpu-count']);
  assert.deepEqual(count[0]!.fix?.edits, [{ start: 10, end: 11, newText: '8' }, { start: 20, end: 21, newText: '0,1,2,3,4,5,6,7' }]);
  assert.equal(count[0]!.fix?.title, 'Use 8 GPUs as planned (d)');
  // The right count over more machines than needed.
  const spread = compareLaunch('torchrun', { perNode: val(4, 10), nodes: val(2, 30) }, oneNode, describe);
  assert.deepEqual(spread.map((f) => [f.code, f.severity]), [['node-count', 'warning']]);
  assert.deepEqual(spread[0]!.fix?.edits, [{ start: 30, end: 31, newText: '1' }, { start: 10, end: 11, newText: '8' }]);
  assert.equal(spread[0]!.range.start, 30);
  // 16 processes crowded on one of 8-GPU machines.
  const twoNodes = report(16, 100, { gpus: 16, nodes: 2 });
  const crowded = compareLaunch('torchrun', { perNode: val(16, 10), nodes: val(1, 30) }, twoNodes, describe);
  assert.equal(crowded[0]!.message, "1 machine requested for 16 processes, but the machines of 'c' have 8 GPUs each; the plan runs on 2 machines × 8 GPUs");
  assert.deepEqual(crowded[0]!.fix?.edits, [{ start: 30, end: 31, newText: '2' }, { start: 10, end: 11, newText: '8' }]);
  // Without a machine count to edit, the finding stands without a fix.
  assert.equal(compareLaunch('torchrun', { perNode: val(16, 10) }, twoNodes, describe)[0]!.fix, undefined);
  // A total: the total, the machine count and the per-machine ids change together.
  const acc = compareLaunch('accelerate', { total: val(4, 0), nodes: val(1, 5), deviceIds: val([0, 1, 2, 3], 9) }, twoNodes, describe);
  assert.deepEqual(acc[0]!.fix?.edits, [{ start: 0, end: 1, newText: '16' }, { start: 5, end: 6, newText: '2' }, { start: 9, end: 10, newText: '0,1,2,3,4,5,6,7' }]);
  // A total with no machine count would put all 16 on one machine: no fix.
  assert.equal(compareLaunch('accelerate', { total: val(4, 0) }, twoNodes, describe)[0]!.fix, undefined);
  // Matching config: nothing to say.
  assert.deepEqual(compareLaunch('torchrun', { perNode: val(8, 10), nodes: val(2, 30) }, twoNodes, describe), []);
});

test('model-parallel layers are named, weighted ones first, three at most', async () => {
  const { modelParallelLayers } = await import('../../src/configs/compare');
  const layer = (name: string, type: string, strategy: string, params: number, modelDegree: number) => ({ name, type, strategy, params, modelDegree });
  const withLayers = (layers: unknown[]) => ({ plan: { layers } }) as unknown as PlanReport;
  assert.equal(modelParallelLayers(withLayers([layer('fc', 'Linear', 'data', 10, 1)])), undefined);
  assert.equal(modelParallelLayers(withLayers([layer('fc1', 'Linear', 'model', 10, 2), layer('relu', 'ReLU', 'model', 0, 2)])), 'the Linear layer fc1 (split ×2 in the plan)');
  const five = ['a', 'b', 'c', 'd', 'e'].map((n, i) => layer(n, i < 4 ? 'Linear' : 'Conv2d', i === 2 ? 'hybrid' : 'model', 10, i === 3 ? 4 : 2));
  assert.equal(modelParallelLayers(withLayers(five)), 'the Linear/Conv2d layers a, b, c and 2 more (split ×4 in the plan)');
  assert.equal(modelParallelLayers(withLayers(five.slice(0, 3))), 'the Linear layers a, b, c (split ×2 in the plan)');
  // Only unweighted layers split: they are named.
  assert.equal(modelParallelLayers(withLayers([layer('gelu', 'GELU', 'model', 0, 2)])), 'the GELU layer gelu (split ×2 in the plan)');
});
