/**
 * The encoder–decoder fine-tuning staples in WAP's Hugging Face catalogue: BART and mBART (modeling_bart.py,
 * modeling_mbart.py) for summarization and translation, Whisper (modeling_whisper.py) for speech recognition, built
 * from the checkpoints' config.json (test/fixtures/huggingface/<name>/config.json) and from code, with transformers'
 * module names, through the JSON and Python frontends and the core's analyzeModel.
 *
 * Parameter counts by hand (h = d_model, F = FFN width, V = vocab, P = max_position_embeddings; every Linear has a
 * bias except the tied LM head and Whisper's k_proj; a LayerNorm is 2h):
 * - BART, per encoder layer: self_attn 4(h² + h) + fc1 hF + F + fc2 Fh + h + two LayerNorms 4h; a decoder layer adds
 *   encoder_attn 4(h² + h) and its LayerNorm 2h; per stack embed_positions (P + 2)·h (BartLearnedPositionalEmbedding's
 *   offset of 2) and layernorm_embedding 2h; `model.shared` V·h once (both embed_tokens and lm_head are it);
 *   final_logits_bias is a buffer, no parameter.
 *   bart-large (h 1024, F 4096, 12 + 12 layers, V 50,265): encoder layer 4,198,400 + 4,198,400 + 4,195,328 + 4,096
 *   = 12,596,224; decoder layer 16,796,672; 51,471,360 + 12 × 12,596,224 + 12 × 16,796,672 + 2 × (1,050,624 + 2,048)
 *   = 406,291,456. bart-large-cnn's vocabulary has one row fewer (50,264): 406,290,432.
 *   bart-base (h 768, F 3072, 6 + 6, V 50,265): 38,603,520 + 6 × 7,087,872 + 6 × 9,451,776 + 2 × (787,968 + 1,536)
 *   = 139,420,416.
 *   BartForSequenceClassification at bart-large's shape (BartConfig's 3 labels): + classification_head.dense h² + h
 *   and out_proj 3h + 3 = 407,344,131; its last two decoder layers and the head 2 × 16,796,672 + 1,052,675 = 34,646,019.
 *   mBART-50 (bart-large's sizes, V 250,054, pre-LN stacks closed by encoder.layer_norm and decoder.layer_norm):
 *   256,055,296 + 151,154,688 + 201,560,064 + 2,105,344 + 4,096 = 610,879,488.
 * - Whisper (F = 4h, M mel bins, 1500 source and 448 target positions): conv1 3Mh + h, conv2 3h² + h, the frozen
 *   encoder embed_positions 1500h, per encoder layer 4h² + 3h + 2hF + F + h + 4h, encoder layer_norm 2h; decoder
 *   embed_tokens Vh (proj_out is it), embed_positions 448h, per layer the encoder's + encoder_attn 4h² + 3h + 2h,
 *   layer_norm 2h.
 *   whisper-small (h 768, 12 + 12, V 51,865, M 80): encoder 185,088 + 1,770,240 + 1,152,000 + 12 × 7,087,104 + 1,536
 *   = 88,154,112; decoder 39,832,320 + 344,064 + 12 × 9,450,240 + 1,536 = 153,580,800; 241,734,912, of which
 *   240,582,912 train. whisper-large-v3 (h 1280, 32 + 32, V 51,866, M 128): 636,968,960 + 906,521,600 = 1,543,490,560.
 *
 * Published totals the builds match exactly: bart-base 139,420,416 and bart-large 406,291,456 (AutoModel counts printed
 * in public code), bart-large-cnn 406,290,432 (`sum(p.numel() …)` on AutoModelForSeq2SeqLM.from_pretrained in a public
 * notebook; the model card's 406M), bart-large-mnli 407,344,131 with 34,646,019 trained in its last two decoder blocks
 * and head, mbart-large-50 610,879,488; whisper-tiny 37,760,640, base 72,593,920, small 241,734,912, medium
 * 763,857,920, large-v3 1,543,490,560 (WhisperForConditionalGeneration counts in public benchmark code and training
 * logs; whisper-small's logs also print "Trainable params: 240,582,912", its encoder's 88,154,112 and decoder's
 * 153,580,800, and 127,986,432 trained with the decoder frozen but the encoder and proj_out trained). The Whisper
 * paper's Table 1 (39M, 74M, 244M, 769M, 1550M) names nominal sizes these round near, not counts.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { analyzeModel } from '../../src/core/analyze';
import type { AnalyzedModel, Diagnostic } from '../../src/core/ir';
import { initFrontends } from '../../src/frontends/index';
import { planModel, resolveCluster } from '../../src/planner/index';
import { HF_FIXTURES, hfConfigModel, hfScriptModel, layerNamed } from './hfFixtures';

const fixtures = HF_FIXTURES;

before(() => initFrontends());

/** A checkpoint's config.json opened directly, read at its own input sizes (Whisper's features are fixed). */
function configJson(dir: string): AnalyzedModel {
  return hfConfigModel(dir);
}

