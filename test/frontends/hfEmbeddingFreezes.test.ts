/**
 * Freezing a Hugging Face model's embeddings through its methods
 * (frontends/python/transformersEmbeddings.ts): `get_input_embeddings()` and
 * `get_output_embeddings()` return the module transformers' own method
 * returns, so `requires_grad_(False)`, `….weight.requires_grad = False` and a
 * loop over its `parameters()` freeze exactly that table, and a model without
 * an output head keeps the warning instead of a guess.
 *
 * The counts are by hand from the configs in test/fixtures/huggingface:
 * - Llama-2-7b: 6,738,415,616 in all (huggingface.test.ts); embed_tokens and the untied lm_head are each
 *   V·h = 32,000 × 4,096 = 131,072,000; its LlamaModel (AutoModel) is the total less lm_head, 6,607,343,616.
 * - bert-base-uncased with two labels: BertModel 109,482,240 + classifier 768·2 + 2 = 109,483,778; the word
 *   embeddings 30,522 × 768 = 23,440,896.
 * - Qwen2-0.5B: 494,032,768 with the head tied to embed_tokens, 151,936 × 896 = 136,134,656 (one parameter).
 * - mt0-large: 1,229,581,312, its untied `shared` and lm_head each 250,112 × 1,024 = 256,114,688.
 * - GPT-2 small (GPT2Config() defaults): 124,439,808, its tied wte 50,257 × 768 = 38,597,376.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { analyzeModel } from '../../src/core/analyze';
import type { AnalyzedModel, Diagnostic } from '../../src/core/ir';
import { initFrontends, parseSource } from '../../src/frontends/index';

const fixtures = join(__dirname, '..', 'fixtures', 'huggingface');

before(() => initFrontends());

function read(load: string, tail: string): { model: AnalyzedModel; diagnostics: Diagnostic[] } {
  const source = `import torch\nimport transformers\nfrom transformers import AutoModel, AutoModelForCausalLM, AutoModelForSequenceClassification, AutoModelForSeq2SeqLM, GPT2Config, GPT2LMHeadModel\n\nmodel = ${load}\n${tail}`;
  const result = parseSource(join(fixtures, 'x.py'), source, {});
  const spec = result?.models.find((m) => m.name === 'model');
  assert.ok(spec, 'a model is read');
  const model = analyzeModel(spec, { sequenceLength: 512 });
  return { model, diagnostics: [...(result?.diagnostics ?? []), ...model.diagnostics] };
}

const LLAMA = 'AutoModelForCausalLM.from_pretrained("./llama-2-7b", torch_dtype=torch.bfloat16)';
const LLAMA_BASE = 'AutoModel.from_pretrained("./llama-2-7b")';
const BERT = 'AutoModelForSequenceClassification.from_pretrained("./bert-base-uncased", num_labels=2)';
const QWEN = 'AutoModelForCausalLM.from_pretrained("./qwen2-0.5b")';
const MT0 = 'AutoModelForSeq2SeqLM.from_pretrained("./mt0-large")';

const LLAMA_TOTAL = 6_738_415_616;
const LLAMA_TABLE = 32_000 * 4096;
const BERT_TOTAL = 109_482_240 + 768 * 2 + 2;
const BERT_WORDS = 30_522 * 768;
const QWEN_TOTAL = 494_032_768;
const QWEN_TABLE = 151_936 * 896;
const MT0_TOTAL = 1_229_581_312;
const MT0_TABLE = 250_112 * 1024;

const frozenWarnings = (diagnostics: Diagnostic[]): string[] => diagnostics.filter((d) => d.code === 'frozen-parameters').map((d) => d.message);

/** Trainable and frozen parameter counts, after checking that no freeze was left unattributed. */
function counts(load: string, tail: string): [number, number | undefined] {
  const { model, diagnostics } = read(load, tail);
  assert.deepEqual(frozenWarnings(diagnostics), [], tail);
  return [model.totals.params, model.totals.frozenParams];
}

const INPUT_FREEZES = [
  'model.get_input_embeddings().requires_grad_(False)',
  'model.get_input_embeddings().requires_grad_(requires_grad=False)',
  'model.get_input_embeddings().weight.requires_grad = False',
  'for p in model.get_input_embeddings().parameters():\n    p.requires_grad = False',
  'for name, p in model.get_input_embeddings().named_parameters():\n    p.requires_grad = False',
  'embeddings = model.get_input_embeddings()\nembeddings.requires_grad_(False)',
];

