/**
 * Reductions in forward (`x.mean(dim=1)`, `x.sum(-1)`, `torch.max(x, 1)`) are reduce nodes: the layers after
 * them see the reduced shape. Read as no-ops before, a classifier after a token mean was costed once per token.
 * The real-file case is torchvision 0.14's own S3D, whose forward ends in `torch.mean(x, dim=(2, 3, 4))`,
 * checked against torch itself (Debian's python3-torch under /usr/bin/python3, as CI installs it).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { analyzeModel } from '../../src/core/analyze';
import { initFrontends, parseSource } from '../../src/frontends/index';
import { initPythonFrontend } from '../../src/frontends/python';
import { analyzePythonModel, layerNamed } from './pythonModels';
import { err, ok } from '../core/inferHelpers';

const PYTHON = '/usr/bin/python3';

before(() => initPythonFrontend());

test('catalogue: reduce drops or keeps the reduced axes, and never reduces the batch', () => {
  const mean = ok('reduce', [[16, 64]], { fn: 'mean', axes: [1], keepDims: false });
  assert.deepEqual(mean.outputShape, [64]);
  assert.equal(mean.forwardFlops, 16 * 64);
  // sum and mean backward need only the input's sizes (derivatives.yaml: grad.expand, mean_backward).
  assert.equal(mean.savedActivationBytes, 0);
  assert.deepEqual(ok('reduce', [[8, 5, 7]], { fn: 'sum', axes: [-1, 2], keepDims: true }).outputShape, [8, 1, 1]);
  // amax's backward compares the input with the result: both are kept (fp32 here, 4 bytes).
  const amax = ok('reduce', [[16, 64]], { fn: 'amax', axes: [-1], keepDims: false });
  assert.equal(amax.savedActivationBytes, (16 * 64 + 16) * 4);
  assert.deepEqual(amax.saves, { inputs: [0], output: true });
  assert.match(err('reduce', [[16, 64]], { fn: 'mean', axes: [0], keepDims: false }), /batch/);
  assert.match(err('reduce', [[16, 64]], { fn: 'mean', axes: [1, -2], keepDims: false }), /twice/);
  assert.match(err('reduce', [[16, 64]], { fn: 'median', axes: [1], keepDims: false }), /unknown reduction 'median'/);
  assert.match(err('reduce', [[16, 64]], { fn: 'sum', axes: [], keepDims: false }), /needs the axes/);
});

test('a mean over tokens before the classifier: the head runs once per sample, not once per token', () => {
  const m = analyzePythonModel(
    'vit_head.py',
    `import torch
import torch.nn as nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Linear(32, 64)
        self.head = nn.Linear(64, 10)
    def forward(self, x):
        h = self.embed(x)
        return self.head(h.mean(dim=1))
`,
    'Net',
    [16, 32],
  );
  const mean = layerNamed(m, 'mean');
  assert.deepEqual([mean.op, mean.outputShape], ['reduce', [64]]);
  const head = layerNamed(m, 'head');
  assert.deepEqual(head.inputShapes, [[64]]);
  assert.deepEqual(head.outputShape, [10]);
  // One 64 → 10 matrix-vector product per sample: 2 · 64 · 10 multiply-adds, plus the bias.
  assert.ok(head.workload.forwardFlops <= 2 * 64 * 10 + 10, `head forward FLOPs ${head.workload.forwardFlops}`);
});

test('sum with keepdim, max over a dim as (values, indices), elementwise max and a dim-less sum', () => {
  const src = `import torch
import torch.nn as nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Linear(32, 64)
        self.head = nn.Linear(64, 10)
        self.w = nn.Parameter(torch.ones(4, 64))
    def forward(self, x):
        h = self.embed(x)
        total = h.sum(-1, keepdim=True)
        pooled, _ = torch.max(h, dim=1)
        both = torch.max(h, h * total)
        scaled = both * self.w.sum(0)
        loss_like = scaled.sum()
        return self.head(pooled) + scaled.amin(1)[:, :10]
`;
  const parsed = parseSource('reductions.py', src);
  const spec = parsed?.models.find((x) => x.name === 'Net');
  assert.ok(spec);
  const m = analyzeModel(spec, { inputShape: [16, 32] });
  const reduces = m.layers.filter((l) => l.op === 'reduce').map((l) => [l.type, (l.attrs as { fn: string }).fn, l.outputShape]);
  assert.deepEqual(reduces, [
    ['Tensor.sum', 'sum', [16, 1]],
    ['torch.max', 'amax', [64]],
    // The parameter's own dim 0 (it has no batch in front): [4, 64] → [64].
    ['Tensor.sum', 'sum', [64]],
    ['Tensor.amin', 'amin', [64]],
  ]);
  assert.deepEqual(layerNamed(m, 'head').inputShapes, [[64]]);
  const dimless = [...(parsed?.diagnostics ?? []), ...spec.diagnostics].filter((d) => /without a dim reduces every axis/.test(d.message));
  assert.equal(dimless.length, 1, 'the dim-less sum is said, not silently kept');
  assert.equal(dimless[0].line, 15);
});

test("torchvision's real S3D: the closing torch.mean over (T, H, W) gives torch's [400] logits and its parameter count", async () => {
  const probe = spawnSync(PYTHON, ['-c', 'import torchvision, os; print(os.path.dirname(os.path.dirname(torchvision.__file__)))'], { encoding: 'utf8' });
  assert.equal(probe.status, 0, `${PYTHON} needs torchvision (CI installs python3-torchvision): ${probe.stderr}`);
  const packageParent = probe.stdout.trim();
  const truth = spawnSync(
    PYTHON,
    [
      '-c',
      `import json, torch
from torchvision.models.video import s3d
torch.set_num_threads(2)
m = s3d(weights=None).eval()
params = sum(p.numel() for p in m.parameters())
# On the CPU: torch 1.13 has no meta kernel for max_pool3d. 16 frames of 224²: the smallest clip its avgpool takes.
with torch.no_grad():
    y = m(torch.zeros(1, 3, 16, 224, 224))
print(json.dumps({"params": params, "out": list(y.shape[1:])}))`,
    ],
    { encoding: 'utf8', timeout: 120_000 },
  );
  assert.equal(truth.status, 0, truth.stderr);
  const t = JSON.parse(truth.stdout.trim().split('\n').pop()!) as { params: number; out: number[] };
  await initFrontends();
  const file = join(packageParent, 'torchvision', 'models', 'video', 's3d.py');
  const spec = parseSource(file, readFileSync(file, 'utf8'), { libraryRoots: [packageParent] })?.models.find((x) => x.name === 's3d');
  assert.ok(spec, 'the s3d builder is read');
  const m = analyzeModel(spec, { inputShape: [3, 16, 224, 224] });
  const last = m.layers[m.layers.length - 1];
  assert.deepEqual([last.op, last.type], ['reduce', 'torch.mean']);
  assert.deepEqual(last.outputShape, t.out);
  assert.deepEqual(t.out, [400]);
  assert.equal(m.totals.params, t.params);
});
