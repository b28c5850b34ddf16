/**
 * Container modules as real code builds them: nn.ModuleDict from (name,
 * module) pairs or an OrderedDict, subclasses of nn.ModuleDict and
 * nn.Sequential walked in their forward, and `del` of dict entries, list items
 * and submodules. A model that loses its input on the way says it is
 * incomplete instead of reporting 0 parameters as complete.
 */
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { join } from 'node:path';
import { analyzeSource } from '../../src/frontends/index';
import { initPythonFrontend } from '../../src/frontends/python';
import { analyzePythonModel } from './pythonModels';

before(() => initPythonFrontend());

const lineOf = (src: string, text: string): number => src.split('\n').findIndex((l) => l.includes(text)) + 1;

const header = `from collections import OrderedDict
import torch
from torch import nn
import torch.nn.functional as F
`;

test('an nn.ModuleDict subclass built from an OrderedDict and walked with self.items(), and ModuleDict from pairs', () => {
  const src = `${header}
class Getter(nn.ModuleDict):
    def __init__(self, layers, keep):
        found = OrderedDict()
        for name, module in layers:
            found[name] = module
            if name in keep:
                del keep[name]
            if not keep:
                break
        super().__init__(found)
    def forward(self, x):
        for name, module in self.items():
            x = module(x)
        return x

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        convs = [('a', nn.Conv2d(3, 8, 3)), ('b', nn.Conv2d(8, 8, 3)), ('head', nn.Conv2d(8, 1000, 1))]
        self.body = Getter(convs, {'b': 'out'})
        self.heads = nn.ModuleDict([('seg', nn.Conv2d(8, 21, 1)), ('aux', nn.Conv2d(8, 21, 1))])
    def forward(self, x):
        return self.heads['seg'](self.body(x))
`;
  const m = analyzePythonModel('containers.py', src, 'Net', [3, 32, 32]);
  // The loop stopped once 'b' was found and deleted: no 1000-channel head.
  assert.deepEqual(m.layers.map((l) => [l.name, l.outputShape]), [['body.a', [8, 30, 30]], ['body.b', [8, 28, 28]], ['heads.seg', [21, 28, 28]]]);
  // nn.ModuleDict's pairs keep their names. The plan holds what forward runs; torch also counts the aux head,
  // and the reading says so rather than disagree with torch in silence.
  assert.equal(m.totals.params, 3 * 8 * 9 + 8 + 8 * 8 * 9 + 8 + 8 * 21 + 21);
  assert.equal(m.completeness?.complete, true, JSON.stringify(m.completeness));
  const uncalled = m.diagnostics.filter((d) => d.code === 'uncalled-modules');
  assert.deepEqual(uncalled.map((d) => [d.severity, d.message, d.line]), [['info', 'A module forward never runs holds parameters: heads.aux (Conv2d). torch counts them and they sit on every GPU; the plan holds only what forward runs.', lineOf(src, 'self.heads = nn.ModuleDict')]]);
});

test('an nn.Sequential subclass iterated as `for mod in self` (torchvision ASPPPooling), upsampled to the input size', async () => {
  const src = `${header}
class Pooling(nn.Sequential):
    def __init__(self, cin, cout):
        super().__init__(nn.AdaptiveAvgPool2d(1), nn.Conv2d(cin, cout, 1), nn.ReLU())
    def forward(self, x):
        size = x.shape[-2:]
        for mod in self:
            x = mod(x)
        return F.interpolate(x, size=size, mode="bilinear", align_corners=False)

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.pool = Pooling(3, 16)
    def forward(self, x):
        return self.pool(x)
`;
  // `x.shape[-2:]` is known for a given input size, as `--input 3,20,24` gives it.
  const m = (await analyzeSource(join(__dirname, 'containers.py'), src, { inputShape: [3, 20, 24] })).models.find((x) => x.name === 'Net')!;
  assert.deepEqual(m.layers.map((l) => [l.name, l.outputShape]), [['pool.0', [3, 1, 1]], ['pool.1', [16, 1, 1]], ['pool.2', [16, 1, 1]], ['pool.interpolate', [16, 20, 24]]]);
});

test('del of a list item and of a submodule; a layer called on a lost value makes the model incomplete', () => {
  const src = `${header}
class Trimmed(nn.Module):
    def __init__(self):
        super().__init__()
        widths = [8, 16, 32]
        del widths[-1]
        self.conv = nn.Conv2d(3, widths[-1], 3)
        self.fc = nn.Linear(10, 10)
        del self.fc
    def forward(self, x):
        return self.conv(x)

class Lost(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3)
    def forward(self, x):
        return self.conv(self.not_defined)

lost = Lost()
`;
  const trimmed = analyzePythonModel('containers.py', src, 'Trimmed', [3, 8, 8]);
  assert.deepEqual(trimmed.layers.map((l) => [l.name, l.outputShape]), [['conv', [16, 6, 6]]]);
  assert.equal(trimmed.totals.params, 3 * 16 * 9 + 16);
  const lost = analyzePythonModel('containers.py', src, 'lost', [3, 8, 8]);
  // Before, this read as a complete model of 0 parameters.
  assert.equal(lost.totals.params, 0);
  assert.equal(lost.completeness?.complete, false);
  assert.match(lost.completeness!.reasons.join('\n'), /conv \(Conv2d\) is called on a value the evaluator could not compute/);
});
