/**
 * Context parallel as the 3D search prices it: tokens split cp ways (a GEMM's rows), ring attention's K/V passes,
 * and the model FLOPs MFU counts for causal attention.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { AnalyzedModel } from '../../src/core/ir';
import type { PlanReport } from '../../src/protocol/plan';
import { planModel, resolveCluster } from '../../src/planner/index';
import { groupCost } from '../../src/planner/search/parallel3d/blockCost';
import { groupLink, type Link } from '../../src/planner/search/parallel3d/adapters';
import { causalRequiredFraction, modelFlopsPerSample } from '../../src/planner/cost/modelFlops';
import { gptModel } from './gptSpec';

const a100 = resolveCluster('a100x8');
const link = undefined as unknown as Link;

/** A 0.4B GPT, or with `big` a Llama-8B-sized one (32 × 4096) whose 64K-token activations fill an H100 many times. */
function plan(seq: number, batch: number, cluster = a100, big = false): PlanReport & { analyzed: AnalyzedModel } {
  const model = big ? gptModel({ layers: 32, hidden: 4096, heads: 32, seq }) : gptModel({ layers: 8, hidden: 2048, heads: 16, seq });
  const out = planModel(model, cluster, { batch, objective: 'throughput', strategies: 'all', optimizer: 'adam', precision: 'bf16' });
  assert.ok(out.feasible, out.feasible ? '' : out.reason);
  return { ...out, analyzed: model };
}

test('context parallel splits each sample’s tokens: a GEMM at CP 2 with twice the micro-batch costs what it costs at CP 1', () => {
  const h = 2048;
  const T = 1024;
  const model = gptModel({ layers: 1, hidden: h, heads: 16, seq: T });
  const linears = model.layers.filter((l) => l.op === 'linear');
  assert.ok(linears.length >= 4, 'QKV, out-projection, MLP up and down, head');
  const env = { gpu: a100.gpus[0]!, precision: 'bf16' as const, modelDtypeBytes: 4, shape: { heads: 16, hidden: h, seq: T, linearDims: [h], residualBranches: 2, experts: 0 }, tpLink: link, cpLink: link, epLink: link };
  const whole = groupCost(linears, { tp: 1, cp: 1, ep: 1, sp: false, mb: 4 }, env, false);
  const split = groupCost(linears, { tp: 1, cp: 2, ep: 1, sp: false, mb: 8 }, env, false);
  // Same rows (4 × 1024 = 8 × 512 tokens), same weights: the same GEMMs, forward and both backward products.
  assert.ok(Math.abs(split.forwardMs - whole.forwardMs) <= 1e-9 * whole.forwardMs, `forward ${split.forwardMs} vs ${whole.forwardMs}`);
  assert.ok(Math.abs(split.backwardMs - whole.backwardMs) <= 1e-9 * whole.backwardMs, `backward ${split.backwardMs} vs ${whole.backwardMs}`);
  // Tensor parallel, by contrast, splits the output columns and the weights: half the work on each GPU.
  const columns = groupCost(linears, { tp: 2, cp: 1, ep: 1, sp: false, mb: 4 }, { ...env, tpLink: groupLink(a100, 8, 2, 1) }, false);
  assert.ok(columns.forwardMs < whole.forwardMs, 'a column split does less per GPU');
});

test('short sequences train without context parallel; long ones split their tokens across GPUs', () => {
  const short = plan(1024, 64).plan.setup!;
  assert.equal(short.contextParallel, 1, `1024 tokens: ${JSON.stringify(short)}`);
  const long = plan(65536, 16, resolveCluster('h100x16-2node'), true).plan.setup!;
  assert.ok(long.contextParallel > 1, `65,536 tokens: CP ${long.contextParallel}, DP ${long.dataParallel}, recompute ${long.recompute}`);
});

test('causal attention needs its unmasked triangle: query i sees i + 1 keys, or its window', () => {
  const model = gptModel({ layers: 1, hidden: 64, heads: 4, seq: 4 });
  const sdpa = model.layers.find((l) => l.op === 'sdpa')!;
  assert.equal(causalRequiredFraction(sdpa), (1 + 2 + 3 + 4) / 16);
  assert.equal(causalRequiredFraction({ ...sdpa, attrs: { ...sdpa.attrs, window: 2 } }), (1 + 2 + 2 + 2) / (4 * 2));
  assert.equal(causalRequiredFraction({ ...sdpa, attrs: { ...sdpa.attrs, causal: false } }), 1);
  const linear = model.layers.find((l) => l.op === 'linear')!;
  assert.equal(causalRequiredFraction(linear), 1);
  const counted = model.layers.reduce((s, l) => s + l.workload.forwardFlops + l.workload.backwardFlops, 0);
  const masked = (sdpa.workload.forwardFlops + sdpa.workload.backwardFlops) * (6 / 16);
  assert.ok(Math.abs(modelFlopsPerSample(model) - (counted - masked)) <= 1e-9 * counted);
});

test('MFU never exceeds the GPUs’ peak: a 64K-token causal plan counts the attention it needs, not the masked half', () => {
  const out = plan(65536, 16, resolveCluster('h100x16-2node'), true);
  const s = out.plan.setup!;
  assert.ok(s.mfu > 0.2 && s.mfu < 1, `MFU ${s.mfu}`);
  // Counted as full rows of keys, attention (most of the work at 64K tokens) would be nearly double.
  const full = out.analyzed.totals.forwardFlops + out.analyzed.totals.backwardFlops;
  const needed = modelFlopsPerSample(out.analyzed);
  assert.ok(needed < 0.75 * full, `needed ${needed} of ${full}`);
});
