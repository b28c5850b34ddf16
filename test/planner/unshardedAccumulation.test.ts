/**
 * FSDP's no_sync priced as it runs (PlanOptions.unshardedAccumulationStages): under ZeRO-2/3 with A micro-steps, the
 * A−1 before the last reduce-scatter nothing and each GPU holds the full gradients until the last, in both searches
 * (the per-layer tables and event simulator, the block-stack estimate and its replay); ZeRO-3's weight gathers still
 * run every micro-step. The plan says which accumulation it priced and why, what the full gradients cost, and when
 * no_sync is why nothing fits.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { PlanReport, ZeroStage } from '../../src/protocol/plan';
import type { PlanOptions } from '../../src/protocol/planOptions';
import { planModel, resolveCluster } from '../../src/planner/index';
import { setupLines } from '../../src/planner/format';
import { repeatedTransformer } from '../../src/planner/search/parallel3d/blocks';
import { costsFor, estimate, linksFor, stageTime, type Config3D } from '../../src/planner/search/parallel3d/estimate';
import { gradSync } from '../../src/planner/search/parallel3d/gradientSync';
import { searchContext } from '../../src/planner/search/parallel3d/plan';
import { gptModel } from './gptSpec';
import { exampleModel, feasible } from './plannedExamples';

const a100x8 = resolveCluster('a100x8', {});
const NO_SYNC: Partial<PlanOptions> = { unshardedAccumulationStages: [2, 3], unshardedAccumulationSource: 'accelerate_fsdp.yaml (FSDP1 no_sync)' };



/**
 * torchvision.models.vgg16(): sum(p.numel() for p in m.parameters()) = 138,357,544 under torch 1.13 /
 * torchvision 0.14, which examples/pytorch/vgg.py's vgg16 builds layer for layer.
 */
const VGG16_PARAMS = 138_357_544;
/** bf16 with fp32 master weights: 16-bit gradients (memory/precision.ts). */
const BF16_GRADIENT_BYTES = 2;

