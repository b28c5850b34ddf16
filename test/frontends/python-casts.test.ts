/**
 * Casts on activations (test/fixtures/casts/forms.py: Meta's Llama attention upcasting its scores for the softmax,
 * Meta's and transformers' RMSNorms, an fp32 gate written with `.float()` and `.to(x.dtype)`) are nodes, and the ops
 * between an upcast and its downcast are pinned to fp32: read as pass-throughs before, a bf16 plan priced Llama's
 * fp32 softmax over [B, H, T, T] at 2 bytes and its two conversions at nothing. The truth is real torch 1.13
 * tracing the model in bf16: the conversions each forward runs, with their dtypes, and each op's output dtype.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { analyzeModel } from '../../src/core/analyze';
import type { AnalyzedLayer, AnalyzedModel } from '../../src/core/ir';
import { product } from '../../src/core/ir';
import { analyzeSourceSync } from '../../src/frontends/index';
import { initPythonFrontend, parsePythonSource } from '../../src/frontends/python';
import { analyticalTimes } from '../../src/planner/cost/compute';
import { castTraffic, planActivationDtype } from '../../src/planner/cost/pinnedDtype';
import { planModel, resolveCluster } from '../../src/planner/index';
import { savedBytesAtPrecision } from '../../src/planner/memory/precision';
import { traceForms } from './torchFormsTrace';

const dir = join(__dirname, '..', 'fixtures', 'casts');
const file = join(dir, 'forms.py');
const INPUT = [16, 32];
const TORCH_DTYPE: Record<string, string> = { Float: 'fp32', BFloat16: 'bf16', Half: 'fp16' };

before(() => initPythonFrontend());

function read(text = readFileSync(file, 'utf8')): AnalyzedModel {
  const r = analyzeSourceSync(file, text, { inputShape: INPUT });
  const model = r.models.find((m) => m.name === 'Net');
  assert.ok(model, `Net is read: ${JSON.stringify(r.diagnostics)}`);
  return model;
}

const isCast = (l: AnalyzedLayer) => l.op === 'activation' && l.attrs.fn === 'cast';

interface TorchNode { kind: string; scope: string; inputs: Array<string | null>; outputs: Array<string | null> }

function torchTruth(): { params: number; nodes: TorchNode[] } {
  const report = `def dtype(v):
    t = v.type()
    return t.scalarType() if isinstance(t, torch._C.TensorType) else None
nodes = []
for node in from_input(graph):
    tensors = [v for v in node.inputs() if isinstance(v.type(), torch._C.TensorType)]
    nodes.append({"kind": kernel(node), "scope": node.scopeName(), "inputs": [dtype(v) for v in tensors], "outputs": [dtype(v) for v in node.outputs()]})
print(json.dumps({"params": params, "nodes": nodes}))`;
  return traceForms(dir, INPUT, report, 'bfloat16');
}

test("every conversion torch runs on the activations in bf16 is a cast node, in torch's order; the norms' own are in their price", () => {
  const truth = torchTruth();
  const model = read();
  assert.equal(model.totals.params, truth.params);
  // torch converts where the dtype changes: `.float()` on an fp32 tensor and `.to(x.device)` run nothing.
  const conversions = truth.nodes.filter((n) => (n.kind === 'to' || n.kind === 'type_as') && n.inputs[0] !== n.outputs[0]);
  const outsideNorms = conversions.filter((n) => !/norm/.test(n.scope));
  assert.equal(conversions.length, 8, JSON.stringify(conversions));
  const asBf16Plan = (l: AnalyzedLayer) => {
    const a = l.attrs as { from?: string; to?: string };
    return `${a.from ?? planActivationDtype('bf16')}>${a.to ?? planActivationDtype('bf16')}`;
  };
  assert.deepEqual(model.layers.filter(isCast).map(asBf16Plan), outsideNorms.map((n) => `${TORCH_DTYPE[n.inputs[0]!]}>${TORCH_DTYPE[n.outputs[0]!]}`));
  assert.deepEqual(model.layers.filter(isCast).map((l) => l.name), ['attention.float', 'attention.type_as', 'gate.float', 'gate']);
  // Both RMSNorms are one eager-fp32 norm each, reading the block's input: their upcast went with their steps.
  const norms = model.layers.filter((l) => l.op === 'layernorm');
  assert.deepEqual(norms.map((l) => [l.name, l.attrs.eagerFp32, l.activationDtype]), [['attention_norm', true, undefined], ['ffn_norm', true, undefined]]);
  assert.deepEqual(norms.map((l) => l.inputs[0]), [model.inputs[0]!.id, 'add']);
});

test("the ops between an upcast and its downcast are pinned to fp32, as torch's output dtypes say; the others follow the plan", () => {
  const truth = torchTruth();
  const model = read();
  const kinds = ['div', 'softmax', 'sigmoid', 'mul'];
  const torchFp32 = truth.nodes.filter((n) => !/norm/.test(n.scope) && kinds.includes(n.kind)).map((n) => `${n.kind}:${TORCH_DTYPE[n.outputs[0]!]}`);
  const wapKind = (l: AnalyzedLayer) => (l.op === 'activation' ? String(l.attrs.fn) : l.op === 'mul' && (l.type === 'div' || l.attrs.operator === '/') ? 'div' : l.op);
  const mine = model.layers.filter((l) => kinds.includes(wapKind(l))).map((l) => `${wapKind(l)}:${l.activationDtype ?? 'bf16'}`);
  assert.deepEqual(mine, torchFp32);
  assert.deepEqual(mine, ['div:bf16', 'softmax:fp32', 'sigmoid:fp32', 'mul:fp32', 'mul:fp32']);
  for (const name of ['attention.matmul', 'attention.matmul_1', 'attention.wo', 'add_1']) assert.equal(model.layers.find((l) => l.name === name)?.activationDtype, undefined, name);
});

test('a cast is one pass at each side’s size under a bf16 plan and nothing under fp32; a pinned softmax moves and keeps 4 bytes an element', () => {
  const model = read();
  const gpu = resolveCluster('a100x8').gpus[0]!;
  const up = model.layers.find((l) => l.name === 'attention.float')!;
  const softmax = model.layers.find((l) => l.op === 'activation' && l.attrs.fn === 'softmax')!;
  const elements = product(up.outputShape!);
  assert.deepEqual(castTraffic(up, 'bf16'), { read: 2, written: 4 });
  assert.deepEqual(castTraffic(up, 'fp32'), { read: 0, written: 0 });
  assert.deepEqual(castTraffic(model.layers.find((l) => l.name === 'attention.type_as')!, 'bf16'), { read: 4, written: 2 });
  assert.equal(castTraffic(softmax, 'bf16'), undefined, 'no cast');
  const samples = 64;
  const bf16 = analyticalTimes(up, gpu, samples, 1, 1, 2, 'bf16');
  const launch = 0.006;
  const expected = (elements * samples * 6) / (gpu.memoryBandwidthGBs * 1e6 * 0.75) + launch;
  assert.ok(Math.abs(bf16.forwardMs - expected) < 1e-9 && Math.abs(bf16.backwardMs - expected) < 1e-9, JSON.stringify(bf16));
  assert.deepEqual(analyticalTimes(up, gpu, samples, 1, 1, 4, 'fp32'), { forwardMs: 0, backwardMs: 0 });
  // The pinned softmax costs the same in a bf16 plan as in an fp32 one; unpinned, it would move half the bytes.
  const inBf16 = analyticalTimes(softmax, gpu, samples, 1, 1, 2, 'bf16');
  assert.deepEqual(inBf16, analyticalTimes(softmax, gpu, samples, 1, 1, 4, 'fp32'));
  const unpinned = analyticalTimes({ ...softmax, activationDtype: undefined }, gpu, samples, 1, 1, 2, 'bf16');
  assert.ok(inBf16.forwardMs > 1.9 * (unpinned.forwardMs - launch), `${inBf16.forwardMs} vs ${unpinned.forwardMs}`);
  // It keeps its fp32 output for backward (derivatives.yaml: _softmax uses result) at 4 bytes in any plan.
  assert.equal(softmax.workload.savedActivationBytes, elements * 4);
  assert.equal(savedBytesAtPrecision(softmax.workload.savedActivationBytes, softmax.workload.savedFixedBytes ?? 0, 2 / 4), elements * 4);
  assert.equal(up.workload.savedActivationBytes, 0, "_to_copy's backward keeps no tensor");
});

test('a bf16 plan of the model prices the casts and reports them as layers', () => {
  const model = read();
  const out = planModel(model, resolveCluster('a100x8'), { batch: 64, objective: 'throughput', strategies: 'dp', optimizer: 'adam', precision: 'bf16', precisionSource: 'test', gpus: 1, maxGpus: 1 });
  assert.ok(out.feasible, JSON.stringify(out));
  const layer = (name: string) => out.plan.layers.find((l) => l.name === name)!;
  assert.ok(layer('attention.float').forwardMs > 0 && layer('attention.type_as').forwardMs > 0);
  const fp32 = planModel(model, resolveCluster('a100x8'), { batch: 64, objective: 'throughput', strategies: 'dp', optimizer: 'adam', precision: 'fp32', precisionSource: 'test', gpus: 1, maxGpus: 1 });
  assert.ok(fp32.feasible);
  assert.equal(fp32.plan.layers.find((l) => l.name === 'attention.float')!.forwardMs, 0, '.float() in an fp32 plan runs nothing');
});

test('.double() is flagged and marks the model incomplete; a parameter cast and a device move record nothing; an unfinished norm keeps its upcast', () => {
  const src = (body: string) => `import torch
import torch.nn as nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.ones(32))
    def forward(self, x):
${body}
`;
  const double = read(src('        return (x.double() * 2).float()'));
  assert.ok(double.diagnostics.some((d) => d.code === 'unknown-op' && /float64 activations are not modelled/.test(d.message)));
  assert.equal(double.completeness?.complete, false);
  const quiet = read(src("        y = x.to('cuda') * self.w\n        return y.to(torch.float32)"));
  assert.deepEqual(quiet.layers.map((l) => l.op), ['parameter', 'mul', 'activation']);
  assert.deepEqual(quiet.layers.at(-1)?.attrs, { fn: 'cast', to: 'fp32' });
  // On an fp32 copy, `.to(x.device)` is a device move, and an argument WAP cannot read is said to be taken as one.
  const moved = read(src('        h = x.float()\n        return h.to(x.device).to(self.dtype)'));
  assert.deepEqual(moved.layers.map((l) => `${l.op}:${l.activationDtype ?? '-'}`), ['activation:fp32']);
  assert.equal(moved.diagnostics.filter((d) => d.code === 'cast-unread').length, 2);
  // A parameter's cast runs once per step, yet what it multiplies is promoted to fp32 (torch's type promotion).
  const promoted = read(src('        return x * self.w.float()'));
  assert.deepEqual(promoted.layers.map((l) => `${l.op}:${l.activationDtype ?? '-'}`), ['parameter:-', 'mul:fp32']);
  // The square of an upcast whose norm never completes is priced as written: the cast and the fp32 pow stay.
  const unfinished = read(src('        h = x.float()\n        return h.pow(2).mean(-1, keepdim=True)'));
  assert.deepEqual(unfinished.layers.map((l) => `${l.op}:${l.activationDtype ?? '-'}`), ['activation:fp32', 'activation:fp32', 'reduce:fp32']);
});

test('a cast with a dtype the catalogue does not know is a shape error naming it', () => {
  const r = parsePythonSource('/tmp/cast.py', 'import torch.nn as nn\nclass Net(nn.Module):\n    def forward(self, x):\n        return x.half()\n');
  const spec = r.models.find((m) => m.name === 'Net')!;
  spec.layers[0]!.attrs = { fn: 'cast', to: 'fp8' };
  const m = analyzeModel(spec, { inputShape: [8] });
  assert.ok(m.diagnostics.some((d) => /cast to 'fp8' is not one of fp32, fp16, bf16/.test(d.message)), JSON.stringify(m.diagnostics));
});

test("transformers' eager attention: softmax(dtype=torch.float32) writes fp32 from one kernel, and .to(query.dtype) converts back", () => {
  const src = `import torch
import torch.nn as nn
class Net(nn.Module):
    def forward(self, x):
        q = x.view(16, 4, 8).transpose(0, 1)
        attn_weights = torch.matmul(q, q.transpose(1, 2))
        attn_weights = nn.functional.softmax(attn_weights, dim=-1, dtype=torch.float32).to(q.dtype)
        return torch.matmul(attn_weights, q)
`;
  const model = read(src);
  const pinned = model.layers.map((l) => `${l.op === 'activation' ? String(l.attrs.fn) : l.op}:${l.activationDtype ?? '-'}`).filter((k) => !/^(reshape|permute)/.test(k));
  assert.deepEqual(pinned, ['matmul:-', 'softmax:fp32', 'cast:-', 'matmul:-']);
  const back = model.layers.find((l) => l.op === 'activation' && l.attrs.fn === 'cast')!;
  assert.deepEqual(castTraffic(back, 'bf16'), { read: 4, written: 2 });
  // Stated as the dtype the scores already have, it converts nothing.
  const same = read(src.replace('attn_weights = torch.matmul(q, q.transpose(1, 2))', 'attn_weights = torch.matmul(q, q.transpose(1, 2)).float()'));
  assert.equal(same.layers.filter((l) => l.op === 'activation' && l.attrs.fn === 'cast').length, 2, 'the upcast and the cast back; the softmax adds none');
});