/** A fine-tuning script next to the fixtures: the model it loads, analysed, and every diagnostic. */
function script(body: string): { model: AnalyzedModel; diagnostics: Diagnostic[] } {
  return hfScriptModel('seq2seq.py', body);
}

const layer = layerNamed;

/** Every parameter, trained or frozen, as `model.num_parameters()` counts them. */
const allParams = (m: AnalyzedModel): number => m.totals.params + (m.totals.frozenParams ?? 0);

/** Layer names and their parameter counts: two reads of one model build the same graph. */
const signature = (m: AnalyzedModel): string[] => m.layers.map((l) => `${l.name}:${l.op}:${l.workload.params}:${l.workload.frozenParams ?? 0}`);

const BART_LARGE_CNN = 406_290_432;
const BART_BASE = 139_420_416;
const WHISPER_SMALL = 241_734_912;
const WHISPER_SMALL_ENCODER_POSITIONS = 1500 * 768;

test("bart-large-cnn and bart-base from their config.json: transformers' counts, one shared table, post-LN layers, the buffer bias and the loss", () => {
  const cnn = configJson('bart-large-cnn');
  const base = configJson('bart-base');
  assert.equal(cnn.totals.params, BART_LARGE_CNN);
  assert.equal(base.totals.params, BART_BASE);
  assert.equal(cnn.completeness?.complete, true);
  // The hand count, term by term, for bart-large-cnn.
  const encoderLayer = 4 * (1024 * 1024 + 1024) + (1024 * 4096 + 4096) + (4096 * 1024 + 1024) + 2 * 2048;
  const decoderLayer = encoderLayer + 4 * (1024 * 1024 + 1024) + 2048;
  assert.equal(50_264 * 1024 + 12 * encoderLayer + 12 * decoderLayer + 2 * (1026 * 1024 + 2048), BART_LARGE_CNN);

  // model.shared is one parameter: each stack's embed_tokens and lm_head share it.
  assert.equal(layer(cnn, 'model.encoder.embed_tokens').workload.params, 50_264 * 1024);
  for (const tied of ['model.decoder.embed_tokens', 'lm_head']) {
    assert.equal(layer(cnn, tied).workload.params, 0, tied);
    assert.equal(layer(cnn, tied).weightOwner, 'model.encoder.embed_tokens', tied);
  }
  // max_position_embeddings + 2 rows, looked up at input_ids' positions.
  const positions = layer(cnn, 'model.encoder.embed_positions');
  assert.deepEqual([positions.attrs.numEmbeddings, positions.inputs], [1026, ['input_ids']]);
  // final_logits_bias is added to the logits but is a buffer: no parameters, one add per logit.
  const bias = layer(cnn, 'final_logits_bias');
  assert.deepEqual([bias.op, bias.inputs, bias.outputShape, bias.workload.params], ['add', ['lm_head'], [1024, 50_264], 0]);
  assert.deepEqual(layer(cnn, 'loss.log_softmax').inputs, ['final_logits_bias']);
  assert.deepEqual(cnn.outputs, ['loss']);

  // Post-LN: the residual add comes first, its LayerNorm after; q/k/v/out_proj all carry a bias.
  const p = 'model.encoder.layers.0';
  assert.deepEqual(layer(cnn, `${p}.self_attn_layer_norm`).inputs, [`${p}.self_attn_residual`]);
  assert.deepEqual(layer(cnn, `${p}.self_attn.q_proj`).inputs, ['model.encoder.embeddings_dropout']);
  assert.deepEqual(layer(cnn, `${p}.final_layer_norm`).inputs, [`${p}.ffn_residual`]);
  for (const proj of ['q_proj', 'k_proj', 'v_proj', 'out_proj']) assert.equal(layer(cnn, `${p}.self_attn.${proj}`).workload.params, 1024 * 1024 + 1024, proj);
  assert.equal(layer(cnn, `${p}.fc1`).workload.params, 1024 * 4096 + 4096);
  // The decoder's cross-attention reads the encoder's last layer for its keys and values.
  assert.deepEqual(layer(cnn, 'model.decoder.layers.0.encoder_attn.k_proj').inputs, ['model.encoder.layers.11.final_layer_norm']);
  assert.equal(layer(cnn, 'model.decoder.layers.0.self_attn.sdpa').attrs.causal, true);
  assert.equal(layer(cnn, 'model.encoder.layers.0.self_attn.sdpa').attrs.causal, false);
  // BART ends its stacks without a LayerNorm (mBART has one).
  assert.ok(!cnn.layers.some((l) => l.name === 'model.encoder.layer_norm' || l.name === 'model.decoder.layer_norm'));

  // The decoder reads decoder_input_ids at the configured length, as T5's does.
  assert.deepEqual(cnn.inputs.map((i) => [i.id, i.shape]), [['input_ids', [1024]], ['decoder_input_ids', [1024]]]);
  // BartModel (bart-base's architectures) feeds its decoder shift_tokens_right(input_ids): one input.
  assert.deepEqual(base.inputs.map((i) => i.id), ['input_ids']);
  // BartModel's modules have no `model.` prefix; it returns the decoder's last state.
  assert.deepEqual(base.outputs, ['decoder.layers.5.final_layer_norm']);

  // bart-base's dropouts: 0.1 on the embeddings and each sublayer's output, 0.1 after the activation, 0.1 on the
  // probabilities; bart-large-cnn's activation and attention dropouts are BartConfig's 0.
  const rates = (m: AnalyzedModel, suffix: string) => new Set(m.layers.filter((l) => l.op === 'dropout' && l.name.endsWith(suffix)).map((l) => l.attrs.rate));
  assert.deepEqual([...rates(base, 'activation_dropout')], [0.1]);
  assert.equal(rates(cnn, 'activation_dropout').size, 0);
  assert.deepEqual([...rates(cnn, 'ffn_dropout')], [0.1]);
  assert.equal(base.layers.filter((l) => l.op === 'dropout').length, 2 + 6 * 3 + 6 * 4);
  assert.ok(base.layers.filter((l) => l.op === 'sdpa').every((l) => l.attrs.dropout === 0.1));
});

