/**
 * Dropout in the Hugging Face graphs. transformers' BERT, RoBERTa, GPT-2 and T5 configs train with dropout 0.1;
 * before, the graphs had none, so their masks and mask passes cost nothing. Checked against the modules
 * transformers 4.46 defines (modeling_bert.py's BertEmbeddings.dropout, BertSelfOutput.dropout,
 * BertOutput.dropout; modeling_gpt2.py's drop, attn.resid_dropout, mlp.dropout; modeling_t5.py's stack, layer and
 * DenseReluDense dropouts) and against Korthikanti et al.'s per-layer activation count (2022, §4.1, eq. 1).
 */
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { analyzeModel } from '../../src/core/analyze';
import type { AnalyzedLayer, AnalyzedModel } from '../../src/core/ir';
import { initPythonFrontend, parsePythonSource } from '../../src/frontends/python';
import { unfusedAttentionBytes } from '../../src/planner/cost/compute';
import { savedUnderKernel } from '../../src/planner/memory/index';

before(() => initPythonFrontend());

function build(src: string, seq = 128): AnalyzedModel {
  const r = parsePythonSource('/tmp/hf_dropout.py', src);
  const spec = r.models.find((m) => m.name === 'model');
  assert.ok(spec, JSON.stringify(r.diagnostics));
  return analyzeModel(spec, { inputShape: [seq] });
}

const bert = (cls: string, extra = '') =>
  build(`from transformers import BertConfig, ${cls}\ncfg = BertConfig(hidden_size=1024, num_hidden_layers=24, num_attention_heads=16, intermediate_size=4096${extra})\nmodel = ${cls}(cfg)\n`);
const dropouts = (m: AnalyzedModel) => m.layers.filter((l) => l.op === 'dropout');
const sdpas = (m: AnalyzedModel) => m.layers.filter((l) => l.op === 'sdpa');

test("BERT-large keeps transformers' dropouts: the embeddings', and two per layer at hidden_dropout_prob, the probabilities' in attention", () => {
  const m = bert('BertForPreTraining');
  const names = dropouts(m).map((l) => l.name);
  assert.equal(names.length, 1 + 2 * 24);
  assert.deepEqual(names.slice(0, 3), ['bert.embeddings.dropout', 'bert.encoder.layer.0.attention.output.dropout', 'bert.encoder.layer.0.output.dropout']);
  assert.ok(dropouts(m).every((l) => (l.attrs as { rate: number }).rate === 0.1 && l.outputShape?.join() === '128,1024'));
  assert.ok(sdpas(m).every((l) => (l.attrs as { dropout?: number }).dropout === 0.1));
  // Dropout has no parameters: the count is still torch's.
  assert.equal(bert('BertModel').totals.params, 335_141_888);
  const off = bert('BertModel', ', hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0');
  assert.equal(dropouts(off).length, 0, 'p = 0: ATen returns its input, no mask');
  assert.ok(sdpas(off).every((l) => (l.attrs as { dropout?: number }).dropout === 0));
  // The sequence classifier's dropout takes classifier_dropout, else hidden_dropout_prob.
  const cls = bert('BertForSequenceClassification', ', classifier_dropout=0.3');
  assert.equal((cls.layers.find((l) => l.name === 'dropout')?.attrs as { rate: number }).rate, 0.3);
});

test("a BERT layer saves Korthikanti's sbh·(34 + 5as/h) bytes at 16 bits: in fp32, 64 sbh of values + 2 sbh of masks + 8as²b + as²b", () => {
  const m = build('from transformers import BertConfig, BertModel\nmodel = BertModel(BertConfig(hidden_size=1024, num_hidden_layers=2, num_attention_heads=16, intermediate_size=4096))\n');
  const layer0 = m.layers.filter((l) => l.name.startsWith('encoder.layer.0.'));
  const s = 128, h = 1024, a = 16;
  const sum = (f: (l: AnalyzedLayer) => number | undefined) => layer0.reduce((t, l) => t + (f(l) ?? 0), 0);
  // The 34 is 16 values at 2 bytes (QKV input 1, Q and K 2, V 1, projection input 1, fc1 input 1, GELU input 4, fc2 input 4,
  // two LayerNorm inputs 2) and two 1-byte masks; the 5 is the softmax output and the dropped copy at 2 bytes, and a mask.
  assert.equal(sum((l) => l.workload.savedActivationBytes), 16 * 4 * s * h + 2 * s * h + 2 * 4 * a * s * s + a * s * s);
  assert.equal(sum((l) => l.workload.savedFixedBytes), 2 * s * h + a * s * s, 'the masks are one byte at any precision');
  // FlashAttention keeps neither copy of the probabilities nor the mask (it replays its RNG): Q, K, V and one fp32 log-sum-exp per row and head.
  const attention = layer0.find((l) => l.op === 'sdpa')!;
  assert.deepEqual(savedUnderKernel(attention, 'fused', 4), { saved: 3 * s * h * 4 + a * s * 4, fixed: a * s * 4 });
  assert.deepEqual(savedUnderKernel(attention, 'unfused', 4), { saved: 3 * s * h * 4 + a * s * s * (2 * 4 + 1), fixed: a * s * s });
});

