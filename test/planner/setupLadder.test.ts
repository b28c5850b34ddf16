/**
 * The memory-saver search: the ladder's order, the walk that compares full
 * recompute against deeper gradient accumulation, the pruning of ZeRO stages
 * whose model state alone overflows, and the real case that exposed the old
 * first-fit ladder (ResNet-50 on a DGX-1 got ZeRO-3 + full recompute, 23%
 * slower than plain data parallelism with two accumulation steps).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { analyzeSource } from '../../src/frontends/index';
import { defaultSetup, type TableSetup } from '../../src/planner/cost/tables';
import { planModel, resolveCluster } from '../../src/planner/index';
import { setupLadder, walkLadder, type Ladder, type SetupOutcome } from '../../src/planner/search/setupLadder';
import { drain, type Steps } from '../../src/planner/steps';
import type { PlanReport } from '../../src/protocol/plan';
import type { PlanOptions } from '../../src/protocol/planOptions';

const base = defaultSetup('adam');
const ladderOf = (n: number, batch: number, hasAttention = false, multiNode = false): Ladder => {
  const l = setupLadder({ n, batch, base, pins: {}, hasAttention, multiNode });
  assert.ok(!('reason' in l));
  return l;
};
const name = (s: TableSetup) => `z${s.zeroStage}${s.hybridShard ? 'h' : ''}/${s.recompute}/a${s.microSteps}${s.paramOffload ? '/poff' : s.cpuOffload ? '/off' : ''}`;

test('the ladder: levels of accumulation, each with light rungs then full-recompute rungs by ZeRO stage (ZeRO-0 beside ZeRO-1); offload last', () => {
  const l = ladderOf(8, 64, true, true);
  assert.deepEqual(l.levels.map((x) => x.microSteps), [1, 2, 4, 8]);
  assert.deepEqual(l.levels[0].light.map((r) => r.map(name).join('+')), ['z0/none/a1+z1/none/a1', 'z2/none/a1', 'z2/selective/a1', 'z3/selective/a1+z3h/selective/a1']);
  // Deeper levels try no recompute first: a selective fit above is compared against them.
  assert.deepEqual(l.levels[1].light.map((r) => r.map(name).join('+')), ['z0/none/a2+z1/none/a2', 'z2/none/a2', 'z0/selective/a2+z1/selective/a2', 'z2/selective/a2', 'z3/selective/a2+z3h/selective/a2']);
  assert.deepEqual(l.levels[1].full.map((r) => r.map(name).join('+')), ['z0/full/a2+z1/full/a2', 'z2/full/a2', 'z3/full/a2+z3h/full/a2']);
  assert.deepEqual(l.offload.map((r) => r.map(name).join('+')), ['z3/full/a8/off', 'z3/full/a8/poff']);
  // One GPU: no ZeRO to shard over, so each level is one light and one full rung.
  const one = ladderOf(1, 4);
  assert.deepEqual(one.levels.map((x) => [...x.light, ...x.full].map((r) => r.map(name).join('+'))), [['z0/none/a1', 'z0/full/a1'], ['z0/none/a2', 'z0/full/a2'], ['z0/none/a4', 'z0/full/a4']]);
  // Pins collapse the ladder: a pinned ZeRO stage and recompute leave one setup per level.
  const pinned = setupLadder({ n: 4, batch: 16, base, pins: { zeroStage: 1, recompute: 'none' }, hasAttention: false, multiNode: false });
  assert.ok(!('reason' in pinned));
  assert.deepEqual(pinned.levels.map((x) => [...x.light, ...x.full].flat().map(name)), [['z1/none/a1'], ['z1/none/a2'], ['z1/none/a4']]);
});

/** Walks a ladder over a table of outcomes by setup name; unknown setups do not fit and are slow. */
function walk(l: Ladder, table: Record<string, SetupOutcome>, cap = 100): { best?: string; tried: string[] } {
  const tried: string[] = [];
  const evaluate = function* (s: TableSetup): Steps<string> {
    tried.push(name(s));
    return name(s);
  };
  const w = drain(walkLadder(l, cap, evaluate, (n) => table[n] ?? { fits: false, stepTimeMs: 1e9, modelStateBytes: 10, overBytes: 1 }));
  return { best: w.best, tried };
}