test("BartConfig() is bart-large: 406,291,456 in BartModel and BartForConditionalGeneration; BartForSequenceClassification is bart-large-mnli's 407,344,131", () => {
  const build = (cls: string, config = 'BartConfig()') => script(`from transformers import BartConfig, ${cls}\nmodel = ${cls}(${config})\n`).model;
  assert.equal(build('BartModel').totals.params, 406_291_456);
  assert.equal(build('BartForConditionalGeneration').totals.params, 406_291_456, 'the LM head is the shared table');
  const mnli = build('BartForSequenceClassification');
  assert.equal(mnli.totals.params, 407_344_131);
  // The eos token's decoder state → dense → tanh → out_proj, 3 labels by BartConfig's default.
  assert.deepEqual(layer(mnli, 'classification_head.dense').inputShapes, [[1, 1024]]);
  assert.deepEqual(layer(mnli, 'classification_head.out_proj').outputShape, [1, 3]);
  assert.deepEqual(mnli.outputs, ['classification_head.out_proj']);
  // An untied head is a table of its own.
  assert.equal(build('BartForConditionalGeneration', 'BartConfig(tie_word_embeddings=False)').totals.params, 406_291_456 + 50_265 * 1024);

  // The published fine-tune of bart-large-mnli's last two decoder blocks and its head: 34,646,019 of 407,344,131.
  const { model, diagnostics } = script(
    'from transformers import BartConfig, BartForSequenceClassification\nmodel = BartForSequenceClassification(BartConfig())\n' +
      'for p in model.parameters():\n    p.requires_grad = False\nfor layer in model.model.decoder.layers[-2:]:\n    for p in layer.parameters():\n        p.requires_grad = True\n' +
      'for p in model.classification_head.parameters():\n    p.requires_grad = True\n',
  );
  assert.deepEqual([model.totals.params, allParams(model)], [34_646_019, 407_344_131]);
  assert.ok(!diagnostics.some((d) => d.code === 'frozen-parameters'), diagnostics.map((d) => d.message).join('\n'));
});

