/**
 * RMSNorms written as eager ops (test/fixtures/rmsnorm/forms.py: torchtitan's, transformers', lit-gpt's, Gemma's,
 * mamba-minimal's forms) are read as one RMS-norm layer each, priced as the eager fp32 ops they run: before, they
 * read as two multiplies. The fixture runs in real torch (Debian's python3-torch, as CI installs it) for the
 * parameter count and each leaf module's output shape.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { analyzeModel } from '../../src/core/analyze';
import type { AnalyzedModel } from '../../src/core/ir';
import { product } from '../../src/core/ir';
import { parseSource } from '../../src/frontends/index';
import { initPythonFrontend } from '../../src/frontends/python';
import { analyticalTimes } from '../../src/planner/cost/compute';
import { planModel, resolveCluster } from '../../src/planner/index';

const PYTHON = '/usr/bin/python3';
const dir = join(__dirname, '..', 'fixtures', 'rmsnorm');
const file = join(dir, 'forms.py');

before(() => initPythonFrontend());

function read(): { model: AnalyzedModel; diagnostics: Array<{ message: string; line: number; severity: string }> } {
  const parsed = parseSource(file, readFileSync(file, 'utf8'));
  const spec = parsed?.models.find((m) => m.name === 'Net');
  assert.ok(spec, 'Net is read');
  return { model: analyzeModel(spec, { inputShape: [16, 64] }), diagnostics: [...(parsed?.diagnostics ?? []), ...spec.diagnostics] };
}

test('every published form is one eager RMS norm with its weight; a norm by another tensor is not one', () => {
  const { model } = read();
  const norms = model.layers.filter((l) => l.op === 'layernorm');
  assert.deepEqual(
    norms.map((l) => [l.name, l.attrs.rms, l.attrs.eagerFp32, l.attrs.scale, l.attrs.center, l.workload.params]),
    [
      ['a', true, true, true, false, 64],
      ['b', true, true, true, false, 64],
      ['c', true, true, true, false, 64],
      ['d', true, true, true, false, 64],
      ['e', true, true, false, false, 0],
      // The second call of `a` shares its weight: counted once.
      ['a', true, true, true, false, 0],
    ],
  );
  // Nothing of the norms' own arithmetic is left beside them (lit-gpt's x * x is taken back in).
  const inside = model.layers.filter((l) => /^[a-e]\./.test(l.name)).map((l) => `${l.name}:${l.type}`);
  assert.deepEqual(inside, []);
  // NotANorm divides x by proj(x)'s RMS: not a norm of x, so every op it wrote stays, each as the kernel it is.
  assert.deepEqual(
    model.layers.filter((l) => l.name.startsWith('f.')).map((l) => (l.op === 'activation' ? `${l.op}:${String(l.attrs.fn)}` : l.op)),
    ['linear', 'activation:pow', 'reduce', 'add', 'activation:rsqrt', 'mul', 'activation:pow', 'reduce', 'add'],
  );
});

test("torch's own parameter count and every leaf module's output shape", () => {
  const truth = spawnSync(
    PYTHON,
    [
      '-c',
      `import json, sys, torch
sys.path.insert(0, ${JSON.stringify(dir)})
import forms
m = forms.Net()
shapes = {}
for name, mod in m.named_modules():
    if name and not any(True for _ in mod.children()):
        mod.register_forward_hook(lambda mod, a, out, name=name: shapes.setdefault(name, []).append(list(out.shape[1:])))
m(torch.randn(2, 16, 64))
print(json.dumps({"params": sum(p.numel() for p in m.parameters()), "shapes": shapes}))`,
    ],
    { encoding: 'utf8', timeout: 60_000 },
  );
  assert.equal(truth.status, 0, `${PYTHON} needs torch (CI installs python3-torch): ${truth.stderr}`);
  const t = JSON.parse(truth.stdout.trim().split('\n').pop()!) as { params: number; shapes: Record<string, number[][]> };
  const { model } = read();
  assert.equal(model.totals.params, t.params);
  for (const [name, calls] of Object.entries(t.shapes)) {
    const mine = model.layers.filter((l) => l.name === name).map((l) => l.outputShape);
    assert.deepEqual(mine, calls, name);
  }
});

test('the upcast-free forms say how they are priced; the upcast ones need no word', () => {
  const { diagnostics } = read();
  const said = diagnostics.filter((d) => /without an fp32 upcast/.test(d.message));
  // mamba-minimal's one-expression norm (line 59) and the weightless x / sqrt(…) (line 63).
  assert.deepEqual(said.map((d) => [d.line, d.severity]), [[59, 'info'], [63, 'info']]);
});

test('a written RMSNorm is priced as the eager fp32 ops transformers runs: 36 and 92 bytes per element at bf16', () => {
  const { model } = read();
  const norm = model.layers.find((l) => l.name === 'a')!;
  const gpu = resolveCluster('a100x8').gpus[0]!;
  const elements = product(norm.outputShape!) * 8;
  const bytesPerMs = gpu.memoryBandwidthGBs * 1e6 * 0.75;
  const t = analyticalTimes(norm, gpu, 8, 1, 1, 2, 'bf16');
  // Eight kernels forward and fourteen backward, each 6 µs to launch (planner/cost/eagerNorm.ts; test/planner/eagerNorm.test.ts).
  assert.ok(Math.abs(t.forwardMs - ((36 * elements + 64 * 2) / bytesPerMs + 8 * 0.006)) < 1e-12, `forward ${t.forwardMs}`);
  assert.ok(Math.abs(t.backwardMs - ((92 * elements + 2 * 64 * 2) / bytesPerMs + 14 * 0.006)) < 1e-12, `backward ${t.backwardMs}`);
  const plan = planModel(model, resolveCluster('a100x8'), { batch: 8, objective: 'throughput', strategies: 'dp', optimizer: 'adam', gpus: 1, maxGpus: 1, precision: 'bf16', precisionSource: 'test' });
  assert.ok(plan.feasible, plan.feasible ? '' : plan.reason);
  assert.ok(plan.diagnostics.some((d) => /^6 RMSNorm layers run as eager fp32 ops/.test(d.message)), plan.diagnostics.map((d) => d.message).join('\n'));
});
