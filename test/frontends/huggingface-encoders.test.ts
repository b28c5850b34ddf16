/**
 * The encoders people fine-tune for classification in 2025–2026: ModernBERT (modeling_modernbert.py) and
 * DeBERTa-v2/v3 (model_type 'deberta-v2', modeling_deberta_v2.py), built from the checkpoints' config.json
 * (test/fixtures/huggingface/<name>/config.json) with transformers' module names, through the Python and JSON frontends,
 * the core's analyzeModel and the planner.
 *
 * Parameter counts by hand (h = hidden, I = intermediate, L = layers, V = vocab; every LayerNorm of ModernBERT is a weight
 * only, norm_bias false; DeBERTa's Linear layers and LayerNorms all have biases):
 * - ModernBERT-base (h 768, I 1152, L 22, V 50,368): tok_embeddings V·h 38,682,624 + embeddings.norm 768; per layer
 *   Wqkv 3h² 1,769,472 + attn.Wo h² 589,824 + mlp.Wi 2hI 1,769,472 + mlp.Wo I·h 884,736 + attn_norm and mlp_norm 2·768
 *   = 5,015,040, less layer 0's attn_norm (nn.Identity): 22 × 5,015,040 − 768 = 110,330,112; + final_norm 768
 *   = 149,014,272 for ModernBertModel (the model card and arXiv:2412.13663: "22 and 28 layers ... a total parameter
 *   count of 149 and 395 million", GLU expansions 2,304 and 5,248 = 2I). The masked-LM head adds
 *   head.dense h² 589,824 + head.norm 768 + the decoder's bias V 50,368 (its weight is tok_embeddings): 149,655,232.
 * - ModernBERT-large (h 1024, I 2624, L 28): V·h 51,576,832 + 1,024; per layer 3,145,728 + 1,048,576 + 5,373,952
 *   + 2,686,976 + 2,048 = 12,257,280; × 28 − 1,024 = 343,202,816; + 1,024 = 394,781,696 (395M); + head 1,099,968.
 * - DeBERTa-v3-base (h 768, I 3072, L 12, V 128,100, position_buckets 256): word_embeddings V·h 98,380,800 +
 *   embeddings.LayerNorm 1,536; per layer query/key/value_proj 3(h² + h) 1,771,776 + attention.output.dense 590,592
 *   + its LayerNorm 1,536 + intermediate.dense 2,362,368 + output.dense 2,360,064 + its LayerNorm 1,536 = 7,087,872;
 *   × 12 = 85,054,464; + rel_embeddings 2·256·h 393,216 + encoder.LayerNorm 1,536 = 85,450,752 beyond the word
 *   embeddings; 183,831,552 in all. No position_embeddings (position_biased_input false), no token types, and
 *   share_att_key reuses query_proj / key_proj on the relative embeddings: no parameter of their own.
 * - DeBERTa-v3-large (h 1024, I 4096, L 24): V·h 131,174,400 + 2,048; per layer 3,148,800 + 1,049,600 + 2,048
 *   + 4,198,400 + 4,195,328 + 2,048 = 12,596,224; × 24 = 302,309,376; + 524,288 + 2,048: 302,837,760 beyond the word
 *   embeddings, 434,012,160 in all.
 * - DeBERTa-v3-small (L 6 of 768) and -xsmall (L 12 of 384, I 1536): 42,923,520 and 21,491,712 beyond the word
 *   embeddings (98,380,800 and 49,190,400).
 * The model cards give "backbone + embedding" parameters: 86M + 98M (base), 304M + 131M (large), 44M + 98M (small),
 * 22M + 48M (xsmall). The embeddings are V·h rounded (xsmall's 49,190,400 is not 48M: the card's one miss). The bare
 * DebertaV2Model's non-embedding counts round to 85, 303, 43 and 21M; all four cards' backbones are matched by the
 * non-embedding parameters of DebertaV2ForMaskedLM, whose legacy head adds cls.predictions.transform.dense (h² + h), its LayerNorm (2h) and the
 * vocabulary bias V: 86,170,980, 304,017,508, 43,643,748 and 21,768,420, which round to 86, 304, 44 and 22M. The cards'
 * totals (184M, 435M) are their two rounded parts added.
 *
 * Disentangled attention per layer (T tokens, a heads, s = position_buckets, 2s relative rows): c2p and p2c are each
 * a bmm of the T queries (keys) against the 2s projected relative rows, 2·T·2s·h FLOPs, then a gather to [a, T, T];
 * with the two scales and two adds that is 8·T·s·h + 6·a·T² beyond BERT's attention, plus the two projections of the 2s
 * rows (2·2s·h² + 2s·h each) and pos_dropout on them (2 per element).
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { analyzeModel } from '../../src/core/analyze';
import { DROPOUT_FLOPS_PER_ELEMENT, SOFTMAX_FLOPS_PER_ELEMENT } from '../../src/core/catalogue/costs';
import type { AnalyzedModel, Diagnostic } from '../../src/core/ir';
import { initFrontends, parseSource } from '../../src/frontends/index';
import { planModel, resolveCluster } from '../../src/planner/index';
import { HF_FIXTURES, hfConfigModel, layerNamed, unsupportedDiagnostics } from './hfFixtures';

const fixtures = HF_FIXTURES;
const T = 256;

before(() => initFrontends());

function configJson(dir: string, tokens = T): AnalyzedModel {
  return hfConfigModel(dir, { inputShape: [tokens] });
}

const TRANSFORMERS_NAMES = [
  'AutoModel', 'AutoModelForMaskedLM', 'AutoModelForSequenceClassification', 'AutoModelForTokenClassification', 'AutoModelForQuestionAnswering',
  'ModernBertConfig', 'ModernBertModel', 'DebertaV2Config', 'DebertaV2Model', 'DebertaV2ForMaskedLM',
];

/** A fine-tuning script next to the fixtures: the model it builds, analysed, and every diagnostic. */
function script(body: string, tokens = T): { model: AnalyzedModel; diagnostics: Diagnostic[] } {
  const source = `import torch\nfrom transformers import ${TRANSFORMERS_NAMES.join(', ')}\n\n${body}`;
  const result = parseSource(join(fixtures, 'finetune_encoder.py'), source, {});
  const spec = result?.models.find((m) => m.name === 'model');
  assert.ok(spec, `a model is read from:\n${body}\n${JSON.stringify(result?.diagnostics)}`);
  const model = analyzeModel(spec, { inputShape: [tokens] });
  return { model, diagnostics: [...(result?.diagnostics ?? []), ...model.diagnostics] };
}

