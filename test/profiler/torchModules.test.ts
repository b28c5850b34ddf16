/**
 * The layers the torch worker builds run as the plan prices them: an RMSNorm marked eager runs transformers' fp32
 * ops, an nn.MultiheadAttention asks for its weights unless the call said need_weights=False. Real torch 1.13
 * (Debian's python3-torch under /usr/bin/python3, as CI installs), checked against formulas computed in the test.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { transposeSwapAttrs } from './fixtures';

const TORCH_PYTHON = '/usr/bin/python3';
const torchDir = join(__dirname, '..', '..', 'src', 'profiler', 'torch');

/** Runs a snippet with the worker's builders imported as `tw`; its last stdout line is JSON. */
function runWithWorker(body: string): unknown {
  const code = ['import sys, json', `sys.path.insert(0, ${JSON.stringify(torchDir)})`, 'import torch', 'import torch_worker as tw', 'torch.manual_seed(0)', body].join('\n');
  const r = spawnSync(TORCH_PYTHON, ['-B', '-c', code], { encoding: 'utf8', timeout: 60_000 });
  assert.equal(r.status, 0, `${TORCH_PYTHON} failed (CI installs python3-torch): ${r.stderr}`);
  const lines = r.stdout.trim().split('\n');
  return JSON.parse(lines[lines.length - 1]!);
}

const rmsSpec = (eager: boolean, scale = true) => ({ op: 'layernorm', attrs: { normalizedShape: [8], scale, center: false, rms: true, ...(eager ? { eagerFp32: true } : {}) }, inputShapes: [[4, 8]] });

test('an eager RMSNorm layer normalizes in fp32 and returns the input dtype, with one weight of the normalized size', () => {
  const out = runWithWorker(`
m = tw.build_bare(json.loads(${JSON.stringify(JSON.stringify(rmsSpec(true)))}))
with torch.no_grad():
    m.weight.copy_(torch.arange(1, 9, dtype=torch.float32))
x = torch.randn(2, 4, 8).to(torch.bfloat16)
y = m(x)
x32 = x.float()
ref = (x32 / torch.sqrt((x32 * x32).mean(-1, keepdim=True) + 1e-6)).to(torch.bfloat16).float() * torch.arange(1, 9, dtype=torch.float32)
print(json.dumps({"dtype": str(y.dtype), "params": sum(p.numel() for p in m.parameters()), "err": (y.float() - ref).abs().max().item(), "scale": ref.abs().max().item()}))
`) as { dtype: string; params: number; err: number; scale: number };
  // weight (fp32 parameter) × y (bf16) promotes to fp32, as in transformers' LlamaRMSNorm before its final cast.
  assert.equal(out.params, 8);
  assert.equal(out.dtype, 'torch.float32');
  // Within one bf16 rounding of the normalized value (rsqrt and sqrt may round it to neighbouring bf16 values).
  assert.ok(out.err <= 2 ** -7 * out.scale, `max error ${out.err} of ${out.scale}`);
});

test('an RMSNorm without affine weights has no parameters; a non-eager one runs the same arithmetic here (torch 1.13 has no nn.RMSNorm)', () => {
  const out = runWithWorker(`
plain = tw.build_bare(json.loads(${JSON.stringify(JSON.stringify(rmsSpec(false, false)))}))
x = torch.randn(3, 4, 8)
ref = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6)
print(json.dumps({"params": sum(p.numel() for p in plain.parameters()), "err": (plain(x) - ref).abs().max().item(), "native": hasattr(torch.nn, "RMSNorm")}))
`) as { params: number; err: number; native: boolean };
  assert.equal(out.params, 0);
  assert.ok(out.err < 1e-5, `max error ${out.err}`);
  assert.equal(out.native, false, 'Debian torch 1.13 is expected here; with nn.RMSNorm the native module runs');
});

test('nn.MultiheadAttention is built to ask for its weights unless the call said need_weights=False', () => {
  const out = runWithWorker(`
spec = lambda extra: {"op": "mha", "attrs": dict({"embedDim": 16, "numHeads": 2, "bias": True}, **extra), "inputShapes": [[5, 16]]}
print(json.dumps([tw.build_bare(spec(e)).need_weights for e in ({}, {"needWeights": True}, {"needWeights": False})]))
`);
  assert.deepEqual(out, [true, true, false]);
});

