/**
 * A model written as a subclass of transformers' own model classes (DeepSpeedExamples' HelloDeepSpeed:
 * `class RobertaMLMModel(RobertaPreTrainedModel)`, with a `RobertaLMHead` subclass) is not read: WAP builds
 * transformers' models from their configs, not as base classes. Before, the file gave "no model found" with no reason
 * at all; now it names the classes and what to do instead.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { analyzeSource, initFrontends } from '../../src/frontends/index';

const file = join(__dirname, '..', 'fixtures', 'hello-deepspeed', 'train_bert_ds.py');

before(async () => {
  await initFrontends();
});

test('no model, and the file says which classes subclass a transformers model class and why they are not read', async () => {
  const r = await analyzeSource(file, readFileSync(file, 'utf8'), {});
  assert.equal(r.models.length, 0);
  const said = r.diagnostics.find((d) => d.code === 'unread-model-base');
  assert.equal(said?.severity, 'warning');
  assert.match(said?.message ?? '', /^RobertaLMHeadWithMaskedPredict subclasses transformers' RobertaLMHead; RobertaMLMModel subclasses transformers' RobertaPreTrainedModel: WAP builds transformers' models from their configs .* so their layers are not read/);
  assert.equal(said?.line, 11);
});

test('a file whose transformers model is built from its config says nothing of the kind', async () => {
  const source = 'from transformers import RobertaConfig, RobertaModel\nmodel = RobertaModel(RobertaConfig(hidden_size=256, num_hidden_layers=2, num_attention_heads=4, intermediate_size=512))\n';
  const r = await analyzeSource('m.py', source, {});
  assert.equal(r.models.length, 1);
  assert.ok(!r.diagnostics.some((d) => d.code === 'unread-model-base'));
});