test('Llama-2-7b: every idiom on get_input_embeddings() freezes embed_tokens, 131,072,000 parameters, and says nothing', () => {
  assert.deepEqual(counts(LLAMA, ''), [LLAMA_TOTAL, undefined]);
  for (const tail of [...INPUT_FREEZES, 'model.model.get_input_embeddings().requires_grad_(False)', 'model.base_model.get_input_embeddings().requires_grad_(False)']) {
    assert.deepEqual(counts(LLAMA, tail), [LLAMA_TOTAL - LLAMA_TABLE, LLAMA_TABLE], tail);
  }
  const { model } = read(LLAMA, INPUT_FREEZES[0]);
  assert.equal(model.layers.find((l) => l.name === 'model.embed_tokens')?.frozen, true);
  assert.notEqual(model.layers.find((l) => l.name === 'lm_head')?.frozen, true);
});

test('Llama-2-7b: get_output_embeddings() is the untied lm_head; with the input embeddings both tables freeze', () => {
  for (const tail of ['model.get_output_embeddings().requires_grad_(False)', 'model.get_output_embeddings().weight.requires_grad = False', 'for p in model.get_output_embeddings().parameters():\n    p.requires_grad = False']) {
    assert.deepEqual(counts(LLAMA, tail), [LLAMA_TOTAL - LLAMA_TABLE, LLAMA_TABLE], tail);
    const { model } = read(LLAMA, tail);
    assert.equal(model.layers.find((l) => l.name === 'lm_head')?.frozen, true, tail);
    assert.notEqual(model.layers.find((l) => l.name === 'model.embed_tokens')?.frozen, true, tail);
  }
  const both = 'model.get_input_embeddings().requires_grad_(False)\nmodel.get_output_embeddings().requires_grad_(False)';
  assert.deepEqual(counts(LLAMA, both), [LLAMA_TOTAL - 2 * LLAMA_TABLE, 2 * LLAMA_TABLE]);
});

test('bert-base-uncased (BertForSequenceClassification): the word embeddings, 30,522 × 768, from the model or from model.bert', () => {
  assert.deepEqual(counts(BERT, ''), [BERT_TOTAL, undefined]);
  for (const tail of [...INPUT_FREEZES, 'model.bert.get_input_embeddings().requires_grad_(False)', 'model.base_model.get_input_embeddings().weight.requires_grad = False']) {
    assert.deepEqual(counts(BERT, tail), [BERT_TOTAL - BERT_WORDS, BERT_WORDS], tail);
  }
});

test('a model without an output head (a classifier, a base AutoModel) keeps the warning: nothing is guessed frozen', () => {
  for (const [load, total] of [[BERT, BERT_TOTAL], [LLAMA_BASE, LLAMA_TOTAL - LLAMA_TABLE]] as const) {
    for (const tail of ['model.get_output_embeddings().requires_grad_(False)', 'model.get_output_embeddings().weight.requires_grad = False']) {
      const { model, diagnostics } = read(load, tail);
      assert.deepEqual([model.totals.params, model.totals.frozenParams], [total, undefined], tail);
      assert.equal(frozenWarnings(diagnostics).length, 1, tail);
      assert.match(frozenWarnings(diagnostics)[0], /^This code freezes parameters \(`requires_grad(_\(False\)| = False)`\) that WAP cannot attribute to a module/);
    }
  }
  // A submodule transformers gives no such method, and the head asked of the base model, stay unattributed too.
  for (const tail of ['model.model.layers[0].get_input_embeddings().requires_grad_(False)', 'model.model.get_output_embeddings().requires_grad_(False)']) {
    const { model, diagnostics } = read(LLAMA, tail);
    assert.equal(model.totals.frozenParams, undefined, tail);
    assert.equal(frozenWarnings(diagnostics).length, 1, tail);
  }
  // The base LlamaModel's own input embeddings still resolve.
  assert.deepEqual(counts(LLAMA_BASE, 'model.get_input_embeddings().requires_grad_(False)'), [LLAMA_TOTAL - 2 * LLAMA_TABLE, LLAMA_TABLE]);
});

