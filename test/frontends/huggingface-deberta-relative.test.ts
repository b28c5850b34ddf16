/**
 * DeBERTa-v3's relative-position path priced once per forward, as transformers runs it, not once per sample.
 *
 * modeling_deberta_v2.py: DebertaV2Encoder.get_rel_embedding normalises rel_embeddings once per forward, and each
 * layer's DisentangledSelfAttention drops them out (pos_dropout) and, in disentangled_attention_bias, projects
 * `rel_embeddings[0 : att_span * 2, :].unsqueeze(0)` — a batch of one — with key_proj / query_proj (share_att_key),
 * then `.repeat`s the projected rows over the batch. WAP marks those layers `oncePerForward` (core/oncePerForward.ts).
 *
 * Hand count for deberta-v3-base (test/fixtures/huggingface/deberta-v3-base: h 768, L 12, position_buckets s 256,
 * so 2s = 512 relative rows) at T = 512 tokens, forward FLOPs (a multiply-add is 2):
 * - the two projections of the 2s rows, 2 × 2s × h² × 2 a layer, × L = 14,495,514,624 (1.21 GFLOP a layer);
 * - their biases 2 × 2s·h and pos_dropout's 2 per element on 2s·h, a layer: 786,432 + 786,432, × L = 18,874,368;
 * - once for the model: the encoder's LayerNorm of the 2s rows (8 per element) 3,145,728 and the [T, T] relative
 *   positions (one add per element) 262,144;
 * 14,517,796,864 in all. The per-sample graph priced all of it per sample: 121,653,035,008 forward FLOPs a sample
 * (`wap analyze` at --seq-len 512 before the change), of which the projections were 11.9%; per sample it is now
 * 121,653,035,008 − 14,517,796,864 = 107,135,238,144, and a forward of B samples adds the 14.5 GFLOP once.
 */
import assert from 'node:assert/strict';
import { groupLink } from '../../src/planner/search/parallel3d/adapters';
import { groupCost } from '../../src/planner/search/parallel3d/blockCost';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { analyzeModel } from '../../src/core/analyze';
import { autocastModel } from '../../src/core/autocast';
import { DROPOUT_FLOPS_PER_ELEMENT, NORM_FLOPS_PER_ELEMENT } from '../../src/core/catalogue/costs';
import type { AnalyzedModel, ModelSpec } from '../../src/core/ir';
import { forwardFlopsOfBatch, runsOncePerForward } from '../../src/core/oncePerForward';
import { initFrontends, parseSource } from '../../src/frontends/index';
import { analyticalTimes } from '../../src/planner/cost/compute';
import { modelFlopsPerSample } from '../../src/planner/cost/modelFlops';
import { planModel, resolveCluster } from '../../src/planner/index';
import { HF_FIXTURES, layerNamed as layer } from './hfFixtures';

before(() => initFrontends());

const H = 768;
const LAYERS = 12;
const ROWS = 2 * 256;
const T = 512;
/** DeBERTa-v3-base: 184M on its model card; the hand count in huggingface-encoders.test.ts. */
const DEBERTA_V3_BASE_PARAMS = 183_831_552;
/** The brief's formula: 2 projections × 2·att_span rows × h² × 2 FLOPs, per layer, × layers. */
const PROJECTIONS = 2 * ROWS * H * H * 2 * LAYERS;
const ONCE_PER_FORWARD_FLOPS = PROJECTIONS + LAYERS * (2 * ROWS * H + DROPOUT_FLOPS_PER_ELEMENT * ROWS * H) + NORM_FLOPS_PER_ELEMENT * ROWS * H + T * T;
/** Forward FLOPs a sample the per-sample graph priced before the change (`wap analyze --seq-len 512 --json`). */
const PER_SAMPLE_BEFORE = 121_653_035_008;

/** The spec `AutoModel.from_pretrained` of the fixture gives, read by the Python frontend from a script beside it. */
function debertaSpec(): ModelSpec {
  const source = 'from transformers import AutoModel\n\nmodel = AutoModel.from_pretrained("./deberta-v3-base")\n';
  const spec = parseSource(join(HF_FIXTURES, 'finetune_deberta.py'), source, {})?.models.find((m) => m.name === 'model');
  assert.ok(spec, 'AutoModel.from_pretrained("./deberta-v3-base") is read');
  return spec;
}