test("mBART-50 from MBartConfig: pre-LN layers, √d_model-scaled embeddings and each stack's closing layer_norm; 610,879,488", () => {
  const { model, diagnostics } = script('from transformers import MBartConfig, MBartForConditionalGeneration\nmodel = MBartForConditionalGeneration(MBartConfig(vocab_size=250054, scale_embedding=True))\n');
  assert.equal(model.totals.params, 610_879_488);
  assert.ok(!diagnostics.some((d) => d.code === 'hf-unsupported'));
  const p = 'model.encoder.layers.0';
  // Pre-LN: the LayerNorm reads the residual stream and feeds the projections; the add closes the sublayer.
  assert.deepEqual(layer(model, `${p}.self_attn.q_proj`).inputs, [`${p}.self_attn_layer_norm`]);
  assert.deepEqual(layer(model, `${p}.self_attn_layer_norm`).inputs, ['model.encoder.embeddings_dropout']);
  assert.deepEqual(layer(model, `${p}.final_layer_norm`).inputs, [`${p}.self_attn_residual`]);
  assert.deepEqual(layer(model, 'model.encoder.embed_scale').inputs, ['model.encoder.embed_tokens']);
  assert.deepEqual(layer(model, 'model.encoder.layer_norm').inputs, ['model.encoder.layers.11.ffn_residual']);
  assert.equal(layer(model, 'model.decoder.layer_norm').workload.params, 2 * 1024);
  // BART's layers are post-LN and unscaled by default: its graph has neither.
  const bart = script('from transformers import BartConfig, BartForConditionalGeneration\nmodel = BartForConditionalGeneration(BartConfig(vocab_size=250054))\n').model;
  assert.equal(model.totals.params - bart.totals.params, 2 * 2 * 1024);
  assert.ok(!bart.layers.some((l) => l.name.endsWith('embed_scale')));
});