test('eager attention without dropout makes 4 forward and 7 backward passes over the scores and keeps no mask; with it 6 and 9 plus the mask', () => {
  const gpt2 = (p: string) => build(`from transformers import GPT2Config, GPT2LMHeadModel\nmodel = GPT2LMHeadModel(GPT2Config(${p}))\n`, 256);
  const withDrop = sdpas(gpt2(''))[0];
  const without = sdpas(gpt2('attn_pdrop=0.0'))[0];
  const scores = 12 * 256 * 256;
  assert.deepEqual(unfusedAttentionBytes(withDrop, 2), { forward: scores * (6 * 2 + 1), backward: scores * (9 * 2 + 1) });
  assert.deepEqual(unfusedAttentionBytes(without, 2), { forward: scores * 4 * 2, backward: scores * 7 * 2 });
  // A source that does not state it (a hand-written sdpa) keeps the passes with dropout.
  const unstated = { ...withDrop, attrs: { causal: true } } as AnalyzedLayer;
  assert.deepEqual(unfusedAttentionBytes(unstated, 2), unfusedAttentionBytes(withDrop, 2));
  // GPT-2: the embeddings' drop, then attn.resid_dropout and mlp.dropout per block at resid_pdrop.
  const names = dropouts(gpt2('n_layer=2, resid_pdrop=0.2')).map((l) => `${l.name}:${(l.attrs as { rate: number }).rate}`);
  assert.deepEqual(names, ['transformer.drop:0.1', 'transformer.h.0.attn.resid_dropout:0.2', 'transformer.h.0.mlp.dropout:0.2', 'transformer.h.1.attn.resid_dropout:0.2', 'transformer.h.1.mlp.dropout:0.2']);
});

test("T5's dropout_rate drops the embeddings, each sublayer's output, the FF hidden state and each stack's output; Llama and ViT defaults keep none", () => {
  const t5 = build('from transformers import T5Config, T5EncoderModel\nmodel = T5EncoderModel(T5Config(num_layers=1))\n');
  assert.deepEqual(dropouts(t5).map((l) => l.name), [
    'encoder.dropout', 'encoder.block.0.layer.0.dropout', 'encoder.block.0.layer.1.DenseReluDense.dropout', 'encoder.block.0.layer.1.dropout', 'encoder.dropout',
  ]);
  assert.deepEqual(t5.layers.find((l) => l.name === 'encoder.block.0.layer.1.DenseReluDense.dropout')?.outputShape, [128, 2048], 'on d_ff');
  const llama = build('from transformers import LlamaConfig, LlamaForCausalLM\nmodel = LlamaForCausalLM(LlamaConfig(num_hidden_layers=1, hidden_size=256, intermediate_size=512, num_attention_heads=4))\n');
  assert.equal(dropouts(llama).length, 0);
  assert.ok(sdpas(llama).every((l) => (l.attrs as { dropout?: number }).dropout === 0));
});

test('a dropout probability that is not one is a diagnostic naming the field, not a silent 0', () => {
  const r = parsePythonSource('/tmp/hf_dropout.py', 'from transformers import BertConfig, BertModel\nmodel = BertModel(BertConfig(hidden_dropout_prob=1.5))\n');
  const message = [...r.diagnostics, ...r.models.flatMap((m) => m.diagnostics ?? [])].map((d) => d.message).join('\n');
  assert.match(message, /hidden_dropout_prob' must be a dropout probability between 0 and 1, got 1\.5/);
});
