/**
 * Freezing part of a Hugging Face model, as fine-tuning scripts do
 * (frontends/python/transformersModules.ts, frontends/freezing/freezeSteps.ts):
 * a submodule reached by attribute (`model.bert`, `model.base_model`,
 * `model.model.layers[:28]`) or parameters chosen by name. WAP builds the model
 * from its config.json (test/fixtures/huggingface: bert-base-uncased's and
 * Llama-2-7b's as published) with transformers' module names, so the counts
 * below are transformers' own: bert-base-uncased's BertModel has 109,482,240
 * parameters, one encoder layer 7,087,872, the embeddings 23,837,184, the pooler
 * 590,592, a two-label classifier 1,538; a Llama-2-7b decoder layer has
 * 202,383,360, its LM head 131,072,000, of 6,738,415,616.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { analyzeModel } from '../../src/core/analyze';
import type { AnalyzedModel, Diagnostic } from '../../src/core/ir';
import { initFrontends, parseSource } from '../../src/frontends/index';
import { planModel, resolveCluster } from '../../src/planner/index';

const fixtures = join(__dirname, '..', 'fixtures', 'huggingface');

before(() => initFrontends());

const BERT = `import torch
from transformers import AutoModelForSequenceClassification

model = AutoModelForSequenceClassification.from_pretrained("./bert-base-uncased", num_labels=2)
`;

const LLAMA = `import torch
from transformers import AutoModelForCausalLM

model = AutoModelForCausalLM.from_pretrained("./llama-2-7b", torch_dtype=torch.bfloat16)
`;

function read(source: string): { model: AnalyzedModel; diagnostics: Diagnostic[] } {
  const result = parseSource(join(fixtures, 'finetune_script.py'), source, {});
  const spec = result?.models.find((m) => m.name === 'model');
  assert.ok(spec, 'a model is read');
  const model = analyzeModel(spec, { sequenceLength: 128 });
  return { model, diagnostics: [...(result?.diagnostics ?? []), ...model.diagnostics] };
}

const BERT_BODY = 109_482_240;
const BERT_LAYER = 7_087_872;
const CLASSIFIER = 768 * 2 + 2;

test('bert-base-uncased, frozen encoder: model.bert, model.base_model and a name filter freeze what transformers would', () => {
  const full = read(BERT).model;
  assert.deepEqual([full.totals.params, full.totals.frozenParams], [BERT_BODY + CLASSIFIER, undefined]);
  for (const tail of ['for param in model.bert.parameters():\n    param.requires_grad = False\n', 'model.base_model.requires_grad_(False)\n', 'model.requires_grad_(False)\nmodel.classifier.requires_grad_(True)\n']) {
    const { model, diagnostics } = read(BERT + tail);
    assert.deepEqual([model.totals.params, model.totals.frozenParams], [CLASSIFIER, BERT_BODY], tail);
    assert.ok(!diagnostics.some((d) => d.code === 'frozen-parameters'), diagnostics.map((d) => d.message).join('\n'));
    // Nothing before the classifier trains: the encoder runs no backward.
    assert.equal(model.layers.find((l) => l.name === 'bert.encoder.layer.11.output.dense')?.workload.backwardFlops, 0, tail);
  }
  const byName = read(`${BERT}for name, param in model.named_parameters():
    if not any(k in name for k in ("classifier", "pooler", "encoder.layer.11.")):
        param.requires_grad = False
`).model;
  assert.equal(byName.totals.params, CLASSIFIER + 590_592 + BERT_LAYER);
});

test('bert-base-uncased: the embeddings and the first 8 encoder layers frozen through indexing and slicing', () => {
  const { model } = read(`${BERT}model.bert.embeddings.requires_grad_(False)
for layer in model.bert.encoder.layer[:8]:
    for p in layer.parameters():
        p.requires_grad = False
model.bert.encoder.layer[-1].requires_grad_(False)
`);
  assert.equal(model.totals.frozenParams, 23_837_184 + 9 * BERT_LAYER);
  // Layers 8-10 train, so the backward runs down to layer 8 and no further.
  assert.ok(model.layers.find((l) => l.name === 'bert.encoder.layer.8.attention.self.query')!.workload.backwardFlops > 0);
  assert.equal(model.layers.find((l) => l.name === 'bert.encoder.layer.7.output.dense')!.workload.backwardFlops, 0);
});

test('Llama-2-7b with only the last 4 decoder layers, the final norm and the LM head trained: a faster step and less optimizer state than the full fine-tune', () => {
  const tail = `model.model.embed_tokens.requires_grad_(False)
for layer in model.model.layers[:28]:
    for p in layer.parameters():
        p.requires_grad = False
`;
  const partial = read(LLAMA + tail).model;
  assert.deepEqual([partial.totals.params, partial.totals.frozenParams], [4 * 202_383_360 + 4096 + 131_072_000, 6_738_415_616 - (4 * 202_383_360 + 4096 + 131_072_000)]);
  const cluster = resolveCluster('a100x8');
  const options = { batch: 64, objective: 'throughput' as const, strategies: 'all' as const, optimizer: 'adam' as const, precision: 'bf16' as const };
  const [fast, slow] = [planModel(partial, cluster, options), planModel(read(LLAMA).model, cluster, options)];
  assert.ok(fast.feasible && slow.feasible);
  assert.ok(fast.plan.stepTimeMs < 0.8 * slow.plan.stepTimeMs, `last 4 layers ${fast.plan.stepTimeMs} ms vs full ${slow.plan.stepTimeMs} ms`);
  assert.ok(fast.plan.setup!.memoryPerGpu.optimizer < 0.2 * slow.plan.setup!.memoryPerGpu.optimizer);
});

test('PEFT methods WAP does not model still freeze the Hugging Face base model they wrap (it was planned trained before)', () => {
  const { model, diagnostics } = read(`${LLAMA}from peft import PromptTuningConfig, get_peft_model
model = get_peft_model(model, PromptTuningConfig(task_type="CAUSAL_LM", num_virtual_tokens=20))
`);
  assert.deepEqual([model.totals.params, model.totals.frozenParams], [0, 6_738_415_616]);
  assert.ok(diagnostics.some((d) => d.code === 'peft-adapters'));
});

test('a BitFit-style name filter splits layers: they are planned trained and the plan says so; an unknown attribute stays unattributed', () => {
  const { model, diagnostics } = read(`${BERT}for name, param in model.named_parameters():
    if "bias" not in name:
        param.requires_grad = False
`);
  // Only the word, position and token-type embeddings (no bias) freeze whole.
  assert.equal(model.totals.frozenParams, (30522 + 512 + 2) * 768);
  const warning = diagnostics.find((d) => d.code === 'frozen-parameters');
  assert.match(warning?.message ?? '', /^This code freezes part of \d+ layers \(e\.g\. `bert\.embeddings\.LayerNorm\.weight` frozen, `bert\.embeddings\.LayerNorm\.bias` trained\)/);
  const plan = planModel(model, resolveCluster('a100x8'), { batch: 32, objective: 'throughput', strategies: 'dp', optimizer: 'adam' });
  assert.ok(plan.diagnostics.some((d) => d.message === warning!.message));
  const lost = read(`${BERT}for p in model.roberta.parameters():\n    p.requires_grad = False\n`);
  assert.equal(lost.model.totals.frozenParams, undefined);
  assert.ok(lost.diagnostics.some((d) => d.code === 'frozen-parameters' && /cannot attribute to a module/.test(d.message)));
});

test("one parameter of a Hugging Face layer: the word embeddings' weight freezes the table; a LayerNorm's weight alone splits it, said", () => {
  const { model, diagnostics } = read(`${BERT}model.bert.embeddings.word_embeddings.weight.requires_grad = False
model.bert.embeddings.LayerNorm.weight.requires_grad_(False)
`);
  assert.equal(model.totals.frozenParams, 30522 * 768);
  const warning = diagnostics.find((d) => d.code === 'frozen-parameters');
  assert.match(warning?.message ?? '', /^This code freezes part of 1 layer \(e\.g\. `bert\.embeddings\.LayerNorm\.weight` frozen, `bert\.embeddings\.LayerNorm\.bias` trained\)/);
  assert.ok(!diagnostics.some((d) => /cannot attribute/.test(d.message)), diagnostics.map((d) => d.message).join('\n'));
});
