/**
 * Forward code that computes sizes from its input (`b, c, h, w = x.size()`),
 * attention written with torch.einsum, relative position bias tables indexed by
 * a precomputed index, and a leaf module called twice. Parameter counts and
 * shapes are PyTorch's own.
 */
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import type { AnalyzedModel } from '../../src/core/ir';
import { analyzePythonModel, layerNamed } from './pythonModels';
import { initPythonFrontend } from '../../src/frontends/python';

before(() => initPythonFrontend());

const analyzed = (src: string, name: string, inputShape?: number[]): AnalyzedModel => analyzePythonModel('sizes.py', src, name, inputShape);

const layer = layerNamed;
const warnings = (m: AnalyzedModel) => m.diagnostics.filter((d) => d.severity === 'warning').map((d) => `${d.code}: ${d.message}`);

const SHUFFLE = `import torch
import torch.nn as nn

def channel_shuffle(x, groups):
    batchsize, num_channels, height, width = x.size()
    channels_per_group = num_channels // groups
    x = x.view(batchsize, groups, channels_per_group, height, width)
    x = torch.transpose(x, 1, 2).contiguous()
    return x.view(batchsize, -1, height, width)

class Unit(nn.Module):
    def __init__(self, c=24):
        super().__init__()
        self.conv1 = nn.Conv2d(3, c, 3, stride=2, padding=1, bias=False)
        self.branch = nn.Sequential(nn.Conv2d(c // 2, c // 2, 1, bias=False), nn.BatchNorm2d(c // 2), nn.ReLU())
    def forward(self, x):
        x = self.conv1(x)
        x1, x2 = x.chunk(2, dim=1)
        out = torch.cat((x1, self.branch(x2)), dim=1)
        return channel_shuffle(out, 2)
`;

test('ShuffleNet channel shuffle: sizes from x.size() are read for the assumed input, and it says so', () => {
  const m = analyzed(SHUFFLE, 'Unit');
  // torch, input [3, 224, 224]: conv1 → [24, 112, 112]; the branch keeps [12, 112, 112]; the shuffle restores [24, 112, 112].
  assert.equal(m.totals.params, 3 * 24 * 9 + 12 * 12 + 2 * 12);
  assert.deepEqual(layer(m, 'branch.0').outputShape, [12, 112, 112]);
  assert.deepEqual(m.layers[m.layers.length - 1].outputShape, [24, 112, 112]);
  assert.deepEqual(warnings(m), []);
  assert.ok(m.diagnostics.some((d) => d.code === 'specialised-input' && /\[3, 224, 224\]/.test(d.message)));
  assert.ok(m.diagnostics.some((d) => d.code === 'assumed-input'));
});

test('a graph read for the assumed input does not silently fit another input size', () => {
  const m = analyzed(SHUFFLE, 'Unit', [3, 64, 64]);
  assert.ok(warnings(m).some((w) => w.startsWith('shape-error')), JSON.stringify(warnings(m)));
});

test('einsum attention with a relative position bias table indexed by a registered index buffer (MaxViT)', () => {
  const m = analyzed(
    `import torch
import torch.nn as nn
import torch.nn.functional as F

class Attention(nn.Module):
    def __init__(self, dim=32, heads=2, size=3, groups=4):
        super().__init__()
        self.heads, self.size, self.groups, self.dim = heads, size, groups, dim
        self.to_qkv = nn.Linear(dim, dim * 3)
        self.merge = nn.Linear(dim, dim)
        self.table = nn.parameter.Parameter(torch.empty(((2 * size - 1) * (2 * size - 1), heads)))
        coords = torch.flatten(torch.stack(torch.meshgrid([torch.arange(size), torch.arange(size)], indexing="ij")), 1)
        rel = (coords[:, :, None] - coords[:, None, :]).permute(1, 2, 0).contiguous()
        rel[:, :, 0] += size - 1
        rel[:, :, 1] += size - 1
        rel[:, :, 0] *= 2 * size - 1
        self.register_buffer("index", rel.sum(-1))
    def forward(self, x):
        B = x.shape[0]
        G, P, D = self.groups, self.size * self.size, self.dim
        q, k, v = torch.chunk(self.to_qkv(x), 3, dim=-1)
        q = q.reshape(B, G, P, self.heads, D // self.heads).permute(0, 1, 3, 2, 4)
        k = k.reshape(B, G, P, self.heads, D // self.heads).permute(0, 1, 3, 2, 4)
        v = v.reshape(B, G, P, self.heads, D // self.heads).permute(0, 1, 3, 2, 4)
        bias = self.table[self.index.view(-1)].view(P, P, -1).permute(2, 0, 1).contiguous().unsqueeze(0)
        dot = F.softmax(torch.einsum("B G H I D, B G H J D -> B G H I J", q, k) + bias, dim=-1)
        out = torch.einsum("B G H I J, B G H J D -> B G H I D", dot, v)
        return self.merge(out.permute(0, 1, 3, 2, 4).reshape(B, G, P, D))
`,
    'Attention',
    [4, 9, 32],
  );
  // to_qkv + merge + the (2·3−1)² × 2 table, counted once.
  assert.equal(m.totals.params, 32 * 96 + 96 + 32 * 32 + 32 + 25 * 2);
  assert.deepEqual(layer(m, 'merge').outputShape, [4, 9, 32]);
  assert.deepEqual(m.layers.filter((l) => l.op === 'matmul').map((l) => l.outputShape), [
    [4, 2, 9, 9],
    [4, 2, 9, 16],
  ]);
  assert.deepEqual(warnings(m), []);
});

test('an einsum that is not a batched matmul is an opaque layer with a warning', () => {
  const m = analyzed(
    `import torch
import torch.nn as nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)
    def forward(self, x):
        return torch.einsum("bij->bji", self.fc(x))
`,
    'Net',
    [4, 8],
  );
  assert.ok(warnings(m).some((w) => /einsum/.test(w)), JSON.stringify(warnings(m)));
});

test('a leaf module called twice is name and name#2, each with its output shape', () => {
  const m = analyzed(
    `import torch.nn as nn
class Drop(nn.Module):
    def __init__(self, p):
        super().__init__()
        self.p = p
    def forward(self, x):
        return x
class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(8, 16)
        self.b = nn.Linear(16, 16)
        self.drop = Drop(0.1)
    def forward(self, x):
        x = self.drop(self.a(x))
        return x + self.drop(self.b(x))
`,
    'Block',
    [8],
  );
  assert.deepEqual(m.layers.filter((l) => l.name === 'drop').map((l) => [l.id, l.outputShape]), [
    ['drop', [16]],
    ['drop#2', [16]],
  ]);
});