test("whisper-small from its config.json: 241,734,912 parameters, 1500 of them rows of frozen sinusoids, conv2 halving 3000 frames to 1500", () => {
  const m = configJson('whisper-small');
  assert.equal(allParams(m), WHISPER_SMALL);
  assert.deepEqual([m.totals.params, m.totals.frozenParams], [WHISPER_SMALL - WHISPER_SMALL_ENCODER_POSITIONS, WHISPER_SMALL_ENCODER_POSITIONS]);
  assert.equal(m.completeness?.complete, true);
  const encoder = m.layers.filter((l) => l.name.startsWith('model.encoder.')).reduce((t, l) => t + l.workload.params + (l.workload.frozenParams ?? 0), 0);
  assert.deepEqual([encoder, WHISPER_SMALL - encoder], [88_154_112, 153_580_800]);

  // input_features [80 mel bins, 3000 frames]: conv1 keeps the frames, conv2 (stride 2) halves them.
  assert.deepEqual(m.inputs.map((i) => [i.id, i.shape, i.dtype]), [['input_features', [80, 3000], 'float'], ['decoder_input_ids', [448], 'int']]);
  assert.match(m.diagnostics.find((d) => d.code === 'assumed-input' && d.message.includes('input_features'))?.message ?? '', /num_mel_bins \(80\) by max_source_positions · 2 \(3000\) frames/);
  // --input sizes the first input only: the decoder's tokens are offered --seq-len, never a flag that would resize the features.
  const decoderNote = m.diagnostics.find((d) => d.code === 'assumed-input' && d.message.includes('decoder_input_ids'))?.message ?? '';
  assert.match(decoderNote, /Override with `--seq-len T` or state the shape in the model code\.$/);
  assert.doesNotMatch(decoderNote, /--input/);
  const conv1 = layer(m, 'model.encoder.conv1');
  const conv2 = layer(m, 'model.encoder.conv2');
  assert.deepEqual([conv1.outputShape, conv1.workload.params], [[768, 3000], 3 * 80 * 768 + 768]);
  assert.deepEqual([conv2.outputShape, conv2.attrs.stride, conv2.workload.params], [[768, 1500], [2], 3 * 768 * 768 + 768]);
  assert.equal(layer(m, 'model.encoder.conv2_gelu').attrs.fn, 'gelu');
  // embed_positions is read whole and added; requires_grad_(False) leaves it frozen but counted.
  const table = layer(m, 'model.encoder.embed_positions.weight');
  assert.deepEqual([table.op, table.frozen, table.workload.frozenParams, table.outputShape], ['parameter', true, WHISPER_SMALL_ENCODER_POSITIONS, [1500, 768]]);
  assert.deepEqual(layer(m, 'model.encoder.embeddings').inputs, ['model.encoder.permute', table.id]);

  // Pre-LN layers; k_proj has no bias, q/v/out_proj do.
  const p = 'model.encoder.layers.0';
  assert.deepEqual(layer(m, `${p}.self_attn_layer_norm`).inputs, ['model.encoder.embeddings']);
  assert.deepEqual([layer(m, `${p}.self_attn.k_proj`).attrs.bias, layer(m, `${p}.self_attn.k_proj`).workload.params], [false, 768 * 768]);
  for (const proj of ['q_proj', 'v_proj', 'out_proj']) assert.equal(layer(m, `${p}.self_attn.${proj}`).workload.params, 768 * 768 + 768, proj);
  assert.deepEqual(layer(m, `${p}.self_attn.sdpa`).outputShape, [12, 1500, 64]);
  // The decoder: 448 tokens attend causally to themselves and across to the 1500 encoder positions.
  const cross = 'model.decoder.layers.0.encoder_attn';
  assert.deepEqual(layer(m, `${cross}.k_proj`).inputs, ['model.encoder.layer_norm']);
  assert.deepEqual(layer(m, `${cross}.k_transpose`).outputShape, [12, 1500, 64]);
  assert.deepEqual([layer(m, `${cross}.sdpa`).outputShape, layer(m, `${cross}.sdpa`).attrs.causal], [[12, 448, 64], false]);
  assert.equal(layer(m, 'model.decoder.layers.0.self_attn.sdpa').attrs.causal, true);
  assert.equal(layer(m, 'model.decoder.embed_positions').attrs.numEmbeddings, 448);
  // proj_out is the decoder's embed_tokens; the loss is on its logits.
  const head = layer(m, 'proj_out');
  assert.deepEqual([head.weightOwner, head.workload.params, head.outputShape], ['model.decoder.embed_tokens', 0, [448, 51_865]]);
  assert.deepEqual(layer(m, 'loss.log_softmax').inputs, ['proj_out']);
  assert.equal(m.layers.filter((l) => l.op === 'dropout').length, 0, "the checkpoint's dropouts are 0");
});

test("whisper-large-v3 (128 mel bins) is 1,543,490,560; WhisperConfig sized as tiny, base and medium gives their published counts", () => {
  const large = configJson('whisper-large-v3');
  assert.equal(allParams(large), 1_543_490_560);
  assert.equal(large.totals.frozenParams, 1500 * 1280);
  assert.deepEqual(layer(large, 'model.encoder.conv1').inputShapes, [[128, 3000]]);
  const sized = (kwargs: string) => allParams(script(`from transformers import WhisperConfig, WhisperForConditionalGeneration\nmodel = WhisperForConditionalGeneration(WhisperConfig(${kwargs}))\n`).model);
  const shape = (h: number, layers: number, heads: number) =>
    `d_model=${h}, encoder_layers=${layers}, decoder_layers=${layers}, encoder_attention_heads=${heads}, decoder_attention_heads=${heads}, encoder_ffn_dim=${4 * h}, decoder_ffn_dim=${4 * h}`;
  // WhisperConfig() is whisper-tiny.
  assert.equal(sized(''), 37_760_640);
  assert.equal(sized(shape(512, 6, 8)), 72_593_920);
  assert.equal(sized(shape(1024, 24, 16)), 763_857_920);
});

