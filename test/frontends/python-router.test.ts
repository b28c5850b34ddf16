/**
 * What hand-written MoE routers and cosine heads run beyond plain elementwise math (test/fixtures/router/forms.py):
 * F.normalize, torch.topk, x.norm, torch.linalg.vector_norm and torch.cumsum are nodes, each shaped, and
 * `k.transpose(-2, -1)` on a tensor whose rank is not known where it is read is a transpose, not a pass-through.
 * The truth is real torch 1.13 (Debian's python3-torch, as CI installs it): the kernels torch.jit.trace lists,
 * the parameters and the output shape.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, test } from 'node:test';
import type { AnalyzedLayer } from '../../src/core/ir';
import { analyzeSourceSync } from '../../src/frontends/index';
import { initPythonFrontend } from '../../src/frontends/python';
import { traceForms } from './torchFormsTrace';

const dir = join(__dirname, '..', 'fixtures', 'router');
const file = join(dir, 'forms.py');
const INPUT = [16, 32];
/** torch's kernel names as WAP's: F.normalize's clamp_min is a clamp; x.norm over one dim (frobenius_norm) and vector_norm are the 2-norm; transpose is a permute. */
const TORCH_AS_WAP: Record<string, string> = { clamp_min: 'clamp', linalg_vector_norm: 'norm', frobenius_norm: 'norm', transpose: 'permute' };
const COMPARED = new Set(['linear', 'norm', 'clamp', 'div', 'permute', 'matmul', 'softmax', 'topk', 'cumsum', 'sum', 'mul', 'add']);

before(() => initPythonFrontend());

function kernelOf(l: AnalyzedLayer): string {
  if (l.op === 'activation') return String(l.attrs.fn);
  if (l.op === 'reduce') return String(l.attrs.fn);
  if (l.op === 'mul') return l.type === 'div' || l.attrs.operator === '/' ? 'div' : 'mul';
  return l.op;
}

function torchTruth(): { params: number; kernels: string[]; output: number[] } {
  return traceForms(dir, INPUT, 'print(json.dumps({"params": params, "kernels": [kernel(n) for n in graph.nodes() if n.kind().startswith("aten::")], "output": list(m(x).shape[1:])}))');
}

test("normalize, topk, norm, vector_norm and cumsum are the kernels torch runs, in torch's order, and every layer is shaped", () => {
  const truth = torchTruth();
  const r = analyzeSourceSync(file, readFileSync(file, 'utf8'), { inputShape: INPUT });
  const model = r.models.find((m) => m.name === 'Net');
  assert.ok(model, JSON.stringify(r.diagnostics));
  assert.equal(model.completeness?.complete ?? true, true, JSON.stringify(model.completeness));
  assert.equal(model.totals.params, truth.params);
  assert.deepEqual(model.layers.at(-1)?.outputShape, truth.output);
  const torch = truth.kernels.map((k) => TORCH_AS_WAP[k] ?? k).filter((k) => COMPARED.has(k));
  const mine = model.layers.map(kernelOf).filter((k) => COMPARED.has(k));
  assert.deepEqual(mine, torch);
  // The router's top 2 of 8 experts, and the capacity positions over all 8.
  const byKernel = (k: string) => model.layers.find((l) => kernelOf(l) === k)!;
  assert.deepEqual(byKernel('topk').outputShape, [16, 2]);
  assert.deepEqual(byKernel('cumsum').outputShape, [16, 8]);
  assert.deepEqual(model.layers.find((l) => l.type === 'Tensor.transpose')?.outputShape, [32, 16]);
});

test('a topk of more than its dim holds, a cumsum without a dim and a p=1 normalize are not guessed', () => {
  const src = (body: string) => `import torch\nimport torch.nn.functional as F\nfrom torch import nn\n\nclass Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(8, 4)\n\n    def forward(self, x):\n${body}\n`;
  const read = (body: string) => analyzeSourceSync('net.py', src(body), { inputShape: [8] });
  const tooMany = read('        v, i = torch.topk(self.fc(x), 5, dim=-1)\n        return v').models[0]!;
  assert.equal(tooMany.completeness?.complete, false);
  assert.match(tooMany.completeness!.reasons.join(' '), /topk k=5 is more than the 4 entries along axis/);
  const l1 = read('        return F.normalize(self.fc(x), p=1, dim=-1)').models[0]!;
  assert.deepEqual(l1.diagnostics.map((d) => d.message), ['F.normalize with p=1 is not modelled (only the 2-norm is); its output is taken to be its input']);
  assert.equal(l1.completeness?.complete, false);
  const noDim = read('        return torch.cumsum(self.fc(x))').models[0]!;
  assert.match(noDim.diagnostics.map((d) => d.message).join(' '), /torch\.cumsum is not modelled/);
  assert.equal(noDim.completeness?.complete, false);
  // A hand-written MoE's token choice is data: said where it is made.
  for (const call of ['torch.where(s > 0)', 'torch.nonzero(s > 0, as_tuple=True)']) {
    const routed = read(`        s = self.fc(x)\n        idx, nth = ${call}\n        return s`).models[0]!;
    assert.match(routed.diagnostics.map((d) => d.message).join(' '), /returns indices that depend on the data/, call);
  }
  // A transpose of the batch dim, or of dims that cannot be read, is said to pass through, not silently kept.
  for (const body of ['        return self.fc(x).transpose(0, 1)', '        return self.fc(x).transpose(self.d, -1)']) {
    const passed = read(body).models[0]!;
    assert.match(passed.diagnostics.map((d) => d.message).join(' '), /transpose .* is taken as a pass-through/, body);
    assert.equal(passed.completeness?.complete, false, body);
  }
});
