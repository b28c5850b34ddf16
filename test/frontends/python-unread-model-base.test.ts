/**
 * A model written as a subclass of transformers' own model classes or parts WAP does not build (`class MyHead(BartClassificationHead)`,
 * `class Tagger(BertForTokenClassification)`) is not read: WAP builds transformers' models from their configs, not
 * as base classes whose layers transformers' code builds. Before, the file gave "no model found" with no reason at
 * all; now it names the classes and what to do instead. PreTrainedModel itself builds no layers, so its subclasses
 * are read as nn.Modules, and subclasses of the parts WAP builds (RobertaLMHead, RobertaClassificationHead) as those
 * parts (python-hf-wrapped.test.ts, with DeepSpeedExamples' HelloDeepSpeed; python-hf-parts-calls.test.ts).
 */
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { analyzeSource, initFrontends } from '../../src/frontends/index';

before(async () => {
  await initFrontends();
});

test('no model, and the file says which classes subclass a transformers model class or part, and why they are not read', async () => {
  const source = `from transformers import BertForTokenClassification, RobertaConfig
from transformers.models.bart.modeling_bart import BartClassificationHead


class MaskedHead(BartClassificationHead):
    def forward(self, features, masked=None):
        return super().forward(features)


class Tagger(BertForTokenClassification):
    def forward(self, input_ids):
        return super().forward(input_ids=input_ids).logits
`;
  const r = await analyzeSource('heads.py', source, {});
  assert.equal(r.models.length, 0);
  const said = r.diagnostics.find((d) => d.code === 'unread-model-base');
  assert.equal(said?.severity, 'warning');
  assert.match(said?.message ?? '', /^MaskedHead subclasses transformers' BartClassificationHead; Tagger subclasses transformers' BertForTokenClassification: WAP builds transformers' models from their configs .* so their layers are not read/);
  assert.equal(said?.line, 5);
});

test('a file whose transformers model is built from its config says nothing of the kind', async () => {
  const source = 'from transformers import RobertaConfig, RobertaModel\nmodel = RobertaModel(RobertaConfig(hidden_size=256, num_hidden_layers=2, num_attention_heads=4, intermediate_size=512))\n';
  const r = await analyzeSource('m.py', source, {});
  assert.equal(r.models.length, 1);
  assert.ok(!r.diagnostics.some((d) => d.code === 'unread-model-base'));
});
