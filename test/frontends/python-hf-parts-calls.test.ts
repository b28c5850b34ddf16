/**
 * Two transformers parts research code calls on its own (frontends/python/transformersCalls.ts, transformersParts.ts,
 * transformersPartInputs.ts): RoBERTa's classification head built from the config beside a RobertaModel (and a
 * script's subclass of it), and an encoder–decoder's decoder called with the encoder's output. Before, both lost
 * their layers with an `unread-hf-part` warning. The scripts are in test/fixtures/hf-part-calls; the configs are the
 * published checkpoints' (roberta-large, xlm-roberta-base, bart-base in test/fixtures/huggingface; t5-small in the
 * fixtures' own folder), and every count below is worked out from their sizes, each matching the count
 * transformers reports for the checkpoint.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { analyzeModel } from '../../src/core/analyze';
import type { AnalyzedLayer, AnalyzedModel, Diagnostic } from '../../src/core/ir';
import { initFrontends, parseSource } from '../../src/frontends/index';
import { planModel, resolveCluster } from '../../src/planner/index';

const folder = join(__dirname, '..', 'fixtures', 'hf-part-calls');

before(() => initFrontends());

function read(file: string, name: string, opts: { source?: string; sequenceLength?: number } = {}): { model: AnalyzedModel; diagnostics: Diagnostic[] } {
  const path = join(folder, file);
  const sequenceLength = opts.sequenceLength ?? 128;
  const result = parseSource(path, opts.source ?? readFileSync(path, 'utf8'), {}, { sequenceLength });
  const spec = result?.models.find((m) => m.name === name);
  assert.ok(spec, `a model '${name}' is read: ${result?.diagnostics.map((d) => d.message).join('\n')}`);
  const model = analyzeModel(spec, { sequenceLength });
  return { model, diagnostics: [...(result?.diagnostics ?? []), ...model.diagnostics] };
}

function layer(model: AnalyzedModel, name: string): AnalyzedLayer {
  const found = model.layers.find((l) => l.name === name);
  assert.ok(found, `${name} is in the graph`);
  return found;
}

const said = (diagnostics: Diagnostic[]): string => diagnostics.map((d) => `${d.code}: ${d.message}`).join('\n');

function assertReadWhole(model: AnalyzedModel, diagnostics: Diagnostic[]): void {
  assert.ok(!diagnostics.some((d) => d.code === 'unread-hf-part' || d.code === 'uncalled-modules'), said(diagnostics));
  assert.equal(model.completeness?.complete, true, said(diagnostics));
}

// roberta-large (24 layers of 1024, 16 heads, 4096, 514 positions, 1 token type, vocab 50,265): the embeddings
// 50265·1024 + 514·1024 + 1·1024 + LayerNorm 2·1024; per layer q, k, v, o 4·(1024² + 1024), two LayerNorms 2·2048,
// 1024·4096 + 4096 and 4096·1024 + 1024; the pooler 1024² + 1024. 355,359,744: RobertaModel's published count.
const ROBERTA_LARGE_LAYER = 4 * (1024 * 1024 + 1024) + 2 * 2048 + (1024 * 4096 + 4096) + (4096 * 1024 + 1024);
const ROBERTA_LARGE_POOLER = 1024 * 1024 + 1024;
const ROBERTA_LARGE = 50265 * 1024 + 514 * 1024 + 1024 + 2048 + 24 * ROBERTA_LARGE_LAYER + ROBERTA_LARGE_POOLER;

test('RobertaClassificationHead(config) beside a RobertaModel: the head WAP builds, its own weights and the 3 labels the config asks for', () => {
  assert.equal(ROBERTA_LARGE, 355_359_744);
  const { model, diagnostics } = read('roberta_stance.py', 'model');
  assertReadWhole(model, diagnostics);
  // The head: dense 1024² + 1024, out_proj 1024·3 + 3 (num_labels=3 from AutoConfig.from_pretrained).
  assert.equal(model.totals.params, ROBERTA_LARGE + (1024 * 1024 + 1024) + (1024 * 3 + 3));
  assert.equal(layer(model, 'classifier.out_proj').workload.params, 1024 * 3 + 3);
  assert.deepEqual(layer(model, 'classifier.out_proj').outputShape, [1, 3]);
  // features[:, 0, :] of the encoder's last layer, then dropout (hidden_dropout_prob: the config has no
  // classifier_dropout), dense, tanh, the same dropout module again, out_proj.
  assert.deepEqual(layer(model, 'classifier.first_token').inputs, ['roberta.encoder.layer.23.output.LayerNorm']);
  assert.deepEqual(model.layers.filter((l) => l.name.startsWith('classifier.')).map((l) => [l.name, l.op]), [
    ['classifier.first_token', 'split'], ['classifier.dropout', 'dropout'], ['classifier.dense', 'linear'],
    ['classifier.activation', 'activation'], ['classifier.dropout', 'dropout'], ['classifier.out_proj', 'linear'],
  ]);
  assert.equal(layer(model, 'classifier.dropout').attrs.rate, 0.1);
  // The same head as RobertaForSequenceClassification's, which keeps no pooler: one pooler less in all.
  const whole = read('whole.py', 'model', { source: 'from transformers import AutoModelForSequenceClassification\nmodel = AutoModelForSequenceClassification.from_pretrained("../huggingface/roberta-large", num_labels=3)\n' }).model;
  assert.equal(whole.totals.params, model.totals.params - ROBERTA_LARGE_POOLER);
  const head = (m: AnalyzedModel) => m.layers.filter((l) => l.name.startsWith('classifier.')).map((l) => [l.op, l.workload.params, l.outputShape, l.workload.forwardFlops]);
  assert.deepEqual(head(model), head(whole));
  // Built as RobertaForSequenceClassification builds its encoder (add_pooling_layer=False), the script holds exactly
  // its parameters; the keyword and the constructor's positional argument both say it.
  const stanceText = readFileSync(join(folder, 'roberta_stance.py'), 'utf8');
  const withoutPooler = stanceText.replace('RobertaModel.from_pretrained(model_dir, config=config)', 'RobertaModel.from_pretrained(model_dir, config=config, add_pooling_layer=False)');
  assert.notEqual(withoutPooler, stanceText);
  const unpooled = read('roberta_stance.py', 'model', { source: withoutPooler });
  assertReadWhole(unpooled.model, unpooled.diagnostics);
  assert.equal(unpooled.model.totals.params, whole.totals.params);
  const positional = read('roberta_stance.py', 'model', { source: stanceText.replace('RobertaModel.from_pretrained(model_dir, config=config)', 'RobertaModel(config, False)') });
  assert.equal(positional.model.totals.params, whole.totals.params);
});

test("a script's subclasses of XLMRobertaClassificationHead are that head: one written with its submodules, one through super().forward", () => {
  // xlm-roberta-base (12 layers of 768, 12 heads, 3072, 514 positions, vocab 250,002): 278,043,648, as published.
  const perLayer = 4 * (768 * 768 + 768) + 2 * 1536 + (768 * 3072 + 3072) + (3072 * 768 + 768);
  const base = 250002 * 768 + 514 * 768 + 768 + 1536 + 12 * perLayer + (768 * 768 + 768);
  assert.equal(base, 278_043_648);
  // The head: dense 768² + 768 and out_proj for the 7 intents, 768·7 + 7.
  const head = 768 * 768 + 768 + (768 * 7 + 7);
  const { model: plain, diagnostics: plainSaid } = read('xlmr_heads.py', 'plain');
  assertReadWhole(plain, plainSaid);
  assert.equal(plain.totals.params, base + head);
  assert.deepEqual(layer(plain, 'head.first_token').inputs, ['encoder.encoder.layer.11.output.LayerNorm']);
  assert.deepEqual(plain.outputs, ['head.out_proj']);
  const { model: contrastive, diagnostics } = read('xlmr_heads.py', 'contrastive');
  assert.ok(!diagnostics.some((d) => d.code === 'unread-hf-part' || d.code === 'unknown-layer'), said(diagnostics));
  assert.equal(contrastive.totals.params, base + head);
  // self.dropout, self.dense, self.out_proj: the head's own modules, named under the subclass's attribute.
  assert.deepEqual(layer(contrastive, 'head.dense').inputs, ['head.dropout']);
  assert.equal(layer(contrastive, 'head.dense').workload.params, 768 * 768 + 768);
  assert.equal(layer(contrastive, 'head.out_proj').workload.params, 768 * 7 + 7);
  assert.equal(contrastive.layers.filter((l) => l.name === 'head.dropout').length, 2);
});

// t5-small: the shared table 32128·512; per encoder block q, k, v, o 4·512², the FF wi 512·2048 and wo 2048·512,
// two T5LayerNorms 2·512; a decoder block adds EncDecAttention 4·512² and a third norm; each stack a relative bias
// 32·8 and a final norm 512. 60,506,624: T5ForConditionalGeneration's published count (its lm_head is tied).
const T5_ENCODER_BLOCK = 4 * 512 * 512 + 512 * 2048 + 2048 * 512 + 2 * 512;
const T5_DECODER_BLOCK = T5_ENCODER_BLOCK + 4 * 512 * 512 + 512;
const T5_SMALL = 32128 * 512 + 6 * T5_ENCODER_BLOCK + 6 * T5_DECODER_BLOCK + 2 * (32 * 8 + 512);

test("T5's encoder then its decoder fed the encoder's output: the whole model's parameters, one shared table, and the cross-attention on the encoder's states", () => {
  assert.equal(T5_SMALL, 60_506_624);
  const { model, diagnostics } = read('t5_stackwise.py', 'model');
  assertReadWhole(model, diagnostics);
  assert.equal(model.totals.params, T5_SMALL);
  assert.equal(diagnostics.filter((d) => d.code === 'hf-config').length, 1, 'the config is said once, not at each part');
  // Every block's cross-attention keys and values read the encoder's output, the tensor the call passed: T5Stack's
  // dropout on its final norm.
  const encoded = model.layers.find((l) => l.name === 't5.encoder.dropout' && l.inputs[0] === 't5.encoder.final_layer_norm');
  assert.ok(encoded);
  for (let i = 0; i < 6; i++) {
    for (const kv of ['k', 'v']) assert.deepEqual(layer(model, `t5.decoder.block.${i}.layer.1.EncDecAttention.${kv}`).inputs, [encoded.id]);
  }
  // The decoder embeds decoder_input_ids, and its own relative position bias is looked up at their positions.
  assert.deepEqual(layer(model, 't5.decoder.embed_tokens').inputs, ['decoder_input_ids']);
  assert.deepEqual(layer(model, 't5.decoder.block.0.layer.0.SelfAttention.context_position').inputs, ['decoder_input_ids']);
  assert.deepEqual(layer(model, 't5.encoder.block.0.layer.0.SelfAttention.context_position').inputs, ['input_ids']);
  // One table: both stacks' embed_tokens and the tied head hold `t5.shared`.
  for (const name of ['t5.encoder.embed_tokens', 't5.decoder.embed_tokens', 't5.lm_head']) assert.equal(layer(model, name).weightKey, 't5.shared');
  // `self.t5.lm_head(h)` is the Linear alone: the script scaled h itself, so no second d_model^-0.5.
  assert.ok(!model.layers.some((l) => l.name === 't5.lm_head.rescale'));
  assert.deepEqual(layer(model, 't5.lm_head').outputShape, [128, 32128]);
});

test('the stackwise T5 plans as T5ForConditionalGeneration built whole: the same trained parameters and step time on a100x8', () => {
  const cluster = resolveCluster('a100x8');
  const parts = read('t5_stackwise.py', 'model').model;
  const whole = read('whole.py', 'model', { source: 'from transformers import T5ForConditionalGeneration\nmodel = T5ForConditionalGeneration.from_pretrained("./t5-small")\n' }).model;
  assert.equal(whole.totals.params, T5_SMALL);
  assert.equal(parts.totals.params, whole.totals.params);
  assert.equal(parts.totals.frozenParams, whole.totals.frozenParams);
  assert.equal(parts.totals.forwardFlops, whole.totals.forwardFlops);
  const options = { batch: 64, objective: 'throughput' as const, strategies: 'all' as const, optimizer: 'adam' as const, precision: 'bf16' as const };
  const [a, b] = [parts, whole].map((m) => planModel(m, cluster, options));
  assert.ok(a.feasible && b.feasible);
  assert.ok(Math.abs(a.plan.stepTimeMs - b.plan.stepTimeMs) <= 0.01 * b.plan.stepTimeMs, `${a.plan.stepTimeMs} vs ${b.plan.stepTimeMs} ms`);
});

test("a long source and a short answer: the decoder's cross-attention attends from the answer's 64 positions to the passage's 512", () => {
  // The passage's length is the script's example call's; the answer's the analysis's --seq-len.
  const { model, diagnostics } = read('t5_long_source.py', 'reader', { sequenceLength: 64 });
  assertReadWhole(model, diagnostics);
  assert.equal(model.totals.params, T5_SMALL + 512 * 2 + 2);
  assert.deepEqual(model.inputs.map((i) => [i.id, i.shape]), [['passage_ids', [512]], ['answer_ids', [64]]]);
  const cross = 't5.decoder.block.3.layer.1.EncDecAttention';
  assert.deepEqual(layer(model, `${cross}.q`).outputShape, [64, 512]);
  assert.deepEqual(layer(model, `${cross}.k`).outputShape, [512, 512]);
  assert.deepEqual(layer(model, `${cross}.v`).outputShape, [512, 512]);
  assert.deepEqual(layer(model, `${cross}.sdpa`).outputShape, [8, 64, 64]);
  // Each stack's relative position bias over its own positions.
  assert.deepEqual(layer(model, 't5.encoder.block.0.layer.0.SelfAttention.relative_attention_bias').outputShape, [512, 512, 8]);
  assert.deepEqual(layer(model, 't5.decoder.block.0.layer.0.SelfAttention.relative_attention_bias').outputShape, [64, 64, 8]);
  assert.deepEqual(layer(model, 'answer').outputShape, [64, 2]);
});

// bart-base (6 + 6 layers of 768, 12 heads, 3072, 1024 positions + BART's 2 offset rows, vocab 50,265): the shared
// table 50265·768; per stack positions 1026·768 and layernorm_embedding 2·768; an encoder layer self_attn 4·(768² +
// 768), fc1 768·3072 + 3072, fc2 3072·768 + 768, two LayerNorms 2·1536; a decoder layer adds encoder_attn 4·(768² +
// 768) and its LayerNorm. 139,420,416: BartModel's published count, and BartForConditionalGeneration's (tied head).
const BART_ENCODER_LAYER = 4 * (768 * 768 + 768) + (768 * 3072 + 3072) + (3072 * 768 + 768) + 2 * 1536;
const BART_DECODER_LAYER = BART_ENCODER_LAYER + 4 * (768 * 768 + 768) + 1536;
const BART_BASE = 50265 * 768 + 2 * (1026 * 768 + 1536) + 6 * BART_ENCODER_LAYER + 6 * BART_DECODER_LAYER;

test("BART's stacks called one by one, by keyword under BartForConditionalGeneration's `model` and positionally on BartModel", () => {
  assert.equal(BART_BASE, 139_420_416);
  const { model: summarizer, diagnostics } = read('bart_stackwise.py', 'summarizer');
  assertReadWhole(summarizer, diagnostics);
  assert.equal(summarizer.totals.params, BART_BASE);
  assert.deepEqual(layer(summarizer, 'bart.model.decoder.layers.2.encoder_attn.k_proj').inputs, ['bart.model.encoder.layers.5.final_layer_norm']);
  assert.deepEqual(layer(summarizer, 'bart.model.decoder.embed_tokens').inputs, ['decoder_input_ids']);
  assert.equal(layer(summarizer, 'bart.lm_head').weightKey, 'bart.model.shared');
  assert.deepEqual(layer(summarizer, 'bart.lm_head').inputs, ['bart.model.decoder.layers.5.final_layer_norm']);
  // `self.bart.decoder(target_ids, None, memory)`: BartDecoder.forward's input_ids, attention_mask, encoder_hidden_states.
  const { model: denoiser, diagnostics: denoiserSaid } = read('bart_stackwise.py', 'denoiser');
  assertReadWhole(denoiser, denoiserSaid);
  assert.equal(denoiser.totals.params, BART_BASE);
  assert.deepEqual(layer(denoiser, 'bart.decoder.embed_tokens').inputs, ['target_ids']);
  assert.deepEqual(layer(denoiser, 'bart.decoder.embed_positions').inputs, ['target_ids']);
  assert.deepEqual(layer(denoiser, 'bart.decoder.layers.0.encoder_attn.v_proj').inputs, ['bart.encoder.layers.5.final_layer_norm']);
});

test("a decoder called without the encoder's output is said, naming the tensor no argument feeds", () => {
  const { model, diagnostics } = read('bart_stackwise.py', 'unconditioned');
  const unread = diagnostics.find((d) => d.code === 'unread-hf-part');
  assert.equal(unread?.message, "bart.decoder (decoder of BartModel) takes 2 tensors from outside it, which WAP cannot match to the call's arguments: the encoder's output (the call's `encoder_hidden_states`) is not passed: it and the layers after it are missing");
  assert.equal(unread?.line, 38);
  assert.equal(model.completeness?.complete, false);
});

test('T5 inside a wrapper given labels and no decoder_input_ids decodes the labels, and its forward’s loss is built', () => {
  const { model, diagnostics } = read('t5_labels.py', 'model');
  // All of T5: both relative position biases too, which no layer of the graph reads but forward adds to the scores.
  assert.equal(model.totals.params, T5_SMALL);
  assert.ok(!diagnostics.some((d) => d.code === 'uncalled-modules' || d.code === 'lost-tensor'), said(diagnostics));
  assert.deepEqual(layer(model, 't5.decoder.embed_tokens').inputs, ['labels']);
  assert.deepEqual(model.inputs.map((i) => i.id), ['input_ids', 'labels']);
  // transformers computes the cross-entropy over the 32,128-token vocabulary there, as WAP's T5 graph does (t5.ts).
  assert.ok(!diagnostics.some((d) => d.code === 'hf-unbuilt-loss'), said(diagnostics));
  assert.deepEqual(layer(model, 't5.loss.log_softmax').outputShape, [model.inputs[1]!.shape[0], 32128], 'each label position');
  assert.notEqual(model.completeness?.complete, false);
});