test('scripts build the same models as the config.json: AutoModelForSeq2SeqLM and BartForConditionalGeneration, WhisperForConditionalGeneration and AutoModelForSpeechSeq2Seq', () => {
  const cnn = configJson('bart-large-cnn');
  const whisper = configJson('whisper-small');
  const cases: Array<[string, AnalyzedModel]> = [
    ['from transformers import AutoModelForSeq2SeqLM\nmodel = AutoModelForSeq2SeqLM.from_pretrained("./bart-large-cnn")\n', cnn],
    ['from transformers import BartForConditionalGeneration\nmodel = BartForConditionalGeneration.from_pretrained("./bart-large-cnn")\n', cnn],
    ['from transformers import WhisperForConditionalGeneration\nmodel = WhisperForConditionalGeneration.from_pretrained("./whisper-small")\n', whisper],
    ['from transformers import AutoModelForSpeechSeq2Seq\nmodel = AutoModelForSpeechSeq2Seq.from_pretrained("./whisper-small")\n', whisper],
  ];
  for (const [body, expected] of cases) {
    const { model, diagnostics } = script(body);
    assert.deepEqual(signature(model), signature(expected), body);
    assert.deepEqual(model.inputs.map((i) => [i.id, i.shape]), expected.inputs.map((i) => [i.id, i.shape]), body);
    for (const code of ['hf-unsupported', 'hf-unknown-architecture', 'hf-config-mismatch']) assert.ok(!diagnostics.some((d) => d.code === code), `${code} in\n${body}`);
  }
});

test("freezing Whisper by module path: the published encoder-plus-proj_out fine-tune trains 127,986,432, the encoder's frozen sinusoids included", () => {
  const load = 'from transformers import WhisperForConditionalGeneration\nmodel = WhisperForConditionalGeneration.from_pretrained("./whisper-small")\n';
  // requires_grad_(True) on the encoder turns its position table back on; proj_out is the decoder's embed_tokens.
  const { model } = script(`${load}model.model.decoder.requires_grad_(False)\nmodel.model.encoder.requires_grad_(True)\nmodel.proj_out.requires_grad_(True)\n`);
  assert.deepEqual([model.totals.params, allParams(model)], [88_154_112 + 51_865 * 768, WHISPER_SMALL]);
  assert.equal(model.totals.params, 127_986_432);
  // Decoder-only fine-tuning: the encoder frozen, 153,580,800 trained.
  assert.equal(script(`${load}model.model.encoder.requires_grad_(False)\n`).model.totals.params, 153_580_800);
});

test("plans on 'a100x8': whisper-small and bart-large-cnn fit, with no catalogue gap said", () => {
  for (const model of [configJson('whisper-small'), configJson('bart-large-cnn')]) {
    assert.ok(!model.diagnostics.some((d) => d.code === 'hf-unsupported'), model.name);
    const outcome = planModel(model, resolveCluster('a100x8'), { batch: 64, objective: 'throughput', strategies: 'all', optimizer: 'adam', precision: 'bf16' });
    assert.ok(outcome.feasible, outcome.feasible ? '' : `${model.name}: ${outcome.reason}`);
  }
});

test('layerdrop is said, and a config the layout cannot divide is an unsupported model, not a wrong one', () => {
  const dropped = script('from transformers import BartConfig, BartForConditionalGeneration\nmodel = BartForConditionalGeneration(BartConfig(encoder_layerdrop=0.1, encoder_layers=2, decoder_layers=2))\n');
  assert.match(dropped.diagnostics.find((d) => d.code === 'hf-layerdrop')?.message ?? '', /^bart: encoder_layerdrop 0\.1 skips layers at random in training; WAP prices every layer/);
  const uneven = script('from transformers import WhisperConfig, WhisperForConditionalGeneration\nmodel = WhisperForConditionalGeneration(WhisperConfig(d_model=100, encoder_attention_heads=6))\n');
  assert.match(uneven.diagnostics.find((d) => d.code === 'hf-unsupported')?.message ?? '', /d_model 100 is not divisible by encoder_attention_heads 6/);
});