test('Qwen2-0.5B ties lm_head to embed_tokens: either method (or lm_head itself) freezes the one shared table, and both layers', () => {
  assert.deepEqual(counts(QWEN, ''), [QWEN_TOTAL, undefined]);
  const tails = [
    'model.get_output_embeddings().requires_grad_(False)',
    'model.get_output_embeddings().weight.requires_grad = False',
    'for p in model.get_output_embeddings().parameters():\n    p.requires_grad = False',
    'model.lm_head.requires_grad_(False)',
    'model.get_input_embeddings().requires_grad_(False)',
    'model.get_input_embeddings().requires_grad_(False)\nmodel.get_output_embeddings().requires_grad_(False)',
  ];
  for (const tail of tails) {
    assert.deepEqual(counts(QWEN, tail), [QWEN_TOTAL - QWEN_TABLE, QWEN_TABLE], tail);
    const { model } = read(QWEN, tail);
    assert.deepEqual(['model.embed_tokens', 'lm_head'].map((n) => model.layers.find((l) => l.name === n)?.frozen), [true, true], tail);
  }
});

test('GPT-2 (tied wte) and mt0-large (untied shared and lm_head): the tables transformers returns', () => {
  const gpt2 = 'GPT2LMHeadModel(GPT2Config())';
  assert.deepEqual(counts(gpt2, ''), [124_439_808, undefined]);
  for (const tail of ['model.get_input_embeddings().requires_grad_(False)', 'model.get_output_embeddings().requires_grad_(False)', 'model.transformer.get_input_embeddings().requires_grad_(False)']) {
    assert.deepEqual(counts(gpt2, tail), [124_439_808 - 50_257 * 768, 50_257 * 768], tail);
  }
  assert.deepEqual(counts(MT0, ''), [MT0_TOTAL, undefined]);
  assert.deepEqual(counts(MT0, 'model.get_input_embeddings().requires_grad_(False)'), [MT0_TOTAL - MT0_TABLE, MT0_TABLE]);
  const { model } = read(MT0, 'model.get_output_embeddings().requires_grad_(False)');
  assert.deepEqual([model.totals.params, model.totals.frozenParams], [MT0_TOTAL - MT0_TABLE, MT0_TABLE]);
  assert.deepEqual(['encoder.embed_tokens', 'decoder.embed_tokens', 'lm_head'].map((n) => model.layers.find((l) => l.name === n)?.frozen === true), [false, false, true]);
  assert.deepEqual(counts(MT0, 'model.get_input_embeddings().requires_grad_(False)\nmodel.get_output_embeddings().requires_grad_(False)'), [MT0_TOTAL - 2 * MT0_TABLE, 2 * MT0_TABLE]);
});

/**
 * mt0-large's encoder by hand: 24 blocks of self-attention 4 · 1,024 · (16 · 64) = 4,194,304, a gated FFN
 * 3 · 1,024 · 2,816 = 8,650,752 and two T5LayerNorms (1,024 each), the first block's relative bias 32 · 16 = 512, and
 * the final norm: 24 · 12,847,104 + 512 + 1,024 = 308,332,032. T5Stack(config, self.shared) registers the shared
 * table as the stack's embed_tokens, so torch's `model.encoder.parameters()` yields it too: 564,446,720 in all.
 */
const MT0_ENCODER = 24 * (4 * 1024 * 1024 + 3 * 1024 * 2816 + 2 * 1024) + 32 * 16 + 1024;

test('T5 stacks reach the shared table: get_encoder(), model.encoder and a stack\'s get_input_embeddings() freeze what torch freezes', () => {
  assert.equal(MT0_ENCODER, 308_332_032);
  for (const tail of ['model.get_encoder().requires_grad_(False)', 'for p in model.encoder.parameters():\n    p.requires_grad = False']) {
    assert.deepEqual(counts(MT0, tail), [MT0_TOTAL - MT0_ENCODER - MT0_TABLE, MT0_ENCODER + MT0_TABLE], tail);
  }
  for (const tail of ['model.encoder.get_input_embeddings().requires_grad_(False)', 'model.get_decoder().get_input_embeddings().requires_grad_(False)', 'model.shared.requires_grad_(False)', 'model.shared.weight.requires_grad = False']) {
    const { model } = read(MT0, tail);
    assert.deepEqual([model.totals.params, model.totals.frozenParams], [MT0_TOTAL - MT0_TABLE, MT0_TABLE], tail);
    // One table, used by both stacks: both lookups are frozen layers.
    assert.deepEqual(['encoder.embed_tokens', 'decoder.embed_tokens', 'lm_head'].map((n) => model.layers.find((l) => l.name === n)?.frozen === true), [true, true, false], tail);
  }
});
