/**
 * Where real training scripts build the model they train, written here in the shapes of PyTorch's own examples:
 * the ImageNet example picks its torchvision model as `models.__dict__[args.arch]()` inside a worker that
 * `mp.spawn` starts; the word language model example reloads its best checkpoint into `model` after training; the
 * DDP tutorial trains a single `torch.nn.Linear`. Each used to end in "no model found" with no reason. The
 * parameter counts are torch's own, from Debian's torch and torchvision.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { analyzeSource, initFrontends } from '../../src/frontends/index';

const PYTHON = '/usr/bin/python3';
const dir = mkdtempSync(join(tmpdir(), 'wap-script-entry-'));

before(async () => {
  await initFrontends();
});
after(() => rmSync(dir, { recursive: true, force: true }));

function libraryRoots(): string[] {
  const r = spawnSync(PYTHON, ['-c', 'import json, sys; print(json.dumps(sys.path))'], { encoding: 'utf8' });
  return (JSON.parse(r.stdout) as string[]).filter(Boolean);
}

function torchvisionParams(arch: string): number {
  const r = spawnSync(PYTHON, ['-c', `import torchvision; print(sum(p.numel() for p in torchvision.models.${arch}().parameters()))`], { encoding: 'utf8', timeout: 120_000 });
  assert.equal(r.status, 0, `${PYTHON} needs torchvision (CI installs it): ${r.stderr}`);
  return Number(r.stdout.trim());
}

const analyse = async (name: string, text: string, words: string[] = []) => {
  const file = join(dir, name);
  writeFileSync(file, text);
  return analyzeSource(file, text, words.length > 0 ? { scriptArguments: { words, source: 'run.sh' } } : {}, { workspaceFolders: [dir], libraryRoots: libraryRoots(), interpreter: PYTHON });
};

const IMAGENET_STYLE = `import argparse
import torch
import torch.multiprocessing as mp
import torchvision.models as models

model_names = sorted(name for name in models.__dict__ if name.islower() and not name.startswith("__") and callable(models.__dict__[name]))
parser = argparse.ArgumentParser()
parser.add_argument('-a', '--arch', default='resnet18', choices=model_names)
parser.add_argument('--multiprocessing-distributed', action='store_true')

def main():
    args = parser.parse_args()
    ngpus_per_node = 8
    if args.multiprocessing_distributed:
        mp.spawn(main_worker, nprocs=ngpus_per_node, args=(ngpus_per_node, args))
    else:
        main_worker(0, ngpus_per_node, args)

def main_worker(gpu, ngpus_per_node, args):
    model = models.__dict__[args.arch]()
    model = torch.nn.parallel.DistributedDataParallel(model)
    optimizer = torch.optim.SGD(model.parameters(), 0.1)

if __name__ == '__main__':
    main()
`;

test('a torchvision model picked from the package’s __dict__ by --arch, in the worker mp.spawn starts', async () => {
  const direct = await analyse('imagenet_style.py', IMAGENET_STYLE, ['--arch', 'resnet50']);
  assert.equal(direct.models[0]?.totals.params, torchvisionParams('resnet50'), JSON.stringify(direct.diagnostics.map((d) => d.message)));
  const spawned = await analyse('imagenet_style.py', IMAGENET_STYLE, ['--arch', 'vgg11', '--multiprocessing-distributed']);
  assert.equal(spawned.models[0]?.totals.params, torchvisionParams('vgg11'), JSON.stringify(spawned.diagnostics.map((d) => d.message)));
});

test('a model trained at module level, then replaced by torch.load of its checkpoint, is the model trained', async () => {
  const r = await analyse('reload.py', `import torch
from torch import nn
model = nn.Sequential(nn.Embedding(1000, 64), nn.Linear(64, 1000))
optimizer = torch.optim.SGD(model.parameters(), lr=20)
with open('model.pt', 'rb') as f:
    model = torch.load(f)
`);
  assert.deepEqual(r.models.map((m) => [m.name, m.totals.params]), [['model', 1000 * 64 + 64 * 1000 + 1000]]);
});

test('a single layer the script trains is its model; one it only builds is not', async () => {
  const trained = await analyse('single.py', `import torch
from torch.nn.parallel import DistributedDataParallel as DDP
model = torch.nn.Linear(20, 1)
model = DDP(model)
optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
`);
  assert.deepEqual(trained.models.map((m) => [m.name, m.totals.params]), [['model', 21]]);
  const built = await analyse('built.py', 'import torch\nlayer = torch.nn.Linear(20, 1)\n');
  assert.deepEqual(built.models, []);
});

test('a layer torchvision builds is said in torchvision’s file, not at the same line of the script', async () => {
  const r = await analyse('folder_classes.py', `import os
import torchvision
names = [f for f in os.listdir("images") if f.endswith(".jpg")]
model = torchvision.models.resnet18(num_classes=len(names))
`);
  const said = r.models[0]!.diagnostics.find((d) => d.code === 'unknown-size');
  assert.ok(said, JSON.stringify(r.models[0]!.diagnostics.map((d) => d.message)));
  assert.match(said.file ?? '', /torchvision[\\/]models[\\/]resnet\.py$/);
  assert.match(said.message, /`\[f for f in os\.listdir\("images"\) if f\.endswith\("\.jpg"\)\]` runs over values WAP cannot know/);
});

test('`.to(device)` on a subclass of a torch layer hands back the subclass, as torch counts it', async () => {
  const source = `import torch
from torch import nn
class TransformerModel(nn.Transformer):
    def __init__(self, ntoken, ninp, nhead, nhid, nlayers):
        super().__init__(d_model=ninp, nhead=nhead, dim_feedforward=nhid, num_encoder_layers=nlayers)
        self.input_emb = nn.Embedding(ntoken, ninp)
        self.decoder = nn.Linear(ninp, ntoken)
    def forward(self, src):
        return self.decoder(self.encoder(self.input_emb(src)))
`;
  // What forward runs, as torch counts it: the embedding, nn.Transformer's encoder stack and the subclass's decoder.
  const count = 'm = TransformerModel(3000, 64, 2, 128, 2)\nprint(sum(p.numel() for part in (m.input_emb, m.encoder, m.decoder) for p in part.parameters()))';
  const truth = spawnSync(PYTHON, ['-c', `${source}\n${count}`], { encoding: 'utf8', timeout: 120_000 });
  assert.equal(truth.status, 0, truth.stderr);
  const r = await analyse('subclass.py', `${source}model = TransformerModel(3000, 64, 2, 128, 2).to("cuda")\noptimizer = torch.optim.AdamW(model.parameters())\n`);
  const model = r.models.find((m) => m.name === 'model');
  assert.ok(model, JSON.stringify(r.diagnostics.map((d) => d.message)));
  assert.ok(model.layers.some((l) => l.name === 'decoder'), 'the subclass’s own Linear is read');
  assert.equal(model.totals.params, Number(truth.stdout.trim()));
});

test('the torchvision dataset a script trains on sizes an image input the code leaves open, through its transforms', async () => {
  const net = `import torch
from torch import nn
import torch.nn.functional as F
from torchvision import datasets, transforms
class Net(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, 32, 3, 1)
        self.conv2 = nn.Conv2d(32, 64, 3, 1)
        self.fc = nn.LazyLinear(10) if False else None
    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv2(F.relu(self.conv1(x)))), 2)
        return torch.flatten(x, 1)
`;
  const inputOf = async (name: string, dataset: string) => {
    const r = await analyse(name, `${net}train = ${dataset}\nmodel = Net(${dataset.includes('MNIST') ? 1 : 3})\noptimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n`);
    const model = r.models.find((m) => m.name === 'model');
    assert.ok(model, JSON.stringify(r.diagnostics.map((d) => d.message)));
    return model.input;
  };
  assert.deepEqual(await inputOf('mnist.py', "datasets.MNIST('../data', train=True, download=True, transform=transforms.Compose([transforms.ToTensor(), transforms.Normalize((0.1307,), (0.3081,))]))"), [1, 28, 28]);
  assert.deepEqual(await inputOf('cifar.py', "datasets.CIFAR10('./data', train=True, transform=transforms.Compose([transforms.Resize(64), transforms.ToTensor()]))"), [3, 64, 64]);
  assert.deepEqual(await inputOf('crop.py', "datasets.CIFAR10('./data', transform=transforms.RandomResizedCrop((48, 40)))"), [3, 48, 40]);
  // A transform WAP cannot size leaves the input assumed, as before.
  assert.deepEqual(await inputOf('lambda.py', "datasets.CIFAR10('./data', transform=transforms.Lambda(lambda x: x))"), [3, 224, 224]);
});
