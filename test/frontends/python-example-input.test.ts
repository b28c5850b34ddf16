/**
 * A PyTorch model's input is often stated only where the code runs it: a script's check call
 * (`model(torch.randn(8, 3, 32, 32))`), token ids (`torch.randint(0, vocab, (4, 128))`) or a
 * LightningModule's `example_input_array`. That shape is the model's input, read with its sizes known, so
 * the editor (which has no `--input`) plans a CIFAR ResNet at 32×32 rather than the assumed 224×224. A given
 * `--input` still wins. The truth for the real file (torchvision 0.14's ResNet-18) is torch's own leaf shapes.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { analyzeSource, analyzeSourceSync, initFrontends } from '../../src/frontends/index';

const PYTHON = '/usr/bin/python3';
const dir = join(__dirname, '..', 'fixtures', 'example-input');
const file = join(dir, 'cifar_resnet.py');

before(async () => {
  await initFrontends();
});

function libraryRoots(): string[] {
  const r = spawnSync(PYTHON, ['-c', 'import json, sys; print(json.dumps(sys.path))'], { encoding: 'utf8' });
  return (JSON.parse(r.stdout) as string[]).filter(Boolean);
}

test("a script's check call on 32×32 images is the input: every leaf shape is torch's", async () => {
  const truth = spawnSync(
    PYTHON,
    [
      '-c',
      `import json, runpy, torch
shapes = {}
orig = torch.nn.Module.__call__
def hooked(self, *a, **k):
    out = orig(self, *a, **k)
    name = getattr(self, "_wap_name", None)
    if name: shapes.setdefault(name, []).append(list(out.shape[1:]))
    return out
torch.nn.Module.__call__ = hooked
from torchvision.models import resnet18
real = resnet18
def named(*a, **k):
    m = real(*a, **k)
    for n, mod in m.named_modules():
        if n and not any(True for _ in mod.children()): mod._wap_name = n
    return m
import torchvision.models
torchvision.models.resnet18 = named
runpy.run_path(${JSON.stringify(file)}, run_name="__main__")
print(json.dumps(shapes))`,
    ],
    { encoding: 'utf8', timeout: 120_000 },
  );
  assert.equal(truth.status, 0, `${PYTHON} needs torch and torchvision (CI installs them): ${truth.stderr}`);
  const leaves = JSON.parse(truth.stdout.trim().split('\n').pop()!) as Record<string, number[][]>;
  const r = await analyzeSource(file, readFileSync(file, 'utf8'), {}, { workspaceFolders: [dir], libraryRoots: libraryRoots(), interpreter: PYTHON });
  const model = r.models.find((m) => m.name === 'model');
  assert.ok(model, JSON.stringify(r.diagnostics));
  assert.deepEqual(model.inputs[0]?.shape, [3, 32, 32]);
  assert.equal(model.inputs[0]?.assumed, undefined, 'stated by the code, not assumed');
  assert.ok(model.diagnostics.some((d) => d.code === 'input-from-code' && /model\(torch\.randn\(8, 3, 32, 32\)\) at line 12/.test(d.message)));
  assert.ok(Object.keys(leaves).length > 50, 'torch ran every leaf');
  for (const [name, calls] of Object.entries(leaves)) assert.deepEqual(model.layers.filter((l) => l.name === name).map((l) => l.outputShape), calls, name);
  // At 224×224 the last stage is 7×7: 49 times the 1×1 it is here.
  assert.deepEqual(model.layers.find((l) => l.name === 'layer4.1.conv2')?.outputShape, [512, 1, 1]);
  // --input still decides when given.
  const given = await analyzeSource(file, readFileSync(file, 'utf8'), { inputShape: [3, 224, 224] }, { workspaceFolders: [dir], libraryRoots: libraryRoots(), interpreter: PYTHON });
  assert.deepEqual(given.models.find((m) => m.name === 'model')?.layers.find((l) => l.name === 'layer4.1.conv2')?.outputShape, [512, 7, 7]);
});

test('token ids from torch.randint and a LightningModule example_input_array state the input; a batch of unknown data does not', () => {
  const tokens = `import torch
import torch.nn as nn
class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(1000, 64)
        self.head = nn.Linear(64, 5)
    def forward(self, idx):
        B, T = idx.size()
        return self.head(self.emb(idx).view(B, T // 2, 128)[:, :, :64])
model = Tagger()
model(torch.randint(0, 1000, (4, 96)))
`;
  const tagger = analyzeSourceSync('tagger.py', tokens).models.find((m) => m.name === 'model')!;
  assert.deepEqual([tagger.inputs[0]?.shape, tagger.inputs[0]?.dtype], [[96], 'int']);
  assert.deepEqual(tagger.layers.at(-1)?.outputShape, [48, 5]);
  const lightning = `import torch
import torch.nn as nn
import lightning as L
class LitNet(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(20, 4)
        self.example_input_array = torch.rand(2, 7, 20)
    def forward(self, x):
        return self.fc(x)
net = LitNet()
`;
  // LightningModule is an nn.Module: its layers are read, its example_input_array is the input.
  const lit = analyzeSourceSync('lit.py', lightning).models.find((m) => m.name === 'net')!;
  assert.deepEqual(lit.layers.map((l) => [l.name, l.op, l.outputShape]), [['fc', 'linear', [7, 4]]]);
  assert.deepEqual(lit.inputs[0]?.shape, [7, 20]);
  assert.ok(lit.diagnostics.some((d) => d.code === 'input-from-code' && /example_input_array/.test(d.message)));
  // A loop over a loader: nothing known about the batch, so the input stays assumed and says so.
  const loop = analyzeSourceSync('loop.py', `${lightning}for x in loader:\n    net(x)\n`).models.find((m) => m.name === 'net')!;
  assert.ok(loop.diagnostics.some((d) => d.code === 'input-from-code'), 'example_input_array still states it');
  const plainSource = 'import torch.nn as nn\nclass Head(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(20, 4)\n    def forward(self, x):\n        return self.fc(x)\nnet = Head()\nfor x in loader:\n    net(x)\n';
  const plain = analyzeSourceSync('plain.py', plainSource).models.find((m) => m.name === 'net')!;
  assert.equal(plain.inputAssumed, true);
  assert.ok(!plain.diagnostics.some((d) => d.code === 'input-from-code'));
});

test('the script part runs last and briefly: its own names do not replace the model, a long loop stops, its noise is dropped', () => {
  const src = `import torch
import torch.nn as nn
class Net(nn.Module):
    def __init__(self, width=16):
        super().__init__()
        self.fc = nn.Linear(8, width)
    def forward(self, x):
        return self.fc(x)
model = Net()
if __name__ == "__main__":
    model(torch.randn(4, 3, 8))
    model = Net(width=999)
    for step in range(10 ** 9):
        undefined_helper(step)
`;
  const started = Date.now();
  const r = analyzeSourceSync('script.py', src);
  const m = r.models.find((x) => x.name === 'model')!;
  assert.deepEqual(m.layers.map((l) => l.outputShape), [[3, 16]], "the file's model, at the input the check call states");
  assert.ok(Date.now() - started < 5000, `read in ${Date.now() - started} ms`);
  assert.ok(![...r.diagnostics, ...m.diagnostics].some((d) => /undefined_helper|step budget/.test(d.message)), 'the loop says nothing about the model');
});

test('a model the script part builds and trains is the run’s model, named by its class, ahead of a part buildable with its defaults', () => {
  const src = `import argparse
import torch
from torch import nn
class NewGELU(nn.Module):
    def forward(self, x):
        return 0.5 * x * (1.0 + torch.tanh(x))
class Block(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.fc = nn.Linear(width, width)
        self.act = NewGELU()
    def forward(self, x):
        return self.act(self.fc(x))
class Net(nn.Module):
    def __init__(self, width, depth):
        super().__init__()
        self.blocks = nn.Sequential(*[Block(width) for _ in range(depth)])
    def forward(self, x):
        return self.blocks(x)
if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument('--depth', type=int, default=2)
    args = parser.parse_args()
    model = Net(64, args.depth)
    optimizer = torch.optim.AdamW(model.parameters())
    for step in range(10 ** 9):
        model(torch.randn(8, 64)).sum().backward()
`;
  // llm.c's train_gpt2.py builds its GPT this way: before, its NewGELU was "the model", with no parameters.
  const r = analyzeSourceSync('script.py', src);
  assert.deepEqual(r.models.map((m) => m.name), ['Net']);
  assert.equal(r.models[0]!.totals.params, 2 * (64 * 64 + 64));
  assert.equal(r.models[0]!.range?.line, 21, 'ranged at the script part that builds it (Net itself needs arguments)');
  const deeper = analyzeSourceSync('script.py', src, { scriptArguments: { words: ['--depth', '3'], source: 'run.sh' } });
  assert.equal(deeper.models[0]!.totals.params, 3 * (64 * 64 + 64));
});
