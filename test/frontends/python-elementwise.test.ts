/**
 * Elementwise math on activations (test/fixtures/elementwise/forms.py: minGPT's tanh GELU, a hand-written causal
 * attention's mask fill, Llama's rotate_half, a clamp/abs/sqrt/exp chain, Mamba's parameter-only decay) is one
 * node per kernel: read as pass-throughs before, pow, masked_fill, neg, exp and the rest cost nothing. The truth
 * is real torch 1.13 (Debian's python3-torch, as CI installs it): torch.jit.trace lists the elementwise kernels
 * each forward runs on its input, in order, and counts the parameters.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, test } from 'node:test';
import type { AnalyzedLayer, AnalyzedModel } from '../../src/core/ir';
import { product } from '../../src/core/ir';
import { analyzeSourceSync } from '../../src/frontends/index';
import { initPythonFrontend } from '../../src/frontends/python';
import { traceForms } from './torchFormsTrace';

const dir = join(__dirname, '..', 'fixtures', 'elementwise');
const file = join(dir, 'forms.py');
const INPUT = [16, 32];

/** The kernels compared: elementwise arithmetic, math and the activations among them. */
const ELEMENTWISE = new Set(['where', 'add', 'sub', 'mul', 'div', 'neg', 'pow', 'exp', 'sqrt', 'rsqrt', 'abs', 'clamp', 'square', 'masked_fill', 'tanh', 'softmax']);

before(() => initPythonFrontend());

function read(inputShape?: number[]): AnalyzedModel {
  const r = analyzeSourceSync(file, readFileSync(file, 'utf8'), inputShape ? { inputShape } : {});
  const model = r.models.find((m) => m.name === 'Net');
  assert.ok(model, `Net is read: ${JSON.stringify(r.diagnostics)}`);
  return model;
}

/** A layer as the kernel it runs: the operator of an add or mul, the function of an activation. */
function kernelOf(l: AnalyzedLayer): string {
  if (l.type === 'torch.where') return 'where';
  if (l.op === 'activation') return String(l.attrs.fn);
  if (l.op === 'add') return l.type === 'sub' || l.attrs.operator === '-' ? 'sub' : 'add';
  if (l.op === 'mul') return l.type === 'div' || l.attrs.operator === '/' ? 'div' : 'mul';
  return l.op;
}

function torchTruth(): { params: number; kernels: string[]; output: number[] } {
  return traceForms(dir, INPUT, 'print(json.dumps({"params": params, "kernels": [kernel(n) for n in from_input(graph)], "output": list(m(x).shape[1:])}))');
}

test("every elementwise kernel torch runs on the input is a node, in torch's order; the parameter-only decay is not", () => {
  const truth = torchTruth();
  const model = read(INPUT);
  assert.equal(model.totals.params, truth.params);
  assert.deepEqual(model.layers.at(-1)?.outputShape, truth.output);
  const mine = model.layers.map(kernelOf).filter((k) => ELEMENTWISE.has(k));
  const torch = truth.kernels.filter((k) => ELEMENTWISE.has(k));
  // 24 kernels: the scores' scale, mask fill and softmax; GELU's eight; rotate_half's neg; the chain's nine; the
  // select's scale and where; x * A.
  assert.equal(torch.length, 24, torch.join(' '));
  assert.deepEqual(mine, torch);
  // Mamba's -exp(A_log) runs on the parameter once per step: no per-sample node for it.
  assert.deepEqual(model.layers.filter((l) => l.name.startsWith('decay')).map(kernelOf), ['parameter', 'mul']);
});

test('a pow keeps its exponent and a clamp its bound, which the trial workers run', () => {
  const model = read(INPUT);
  const attrsOf = (fn: string) => model.layers.filter((l) => l.op === 'activation' && l.attrs.fn === fn).map((l) => l.attrs);
  assert.deepEqual(attrsOf('pow'), [{ fn: 'pow', exponent: 3 }, { fn: 'pow', exponent: 2 }]);
  assert.deepEqual(attrsOf('clamp'), [{ fn: 'clamp', max: 6 }]);
});

test("the mask fill is a pass over all heads' T×T scores; what each backward keeps follows autograd", () => {
  const model = read(INPUT);
  const [T, heads] = [INPUT[0]!, 4];
  const fill = model.layers.find((l) => l.op === 'activation' && l.attrs.fn === 'masked_fill');
  assert.ok(fill);
  assert.deepEqual(fill.outputShape, [heads, T, T]);
  assert.equal(fill.workload.forwardFlops, heads * T * T);
  const saved = (fn: string) => model.layers.find((l) => l.op === 'activation' && l.attrs.fn === fn)!.workload.savedActivationBytes;
  const elems = product(INPUT);
  // derivatives.yaml: masked_fill's backward reads the mask, neg's none; exp's reads its result, pow's its input.
  assert.equal(saved('masked_fill'), 0);
  assert.equal(saved('neg'), 0);
  assert.equal(saved('exp'), elems * 4);
  assert.equal(saved('pow'), elems * 4);
});

test('a forward that computes sizes from its input is read at the input given, not at an assumed one', () => {
  // Assumed as a vector of 32 features, the attention's view(B, T, heads, C // heads) has no T: shapes are lost.
  const assumed = read();
  assert.equal(assumed.completeness?.complete, false);
  const given = read(INPUT);
  assert.ok(given.completeness?.complete !== false, JSON.stringify(given.completeness));
  assert.ok(given.layers.every((l) => l.outputShape !== undefined), given.layers.filter((l) => !l.outputShape).map((l) => l.name).join(', '));
  assert.ok(given.diagnostics.some((d) => d.code === 'specialised-input' && /\[16, 32\]/.test(d.message)));
});

test('a token model that computes sizes from its input is read at the --seq-len given', () => {
  const src = `import torch.nn as nn
class Chunks(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(100, 32)
        self.fc = nn.Linear(128, 10)
    def forward(self, idx):
        B, T = idx.size()
        return self.fc(self.emb(idx).view(B, T // 4, -1))
`;
  const at = (sequenceLength?: number) => analyzeSourceSync('chunks.py', src, sequenceLength ? { sequenceLength } : {}).models[0]!;
  // view(B, T // 4, -1) has two sizes unknown until T is: 1024 tokens assumed, or the 64 given.
  assert.deepEqual(at().layers.at(-1)?.outputShape, [256, 10]);
  const given = at(64);
  assert.deepEqual(given.layers.at(-1)?.outputShape, [16, 10]);
  assert.ok(given.diagnostics.some((d) => d.code === 'specialised-input' && /\[64\]/.test(d.message)));
});

test("torch.where with one activation operand is a fill by a mask; the mask's own arithmetic is not a node", () => {
  const src = `import torch
import torch.nn as nn
class Scores(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("keep", torch.tril(torch.ones(16, 16)).bool())
        self.proj = nn.Linear(16, 16)
    def forward(self, x):
        return torch.where(self.keep, self.proj(x), float("-inf"))
`;
  const m = analyzeSourceSync('scores.py', src, { inputShape: [16, 16] }).models[0]!;
  assert.deepEqual(m.layers.map((l) => [l.type, l.op, l.attrs.fn, l.outputShape]), [
    ['Linear', 'linear', undefined, [16, 16]],
    ['torch.where', 'activation', 'masked_fill', [16, 16]],
  ]);
});