const layer = layerNamed;

const params = (m: AnalyzedModel, name: string): number => layer(m, name).workload.params;
/** Millions as a model card rounds them. */
const millions = (n: number): number => Math.round(n / 1e6);
const unsupported = unsupportedDiagnostics;

const MODERNBERT_BASE = 149_014_272;
const MODERNBERT_LARGE = 394_781_696;
const DEBERTA_V3_BASE = 183_831_552;
const DEBERTA_V3_LARGE = 434_012_160;

test('ModernBERT-base and -large from their config.json: the hand counts, 149M and 395M, and the masked-LM head on top', () => {
  const base = configJson('modernbert-base');
  const large = configJson('modernbert-large');
  const mlmHead = (h: number, v: number): number => h * h + h + v;
  assert.equal(base.totals.params, MODERNBERT_BASE + mlmHead(768, 50_368));
  assert.equal(large.totals.params, MODERNBERT_LARGE + mlmHead(1024, 50_368));
  assert.equal(base.totals.params, 149_655_232);
  assert.equal(MODERNBERT_BASE, 38_682_624 + 768 + 22 * 5_015_040 - 768 + 768);
  assert.equal(MODERNBERT_LARGE, 51_576_832 + 1024 + 28 * 12_257_280 - 1024 + 1024);
  assert.deepEqual([millions(MODERNBERT_BASE), millions(MODERNBERT_LARGE)], [149, 395]);
  assert.equal(base.completeness?.complete, true);
  assert.deepEqual(unsupported([...base.diagnostics, ...large.diagnostics]), []);
  // The bare model, as AutoModel loads it.
  const bare = script('model = AutoModel.from_pretrained("./modernbert-base")\n').model;
  assert.equal(bare.totals.params, MODERNBERT_BASE);
  assert.ok(bare.layers.some((l) => l.name === 'layers.1.attn.Wqkv'), 'ModernBertModel has no model. prefix');

  // Fused Wqkv without bias: query, key, value in that order, each hidden wide.
  const wqkv = layer(base, 'model.layers.1.attn.Wqkv');
  assert.deepEqual([wqkv.attrs.inFeatures, wqkv.attrs.outFeatures, wqkv.attrs.bias, wqkv.outputShape], [768, 3 * 768, false, [T, 2304]]);
  assert.deepEqual(['query', 'key', 'value'].map((r) => layer(base, `model.layers.1.attn.${r}`).outputShape), [[T, 768], [T, 768], [T, 768]]);
  // Rotary on the query and key heads, then attention with a bidirectional mask.
  assert.deepEqual(layer(base, 'model.layers.1.attn.sdpa').inputs, ['model.layers.1.attn.q_rotary', 'model.layers.1.attn.k_rotary', 'model.layers.1.attn.v_transpose']);
  assert.equal(layer(base, 'model.layers.1.attn.sdpa').attrs.causal, false);
  // Layer 0's attn_norm is nn.Identity: Wqkv reads the embeddings' norm directly; later layers have a weight-only LayerNorm.
  assert.ok(!base.layers.some((l) => l.name === 'model.layers.0.attn_norm'));
  assert.deepEqual(layer(base, 'model.layers.0.attn.Wqkv').inputs, ['model.embeddings.norm']);
  assert.deepEqual([params(base, 'model.layers.1.attn_norm'), layer(base, 'model.layers.1.attn_norm').attrs.center], [768, false]);
  // GeGLU: Wi is 2·intermediate wide, its first half activated and multiplied by the second.
  assert.deepEqual(layer(base, 'model.layers.1.mlp.Wi').outputShape, [T, 2 * 1152]);
  assert.deepEqual(layer(base, 'model.layers.1.mlp.act').inputs, ['model.layers.1.mlp.input']);
  assert.deepEqual(layer(base, 'model.layers.1.mlp.mul').inputs, ['model.layers.1.mlp.act', 'model.layers.1.mlp.gate']);
  assert.equal(params(base, 'model.layers.1.mlp.Wo'), 1152 * 768);
  // The decoder is tok_embeddings plus its own bias.
  assert.deepEqual([layer(base, 'decoder').weightOwner, params(base, 'decoder')], ['model.embeddings.tok_embeddings', 50_368]);
  assert.equal(params(large, 'model.layers.27.mlp.Wi'), 1024 * 2 * 2624);
  // norm_bias and attention_bias put biases back where ModernBertConfig says.
  const biased = script('model = ModernBertModel(ModernBertConfig(num_hidden_layers=2, norm_bias=True, attention_bias=True))\n').model;
  assert.equal(biased.totals.params, 50_368 * 768 + 2 * 768 + 2 * (3 * 768 * 768 + 3 * 768 + 768 * 768 + 768 + 2 * 768 * 1152 + 1152 * 768) + 3 * 2 * 768 + 2 * 768);
});

