/**
 * Size-1 axes as torch has them: `x.unsqueeze(d)`, `x.squeeze(d)`, `x.squeeze()`
 * and a class token broadcast over the batch (`cls.expand(x.size(0), -1)`)
 * change the shape the layers after them see; before, they passed the tensor
 * through and every later shape was an axis off without a warning. A helper
 * that branches on `x.dim()` is read again with the input's rank known.
 * Expected numbers are torch's own (parameters, and forward-hook output shapes
 * for input [2, 10, 8]).
 */
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { analyzeModel } from '../../src/core/analyze';
import { initPythonFrontend, parsePythonSource } from '../../src/frontends/python';

before(() => initPythonFrontend());

const SOURCE = `import torch
import torch.nn as nn


def add_axis(x, target_dim, axis):
    if x.dim() == target_dim - 1:
        x = x.unsqueeze(axis)
    return x


class ClassToken(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(8, 16)
        self.cls = nn.Parameter(torch.zeros(16))
        self.norm_tokens = nn.LayerNorm(16)
        self.conv = nn.Conv2d(1, 4, 3, padding=1)
        self.norm_rows = nn.LayerNorm(16)
        self.head = nn.Linear(16, 2)

    def forward(self, x):
        x = self.proj(x)
        cls = self.cls.expand(x.size(0), -1).unsqueeze(1)
        x = self.norm_tokens(torch.cat((cls, x), dim=1))
        maps = self.conv(add_axis(x, 4, 1))
        rows = self.norm_rows(maps.mean(1, keepdim=True).squeeze(1))
        last = rows.unsqueeze(-1).squeeze(-1).squeeze()
        return self.head(last[:, 0])
`;

test('unsqueeze, squeeze and a class token expanded over the batch: torch params and leaf shapes', () => {
  const input = [10, 8];
  const spec = parsePythonSource('class_token.py', SOURCE, undefined, { inputShape: input }).models.find((m) => m.name === 'ClassToken');
  assert.ok(spec);
  const m = analyzeModel(spec, { inputShape: input });
  assert.deepEqual(m.diagnostics.filter((d) => d.severity !== 'info').map((d) => d.message), []);
  // sum(p.numel() for p in ClassToken().parameters())
  assert.equal(m.totals.params, 298);
  const shape = (name: string) => m.layers.find((l) => l.name === name)?.outputShape;
  assert.deepEqual(shape('norm_tokens'), [11, 16]);
  assert.deepEqual(shape('conv'), [4, 11, 16]);
  assert.deepEqual(shape('norm_rows'), [11, 16]);
  assert.deepEqual(shape('head'), [2]);
});

test('unsqueeze of a Linear output whose sizes the frontend has not worked out: the core adds the axis', () => {
  const source = `import torch.nn as nn


class Lift(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(8, 16)
        self.norm = nn.LayerNorm(16)

    def forward(self, x):
        return self.norm(self.proj(x).unsqueeze(1))
`;
  const spec = parsePythonSource('lift.py', source).models.find((m) => m.name === 'Lift');
  assert.ok(spec);
  const m = analyzeModel(spec, { inputShape: [10, 8] });
  // torch: Lift()(torch.randn(2, 10, 8)) is [2, 1, 10, 16].
  assert.deepEqual(m.layers.find((l) => l.name === 'norm')?.outputShape, [1, 10, 16]);
});