test('full recompute is compared against deeper accumulation: the faster that fits wins, and the walk stops when deeper is no faster', () => {
  const l = ladderOf(1, 64);
  // A CNN at a large per-GPU batch: activations overflow at one step; full recompute fits but costs a forward.
  const cnn = { 'z0/none/a1': { fits: false, stepTimeMs: 100, modelStateBytes: 1, overBytes: 50 }, 'z0/full/a1': { fits: true, stepTimeMs: 133 }, 'z0/none/a2': { fits: true, stepTimeMs: 103 } };
  assert.deepEqual(walk(l, cnn), { best: 'z0/none/a2', tried: ['z0/none/a1', 'z0/full/a1', 'z0/none/a2'] });
  // Accumulation that only fits where it is slower than full recompute: the walk keeps the recompute plan and
  // stops as soon as a deeper level simulates no faster (a4's, a8's would be slower still).
  const slow = { 'z0/none/a1': { fits: false, stepTimeMs: 100, modelStateBytes: 1, overBytes: 50 }, 'z0/full/a1': { fits: true, stepTimeMs: 133 }, 'z0/none/a2': { fits: false, stepTimeMs: 140, modelStateBytes: 1, overBytes: 10 } };
  assert.deepEqual(walk(l, slow), { best: 'z0/full/a1', tried: ['z0/none/a1', 'z0/full/a1', 'z0/none/a2'] });
  // A light rung that fits ends the walk at once: deeper accumulation is only slower.
  assert.deepEqual(walk(l, { 'z0/none/a1': { fits: true, stepTimeMs: 100 } }), { best: 'z0/none/a1', tried: ['z0/none/a1'] });
});

test('a ZeRO stage whose model state alone overflows is not tried again, and an overflow larger than the model state skips the higher stages of its level', () => {
  const l = ladderOf(4, 16);
  const big = 500;
  const table: Record<string, SetupOutcome> = {
    'z0/none/a1': { fits: false, stepTimeMs: 10, modelStateBytes: big, overBytes: 450 },
    'z1/none/a1': { fits: false, stepTimeMs: 10, modelStateBytes: 200, overBytes: 150 },
    'z2/none/a1': { fits: false, stepTimeMs: 10, modelStateBytes: 80, overBytes: 20 },
    'z3/none/a1': { fits: false, stepTimeMs: 11, modelStateBytes: 30, overBytes: 5 },
    'z0/full/a1': { fits: false, stepTimeMs: 13, modelStateBytes: big, overBytes: 420 },
    'z1/full/a1': { fits: false, stepTimeMs: 13, modelStateBytes: 200, overBytes: 120 },
    'z2/full/a1': { fits: true, stepTimeMs: 13 },
    'z2/none/a2': { fits: true, stepTimeMs: 10.5 },
  };
  const r = walk(l, table);
  assert.equal(r.best, 'z2/none/a2');
  // z0 (model state 500 > 100) is never tried after level 1; z1/none/a2 still is (its 200 > 100: skipped too).
  assert.ok(!r.tried.includes('z0/none/a2') && !r.tried.includes('z1/none/a2'), r.tried.join(' '));
  // Activations far beyond what sharding can remove: at 40 over with 5 of model state, ZeRO-1..3 are skipped.
  const acts = walk(ladderOf(4, 8), { 'z0/none/a1': { fits: false, stepTimeMs: 10, modelStateBytes: 5, overBytes: 40 }, 'z0/full/a1': { fits: true, stepTimeMs: 13 } });
  assert.deepEqual(acts.tried.slice(0, 2), ['z0/none/a1', 'z0/full/a1']);
  // Nothing fits anywhere: the offload rungs are the last tried, the optimizer state first, then the parameters.
  const none = walk(ladderOf(2, 2), {});
  assert.equal(none.best, undefined);
  assert.deepEqual(none.tried.slice(-2), ['z3/full/a1/off', 'z3/full/a1/poff']);
  // Once offload is needed, both kinds compete: the faster that fits wins, whichever it is.
  assert.equal(walk(ladderOf(2, 2), { 'z3/full/a1/off': { fits: true, stepTimeMs: 50 }, 'z3/full/a1/poff': { fits: true, stepTimeMs: 60 } }).best, 'z3/full/a1/off');
  assert.equal(walk(ladderOf(2, 2), { 'z3/full/a1/off': { fits: true, stepTimeMs: 50 }, 'z3/full/a1/poff': { fits: true, stepTimeMs: 40 } }).best, 'z3/full/a1/poff');
  // A level that fits keeps offload out of the walk.
  assert.ok(!walk(ladderOf(2, 2), { 'z0/none/a1': { fits: true, stepTimeMs: 10 } }).tried.some((t) => t.endsWith('off')));
});

