/**
 * The 3D estimate's per-stage and per-layer terms, checked by what they stand
 * for: memory differs by stage (embedding, head, micro-batches in flight),
 * Megatron's two tensor-parallel all-reduces per block and pass sit on the
 * critical path, and the estimate's step carries the 1F1B bubble.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { PlanReport } from '../../src/protocol/plan';
import type { PlanOptions } from '../../src/protocol/planOptions';
import { planModel, resolveCluster } from '../../src/planner/index';
import { repeatedTransformer } from '../../src/planner/search/parallel3d/blocks';
import { costsFor, estimate, linksFor, stageTime, workOf, type Config3D } from '../../src/planner/search/parallel3d/estimate';
import { allReduceMs } from '../../src/planner/search/parallel3d/adapters';
import { searchContext } from '../../src/planner/search/parallel3d/plan';
import { chooseByObjective } from '../../src/planner/assemble';
import { gptModel } from './gptSpec';

const model = () => gptModel({ layers: 8, hidden: 1024, heads: 16, seq: 512 });
const opts = (o: Partial<PlanOptions> = {}): PlanOptions => ({ batch: 32, objective: 'throughput', strategies: 'all', optimizer: 'adam', precision: 'bf16', ...o });

function plan(o: Partial<PlanOptions>): PlanReport {
  const out = planModel(model(), resolveCluster('h100x16-2node', {}), opts(o));
  assert.ok(out.feasible, out.feasible ? '' : out.reason);
  return out;
}

test('pipeline plans report memory per stage: the first stage (embedding, pp micro-batches in flight) is the fullest; the headline is the max', () => {
  const r = plan({ gpus: 8, pins: { pipelineStages: 4, tensorParallel: 2, dataParallel: 1, recompute: 'none', zeroStage: 0, virtualStages: 1 } });
  const perStage = r.plan.pipeline!.memoryPerStageBytes!;
  assert.equal(perStage.length, 4);
  // 1F1B keeps pp − s micro-batches on stage s: memory falls from the first stage to the third (same blocks).
  assert.ok(perStage[0] > perStage[1] && perStage[1] > perStage[2], perStage.join(', '));
  assert.equal(Math.max(...r.plan.memoryPerGpuBytes), r.plan.setup!.memoryPerGpu.total);
  // Every GPU carries its own stage's memory (Megatron rank order: pipeline outermost, 2 GPUs per stage).
  r.plan.memoryPerGpuBytes.forEach((b, g) => assert.equal(b, perStage[Math.floor(g / 2)]));
  assert.ok(new Set(r.plan.memoryPerGpuBytes).size > 1, 'stages differ, so GPUs differ');
});

function ctxAnd(c: Partial<Config3D>) {
  const m = model();
  const s = repeatedTransformer(m)!;
  const { ctx } = searchContext(m, s, resolveCluster('h100x16-2node', {}), opts());
  const config: Config3D = { n: 8, dp: 1, tp: 2, pp: 1, cp: 1, ep: 1, v: 1, sp: false, mb: 2, microBatches: 16, zero: 0, recompute: 'none', blocksPerStage: [8], ...c };
  return { ctx, config };
}

test('tensor parallel: two all-reduces of the residual stream per block and pass (attention, MLP), none without TP', () => {
  const { ctx, config } = ctxAnd({});
  const links = linksFor(ctx, config);
  const costs = costsFor(ctx, { tp: 2, cp: 1, ep: 1, sp: false, mb: 2 }, links);
  const residual = 2 * 512 * 1024 * 2; // mb × seq × hidden × bf16 bytes
  const one = allReduceMs(residual, 2, links.tp);
  assert.ok(Math.abs(costs.block.tpForwardMs - 2 * one) < 1e-12, `${costs.block.tpForwardMs} vs 2 × ${one}`);
  assert.ok(Math.abs(costs.block.tpBackwardMs - 2 * one) < 1e-12);
  // Not overlapped: they add to the stage's work.
  const st = stageTime(ctx, config, costs, links, 0);
  assert.ok(Math.abs(st.tpMs - 8 * 4 * one) < 1e-9);
  assert.ok(workOf(st) >= st.forwardMs + st.backwardMs + st.tpMs);
  const none = costsFor(ctx, { tp: 1, cp: 1, ep: 1, sp: false, mb: 2 }, linksFor(ctx, { ...config, tp: 1 }));
  assert.equal(none.block.tpForwardMs, 0);
});

test('the estimate carries the 1F1B bubble: with equal stages, step ≈ (M + p − 1) × one micro-batch through a stage', () => {
  const { ctx, config } = ctxAnd({ pp: 4, tp: 1, dp: 2, blocksPerStage: [2, 2, 2, 2], microBatches: 8 });
  const e = estimate(ctx, config, false);
  const links = linksFor(ctx, config);
  const costs = costsFor(ctx, { tp: 1, cp: 1, ep: 1, sp: false, mb: 2 }, links);
  const works = [0, 1, 3].map((s) => workOf(stageTime(ctx, config, costs, links, s)));
  const w = Math.max(...works);
  // The pipeline term lies between the ideal (M·w) and the bubble-padded bound ((M + p − 1)·w).
  assert.ok(e.pipelineMs > 8 * w, `${e.pipelineMs} vs ${8 * w}`);
  assert.ok(e.pipelineMs <= (8 + 3) * w + 1e-9);
  // And the bubble share shrinks with more micro-batches.
  const more = estimate(ctx, { ...config, microBatches: 32 }, false);
  assert.ok((more.pipelineMs - 32 * w) / more.pipelineMs < (e.pipelineMs - 8 * w) / e.pipelineMs);
});

test('shared report assembly: both searches pick the count by one rule and fill the same header', () => {
  const o = opts({ objective: 'efficiency', efficiencyTolerance: 0.1 });
  // Fewest GPUs within 10% of the fastest; throughput takes the fastest.
  const pts = [{ n: 1, sps: 50 }, { n: 2, sps: 91 }, { n: 4, sps: 100 }];
  assert.equal(chooseByObjective(pts, (p) => p.sps, o)!.n, 2);
  assert.equal(chooseByObjective(pts, (p) => p.sps, opts())!.n, 4);
  assert.equal(chooseByObjective([], (p: { sps: number }) => p.sps, o), undefined);
  const keys = (r: PlanReport) => Object.keys(r).filter((k) => k !== 'incomplete').sort();
  const gpt = plan({ gpus: 4 });
  const cnn = planModel(gptModel({ layers: 1, hidden: 64, heads: 2, seq: 16 }), resolveCluster('a100x8', {}), opts({ strategies: 'dp', gpus: 2 }));
  assert.ok(cnn.feasible);
  assert.notEqual(cnn.search.method, gpt.search.method);
  assert.deepEqual(keys(cnn), keys(gpt));
});
