/**
 * Loss functions are read as the kernels they run on each sample's prediction
 * (losses.ts), not as unknown layers that made a LightningModule's plan
 * "incomplete". The real-file case is the repository's Lightning example,
 * whose LitAlexNet holds AlexNet and an nn.CrossEntropyLoss.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { analyzeSource } from '../../src/frontends/index';
import { initPythonFrontend } from '../../src/frontends/python';
import { analyzePythonModel, layerNamed } from './pythonModels';
import { toTrialSpec } from '../../src/profiler/trialSpecs';

before(() => initPythonFrontend());

const root = join(__dirname, '..', '..');

test('the Lightning example: read from its training_step, its nn.CrossEntropyLoss is log_softmax over the classes and the pick, and self.log computes nothing', async () => {
  const dir = join(root, 'examples', 'pytorch');
  const file = join(dir, 'train_lightning.py');
  // `from alexnet import AlexNet`: the sibling module, found as the CLI and the server find it.
  const r = await analyzeSource(file, readFileSync(file, 'utf8'), {}, { workspaceFolders: [dir] });
  const m = r.models.find((x) => x.name === 'LitAlexNet')!;
  assert.ok(m, r.models.map((x) => x.name).join(', '));
  assert.equal(m.completeness?.complete ?? true, true, JSON.stringify(m.completeness));
  const said = [...r.diagnostics, ...m.diagnostics].map((d) => d.message);
  assert.ok(!said.some((m) => /CrossEntropyLoss|self\.log/.test(m)), said.join('\n'));
  assert.ok(said.includes('LitAlexNet has no forward: read from training_step, with its batch as (input, target)'), said.join('\n'));
  const logSoftmax = layerNamed(m, 'loss.log_softmax');
  assert.equal(logSoftmax.op, 'activation');
  assert.deepEqual(logSoftmax.outputShape, [1000]);
  // log_softmax keeps its result for the backward (derivatives.yaml): 1000 fp32 log-probabilities per sample.
  assert.equal(logSoftmax.workload.savedActivationBytes, 1000 * 4);
  const loss = layerNamed(m, 'loss');
  assert.equal(loss.op, 'reduce');
  assert.deepEqual(loss.outputShape, []);
  assert.equal(loss.inputs[0], logSoftmax.id);
  // training_step's order: the loss takes AlexNet's logits (its last Linear), as `self.loss(self.model(images), labels)`.
  assert.equal(logSoftmax.inputs[0], layerNamed(m, 'model.classifier.6').id);
  // torch's count for AlexNet: the loss adds no parameters.
  assert.equal(m.totals.params, 61_100_840);
});

test('F.cross_entropy in forward, a segmentation loss over pixels, MSE on a regression head, and losses on values the evaluator cannot compute', () => {
  const src = (body: string, init = 'self.fc = nn.Linear(32, 10)') => `import torch
import torch.nn as nn
import torch.nn.functional as F
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        ${init}
        self.mse = nn.MSELoss()
    def forward(self, x, y):
        ${body}
`;
  const ce = analyzePythonModel('ce.py', src('return F.cross_entropy(self.fc(x), y)'), 'Net', [32]);
  assert.deepEqual(ce.layers.map((l) => [l.name, l.op, l.outputShape]), [['fc', 'linear', [10]], ['cross_entropy.log_softmax', 'activation', [10]], ['cross_entropy', 'reduce', []]]);
  assert.equal(ce.completeness?.complete ?? true, true);
  // (N, C, H, W) logits: log_softmax over the classes (dim 1), then the per-pixel picks summed over the sample.
  const seg = analyzePythonModel('seg.py', src('return F.cross_entropy(self.head(x), y)', 'self.head = nn.Conv2d(3, 21, 1)'), 'Net', [3, 8, 8]);
  const segLoss = layerNamed(seg, 'cross_entropy');
  assert.deepEqual(layerNamed(seg, 'cross_entropy.log_softmax').attrs, { fn: 'log_softmax', axis: 1 });
  assert.deepEqual(segLoss.attrs, { fn: 'sum', allAxes: true, keepDims: false });
  assert.deepEqual(segLoss.outputShape, []);
  assert.equal(segLoss.workload.forwardFlops, 21 * 8 * 8);
  // The workers get the axes the core resolved: the sample's three.
  assert.deepEqual(toTrialSpec(segLoss, seg).attrs, { fn: 'sum', axes: [1, 2, 3], keepDims: false });
  const mse = analyzePythonModel('mse.py', src('return self.mse(self.fc(x), y)'), 'Net', [32]);
  assert.deepEqual(mse.layers.slice(1).map((l) => [l.name, l.op, l.attrs.fn]), [['mse.square', 'activation', 'square'], ['mse', 'reduce', 'mean']]);
  // A loss on a call WAP cannot read follows the opaque layer that call became, and the model says it is incomplete.
  const lost = analyzePythonModel('lost.py', src('return F.cross_entropy(some_helper(x), y)'), 'Net', [32]);
  assert.deepEqual(lost.layers.map((l) => [l.name, l.op]), [['some_helper', 'opaque'], ['cross_entropy.log_softmax', 'activation'], ['cross_entropy', 'reduce']]);
  assert.equal(lost.completeness?.complete, false);
});

test('a Hugging Face causal LM is planned with the loss its training step computes: logits upcast to fp32, log_softmax kept in fp32', async () => {
  const src = [
    'from transformers import LlamaConfig, LlamaForCausalLM',
    'config = LlamaConfig(vocab_size=32000, hidden_size=256, intermediate_size=688, num_hidden_layers=2, num_attention_heads=4, max_position_embeddings=512)',
    'model = LlamaForCausalLM(config)',
    '',
  ].join('\n');
  const r = await analyzeSource('tiny_llama.py', src);
  const m = r.models.find((x) => x.name === 'model')!;
  assert.deepEqual(m.layers.slice(-4).map((l) => l.name), ['lm_head', 'loss.float', 'loss.log_softmax', 'loss']);
  const upcast = layerNamed(m, 'loss.float');
  assert.equal(upcast.activationDtype, 'fp32');
  assert.deepEqual(upcast.outputShape, [512, 32000]);
  // log_softmax keeps its fp32 result for the backward: every token's 32,000 log-probabilities, 4 bytes each.
  const logProbs = layerNamed(m, 'loss.log_softmax');
  assert.equal(logProbs.workload.savedActivationBytes, 512 * 32000 * 4);
  assert.deepEqual(layerNamed(m, 'loss').outputShape, []);
  // The loss adds no parameters: transformers' count for this config.
  const [h, ff, v, l] = [256, 688, 32000, 2];
  assert.equal(m.totals.params, v * h * 2 + l * (4 * h * h + 3 * h * ff + 2 * h) + h);
});
