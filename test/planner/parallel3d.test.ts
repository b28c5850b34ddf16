import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AnalyzedModel } from '../../src/core/ir';
import type { ParallelPins, PlanOutcome, PlanReport } from '../../src/protocol/plan';
import type { PlanOptions } from '../../src/protocol/planOptions';
import { analyzeSource } from '../../src/frontends/index';
import { parseClusterSpec, planModel, planModelAsync, resolveCluster, type ClusterSpec } from '../../src/planner/index';
import { repeatedTransformer } from '../../src/planner/search/parallel3d/blocks';
import { estimate, type Config3D } from '../../src/planner/search/parallel3d/estimate';
import { searchContext } from '../../src/planner/search/parallel3d/plan';
import { search3dSteps } from '../../src/planner/search/parallel3d/search';
import { ppProblem, stageLayouts, tpProblem } from '../../src/planner/search/parallel3d/space';
import { drain } from '../../src/planner/steps';
import { gptModel } from './gptSpec';
import { twoNodesEthernet, vgg16 } from './fixtures';

const root = new URL('../..', import.meta.url).pathname;
const twoNodes = resolveCluster('h100x16-2node', {});
const small = () => gptModel({ layers: 8, hidden: 1024, heads: 16, seq: 512 });
const opts = (o: Partial<PlanOptions> = {}): PlanOptions => ({ batch: 32, objective: 'throughput', strategies: 'all', optimizer: 'adam', ...o });

function feasible(out: PlanOutcome): PlanReport {
  assert.ok(out.feasible, out.feasible ? '' : out.reason);
  return out;
}

test('structure decides the search: GPT stacks get the 3D search, VGG-16 keeps the per-layer one', async () => {
  const file = 'examples/pytorch/gpt.py';
  const nano = (await analyzeSource(file, readFileSync(join(root, file), 'utf8'))).models[0];
  const s = repeatedTransformer(nano);
  assert.ok(s, 'nanoGPT blocks not found');
  assert.equal(s.repeats, 12);
  assert.equal(feasible(planModel(nano, twoNodes, opts({ batch: 16 }))).search.method, 'parallel3d');
  assert.equal(repeatedTransformer(vgg16()), undefined);
  assert.notEqual(feasible(planModel(vgg16(), resolveCluster('a100x8', {}), opts({ strategies: 'hybrid', batch: 64 }))).search.method, 'parallel3d');
});

test('pins: each pinned dimension is honoured and the search fills in the rest', () => {
  const model = small();
  const cases: Array<[ParallelPins, (r: PlanReport) => unknown, unknown]> = [
    [{ tensorParallel: 2 }, (r) => r.plan.setup!.tensorParallel, 2],
    [{ pipelineStages: 2 }, (r) => r.plan.pipeline?.stages, 2],
    [{ dataParallel: 4 }, (r) => r.plan.setup!.dataParallel, 4],
    [{ contextParallel: 2 }, (r) => r.plan.setup!.contextParallel, 2],
    [{ zeroStage: 3 }, (r) => r.plan.setup!.zeroStage, 3],
    [{ recompute: 'full' }, (r) => r.plan.setup!.recompute, 'full'],
    [{ microBatch: 2 }, (r) => r.plan.setup!.microBatch, 2],
    [{ pipelineStages: 2, virtualStages: 2 }, (r) => [r.plan.pipeline?.virtualStages, r.plan.pipeline?.schedule], [2, 'interleaved-1f1b']],
    [{ tensorParallel: 4, sequenceParallel: false }, (r) => [r.plan.setup!.tensorParallel, r.plan.setup!.sequenceParallel], [4, false]],
    [{ dataParallel: 2, tensorParallel: 2, pipelineStages: 2, contextParallel: 1 }, (r) => r.plan.gpus, 8],
  ];
  for (const [pins, read, want] of cases) {
    const r = feasible(planModel(model, twoNodes, opts({ pins })));
    assert.deepEqual(read(r), want, JSON.stringify(pins));
    const s = r.plan.setup!;
    assert.equal(s.dataParallel * s.tensorParallel * s.pipelineStages * s.contextParallel, r.plan.gpus, JSON.stringify(pins));
    assert.equal(s.microBatch * s.gradientAccumulation * s.dataParallel, 32);
    assert.ok(!r.diagnostics.some((d) => /not honoured/.test(d.message)), JSON.stringify(pins));
  }
});

