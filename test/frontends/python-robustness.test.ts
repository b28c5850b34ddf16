/**
 * The Python frontend on small hand-written sources (language constructs,
 * unknown layers, syntax errors) and on every example file cut short.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { assessCompleteness } from '../../src/core/completeness';
import type { ModelSpec } from '../../src/core/ir';
import { initPythonFrontend, parsePythonSource } from '../../src/frontends/python';

before(() => initPythonFrontend());

function only(src: string): ModelSpec {
  const r = parsePythonSource('t.py', src);
  assert.equal(r.models.length, 1, `one model expected, got ${r.models.map((m) => m.name).join(', ')}`);
  return r.models[0];
}

const ids = (m: ModelSpec): string[] => m.layers.map((l) => l.id);

test('unknown nn.X becomes an opaque layer with an unknown-layer warning at its constructor', () => {
  const m = only(`import torch.nn as nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)
        self.odd = nn.FancyNewThing(8)
    def forward(self, x):
        return self.odd(self.fc(x))
`);
  const odd = m.layers.find((l) => l.id === 'odd')!;
  assert.equal(odd.op, 'opaque');
  assert.deepEqual(odd.inputs, ['fc']);
  const warning = m.diagnostics.find((d) => d.code === 'unknown-layer');
  assert.ok(warning);
  assert.equal(warning.severity, 'warning');
  assert.equal(warning.message, 'unknown layer nn.FancyNewThing');
  assert.equal(warning.line, 6);
  assert.equal(warning.column, 20);
});

test('dataclass config, inheritance, super().__init__, *args/**kwargs, comprehensions, while, OrderedDict', () => {
  const m = only(`from collections import OrderedDict
from dataclasses import dataclass, field
import torch
from torch import nn

@dataclass
class Cfg:
    width: int = 16
    depth: int = 3
    sizes: list = field(default_factory=lambda: [1, 2])

class Base(nn.Module):
    scale = 2
    def __init__(self, *args, **kwargs):
        super().__init__()
        self.build(*args, **kwargs)

class Net(Base):
    def build(self, cfg=Cfg(), extra=0):
        w = cfg.width * self.scale + extra
        blocks = OrderedDict()
        i = 0
        while i < cfg.depth:
            blocks[f"block{i}"] = nn.Linear(w, w)
            i += 1
        self.body = nn.Sequential(blocks)
        self.heads = nn.ModuleDict({k: nn.Linear(w, n) for k, n in [("a", 3), ("b", 5)]})
        self.extra = nn.ModuleList()
        self.extra.append(nn.ReLU())
        self.add_module("tail", nn.Dropout(p=0.1))
    def forward(self, x):
        x = self.body(x)
        for layer in self.extra:
            x = layer(x)
        x = self.tail(x)
        a, b = self.heads["a"](x), self.heads.b(x)
        return torch.cat([a, b], dim=-1)

net = Net(extra=1)
`);
  assert.equal(m.name, 'net');
  assert.deepEqual(ids(m), ['body.block0', 'body.block1', 'body.block2', 'extra.0', 'tail', 'heads.a', 'heads.b', 'cat']);
  assert.deepEqual(m.layers[0].attrs, { inFeatures: 33, outFeatures: 33, bias: true });
  assert.deepEqual(m.layers.at(-1)!.attrs, { axis: -1 });
  assert.deepEqual(m.layers.at(-1)!.inputs, ['heads.a', 'heads.b']);
  assert.deepEqual(m.outputs, ['cat']);
});

test('a class with no forward falls back to its children in order, with a warning', () => {
  const m = only(`import torch.nn as nn
class Stack(nn.Module):
    def __init__(self, n=2):
        super().__init__()
        self.a = nn.Conv2d(3, 8, 3)
        self.b = nn.BatchNorm2d(8)
`);
  assert.deepEqual(ids(m), ['a', 'b']);
  assert.deepEqual(m.layers[1].inputs, ['a']);
  assert.ok(m.diagnostics.some((d) => d.code === 'no-forward' && d.severity === 'warning'));
});

test('nn.Sequential at module level, tensor methods and F ops in forward', () => {
  const r = parsePythonSource('t.py', `import torch, torch.nn as nn
import torch.nn.functional as F
seq = nn.Sequential(nn.Conv2d(1, 4, kernel_size=(3, 5), padding="same"), nn.ReLU())
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.c = nn.Conv2d(4, 4, 3, stride=2, padding=1, bias=False)
        self.fc = nn.Linear(4 * 7 * 7, 10)
    def forward(self, x):
        y = F.relu(self.c(x))
        y = F.max_pool2d(y, 2)
        y = y.view(y.size(0), -1)
        return F.softmax(self.fc(y), dim=1)
`);
  assert.deepEqual(r.models.map((m) => m.name), ['seq', 'Net']);
  assert.deepEqual(r.models[0].layers[0].attrs.padding, 'same');
  assert.deepEqual(r.models[0].layers[0].attrs.kernel, [3, 5]);
  const net = r.models[1];
  assert.deepEqual(net.layers.map((l) => l.op), ['conv', 'activation', 'pool', 'flatten', 'linear', 'activation']);
  assert.deepEqual(net.layers[2].attrs.kernel, [2, 2]);
  assert.deepEqual(net.layers[5].attrs, { fn: 'softmax', axis: 1 });
});

test('syntax errors give parse-error diagnostics with positions and a partial graph', () => {
  const r = parsePythonSource('t.py', `import torch.nn as nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 4)
    def forward(self, x):
        return self.fc(x)

def broken(:
    x = (1,
`);
  const err = r.diagnostics.find((d) => d.code === 'parse-error');
  assert.ok(err, 'a parse error is reported');
  assert.equal(err.severity, 'error');
  assert.ok(err.line >= 9, `error on the broken lines, got line ${err.line}`);
  assert.deepEqual(r.models.map((m) => m.name), ['Net']);
  assert.deepEqual(ids(r.models[0]), ['fc']);
  // Python would run none of the file: the model read from it says it is partial, whatever the error's place.
  const carried = r.models[0]!.diagnostics.find((d) => d.code === 'parse-error');
  assert.equal(carried?.incomplete, true);
  assert.equal(carried?.message, err.message, 'the same words, so the editor shows it once');
});

test('a forward cut mid-call is an incomplete model, not a smaller complete one', () => {
  const r = parsePythonSource('t.py', `import torch.nn as nn
import torch.nn.functional as F
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 32, 3)
        self.conv2 = nn.Conv2d(32, 64, 3)
    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = self.conv2(
`);
  const model = r.models.find((m) => m.name === 'Net')!;
  // The diagnostics alone say it: the layers read (conv1, relu) all have shapes.
  const completeness = assessCompleteness([], model.diagnostics);
  assert.equal(completeness.complete, false);
  assert.match(completeness.reasons[0]!, /^Syntax error/);
});

test('never throws: infinite recursion and loops stop at the budget', () => {
  const r = parsePythonSource('t.py', `import torch.nn as nn
def f(n=1):
    return f(n + 1)
def g():
    while True:
        pass
x = f()
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 2)
    def forward(self, x):
        return self.forward(x)
`);
  assert.ok(Array.isArray(r.models));
});

function pythonExamples(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...pythonExamples(p));
    else if (name.endsWith('.py')) out.push(p);
  }
  return out;
}

test('every example cut at every 50th character returns a result and never throws', () => {
  const files = pythonExamples(join(__dirname, '..', '..', 'examples'));
  assert.ok(files.length >= 6);
  let cuts = 0;
  for (const file of files) {
    const text = readFileSync(file, 'utf8');
    for (let n = 0; n < text.length; n += 50) {
      const r = parsePythonSource(file, text.slice(0, n));
      assert.ok(Array.isArray(r.models) && Array.isArray(r.diagnostics), `${file} cut at ${n}`);
      assert.ok(!r.diagnostics.some((d) => d.code === 'internal-error'), `${file} cut at ${n}: ${JSON.stringify(r.diagnostics)}`);
      for (const m of r.models) {
        const known = new Set([...m.inputs.map((i) => i.id)]);
        for (const l of m.layers) {
          for (const i of l.inputs) assert.ok(known.has(i), `${file}@${n}: ${l.id} consumes unknown ${i}`);
          known.add(l.id);
        }
      }
      cuts++;
    }
  }
  assert.ok(cuts > 100);
});

test("keras.applications models are built by Keras' own code: an error that says how to give WAP the architecture, not an empty file", () => {
  const r = parsePythonSource('k.py', 'import tensorflow as tf\nfrom tensorflow.keras.applications import EfficientNetB0\nmodel = tf.keras.applications.ResNet50(weights=None)\nother = EfficientNetB0()\n');
  assert.equal(r.models.length, 0);
  assert.deepEqual(r.diagnostics.map((d) => [d.severity, d.code, d.line]), [['error', 'keras-application', 3], ['error', 'keras-application', 4]]);
  assert.match(r.diagnostics[0].message, /^keras\.applications\.ResNet50 is built by Keras' own code, which WAP does not read: save its architecture with `open\("model\.json", "w"\)\.write\(model\.to_json\(\)\)` and open that file/);
});

test('an undecided `a if cond else b` takes its first side and says so, unless both sides are the same plain value', () => {
  const src = (width: string) => `import os
import torch.nn as nn
WIDTH = ${width}
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, WIDTH)
    def forward(self, x):
        return self.fc(x)
`;
  const r = parsePythonSource('t.py', src("512 if os.environ.get('LARGE') else 256"));
  const net = r.models.find((m) => m.name === 'Net')!;
  assert.deepEqual(net.layers.find((l) => l.id === 'fc')?.attrs.outFeatures, 512);
  const said = [...r.diagnostics, ...net.diagnostics].filter((d) => d.code === 'guessed-branch');
  assert.deepEqual(said.map((d) => [d.line, d.message]), [[3, "Could not decide `os.environ.get('LARGE')` while reading the model; took the value before its `if` (`512`)."]]);
  // Sides that agree decide nothing.
  const same = parsePythonSource('t.py', src("512 if os.environ.get('LARGE') else 512"));
  assert.equal([...same.diagnostics, ...same.models.flatMap((m) => m.diagnostics)].filter((d) => d.code === 'guessed-branch').length, 0);
});