test('a reduce layer runs torch.mean / sum / amax / amin over its axes, keeping dims as the IR says', () => {
  const out = runWithWorker(`
x = torch.randn(2, 3, 4, 5)
res = {}
for fn, keep in (("mean", False), ("sum", True), ("amax", False), ("amin", True)):
    spec = {"op": "reduce", "attrs": {"fn": fn, "axes": [1, -1], "keepDims": keep}, "inputShapes": [[3, 4, 5]]}
    ref = getattr(torch, fn)(x, dim=(1, 3), keepdim=keep)
    y = tw.build_bare(spec)(x)
    res[fn] = {"shape": list(y.shape), "err": (y - ref).abs().max().item()}
try:
    tw.build_bare({"op": "reduce", "attrs": {"fn": "median", "axes": [1]}, "inputShapes": [[3]]})
    res["median"] = "built"
except tw.Unsupported as e:
    res["median"] = str(e)
print(json.dumps(res))
`) as Record<string, { shape: number[]; err: number } | string>;
  assert.deepEqual(out.mean, { shape: [2, 4], err: 0 });
  assert.deepEqual(out.sum, { shape: [2, 1, 4, 1], err: 0 });
  assert.deepEqual(out.amax, { shape: [2, 4], err: 0 });
  assert.deepEqual(out.amin, { shape: [2, 1, 4, 1], err: 0 });
  assert.equal(out.median, 'reduction median');
});

test('an add or mul with one input runs its Python number on the side the code wrote it', () => {
  const out = runWithWorker(`
x = torch.tensor([[1.0, 2.0, 4.0]])
spec = lambda op, attrs: {"op": op, "attrs": attrs, "inputShapes": [[3]]}
print(json.dumps([tw.build_bare(spec(op, a))(x).tolist()[0] for op, a in (
    ("mul", {"operator": "*", "constant": 0.125}),
    ("add", {"operator": "-", "constant": 1.0, "constantFirst": True}),
    ("mul", {"operator": "/", "constant": 4}),
    ("mul", {"operator": "/", "constant": 8, "constantFirst": True}),
    ("add", {"operator": "+"}),
)]))
`);
  // 1 - x, x / 4, 8 / x; a number the code did not state is 1 (the same kernel, whatever its value).
  assert.deepEqual(out, [[0.125, 0.25, 0.5], [0, -1, -3], [0.25, 0.5, 1], [8, 4, 2], [2, 3, 5]]);
});

test('elementwise math written in forward runs as the code wrote it: pow by its exponent, clamp by its bound', () => {
  const out = runWithWorker(`
x = torch.tensor([[-2.0, 0.5, 4.0]])
spec = lambda a: {"op": "activation", "attrs": a, "inputShapes": [[3]]}
print(json.dumps([tw.build_bare(spec(a))(x).tolist()[0] for a in (
    {"fn": "pow", "exponent": 3}, {"fn": "pow"}, {"fn": "clamp", "max": 1.0}, {"fn": "clamp", "min": 0.0}, {"fn": "clamp"},
    {"fn": "neg"}, {"fn": "abs"}, {"fn": "square"}, {"fn": "masked_fill"},
)]))
`);
  // A pow without a number is a square; a clamp without one is at zero; the fill's mask comes from the activation.
  assert.deepEqual(out, [[-8, 0.125, 64], [4, 0.25, 16], [-2, 0.5, 1], [0, 0.5, 4], [0, 0.5, 4], [2, -0.5, -4], [2, 0.5, 4], [4, 0.25, 16], [-2, 0, 0]]);
});

test('a cast trial converts as ATen does: to bf16 and its gradient back to fp32; to the dtype it has, it returns its input', () => {
  const out = runWithWorker(`
x = torch.tensor([[-2.0, 0.5, 4.0]], requires_grad=True)
spec = lambda a: {"op": "activation", "attrs": a, "inputShapes": [[3]]}
y = tw.build_bare(spec({"fn": "cast", "to": "bf16"}))(x)
y.backward(torch.ones_like(y))
same = tw.build_bare(spec({"fn": "cast", "from": "bf16"}))(x)
print(json.dumps([str(y.dtype), y.float().tolist()[0], str(x.grad.dtype), same is x]))
`);
  assert.deepEqual(out, ['torch.bfloat16', [-2, 0.5, 4], 'torch.float32', true]);
});

test("a router's ops build as torch runs them: the 2-norm, topk values, cumsum, and a transpose read before its rank was known (resolved by toTrialSpec)", () => {
  const out = runWithWorker(`
x = torch.tensor([[[3.0, 4.0, 1.0], [0.0, 2.0, 5.0]]])
spec = lambda op, a: {"op": op, "attrs": a, "inputShapes": [[2, 3]]}
res = [tw.build_bare(spec(op, a))(x) for op, a in (
    ("reduce", {"fn": "norm", "axes": [-1], "keepDims": True}),
    ("reduce", {"fn": "topk", "axes": [-1], "k": 2, "keepDims": True}),
    ("activation", {"fn": "cumsum", "axis": -1}),
    ("permute", ${JSON.stringify(transposeSwapAttrs())}),
)]
print(json.dumps([[list(r.shape), [round(v, 4) for v in r.flatten().tolist()]] for r in res]))
`);
  assert.deepEqual(out, [
    [[1, 2, 1], [Math.round(Math.sqrt(26) * 1e4) / 1e4, Math.round(Math.sqrt(29) * 1e4) / 1e4]],
    [[1, 2, 2], [4, 3, 5, 2]],
    [[1, 2, 3], [3, 7, 8, 0, 2, 7]],
    [[1, 3, 2], [3, 0, 4, 2, 1, 5]],
  ]);
});