test('per-layer search, VGG-16 at ZeRO-3 and ZeRO-2 on 8 A100s, 8 micro-steps: no_sync holds params × 2 B × (1 − 1/8) more gradients and drops the 7 earlier micro-steps\' reduce-scatters', async () => {
  const vgg = await exampleModel('examples/pytorch/vgg.py', 'vgg16');
  assert.equal(vgg.totals.params, VGG16_PARAMS);
  const plan = (zeroStage: ZeroStage, o: Partial<PlanOptions>, microBatch = 2) => feasible(planModel(vgg, a100x8, { batch: 128, objective: 'throughput', strategies: 'dp', optimizer: 'adam', precision: 'bf16', gpus: 8, pins: { zeroStage, microBatch }, ...o }));
  const scatters = (r: PlanReport) => r.timeline.filter((e) => e.kind === 'reducescatter' && e.device === 0);
  const busy = (events: ReturnType<typeof scatters>) => events.reduce((a, e) => a + e.endMs - e.startMs, 0);
  for (const zero of [3, 2] as const) {
    const reduced = plan(zero, {});
    const noSync = plan(zero, NO_SYNC);
    const A = reduced.plan.setup!.gradientAccumulation;
    assert.equal(A, 8);
    // Memory by hand: every GPU holds all 138,357,544 gradients in bf16 instead of an eighth of them.
    const extra = noSync.plan.setup!.memoryPerGpu.gradients - reduced.plan.setup!.memoryPerGpu.gradients;
    assert.equal(extra, VGG16_PARAMS * BF16_GRADIENT_BYTES * (1 - 1 / 8), `ZeRO-${zero}`);
    assert.equal(noSync.plan.setup!.memoryPerGpu.gradients, VGG16_PARAMS * BF16_GRADIENT_BYTES);
    // The simulator: the earlier micro-steps' reduce-scatter events (one per bucket, carrying A−1 micro-steps) are gone;
    // the last micro-step's are the same buckets, and the reduce-scatter time falls to 1/A of it.
    const earlier = (r: PlanReport) => scatters(r).filter((e) => /micro-steps 1–7/.test(e.layer));
    const last = (r: PlanReport) => scatters(r).filter((e) => /micro-step 8\)/.test(e.layer));
    assert.ok(earlier(reduced).length > 0);
    assert.equal(earlier(noSync).length, 0, `ZeRO-${zero}: no reduce-scatter before the last micro-step`);
    assert.deepEqual(last(noSync).map((e) => e.bytes), last(reduced).map((e) => e.bytes));
    // (The timeline rounds its times to the nanosecond, simulator/results.ts: compared relatively.)
    assert.ok(Math.abs(busy(earlier(reduced)) / ((A - 1) * busy(last(reduced))) - 1) < 1e-3);
    assert.ok(Math.abs(busy(scatters(reduced)) / busy(scatters(noSync)) / A - 1) < 1e-3, `${busy(scatters(reduced))} vs ${busy(scatters(noSync))} ms`);
    // ZeRO-3 still gathers its weights for every micro-step.
    if (zero === 3) assert.equal(noSync.timeline.filter((e) => e.kind === 'allgather').length, reduced.timeline.filter((e) => e.kind === 'allgather').length);
    assert.ok(noSync.plan.stepTimeMs < reduced.plan.stepTimeMs, `ZeRO-${zero}: ${noSync.plan.stepTimeMs} vs ${reduced.plan.stepTimeMs} ms`);
    // Said: which way, why, and what the full gradients take.
    assert.deepEqual([noSync.plan.setup!.gradientAccumulationSync, noSync.plan.setup!.gradientAccumulationSyncReason], ['unsharded', 'accelerate_fsdp.yaml (FSDP1 no_sync)']);
    assert.equal(reduced.plan.setup!.gradientAccumulationSync, 'every-micro-step');
    assert.match(reduced.plan.setup!.gradientAccumulationSyncReason!, /^assumed: each micro-step reduce-scatters/);
    assert.match(setupLines(noSync.plan.setup!)[0]!, /gradients accumulated unsharded, reduce-scattered once \(accelerate_fsdp\.yaml/);
    const note = noSync.diagnostics.find((d) => /gradients accumulated unsharded over the 8 micro-steps/.test(d.message));
    assert.ok(note, 'the memory note');
    assert.match(note.message, /holds 0\.28 GB of full gradients .* 1\/8 shard \(0\.03 GB\) for 7 more reduce-scatters/);
  }
  // One micro-step has nothing to accumulate: the option changes nothing and the report says nothing of it.
  const whole = plan(3, {}, 16);
  const wholeNoSync = plan(3, NO_SYNC, 16);
  assert.equal(whole.plan.setup!.gradientAccumulation, 1);
  assert.deepEqual([wholeNoSync.plan.stepTimeMs, wholeNoSync.plan.setup!.memoryPerGpu.total], [whole.plan.stepTimeMs, whole.plan.setup!.memoryPerGpu.total]);
  assert.equal(wholeNoSync.plan.setup!.gradientAccumulationSync, undefined);
});