test('ResNet-50 (examples/pytorch/resnet.py) at batch 2048 on a DGX-1: the free search finds plain data parallelism with accumulation, never slower than that setup pinned', async () => {
  const file = join(__dirname, '..', '..', 'examples', 'pytorch', 'resnet.py');
  const model = (await analyzeSource(file, readFileSync(file, 'utf8'))).models.find((m) => m.name === 'resnet50')!;
  const opts: PlanOptions = { batch: 2048, objective: 'throughput', strategies: 'hybrid', optimizer: 'momentum', gpus: 8, precision: 'fp32' };
  const free = planModel(model, resolveCluster('dgx1-v100'), opts) as PlanReport;
  const pinned = planModel(model, resolveCluster('dgx1-v100'), { ...opts, pins: { zeroStage: 0, recompute: 'none', microBatch: 128 } }) as PlanReport;
  assert.ok(free.feasible && pinned.feasible);
  assert.ok(free.plan.stepTimeMs <= pinned.plan.stepTimeMs * 1.001, `free ${free.plan.stepTimeMs} ms vs pinned ${pinned.plan.stepTimeMs} ms`);
  assert.equal(free.plan.setup!.recompute, 'none');
  // 256 samples per GPU do not fit a 16 GB V100 in fp32 at once (DeepLearningExamples trains 112): it accumulates.
  assert.ok(free.plan.setup!.gradientAccumulation >= 2);
  // The headline memory is what the breakdown adds up to, the CUDA context included, as the block-stack search reports.
  assert.equal(Math.max(...free.plan.memoryPerGpuBytes), free.plan.setup!.memoryPerGpu.total);
});

test('offload pins: parameter offload pinned offloads the optimizer too on every rung; optimizer offload pinned keeps the parameters', () => {
  const params = setupLadder({ n: 2, batch: 4, base, pins: { paramOffload: true }, hasAttention: false, multiNode: false });
  assert.ok(!('reason' in params));
  const all = [...params.levels.flatMap((l) => [...l.light, ...l.full].flat()), ...params.offload.flat()];
  assert.ok(all.length > 0 && all.every((s) => s.paramOffload && s.cpuOffload), all.map(name).join(' '));
  // Optimizer offload pinned (`--offload optimizer`): the parameters stay on the GPU, so no parameter-offload rung.
  const optimizer = setupLadder({ n: 2, batch: 4, base, pins: { cpuOffload: true, paramOffload: false }, hasAttention: false, multiNode: false });
  assert.ok(!('reason' in optimizer));
  assert.ok([...optimizer.levels.flatMap((l) => [...l.light, ...l.full].flat()), ...optimizer.offload.flat()].every((s) => s.cpuOffload && !s.paramOffload));
});

test('ZeRO-0 and ZeRO-1 are both tried where ZeRO-0 fits: the faster wins, and the walk stops there', () => {
  const l = ladderOf(8, 64);
  // Inside an NVLink node the sharded optimizer step can save more than the after-step gather costs.
  const zeroOneFaster = { 'z0/none/a1': { fits: true, stepTimeMs: 100 }, 'z1/none/a1': { fits: true, stepTimeMs: 97 } };
  assert.deepEqual(walk(l, zeroOneFaster), { best: 'z1/none/a1', tried: ['z0/none/a1', 'z1/none/a1'] });
  // Across nodes the gather costs more: ZeRO-0 stays.
  const zeroZeroFaster = { 'z0/none/a1': { fits: true, stepTimeMs: 100 }, 'z1/none/a1': { fits: true, stepTimeMs: 108 } };
  assert.deepEqual(walk(l, zeroZeroFaster), { best: 'z0/none/a1', tried: ['z0/none/a1', 'z1/none/a1'] });
  // ZeRO-0 over memory: ZeRO-1 fits and wins, ZeRO-2 is not needed.
  const tight = { 'z0/none/a1': { fits: false, stepTimeMs: 100, modelStateBytes: 50, overBytes: 5 }, 'z1/none/a1': { fits: true, stepTimeMs: 99 } };
  assert.deepEqual(walk(l, tight), { best: 'z1/none/a1', tried: ['z0/none/a1', 'z1/none/a1'] });
});