test('impossible pins give an infeasible plan that names the pin and why', () => {
  const model = gptModel({ layers: 24, hidden: 2048, heads: 32, seq: 256 });
  const cases: Array<[Partial<PlanOptions>, RegExp]> = [
    [{ pins: { tensorParallel: 3 } }, /--tp 3: 32 attention heads are not divisible by 3/],
    [{ pins: { pipelineStages: 7 } }, /--pp 7: 24 repeated blocks cannot be split into 7 stages/],
    [{ pins: { pipelineStages: 30 } }, /--pp 30: the model has only 24 repeated blocks/],
    [{ pins: { dataParallel: 2, tensorParallel: 2, pipelineStages: 2, contextParallel: 1 }, gpus: 16 }, /= 8, not the 16 GPUs of --gpus/],
    [{ pins: { dataParallel: 4, tensorParallel: 8, pipelineStages: 2, contextParallel: 1 } }, /= 64 pinned GPUs, more than the cluster's 16/],
    [{ pins: { contextParallel: 3 } }, /--cp 3: the sequence of 256 tokens/],
    [{ pins: { expertParallel: 2 } }, /--ep 2: the model has no mixture-of-experts layers/],
    [{ pins: { dataParallel: 3 } }, /--dp 3: the global batch 32/],
  ];
  for (const [o, re] of cases) {
    const out = planModel(model, twoNodes, opts(o));
    assert.equal(out.feasible, false, re.source);
    if (!out.feasible) assert.match(out.reason, re);
  }
});

test('tensor parallel stays inside a node unless pinned across', () => {
  const model = gptModel({ layers: 16, hidden: 4096, heads: 32, seq: 1024 });
  const r = feasible(planModel(model, twoNodes, opts({ batch: 64 })));
  const tp = r.plan.setup!.tensorParallel;
  assert.ok(8 % tp === 0, `TP ${tp} does not divide a node`);
  // Megatron rank order puts a TP group on consecutive GPUs: with TP | 8 it never straddles a node boundary.
  for (const l of r.plan.layers) assert.ok(l.devices.length % tp === 0);
  for (let n = 9; n <= 16; n++) {
    const p = r.scaling.find((x) => x.gpus === n);
    assert.ok(p && !/TP16/.test(p.summary ?? ''), `${n} GPUs: ${p?.summary}`);
  }
  const across = feasible(planModel(model, twoNodes, opts({ batch: 64, pins: { tensorParallel: 16 } })));
  assert.equal(across.plan.setup!.tensorParallel, 16);
  assert.ok(across.plan.stepTimeMs > r.plan.stepTimeMs, 'TP over InfiniBand should not beat the searched plan');
});

test('interleaved 1F1B shrinks the bubble and the step', () => {
  const model = small();
  const cluster = resolveCluster('h100x8', {});
  const base = opts({ batch: 32, microBatches: 8, pins: { pipelineStages: 4, tensorParallel: 1, dataParallel: 2, contextParallel: 1, zeroStage: 0, recompute: 'none' } });
  const plain = feasible(planModel(model, cluster, { ...base, pins: { ...base.pins, virtualStages: 1 } }));
  const inter = feasible(planModel(model, cluster, { ...base, pins: { ...base.pins, virtualStages: 2 } }));
  assert.equal(plain.plan.pipeline!.schedule, '1f1b');
  assert.equal(inter.plan.pipeline!.schedule, 'interleaved-1f1b');
  assert.ok(Math.abs(plain.plan.pipeline!.bubbleFraction - 3 / (8 + 3)) < 1e-12);
  assert.ok(Math.abs(inter.plan.pipeline!.bubbleFraction - 3 / (16 + 3)) < 1e-12);
  assert.ok(inter.plan.stepTimeMs < plain.plan.stepTimeMs, `${inter.plan.stepTimeMs} vs ${plain.plan.stepTimeMs}`);
  // Round-robin chunks: stage 0 holds blocks 1 and 5, not 1 and 2.
  const stageOfBlock = (r: PlanReport, b: number) => r.plan.layers.find((l) => l.name === `transformer.h.${b}.ln_1`)!.stage;
  assert.deepEqual([0, 1, 4].map((b) => stageOfBlock(inter, b)), [0, 1, 0]);
  assert.deepEqual([0, 1, 4].map((b) => stageOfBlock(plain, b)), [0, 0, 2]);
  assert.deepEqual(plain.plan.pipeline!.layersPerStage, [2, 2, 2, 2]);
});

test('a pipeline wins where it should: GPT over two nodes joined by slow Ethernet', () => {
  const model = gptModel({ layers: 24, hidden: 2048, heads: 16, seq: 64, vocab: 8192 });
  const o = opts({ batch: 16 });
  const hybrid = feasible(planModel(model, twoNodesEthernet, { ...o, strategies: 'hybrid' }));
  const all = feasible(planModel(model, twoNodesEthernet, o));
  const p = all.plan.pipeline;
  assert.ok(p && p.stages >= 2, `expected a pipeline, got ${all.scaling.find((x) => x.gpus === all.plan.gpus)?.summary}`);
  assert.ok(all.plan.gpus > 8, 'the pipeline should span both nodes');
  assert.ok(all.plan.samplesPerSec > 1.05 * hybrid.plan.samplesPerSec, `${all.plan.samplesPerSec} vs hybrid ${hybrid.plan.samplesPerSec}`);
  for (const [name, b] of Object.entries(all.baselines)) assert.ok(all.plan.samplesPerSec >= b.samplesPerSec, name);
  assert.ok(all.timeline.some((e) => e.kind === 'transfer' && e.lane === 'link:eth'), 'activations should cross the Ethernet link');
});

/** Every configuration of the degree space on n GPUs, enumerated independently of the search's generators. */
function bruteForce(model: AnalyzedModel, cluster: ClusterSpec, o: PlanOptions, n: number): { best: number; fitting: number; total: number } {
  const structure = repeatedTransformer(model)!;
  const { ctx, space } = searchContext(model, structure, cluster, o);
  const L = structure.repeats;
  let best = Infinity;
  let fitting = 0;
  let total = 0;
  const range = (k: number) => Array.from({ length: k }, (_, i) => i + 1);
  for (const tp of range(n)) {
    if (n % tp || space.gpusPerNode % tp || tpProblem(space.shape, tp)) continue;
    for (const cp of range(n / tp)) {
      if ((n / tp) % cp || (cp & (cp - 1)) !== 0 || cp > 64 || space.shape.seq % cp) continue;
      for (const pp of range(n / tp / cp)) {
        if ((n / tp / cp) % pp || ppProblem(L, pp)) continue;
        const dp = n / tp / cp / pp;
        if (o.batch % dp) continue;
        for (const mb of range(Math.min(64, o.batch / dp))) {
          if ((o.batch / dp) % mb) continue;
          const M = o.batch / dp / mb;
          for (const layout of stageLayouts(L, pp)) {
            for (const v of range(8)) {
              if (v > 1 && (pp === 1 || L % (pp * v) || M % pp || layout.some((k) => k !== layout[0]))) continue;
              for (const sp of tp > 1 ? [true, false] : [false]) {
                for (const zero of [0, 1, 2, 3] as const) {
                  if (zero > 0 && dp * cp === 1) continue;
                  for (const recompute of ['none', 'selective', 'full'] as const) {
                    const c: Config3D = { n, dp, tp, pp, cp, ep: 1, v, sp, mb, microBatches: M, zero, recompute, blocksPerStage: layout };
                    const e = estimate(ctx, c, false);
                    total++;
                    if (!e.fits) continue;
                    fitting++;
                    best = Math.min(best, e.stepMs);
                  }
                }
              }
            }
          }
        }
      }
    }
  }
  return { best, fitting, total };
}

test('the 3D search equals brute force over the degree space, and memory pruning never drops a feasible winner', () => {
  // 16 GB V100s with Adam: a good share of the space does not fit, so pruning matters.
  const model = gptModel({ layers: 8, hidden: 4096, heads: 32, seq: 1024 });
  const cluster = resolveCluster('dgx1-v100', {});
  const o = opts({ batch: 16, precision: 'fp32' });
  const structure = repeatedTransformer(model)!;
  for (const n of [4, 8]) {
    const { ctx, space } = searchContext(model, structure, cluster, o);
    const r = drain(search3dSteps(ctx, space, [n]) as Generator<void, ReturnType<typeof search3dSteps> extends Generator<unknown, infer R> ? R : never, void>);
    const brute = bruteForce(model, cluster, o, n);
    assert.ok(brute.fitting > 0 && brute.fitting < brute.total, `n=${n}: ${brute.fitting} of ${brute.total} fit`);
    assert.equal(r.evaluated, brute.total, `n=${n}: the search's space differs from brute force`);
    assert.equal(r.evaluated - r.prunedByMemory, brute.fitting, `n=${n}: pruning disagrees with brute force on what fits`);
    const best = r.counts[0].top[0];
    assert.ok(best && Math.abs(best.est.stepMs - brute.best) < 1e-9 * brute.best, `n=${n}: search ${best?.est.stepMs} vs brute force ${brute.best}`);
  }
});

test('cancel lands quickly in a GPT-3-sized 3D plan', async () => {
  const model = gptModel({ layers: 96, hidden: 12288, heads: 96, seq: 2048 });
  const cluster = parseClusterSpec({ name: '128x8 A100', nodes: 128, gpusPerNode: 8, gpu: { name: 'A100', tflops: 19.5, memoryGB: 80, memoryBandwidthGBs: 2039 }, intraNode: { bandwidthGBs: 300, latencyUs: 3 }, interNode: { bandwidthGBs: 25, latencyUs: 5 } }, 'test');
  const token = { isCancellationRequested: false };
  const dueAt = performance.now() + 100;
  const timer = setTimeout(() => (token.isCancellationRequested = true), 100);
  let rejectedAt = 0;
  await assert.rejects(
    planModelAsync(model, cluster, opts({ batch: 1536 }), { cancel: token }).finally(() => (rejectedAt = performance.now())),
    (e: Error) => e.name === 'Cancelled',
  );
  clearTimeout(timer);
  assert.ok(rejectedAt - dueAt < 300, `cancellation took ${(rejectedAt - dueAt).toFixed(0)} ms`);
});

test('baselines of a DP×TP×PP×CP plan carry their simulated energy, like the plan itself', () => {
  const out = planModel(gptModel({ layers: 8, hidden: 1024, heads: 16, seq: 1024 }), resolveCluster('h100x8', {}), { batch: 32, objective: 'throughput', strategies: 'all', optimizer: 'adam' });
  assert.ok(out.feasible);
  assert.equal(out.search.method, 'parallel3d');
  assert.ok(out.plan.energyJPerSample > 0);
  for (const b of [out.baselines.singleGpu, out.baselines.dataParallel]) if (b.feasible) assert.ok(b.energyJPerSample > 0, JSON.stringify(b));
});

test('micro-batches are not capped: a per-GPU batch of 128 that fits whole runs whole, and the free search is never slower than pinning it', () => {
  // 8 × 1024 GPT on 8 A100 at 128 sequences of 128 tokens per GPU: activations for the whole batch fit in 80 GB.
  const model = gptModel({ layers: 8, hidden: 1024, heads: 16, seq: 128 });
  const o = opts({ batch: 1024, gpus: 8, precision: 'bf16', strategies: 'dp' });
  const free = feasible(planModel(model, resolveCluster('a100x8'), o));
  const whole = feasible(planModel(model, resolveCluster('a100x8'), { ...o, pins: { microBatch: 128 } }));
  const halves = feasible(planModel(model, resolveCluster('a100x8'), { ...o, pins: { microBatch: 64 } }));
  assert.ok(whole.plan.stepTimeMs < halves.plan.stepTimeMs, `the model prices 128 × 1 (${whole.plan.stepTimeMs} ms) under 64 × 2 (${halves.plan.stepTimeMs} ms)`);
  assert.equal(free.plan.setup!.microBatch, 128);
  assert.ok(free.plan.stepTimeMs <= whole.plan.stepTimeMs * 1.0001);
});