test('block-stack search, nanoGPT (examples/pytorch/gpt.py) at ZeRO-2/3 on 8 A100s, 8 micro-batches: the estimate and the replay agree, in the same direction as the per-layer search', async () => {
  const gpt = await exampleModel('examples/pytorch/gpt.py', 'model');
  const structure = repeatedTransformer(gpt)!;
  const options = (o: Partial<PlanOptions>): PlanOptions => ({ batch: 64, objective: 'throughput', strategies: 'all', optimizer: 'adam', precision: 'bf16', ...o });
  for (const zero of [2, 3] as const) {
    const c: Config3D = { n: 8, dp: 8, tp: 1, pp: 1, cp: 1, ep: 1, v: 1, sp: false, mb: 1, microBatches: 8, zero, recompute: 'none', blocksPerStage: [structure.repeats] };
    const at = (o: Partial<PlanOptions>) => {
      const { ctx } = searchContext(gpt, structure, a100x8, options(o));
      const links = linksFor(ctx, c);
      const stage = stageTime(ctx, c, costsFor(ctx, { tp: 1, cp: 1, ep: 1, sp: false, mb: 1 }, links), links, 0);
      return { est: estimate(ctx, c), sync: gradSync(ctx, c, stage, links), stage };
    };
    const reduced = at({});
    const noSync = at(NO_SYNC);
    // The one stage holds every trained parameter: its full bf16 gradients against an eighth of them.
    assert.equal(noSync.est.memory.gradients - reduced.est.memory.gradients, reduced.stage.params * BF16_GRADIENT_BYTES * (1 - 1 / 8));
    assert.equal(noSync.est.memory.gradients, gpt.totals.params * BF16_GRADIENT_BYTES);
    // ZeRO-2 exposes nothing more per micro-batch; ZeRO-3 keeps its gathers, less than with the reduce-scatters.
    if (zero === 2) assert.equal(noSync.sync.shardedMs, 0);
    else assert.ok(noSync.sync.shardedMs > 0 && noSync.sync.shardedMs < reduced.sync.shardedMs);
    assert.ok(noSync.est.stepMs < reduced.est.stepMs);
    // The replay prices the same step: what the estimate saves, the replay saves.
    const pins = { zeroStage: zero, dataParallel: 8, tensorParallel: 1, pipelineStages: 1, contextParallel: 1, microBatch: 1, recompute: 'none' as const };
    const replayed = feasible(planModel(gpt, a100x8, options({ gpus: 8, pins })));
    const replayedNoSync = feasible(planModel(gpt, a100x8, options({ gpus: 8, pins, ...NO_SYNC })));
    const saved = reduced.est.stepMs - noSync.est.stepMs;
    assert.ok(Math.abs(replayed.plan.stepTimeMs - replayedNoSync.plan.stepTimeMs - saved) < 1e-6, `replay saves ${replayed.plan.stepTimeMs - replayedNoSync.plan.stepTimeMs} ms, the estimate ${saved} ms`);
    assert.equal(replayedNoSync.plan.setup!.memoryPerGpu.gradients, noSync.est.memory.gradients);
    assert.equal(replayedNoSync.plan.setup!.gradientAccumulationSync, 'unsharded');
  }
});

test('where no_sync is why nothing fits (a 22B GPT pinned to ZeRO-3, full recompute, no offload, on 8 A100s), the plan says reducing every micro-step fits', () => {
  const model = gptModel({ layers: 48, hidden: 6144, heads: 48, seq: 512 });
  const pins = { zeroStage: 3 as const, dataParallel: 8, tensorParallel: 1, pipelineStages: 1, contextParallel: 1, microBatch: 1, recompute: 'full' as const, cpuOffload: false };
  const options: PlanOptions = { batch: 64, objective: 'throughput', strategies: 'all', optimizer: 'adam', precision: 'bf16', gpus: 8, pins };
  const reduced = feasible(planModel(model, a100x8, options));
  const noSync = planModel(model, a100x8, { ...options, ...NO_SYNC });
  assert.equal(noSync.feasible, false);
  // The margin is the full gradients less their shard: 2 B × (1 − 1/8) per parameter on top of what fits.
  const usable = 80 * 1024 ** 3 * (1 - 9.2 / 80);
  assert.ok(reduced.plan.setup!.memoryPerGpu.total <= usable && reduced.plan.setup!.memoryPerGpu.total + model.totals.params * BF16_GRADIENT_BYTES * (7 / 8) > usable);
  const said = noSync.diagnostics.find((d) => d.severity === 'warning' && /with gradients accumulated unsharded/.test(d.message));
  assert.ok(said, noSync.diagnostics.map((d) => d.message).join('\n'));
  assert.match(said.message, /nothing fits; reducing every micro-step, sync_each_batch=True .* fits: 8 GPUs, ZeRO-3, recompute full, 8 micro-steps/);
});
