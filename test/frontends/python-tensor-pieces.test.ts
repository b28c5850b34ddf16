/**
 * A tensor cut into pieces along one axis: `qkv.unbind(dim)` (attention's
 * q, k, v from one projection) and `torch.tensor_split` by indices (a class
 * token split off its tokens) or into n near-equal sections. Expected numbers
 * are torch's own (parameters, and forward-hook output shapes for input
 * [2, 10, 16]).
 */
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { analyzeModel } from '../../src/core/analyze';
import { initPythonFrontend, parsePythonSource } from '../../src/frontends/python';

before(() => initPythonFrontend());

const SOURCE = `import torch
import torch.nn as nn


class Pieces(nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(16, 48)
        self.norm_q = nn.LayerNorm(4)
        self.norm_cls = nn.LayerNorm(4)
        self.norm_rest = nn.LayerNorm(4)
        self.norm_a = nn.LayerNorm(4)
        self.norm_c = nn.LayerNorm(4)

    def forward(self, x):
        B, N, C = x.shape
        q, k, v = self.qkv(x).reshape(B, N, 3, 4, 4).transpose(1, 3).unbind(dim=2)
        cls, rest = torch.tensor_split(k, indices=(1,), dim=2)
        a, b, c = v.tensor_split(3, dim=2)
        self.norm_cls(cls)
        self.norm_rest(rest)
        self.norm_a(a)
        return self.norm_q(q), self.norm_c(c)
`;

test('unbind and tensor_split (by indices, by sections): torch params and leaf shapes', () => {
  const input = [10, 16];
  const spec = parsePythonSource('pieces.py', SOURCE, undefined, { inputShape: input }).models.find((m) => m.name === 'Pieces');
  assert.ok(spec);
  const m = analyzeModel(spec, { inputShape: input });
  assert.deepEqual(m.diagnostics.filter((d) => d.severity !== 'info').map((d) => d.message), []);
  // sum(p.numel() for p in Pieces().parameters())
  assert.equal(m.totals.params, 856);
  const shape = (name: string) => m.layers.find((l) => l.name === name)?.outputShape;
  assert.deepEqual(shape('norm_q'), [4, 10, 4]);
  assert.deepEqual(shape('norm_cls'), [4, 1, 4]);
  assert.deepEqual(shape('norm_rest'), [4, 9, 4]);
  // tensor_split(10, 3): sections of 4, 3, 3.
  assert.deepEqual(shape('norm_a'), [4, 4, 4]);
  assert.deepEqual(shape('norm_c'), [4, 3, 4]);
});

test('tensor_split of an axis whose size is not known says so rather than guess', () => {
  const source = `import torch
import torch.nn as nn


class Cut(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm(4)

    def forward(self, x, n):
        first, rest = torch.tensor_split(x, indices=(n,), dim=1)
        return self.norm(rest)
`;
  const spec = parsePythonSource('cut.py', source).models.find((m) => m.name === 'Cut');
  assert.ok(spec);
  const m = analyzeModel(spec, { inputShape: [10, 4] });
  assert.ok(m.diagnostics.some((d) => d.severity === 'warning' && /tensor_split/.test(d.message)), m.diagnostics.map((d) => d.message).join('\n'));
});