test("ModernBERT's alternating attention: every third layer global, the rest a local window of 128 tokens, priced over the window only under flash_attention_2", () => {
  const tokens = 1024;
  const load = (extra: string) => script(`model = AutoModelForMaskedLM.from_pretrained("./modernbert-base"${extra})\n`, tokens);
  const flash = load(', attn_implementation="flash_attention_2"');
  const plain = load('');
  const sdpaOf = (m: AnalyzedModel, i: number) => layer(m, `model.layers.${i}.attn.sdpa`);
  // Layer i is global when i % 3 == 0; local layers reach 64 keys on each side and themselves: 129 keys a query.
  assert.deepEqual([0, 1, 2, 3, 21].map((i) => sdpaOf(flash.model, i).attrs.window), [undefined, 129, 129, undefined, undefined]);
  assert.ok(plain.model.layers.filter((l) => l.op === 'sdpa').every((l) => l.attrs.window === undefined));
  const heads = 12;
  const d = 64;
  const core = (keys: number) => heads * (4 * tokens * keys * d + SOFTMAX_FLOPS_PER_ELEMENT * tokens * keys);
  assert.equal(sdpaOf(flash.model, 1).workload.forwardFlops, core(129));
  assert.equal(sdpaOf(flash.model, 3).workload.forwardFlops, core(tokens));
  assert.equal(sdpaOf(plain.model, 1).workload.forwardFlops, core(tokens));
  const said = (r: { diagnostics: Diagnostic[] }) => r.diagnostics.find((x) => x.code === 'hf-sliding-window')?.message ?? '';
  assert.match(said(flash), /^modernbert: 14 of 22 layers \(1, 2, 4, …, 20\) attend a local window of 128 tokens \(64 on each side, 129 keys a query\), and the code runs flash_attention_2/);
  // sdpa masks the full matrix; left unnamed, transformers may pick flash-attn, which WAP cannot see: both said.
  assert.match(said(plain), /WAP prices them over the full sequence, as sdpa attention computes it.*flash_attention_2 when the flash-attn package is installed.*over-estimated/);
  assert.match(said(load(', attn_implementation="sdpa"')), /^(?!.*flash-attn package).*over-estimated/);
  assert.equal(flash.model.totals.params, plain.model.totals.params);
});

