/**
 * Values model code computes while it builds a model, read without running it:
 * numeric arrays (torch.arange / torch.round / np.linspace … as RegNet and
 * MaxViT derive their widths and drop rates), printf-style layer names, and
 * containers filled with add_module or `+=` and walked in forward (DenseNet's
 * dense blocks, MaxViT's stages). Parameter counts are PyTorch's own
 * (sum(p.numel() for p in model.parameters())).
 */
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import type { AnalyzedModel } from '../../src/core/ir';
import { analyzePythonModel } from './pythonModels';
import { initPythonFrontend, parsePythonSource } from '../../src/frontends/python';

before(() => initPythonFrontend());

const analyzed = (src: string, name: string, inputShape?: number[]): AnalyzedModel => analyzePythonModel('build.py', src, name, inputShape);

const warnings = (m: AnalyzedModel) => m.diagnostics.filter((d) => d.severity === 'warning').map((d) => `${d.code}: ${d.message}`);

test('RegNet-style widths from torch.arange / torch.log / torch.round(… ).int().tolist() size the convs', () => {
  // torchvision's BlockParams.from_init_params for regnet_x_400mf (depth 22, w_0 24, w_a 24.48, w_m 2.54).
  const m = analyzed(
    `import math
import torch
import torch.nn as nn

def widths(depth, w_0, w_a, w_m):
    widths_cont = torch.arange(depth) * w_a + w_0
    block_capacity = torch.round(torch.log(widths_cont / w_0) / math.log(w_m))
    block_widths = (torch.round(torch.divide(w_0 * torch.pow(w_m, block_capacity), 8)) * 8).int().tolist()
    stage_widths = sorted(set(block_widths))
    stage_depths = torch.diff(torch.tensor([0] + [block_widths.index(w) for w in stage_widths[1:]] + [len(block_widths)])).int().tolist()
    return stage_widths, stage_depths

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        ws, ds = widths(22, 24, 24.48, 2.54)
        self.ws, self.ds = ws, ds
        layers = []
        c = 3
        for w, d in zip(ws, ds):
            for _ in range(d):
                layers.append(nn.Conv2d(c, w, 1, bias=False))
                c = w
        self.body = nn.Sequential(*layers)
    def forward(self, x):
        return self.body(x)
`,
    'Net',
    [3, 8, 8],
  );
  // torch (float32 arithmetic): block widths [24, 64×2, 152×7, 392×12].
  const convs = m.layers.filter((l) => l.op === 'conv');
  assert.equal(convs.length, 22);
  assert.deepEqual([...new Set(convs.map((l) => l.outputShape![0]))], [24, 64, 152, 392]);
  assert.equal(m.totals.params, 3 * 24 + 24 * 64 + 64 * 64 + 64 * 152 + 6 * 152 * 152 + 152 * 392 + 11 * 392 * 392);
  assert.deepEqual(warnings(m), []);
});

test('np.linspace(…).tolist() gives per-layer drop rates; ModuleList += [layer] registers each layer', () => {
  const m = analyzed(
    `import numpy as np
import torch.nn as nn

class Stage(nn.Module):
    def __init__(self, dim, probs):
        super().__init__()
        self.layers = nn.ModuleList()
        for p in probs:
            self.layers += [nn.Sequential(nn.Linear(dim, dim), nn.Dropout(p))]
    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.probs = np.linspace(0, 0.2, 5).tolist()
        self.stage = Stage(16, self.probs)
    def forward(self, x):
        return self.stage(x)
`,
    'Net',
    [16],
  );
  assert.equal(m.totals.params, 5 * (16 * 16 + 16));
  const rates = m.layers.filter((l) => l.op === 'dropout').map((l) => l.attrs.rate as number);
  assert.deepEqual(rates.map((r) => Math.round(r * 1000) / 1000), [0, 0.05, 0.1, 0.15, 0.2]);
  assert.equal(m.layers.find((l) => l.op === 'dropout' && l.name.endsWith('4.1'))?.name, 'stage.layers.4.1');
});

