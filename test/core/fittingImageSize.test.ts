/**
 * An image network read without an input size, whose flatten feeds a Linear sized for another image than the assumed
 * 224×224 (core/fittingImageSize.ts): the dataset size its layers agree with is the input, said as assumed with why.
 * Torch is the truth: /usr/bin/python3 runs each net at the size WAP chose and fails at 224, and counts the parameters.
 * The nets: DeepSpeedExamples' CIFAR net (test/fixtures/deepspeed-cifar, the PyTorch tutorial's) and pytorch/examples'
 * MNIST net (one channel, two 3×3 convs, a 2×2 pool, Linear(9216, 128)).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { analyzeSource, initFrontends } from '../../src/frontends/index';

const PYTHON = '/usr/bin/python3';
const root = join(__dirname, '..', '..');

const MNIST = `import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.conv1 = nn.Conv2d(1, 32, 3, 1)
        self.conv2 = nn.Conv2d(32, 64, 3, 1)
        self.dropout1 = nn.Dropout(0.25)
        self.dropout2 = nn.Dropout(0.5)
        self.fc1 = nn.Linear(9216, 128)
        self.fc2 = nn.Linear(128, 10)

    def forward(self, x):
        x = self.conv1(x)
        x = F.relu(x)
        x = self.conv2(x)
        x = F.relu(x)
        x = F.max_pool2d(x, 2)
        x = self.dropout1(x)
        x = torch.flatten(x, 1)
        x = self.fc1(x)
        x = F.relu(x)
        x = self.dropout2(x)
        x = self.fc2(x)
        return F.log_softmax(x, dim=1)


model = Net()
`;

before(() => initFrontends());

/** Torch's verdict on the net `source` defines as `cls`: its parameter count, and whether each input runs. */
function torchTruth(source: string, cls: string, shapes: number[][]): { params: number; runs: boolean[] } {
  const script = `${source.replace(/^if __name__ == "__main__":[\s\S]*$/m, '')}
import torch
net = ${cls}()
out = [sum(p.numel() for p in net.parameters())]
for shape in ${JSON.stringify(shapes)}:
    try:
        net(torch.zeros(2, *shape))
        out.append(1)
    except RuntimeError:
        out.append(0)
print(*out)
`;
  const r = spawnSync(PYTHON, ['-c', script], { encoding: 'utf8', timeout: 120_000 });
  assert.equal(r.status, 0, `${PYTHON} needs torch: ${r.stderr}`);
  const [params, ...runs] = r.stdout.trim().split(' ').map(Number);
  return { params: params!, runs: runs.map((x) => x === 1) };
}

test("DeepSpeedExamples' CIFAR net is read at 32×32, where torch runs it (and not at 224), with torch's parameter count", async () => {
  const file = join(root, 'test/fixtures/deepspeed-cifar/cifar10_deepspeed.py');
  const source = readFileSync(file, 'utf8');
  const r = await analyzeSource(file, source);
  const m = r.models[0]!;
  assert.deepEqual(m.input, [3, 32, 32]);
  assert.equal(m.inputAssumed, true);
  assert.equal(m.completeness?.complete, true);
  const said = m.diagnostics.find((d) => d.code === 'assumed-input');
  assert.match(said?.message ?? '', /assumed \[3, 32, 32\], an image of 32×32 \(channels_first\), the size at which the layers' shapes agree \(at 224×224 they do not\)/);
  const truth = torchTruth(source.replace(/^import deepspeed$/m, '').replace(/^parser = deepspeed\..*$/m, ''), 'Net', [[3, 32, 32], [3, 224, 224]]);
  assert.deepEqual(truth.runs, [true, false]);
  assert.equal(m.totals.params, truth.params);
});

test("pytorch/examples' MNIST net (one channel) is read at 28×28; a given --input still wins, shape error and all", async () => {
  const r = await analyzeSource('mnist.py', MNIST);
  const m = r.models[0]!;
  assert.deepEqual(m.input, [1, 28, 28]);
  assert.equal(m.completeness?.complete, true);
  const truth = torchTruth(MNIST, 'Net', [[1, 28, 28], [1, 224, 224]]);
  assert.deepEqual(truth.runs, [true, false]);
  assert.equal(m.totals.params, truth.params);
  const given = await analyzeSource('mnist.py', MNIST, { inputShape: [1, 224, 224] });
  assert.deepEqual(given.models[0]!.input, [1, 224, 224]);
  assert.equal(given.models[0]!.completeness?.complete, false);
});

test('a network that takes any size keeps the assumed 224×224', async () => {
  const source = 'import torch.nn as nn\nmodel = nn.Sequential(nn.Conv2d(3, 8, 3), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 10))\n';
  const m = (await analyzeSource('gap.py', source)).models[0]!;
  assert.deepEqual(m.input, [3, 224, 224]);
});