test('ModernBertForSequenceClassification from the checkpoint with num_labels=3: mean pooling as the config says, head, classifier', () => {
  const { model, diagnostics } = script('model = AutoModelForSequenceClassification.from_pretrained("./modernbert-base", num_labels=3)\n');
  assert.deepEqual(unsupported(diagnostics), []);
  // ModernBertModel + head.dense h² (classifier_bias false) + head.norm h + classifier 3h + 3 (nn.Linear's bias).
  assert.equal(model.totals.params, MODERNBERT_BASE + 768 * 768 + 768 + 768 * 3 + 3);
  assert.deepEqual(layer(model, 'classifier').outputShape, [3]);
  // classifier_pooling 'mean' in the checkpoint's config: a masked sum over the tokens, then the head.
  assert.deepEqual(layer(model, 'pooling.sum').outputShape, [768]);
  assert.deepEqual(layer(model, 'head.dense').inputs, ['pooling.mean']);
  const cls = script('model = AutoModelForSequenceClassification.from_pretrained("./modernbert-base", num_labels=3, classifier_pooling="cls")\n').model;
  assert.deepEqual(layer(cls, 'head.dense').inputs, ['pooling.first_token']);
  assert.equal(cls.totals.params, model.totals.params);
  // Token classification: the head on every token.
  const ner = script('model = AutoModelForTokenClassification.from_pretrained("./modernbert-base", num_labels=9)\n').model;
  assert.deepEqual(layer(ner, 'classifier').outputShape, [T, 9]);
});