test('DenseNet-style: an nn.ModuleDict subclass filled with add_module("denselayer%d" % i) and walked with self.items()', () => {
  const m = analyzed(
    `import torch
import torch.nn as nn
from torch import Tensor

class DenseLayer(nn.Module):
    def __init__(self, cin, growth):
        super().__init__()
        self.norm = nn.BatchNorm2d(cin)
        self.conv = nn.Conv2d(cin, growth, 3, padding=1, bias=False)
    def forward(self, input):
        prev = [input] if isinstance(input, Tensor) else input
        return self.conv(self.norm(torch.cat(prev, 1)))

class DenseBlock(nn.ModuleDict):
    def __init__(self, n, cin, growth):
        super().__init__()
        for i in range(n):
            self.add_module("denselayer%d" % (i + 1), DenseLayer(cin + i * growth, growth))
    def forward(self, x):
        features = [x]
        for name, layer in self.items():
            features.append(layer(features))
        return torch.cat(features, 1)

class Transition(nn.Sequential):
    def __init__(self, cin, cout):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, 1, bias=False)
        self.pool = nn.AvgPool2d(2)

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential()
        self.features.add_module("denseblock1", DenseBlock(3, 8, 4))
        self.features.add_module("transition1", Transition(20, 10))
    def forward(self, x):
        return self.features(x)
`,
    'Net',
    [8, 16, 16],
  );
  const conv = (i: number, cin: number) => cin * 2 + cin * 4 * 9; // BatchNorm2d(cin) + Conv2d(cin, 4, 3)
  assert.equal(m.totals.params, conv(1, 8) + conv(2, 12) + conv(3, 16) + 20 * 10);
  assert.deepEqual(m.layers.find((l) => l.name === 'features.denseblock1.denselayer3.conv')?.outputShape, [4, 16, 16]);
  assert.deepEqual(m.layers.find((l) => l.name === 'features.transition1.pool')?.outputShape, [10, 8, 8]);
  assert.deepEqual(warnings(m), []);
});

test('a module registered under a name the evaluator cannot compute is a warning, not a silent drop', () => {
  const r = parsePythonSource(
    'build.py',
    `import torch.nn as nn
class Net(nn.Module):
    def __init__(self, names):
        super().__init__()
        self.add_module(names.pick(), nn.Linear(4, 4))
        self.head = nn.Linear(4, 2)
    def forward(self, x):
        return self.head(x)
net = Net(unknown_names)
`,
  );
  const all = [...r.diagnostics, ...r.models.flatMap((m) => m.diagnostics ?? [])];
  assert.ok(all.some((d) => d.code === 'unknown-module-name'), JSON.stringify(all.map((d) => d.code)));
});

test('constant arrays: broadcasting, meshgrid, in-place slice writes and unmodelled ops never give stale values', () => {
  const m = analyzed(
    `import torch
import torch.nn as nn

class Net(nn.Module):
    def __init__(self, w=3):
        super().__init__()
        coords = torch.stack(torch.meshgrid([torch.arange(w), torch.arange(w)], indexing="ij"))
        flat = torch.flatten(coords, 1)
        rel = (flat[:, :, None] - flat[:, None, :]).permute(1, 2, 0).contiguous()
        rel[:, :, 0] += w - 1
        rel[:, :, 1] += w - 1
        rel[:, :, 0] *= 2 * w - 1
        index = rel.sum(-1)
        self.head = nn.Linear(4, len(set(index.flatten().tolist())))
        self.corner = nn.Linear(4, -(-index)[0, 0].item())
        index[index > 3] = 0
        self.masked = nn.Linear(4, len(set(index.flatten().tolist())))
    def forward(self, x):
        return self.head(x), self.corner(x), self.masked(x)
`,
    'Net',
    [4],
  );
  // Swin's relative position index for a 3×3 window takes (2·3−1)² = 25 distinct values; its corner is 12.
  assert.equal(m.layers.find((l) => l.name === 'head')?.outputShape?.[0], 25);
  assert.equal(m.layers.find((l) => l.name === 'corner')?.outputShape?.[0], 12);
  // A boolean-mask write is not modelled: the values are dropped, so the last size is unknown and said so.
  const masked = m.layers.find((l) => l.name === 'masked');
  assert.notEqual(masked?.outputShape?.[0], 25);
  assert.ok(m.diagnostics.some((d) => d.severity === 'warning' && /masked/.test(d.message)), JSON.stringify(m.diagnostics));
});
