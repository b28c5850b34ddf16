/**
 * An activation combined with a Python number (`x * 0.125`, `1.0 - x`, `x / 4`) is an elementwise kernel over the
 * whole tensor, recorded as a one-input add or mul that carries the operator and the number. Read as a no-op before,
 * nanoGPT's attention scale (`* (1.0 / math.sqrt(k.size(-1)))`, a pass over every T×T score) cost nothing.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { analyzeSource, initFrontends } from '../../src/frontends';
import { analyzePythonModel, layerNamed } from './pythonModels';

const nanogpt = join(__dirname, '..', 'fixtures', 'nanogpt');

before(async () => {
  await initFrontends();
});

test("nanoGPT's eager attention: the scores are scaled by 1/√d_head in a pass of their own, between QKᵀ and the softmax", async () => {
  const file = join(nanogpt, 'train.py');
  const r = await analyzeSource(file, readFileSync(file, 'utf8'), {}, { workspaceFolders: [nanogpt] });
  const model = r.models.find((m) => m.name === 'model');
  assert.ok(model, JSON.stringify(r.diagnostics));
  const softmax = model.layers.find((l) => l.name.startsWith('transformer.h.0.attn.') && l.op === 'activation');
  assert.ok(softmax, 'the block softmax');
  const scale = model.layers.find((l) => l.id === softmax.inputs[0]);
  assert.ok(scale);
  // n_embd 1024 over 16 heads: d_head 64, so the scale is exactly 1/8, over 16 heads of T×T scores.
  assert.deepEqual([scale.op, scale.type, scale.attrs], ['mul', 'mul', { operator: '*', constant: 0.125 }]);
  const tokens = model.inputs[0]!.shape![0]!;
  assert.deepEqual(scale.outputShape, [16, tokens, tokens]);
  assert.equal(scale.workload.forwardFlops, 16 * tokens * tokens);
  assert.equal(model.layers.find((l) => l.id === scale.inputs[0])?.op, 'matmul');
  assert.equal(model.layers.filter((l) => l.op === 'mul' && l.attrs.constant === 0.125).length, 24, 'one per block');
});

test('the operator, the number and its side are kept; a parameter\'s own arithmetic is not a per-sample kernel', () => {
  const m = analyzePythonModel(
    'scalars.py',
    `import math
import torch
import torch.nn as nn
class Net(nn.Module):
    def __init__(self, d=64):
        super().__init__()
        self.d = d
        self.fc = nn.Linear(d, d)
        self.gain = nn.Parameter(torch.zeros(d))
    def forward(self, x):
        h = self.fc(x) * math.sqrt(self.d)
        h = 1.0 - h
        h = h / 4
        return h * (1.0 + self.gain)
`,
    'Net',
    [10, 64],
  );
  const constants = m.layers.filter((l) => l.inputs.length === 1 && (l.op === 'add' || l.op === 'mul')).map((l) => [l.type, l.attrs]);
  assert.deepEqual(constants, [
    ['mul', { operator: '*', constant: 8 }],
    ['sub', { operator: '-', constant: 1, constantFirst: true }],
    ['div', { operator: '/', constant: 4 }],
  ]);
  // `1.0 + self.gain` stays the parameter itself; the product with it is the one two-input mul.
  assert.deepEqual(m.layers.filter((l) => l.inputs.length === 2).map((l) => l.op), ['mul']);
  assert.deepEqual(layerNamed(m, 'gain').workload.params, 64);
  assert.equal(m.totals.params, 64 * 64 + 64 + 64);
});