/** The same graph with every layer priced per sample, as before the mark existed. */
function perSampleSpec(spec: ModelSpec): ModelSpec {
  return { ...spec, layers: spec.layers.map((l) => ({ ...l, attrs: Object.fromEntries(Object.entries(l.attrs).filter(([k]) => k !== 'oncePerForward')) })) };
}

const analyzed = (spec: ModelSpec): AnalyzedModel => analyzeModel(spec, { inputShape: [T] });

test('the relative path is marked once per forward: the rows\' LayerNorm, the relative positions, and each layer\'s pos_dropout and two projections', () => {
  const m = analyzed(debertaSpec());
  assert.equal(m.totals.params, DEBERTA_V3_BASE_PARAMS);
  assert.equal(m.completeness?.complete, true);
  const marked = m.layers.filter(runsOncePerForward).map((l) => l.id);
  const perLayer = (i: number) => ['pos_dropout', 'key_proj#2', 'query_proj#2'].map((n) => `encoder.layer.${i}.attention.self.${n}`);
  assert.deepEqual(marked, ['encoder.LayerNorm', 'encoder.q_ids', 'encoder.k_ids', 'encoder.relative_pos', ...Array.from({ length: LAYERS }, (_, i) => perLayer(i)).flat()]);
  // What runs per sample stays so: the layer's own projections of the tokens, and the head split of the projected
  // rows, whose permute stands for the copy `.repeat` makes for every sample.
  for (const id of ['encoder.layer.0.attention.self.key_proj', 'encoder.layer.0.attention.self.pos_key_layer_transpose', 'encoder.layer.0.attention.self.c2p_att']) assert.equal(runsOncePerForward(layer(m, id)), false, id);
});

test('per-sample FLOPs drop by the hand count, which a forward of B samples adds back once; MFU counts only the per-sample work', () => {
  const spec = debertaSpec();
  const now = analyzed(spec);
  const was = analyzed(perSampleSpec(spec));
  assert.equal(ONCE_PER_FORWARD_FLOPS, 14_517_796_864);
  assert.equal(PROJECTIONS, 14_495_514_624);
  assert.equal(was.totals.forwardFlops, PER_SAMPLE_BEFORE);
  assert.equal(was.totals.oncePerForward, undefined);
  assert.equal(now.totals.oncePerForward?.forwardFlops, ONCE_PER_FORWARD_FLOPS);
  assert.equal(now.totals.forwardFlops, PER_SAMPLE_BEFORE - ONCE_PER_FORWARD_FLOPS);
  assert.equal(now.totals.forwardFlops, 107_135_238_144);
  // The projections were an eighth of what the per-sample graph priced a sample.
  assert.equal(Math.round((PROJECTIONS / PER_SAMPLE_BEFORE) * 1000) / 10, 11.9);
  // A forward of 32 samples: 32 per-sample totals and the relative path once.
  assert.equal(forwardFlopsOfBatch(now.totals, 32), 32 * 107_135_238_144 + ONCE_PER_FORWARD_FLOPS);
  // The backward keeps the projections' input and weight gradients (twice the forward each), once per forward too.
  assert.equal(now.totals.backwardFlops + (now.totals.oncePerForward?.backwardFlops ?? 0), was.totals.backwardFlops);
  assert.equal(modelFlopsPerSample(was) - modelFlopsPerSample(now), ONCE_PER_FORWARD_FLOPS + (now.totals.oncePerForward?.backwardFlops ?? 0));
});

test("the projections keep their weights' gradient: key_proj#2 shares key_proj's weights and trains them with the same backward", () => {
  const m = analyzed(debertaSpec());
  const own = layer(m, 'encoder.layer.5.attention.self.key_proj');
  const rows = layer(m, 'encoder.layer.5.attention.self.key_proj#2');
  assert.deepEqual([own.workload.params, own.workload.weightGradBytes], [H * H + H, (H * H + H) * 4]);
  assert.deepEqual([rows.workload.params, rows.weightOwner, rows.inputShapes, rows.outputShape], [0, own.id, [[ROWS, H]], [ROWS, H]]);
  // 2s rows of h → h with bias, forward; backward = input gradient + weight gradient, twice the forward (2s = T here).
  assert.equal(rows.workload.forwardFlops, 2 * ROWS * H * H + ROWS * H);
  assert.equal(rows.workload.backwardFlops, 2 * rows.workload.forwardFlops);
  assert.equal(rows.workload.backwardFlops, own.workload.backwardFlops);
  assert.equal(rows.workload.backward, undefined, 'trained: both gradients');
});