test('DeBERTa-v3-base and -large from their config.json: the hand counts, relative embeddings, no absolute positions, the model cards\' 98M/131M embeddings', () => {
  const base = configJson('deberta-v3-base');
  const large = configJson('deberta-v3-large');
  assert.equal(base.totals.params, DEBERTA_V3_BASE);
  assert.equal(large.totals.params, DEBERTA_V3_LARGE);
  assert.equal(base.completeness?.complete, true);
  assert.deepEqual(unsupported([...base.diagnostics, ...large.diagnostics]), []);
  const words = (m: AnalyzedModel) => params(m, 'embeddings.word_embeddings');
  assert.deepEqual([words(base), words(large)], [128_100 * 768, 128_100 * 1024]);
  assert.deepEqual([base.totals.params - words(base), large.totals.params - words(large)], [85_450_752, 302_837_760]);
  assert.deepEqual([millions(words(base)), millions(words(large))], [98, 131]);
  // 2 · position_buckets rows of relative embeddings, normalised once (norm_rel_ebd "layer_norm").
  assert.deepEqual([params(base, 'encoder.rel_embeddings.weight'), layer(base, 'encoder.rel_embeddings.weight').outputShape], [512 * 768, [512, 768]]);
  assert.deepEqual(layer(base, 'encoder.LayerNorm').inputs, ['encoder.rel_embeddings.weight']);
  assert.ok(!base.layers.some((l) => /position_embeddings|token_type_embeddings|embed_proj|encoder\.conv/.test(l.name)));
  const q = layer(base, 'encoder.layer.0.attention.self.query_proj');
  assert.deepEqual([q.attrs.inFeatures, q.attrs.outFeatures, q.attrs.bias, q.outputShape], [768, 768, true, [T, 768]]);
  // share_att_key: key_proj and query_proj run again on the 512 relative rows, with the same weights.
  const posKey = layer(base, 'encoder.layer.0.attention.self.key_proj#2');
  assert.deepEqual([posKey.outputShape, posKey.weightOwner, posKey.workload.params], [[512, 768], 'encoder.layer.0.attention.self.key_proj', 0]);
  assert.equal(layer(base, 'encoder.layer.0.attention.self.query_proj#2').weightOwner, 'encoder.layer.0.attention.self.query_proj');
  assert.ok(!base.layers.some((l) => l.name.includes('pos_key_proj') || l.name.includes('pos_query_proj')));
  // Those projections run once per batch in transformers, and are priced so (huggingface-deberta-relative.test.ts): said, with their size.
  const said = base.diagnostics.find((x) => x.code === 'hf-relative-embeddings')?.message ?? '';
  assert.match(said, /^deberta-v2: each of the 12 layers projects the 512 relative-position embeddings with the layer's own key_proj \/ query_proj \(share_att_key\), 1\.21 GFLOP forward a layer.*once per batch.*once per forward whatever the micro-batch/);
});

test("DeBERTa's disentangled attention: the c2p and p2c bmm's and gathers priced as the hand formula says", () => {
  const m = configJson('deberta-v3-base');
  const h = 768;
  const a = 12;
  const s = 256;
  const p = 'encoder.layer.3.attention.self';
  const f = (name: string) => layer(m, `${p}.${name}`).workload.forwardFlops;
  // Content to position: the queries against all 2s projected relative rows, then one (query, key) pick each.
  assert.deepEqual(layer(m, `${p}.c2p_att`).outputShape, [a, T, 2 * s]);
  assert.deepEqual([f('c2p_att'), f('p2c_att')], [2 * T * 2 * s * h, 2 * T * 2 * s * h]);
  assert.deepEqual(layer(m, `${p}.c2p_gather`).outputShape, [a, T, T]);
  assert.deepEqual([f('c2p_gather'), f('p2c_gather')], [a * T * T, a * T * T]);
  // p2c is gathered by key and transposed back (a view) before its scale.
  assert.deepEqual(layer(m, `${p}.p2c_scale`).inputs, [`${p}.p2c_transpose`]);
  assert.deepEqual(layer(m, `${p}.attention_scores`).inputs, [`${p}.content_scores`, `${p}.rel_att`]);
  const relative = ['c2p_att', 'p2c_att', 'c2p_gather', 'p2c_gather', 'c2p_scale', 'p2c_scale', 'rel_att', 'attention_scores'].reduce((t, n) => t + f(n), 0);
  assert.equal(relative, 8 * T * s * h + 6 * a * T * T);
  // The relative rows' projections (key_proj and query_proj again, with bias) and the dropout on them.
  const projections = f('key_proj#2') + f('query_proj#2') + f('pos_dropout');
  assert.equal(projections, 2 * (2 * 2 * s * h * h + 2 * s * h) + DROPOUT_FLOPS_PER_ELEMENT * 2 * s * h);
  // Eager attention: the scores' softmax and the dropped probabilities are kept for the backward, no fused kernel.
  assert.ok(!m.layers.some((l) => l.op === 'sdpa'));
  assert.equal(layer(m, `${p}.softmax`).workload.savedActivationBytes, a * T * T * 4);
  // The scale is 1/√(d · 3) (content, c2p and p2c): the keys are divided before Q·Kᵀ, c2p and p2c after their gathers.
  assert.deepEqual(layer(m, `${p}.content_scores`).inputs, [`${p}.query_layer_transpose`, `${p}.key_scale`]);
  assert.deepEqual(['key_scale', 'c2p_scale', 'p2c_scale'].map((n) => layer(m, `${p}.${n}`).attrs.factor), new Array(3).fill(1 / Math.sqrt(64 * 3)));
  // The graph holds at any length: 128 tokens build the same layers with [a, 128, 128] scores.
  assert.deepEqual(layer(configJson('deberta-v3-base', 128), `${p}.c2p_gather`).outputShape, [a, 128, 128]);
});

test("DeBERTa-v3 small and xsmall from DebertaV2Config, and the model cards' backbones as DebertaV2ForMaskedLM's non-embedding parameters", () => {
  const v3 = 'relative_attention=True, position_buckets=256, norm_rel_ebd="layer_norm", share_att_key=True, pos_att_type="p2c|c2p", max_relative_positions=-1, position_biased_input=False, type_vocab_size=0, vocab_size=128100';
  const sizes: Array<[string, string, number, number, number]> = [
    // name, shape, bare non-embedding, card backbone, card embedding
    ['small', 'hidden_size=768, num_hidden_layers=6, num_attention_heads=12, intermediate_size=3072', 42_923_520, 44, 98],
    ['xsmall', 'hidden_size=384, num_hidden_layers=12, num_attention_heads=6, intermediate_size=1536', 21_491_712, 22, 48],
  ];
  for (const [name, shape, nonEmbedding, cardBackbone, cardEmbedding] of sizes) {
    const bare = script(`model = DebertaV2Model(DebertaV2Config(${shape}, ${v3}))\n`).model;
    const mlm = script(`model = DebertaV2ForMaskedLM(DebertaV2Config(${shape}, ${v3}))\n`).model;
    const h = params(bare, 'embeddings.word_embeddings') / 128_100;
    assert.equal(bare.totals.params - params(bare, 'embeddings.word_embeddings'), nonEmbedding, name);
    const backbone = mlm.totals.params - params(mlm, 'deberta.embeddings.word_embeddings');
    assert.equal(backbone, nonEmbedding + h * h + h + 2 * h + 128_100, name);
    assert.equal(millions(backbone), cardBackbone, name);
    if (name === 'small') assert.equal(millions(128_100 * h), cardEmbedding);
    else assert.notEqual(millions(128_100 * h), cardEmbedding, "xsmall's card says 48M for a 49,190,400-element table");
  }
  // The legacy head (the default): cls.predictions.* with the decoder tied to the word embeddings.
  const mlm = script('model = AutoModelForMaskedLM.from_pretrained("./deberta-v3-base")\n').model;
  assert.equal(mlm.totals.params - params(mlm, 'deberta.embeddings.word_embeddings'), 86_170_980);
  assert.equal(layer(mlm, 'cls.predictions.decoder').weightOwner, 'deberta.embeddings.word_embeddings');
  const large = script('model = AutoModelForMaskedLM.from_pretrained("./deberta-v3-large")\n').model;
  assert.equal(millions(large.totals.params - params(large, 'deberta.embeddings.word_embeddings')), 304);
  assert.deepEqual([millions(85_450_752), millions(302_837_760)], [85, 303], 'the bare backbones miss the cards by one');
  // legacy=False: DebertaV2LMPredictionHead, the same parameters under lm_predictions.lm_head.
  const fixed = script('model = AutoModelForMaskedLM.from_pretrained("./deberta-v3-base", legacy=False)\n').model;
  assert.equal(fixed.totals.params, mlm.totals.params);
  assert.deepEqual([params(fixed, 'lm_predictions.lm_head.dense'), layer(fixed, 'lm_predictions.lm_head').weightOwner], [768 * 768 + 768, 'deberta.embeddings.word_embeddings']);
});

test('AutoModelForSequenceClassification.from_pretrained("./deberta-v3-base", num_labels=3): ContextPooler and classifier; token classification and QA heads', () => {
  const { model, diagnostics } = script('model = AutoModelForSequenceClassification.from_pretrained("./deberta-v3-base", num_labels=3)\n');
  assert.deepEqual(unsupported(diagnostics), []);
  assert.equal(model.totals.params, DEBERTA_V3_BASE + 768 * 768 + 768 + 768 * 3 + 3);
  assert.ok(layer(model, 'deberta.encoder.layer.0.attention.self.query_proj'));
  // pooler_dropout is 0.0 (DebertaV2Config): the first token goes straight to pooler.dense.
  assert.deepEqual(layer(model, 'pooler.dense').inputs, ['pooler.first_token']);
  assert.equal(layer(model, 'pooler.activation').attrs.fn, 'gelu');
  // hidden_states[:, 0] is kept as a one-token row, as the BERT builds keep their first token.
  assert.deepEqual(layer(model, 'classifier').outputShape, [1, 3]);
  // hidden_dropout_prob 0.1 before the classifier when cls_dropout is unset.
  assert.equal(layer(model, 'dropout').attrs.rate, 0.1);
  const ner = script('model = AutoModelForTokenClassification.from_pretrained("./deberta-v3-base", num_labels=9)\n').model;
  assert.equal(ner.totals.params, DEBERTA_V3_BASE + 768 * 9 + 9);
  const qa = script('model = AutoModelForQuestionAnswering.from_pretrained("./deberta-v3-base")\n').model;
  assert.deepEqual(qa.outputs, ['start_logits', 'end_logits']);
});

test('DebertaV2Config without share_att_key, with embedding_size, absolute positions, token types and the conv layer (DeBERTa-v2-xlarge\'s)', () => {
  const src = 'model = DebertaV2Model(DebertaV2Config(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128, vocab_size=100, embedding_size=32, relative_attention=True, pos_att_type="c2p|p2c", max_relative_positions=16, conv_kernel_size=3, conv_act="gelu", type_vocab_size=2))\n';
  const m = script(src, 64).model;
  // word 100·32, positions 512·32, token types 2·32, embed_proj 32·64 (no bias), LayerNorm 128; rel_embeddings 2·16·64
  // (norm_rel_ebd none: no encoder.LayerNorm); per layer q/k/v and pos_key_proj / pos_query_proj 5·(64² + 64), output
  // dense 64² + 64, two LayerNorms, intermediate 64·128 + 128, output 128·64 + 64; Conv1d(64, 64, 3) and its LayerNorm.
  const perLayer = 5 * (64 * 64 + 64) + (64 * 64 + 64) + 2 * 128 + (64 * 128 + 128) + (128 * 64 + 64);
  assert.equal(m.totals.params, 100 * 32 + 512 * 32 + 2 * 32 + 32 * 64 + 128 + 2 * 16 * 64 + 2 * perLayer + 64 * 64 * 3 + 64 + 128);
  assert.equal(params(m, 'encoder.layer.1.attention.self.pos_key_proj'), 64 * 64 + 64);
  assert.ok(!m.layers.some((l) => l.id.endsWith('#2')));
  // The conv runs on the embeddings and joins layer 0's output; layer 1 reads the result.
  assert.deepEqual(layer(m, 'encoder.conv.permute').inputs, ['embeddings.dropout']);
  assert.deepEqual(layer(m, 'encoder.conv.residual').inputs, ['encoder.layer.0.output.LayerNorm', 'encoder.conv.conv_act']);
  assert.deepEqual(layer(m, 'encoder.layer.1.attention.self.query_proj').inputs, ['encoder.conv.input_mask']);
  assert.deepEqual(layer(m, 'encoder.rel_embeddings.weight').outputShape, [32, 64]);
});

test("the planner finds a feasible plan on 'a100x8' for ModernBERT-base and DeBERTa-v3-base", () => {
  const cluster = resolveCluster('a100x8');
  for (const [m, batch] of [[configJson('modernbert-base', 1024), 256], [configJson('deberta-v3-base', 512), 256]] as const) {
    const outcome = planModel(m, cluster, { batch, objective: 'throughput', strategies: 'all', optimizer: 'adam', precision: 'bf16' });
    assert.ok(outcome.feasible, outcome.feasible ? '' : outcome.reason);
  }
});