test('a once-per-forward layer costs the same at any micro-batch; its per-sample twin grows with it', () => {
  const spec = debertaSpec();
  const now = analyzed(spec);
  const was = analyzed(perSampleSpec(spec));
  const gpu = resolveCluster('a100x8').gpus[0];
  const at = (m: AnalyzedModel, id: string, samples: number) => {
    const t = analyticalTimes(layer(m, id), gpu, samples, 1, 1, 2, 'bf16');
    return t.forwardMs + t.backwardMs;
  };
  const id = 'encoder.layer.0.attention.self.key_proj#2';
  assert.equal(at(now, id, 32), at(now, id, 1));
  assert.equal(at(now, id, 1), at(was, id, 1));
  assert.ok(at(was, id, 32) > 8 * at(was, id, 1), `${at(was, id, 32)} ms at 32 samples, ${at(was, id, 1)} ms at one`);
  // The rows it keeps for the backward too: one forward's, in the block-stack search's activation memory.
  const env = { gpu, precision: 'bf16' as const, modelDtypeBytes: 4, shape: { heads: 12, hidden: H, seq: 512, linearDims: [H], residualBranches: 2, experts: 0 }, tpLink: groupLink(resolveCluster('a100x8'), 8, 1, 1), cpLink: groupLink(resolveCluster('a100x8'), 8, 1, 1), epLink: groupLink(resolveCluster('a100x8'), 8, 1, 1) };
  const saved = (m: AnalyzedModel, mb: number) => groupCost([layer(m, id)], { tp: 1, cp: 1, ep: 1, sp: false, mb }, env, false).savedNone;
  assert.ok(saved(now, 1) > 0);
  assert.equal(saved(now, 8), saved(now, 1));
  assert.equal(saved(was, 8), 8 * saved(was, 1));
  // Under autocast the projections' input cast belongs to them: once per forward too.
  const casts = autocastModel(now, 'bf16').model.layers.filter((l) => l.id.startsWith(`${id}:autocast`));
  assert.equal(casts.length, 1);
  assert.ok(runsOncePerForward(casts[0]));
});

test('a100x8, batch 32, 512 tokens: the planned step is faster by exactly what the per-sample pricing added at its micro-batch', () => {
  const spec = debertaSpec();
  const now = analyzed(spec);
  const was = analyzed(perSampleSpec(spec));
  const cluster = resolveCluster('a100x8');
  // Data parallel alone: a deterministic search, so both graphs get the same configuration.
  const options = { batch: 32, objective: 'throughput', strategies: 'dp', optimizer: 'momentum', precision: 'bf16' } as const;
  const after = planModel(now, cluster, options);
  const earlier = planModel(was, cluster, options);
  assert.ok(after.feasible && earlier.feasible, 'both plans are feasible');
  const setup = (o: typeof after) => (o.feasible ? [o.plan.setup?.dataParallel, o.plan.setup?.microBatch, o.plan.setup?.gradientAccumulation] : []);
  assert.deepEqual(setup(after), setup(earlier));
  const microBatch = setup(after)[1];
  assert.ok(microBatch !== undefined && microBatch > 1, 'a micro-batch of several samples, where the pricing differs');
  // Each GPU runs the marked layers once a micro-batch instead of microBatch times: the step saves the difference.
  let excess = 0;
  now.layers.forEach((l, i) => {
    if (!runsOncePerForward(l)) return;
    const perSample = analyticalTimes(was.layers[i], cluster.gpus[0], microBatch, 1, 1, 2, 'bf16');
    const once = analyticalTimes(l, cluster.gpus[0], microBatch, 1, 1, 2, 'bf16');
    excess += perSample.forwardMs + perSample.backwardMs - once.forwardMs - once.backwardMs;
  });
  assert.ok(excess > 0.1, `${excess} ms`);
  const saved = earlier.plan.stepTimeMs - after.plan.stepTimeMs;
  assert.ok(Math.abs(saved - excess) < 1e-6 * earlier.plan.stepTimeMs, `saved ${saved} ms, the marked layers' excess ${excess} ms`);
});
