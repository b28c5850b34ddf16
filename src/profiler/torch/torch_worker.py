#!/usr/bin/env python3
"""WAP torch trial worker: JSON lines on stdin/stdout (see src/profiler/worker/messages.ts).

Builds one layer at a time with torch.nn from its spec (op, attrs, input shapes
without batch, in the model's layout), times forward and backward with CUDA
events on the GPU (or perf_counter on the CPU) after warm-up, and answers with
medians and spreads. It runs layer specs only, never user code.

Also usable directly: `python3 torch_worker.py --specs FILE.json` prints per-layer
times, their sum and a whole-step fidelity ratio (scripts/gpu-check.sh).
"""
import json
import math
import statistics
import sys
import time

try:
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
except (ImportError, OSError) as e:  # OSError: torch present but its CUDA libraries fail to load
    # gpu-check.sh and people run this file by hand: one actionable line beats a traceback.
    # The profiler probes `import torch` before spawning the worker, so it never relies on this.
    sys.stderr.write("torch_worker: PyTorch cannot be imported by %s (%s); install torch for this interpreter\n" % (sys.executable, e))
    sys.exit(2)

from torch_modules import MHA, Fn, RMSNorm, RNNWrap  # noqa: E402  (beside this file, as in dist/)

DEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class Unsupported(Exception):
    pass


def to_cf(spec, shape):
    """Shapes arrive in the model's layout; torch wants channels_first for image ops."""
    if spec.get("layout") == "channels_last" and len(shape) >= 2 and spec["op"] in IMAGE_OPS:
        return [shape[-1]] + list(shape[:-1])
    return list(shape)


IMAGE_OPS = {"conv", "separable_conv", "pool", "zeropad", "upsample", "batchnorm", "groupnorm"}


def num(v, d):
    return v if isinstance(v, (int, float)) and not isinstance(v, bool) else d


def lst(v, rank, d):
    if isinstance(v, list):
        return [num(x, d) for x in v]
    return [num(v, d)] * rank


def torch_padding(p, rank):
    if p == "same":
        return "same"
    if p == "valid" or p is None:
        return 0
    if isinstance(p, list):
        sym = [a for a, b in p]
        if all(a == b for a, b in p):
            return tuple(sym)
        raise Unsupported("asymmetric explicit padding")
    return 0


ACT = {
    "relu": F.relu, "relu6": F.relu6, "leaky_relu": F.leaky_relu, "elu": F.elu, "gelu": F.gelu,
    "silu": F.silu, "swish": F.silu, "tanh": torch.tanh, "sigmoid": torch.sigmoid,
    "softplus": F.softplus, "hardswish": F.hardswish, "hardsigmoid": F.hardsigmoid, "linear": lambda x: x,
}
MATH = {
    "abs": torch.abs, "neg": torch.neg, "exp": torch.exp, "log": torch.log, "sqrt": torch.sqrt, "rsqrt": torch.rsqrt,
    "square": torch.square, "sin": torch.sin, "cos": torch.cos, "reciprocal": torch.reciprocal, "erf": torch.erf,
}
CAST_DTYPES = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}
REDUCERS = {
    "mean": torch.mean, "sum": torch.sum, "amax": torch.amax, "amin": torch.amin,
    "norm": lambda x, dim, keepdim: torch.linalg.vector_norm(x, 2, dim=dim, keepdim=keepdim),
}


def with_constant(a):
    """An activation and a Python number (`x * 0.125`, `1.0 - x`): the same arithmetic, on the same side."""
    c = num(a.get("constant"), 1.0)
    f = {"+": lambda x, y: x + y, "-": lambda x, y: x - y, "*": lambda x, y: x * y, "/": lambda x, y: x / y}[a.get("operator", "*")]
    return (lambda x: f(c, x)) if a.get("constantFirst") else (lambda x: f(x, c))


def elementwise(fn, a):
    """Elementwise math written in forward (frontends/python/elementwise.ts), with its exponent or bounds."""
    if fn == "pow":
        e = num(a.get("exponent"), 2.0)
        return lambda x: torch.pow(x, e)
    if fn == "clamp":
        lo, hi = a.get("min"), a.get("max")
        # Bounds that were tensors in the code are not carried: timed as a clamp at zero, the same kernel.
        return lambda x: torch.clamp(x, min=0.0 if lo is None and hi is None else lo, max=hi)
    if fn == "cast":
        # The trial's activations are fp32: a cast to a 16-bit dtype converts (ATen's _to_copy); one to fp32 or back
        # to the activations' dtype returns its input and runs no kernel, as `to` does in training at that dtype.
        to = CAST_DTYPES.get(a.get("to"))
        return lambda x: x.to(to) if to is not None else x
    if fn == "masked_fill":
        # The mask is a buffer of the model the trial does not have: one from the activation itself, as large as it.
        return lambda x: x.masked_fill(x > 0, 0.0)
    return MATH.get(fn)


def build(spec):
    """Keras/TF.js layers record their own activation in attrs: it runs fused after the op."""
    m = build_bare(spec)
    act = (spec.get("attrs") or {}).get("activation")
    if spec["op"] == "activation" or not isinstance(act, str) or act == "linear":
        return m
    if act == "softmax":
        return nn.Sequential(m, Fn(lambda x: F.softmax(x, dim=1 if x.dim() > 2 else -1)))
    if act not in ACT:
        raise Unsupported("fused activation %s" % act)
    return nn.Sequential(m, Fn(ACT[act]))


def build_bare(spec):
    op, a = spec["op"], spec.get("attrs") or {}
    shapes = [to_cf(spec, s) for s in spec["inputShapes"]]
    s0 = shapes[0] if shapes else []
    rank = len(s0) + 1
    if op in ("input", "identity"):
        return Fn(lambda x: x.clone())
    if op == "conv":
        r = num(a.get("rank"), len(s0) - 1)
        if r not in (1, 2, 3):
            raise Unsupported("conv rank %s" % r)
        cin = s0[0]
        cout = a.get("outChannels") or cin * num(a.get("depthMultiplier"), 1)
        groups = cin if a.get("depthwise") else num(a.get("groups"), 1)
        kw = dict(kernel_size=lst(a.get("kernel"), r, 1), stride=lst(a.get("stride"), r, 1),
                  dilation=lst(a.get("dilation"), r, 1), groups=groups, bias=a.get("bias", True) is not False)
        if a.get("transposed"):
            cls = [nn.ConvTranspose1d, nn.ConvTranspose2d, nn.ConvTranspose3d][r - 1]
            pad = torch_padding(a.get("padding"), r)
            return cls(cin, cout, padding=0 if pad == "same" else pad, **kw)
        cls = [nn.Conv1d, nn.Conv2d, nn.Conv3d][r - 1]
        return cls(cin, cout, padding=torch_padding(a.get("padding"), r), **kw)
    if op == "separable_conv":
        cin = s0[0]
        m = num(a.get("depthMultiplier"), 1)
        pad = torch_padding(a.get("padding"), 2)
        return nn.Sequential(
            nn.Conv2d(cin, cin * m, lst(a.get("kernel"), 2, 1), lst(a.get("stride"), 2, 1), padding=pad, groups=cin, bias=False),
            nn.Conv2d(cin * m, a["outChannels"], 1, bias=a.get("bias", True) is not False))
    if op == "linear":
        return nn.Linear(s0[-1], num(a.get("outFeatures"), s0[-1]), bias=a.get("bias", True) is not False)
    if op == "embedding":
        return nn.Embedding(num(a.get("numEmbeddings"), 2), num(a.get("embeddingDim"), 1))
    if op == "batchnorm":
        c = s0[0] if len(s0) >= 2 else s0[-1]
        cls = {1: nn.BatchNorm1d, 2: nn.BatchNorm1d, 3: nn.BatchNorm2d, 4: nn.BatchNorm3d}.get(len(s0), nn.BatchNorm1d)
        return cls(c, affine=a.get("scale", True) is not False)
    if op == "layernorm":
        n = len(a["normalizedShape"]) if isinstance(a.get("normalizedShape"), list) else 1
        if a.get("rms"):
            return RMSNorm(s0[len(s0) - n:], a.get("scale", True) is not False, a.get("eagerFp32") is True)
        return nn.LayerNorm(s0[len(s0) - n:])
    if op == "groupnorm":
        return nn.GroupNorm(num(a.get("numGroups"), 1), s0[0], affine=a.get("affine", True) is not False)
    if op == "pool":
        r = len(s0) - 1
        mx = a.get("mode") == "max"
        if a.get("global"):
            dims = tuple(range(2, 2 + r))
            return Fn(lambda x: x.amax(dim=dims, keepdim=bool(a.get("keepDims"))) if mx else x.mean(dim=dims, keepdim=bool(a.get("keepDims"))))
        if isinstance(a.get("outputSize"), list):
            out = [o if o is not None else s0[1 + i] for i, o in enumerate(a["outputSize"])]
            cls = [nn.AdaptiveMaxPool1d, nn.AdaptiveMaxPool2d, nn.AdaptiveMaxPool3d] if mx else [nn.AdaptiveAvgPool1d, nn.AdaptiveAvgPool2d, nn.AdaptiveAvgPool3d]
            return cls[r - 1](out)
        k = lst(a.get("kernel"), r, 1)
        st = k if a.get("stride") is None else lst(a.get("stride"), r, 1)
        pad = torch_padding(a.get("padding", "valid"), r)
        if pad == "same":
            pad = [kk // 2 for kk in k]
        cls = [nn.MaxPool1d, nn.MaxPool2d, nn.MaxPool3d] if mx else [nn.AvgPool1d, nn.AvgPool2d, nn.AvgPool3d]
        return cls[r - 1](k, st, pad, ceil_mode=bool(a.get("ceilMode")))
    if op in ("flatten", "reshape"):
        out = spec.get("outputShape") or [math.prod(s0)]
        return Fn(lambda x: x.reshape(x.shape[0], *out))
    if op == "permute":
        dims = [d % rank for d in a["dims"]]
        return Fn(lambda x: x.permute(*dims))
    if op == "zeropad":
        flat = []
        for b, e in reversed(a["padding"]):
            flat += [b, e]
        return Fn(lambda x: F.pad(x, flat))
    if op == "upsample":
        return nn.Upsample(size=a.get("size"), scale_factor=None if a.get("size") else tuple(lst(a.get("scale"), len(s0) - 1, 2)),
                           mode="bilinear" if "linear" in str(a.get("mode", "")) else "nearest")
    if op == "dropout":
        return nn.Dropout(num(a.get("rate"), 0.5))
    if op == "activation":
        fn = a.get("fn")
        if fn == "cumsum":
            ax = num(a.get("axis"), -1)
            return Fn(lambda x: torch.cumsum(x, dim=ax))
        if fn in ("softmax", "log_softmax"):
            ax = num(a.get("axis"), -1)
            f = F.softmax if fn == "softmax" else F.log_softmax
            return Fn(lambda x: f(x, dim=ax))
        f = ACT.get(fn) or elementwise(fn, a)
        if f is None:
            raise Unsupported("activation %s" % fn)
        return Fn(f)
    if op in ("add", "mul") and len(spec["inputShapes"]) == 1:
        return Fn(with_constant(a))
    if op == "add":
        return Fn(lambda *xs: sum(xs[1:], xs[0]))
    if op == "mul":
        def mul(*xs):
            y = xs[0]
            for x in xs[1:]:
                y = y * x
            return y
        return Fn(mul)
    if op == "concat":
        return Fn(lambda *xs: torch.cat(xs, dim=num(a.get("axis"), -1)))
    if op == "split":
        sizes = a.get("sizes")
        ax = num(a.get("axis"), -1)
        idx = num(a.get("index"), 0)
        return Fn(lambda x: (torch.split(x, sizes, dim=ax) if sizes else torch.chunk(x, num(a.get("chunks"), 1), dim=ax))[idx])
    if op == "matmul":
        return Fn(lambda x, y: x @ (y.transpose(-2, -1) if a.get("transposeB") else y))
    if op == "reduce" and a.get("fn") == "topk":
        k, d = num(a.get("k"), 1), (a.get("axes") or [-1])[0]
        return Fn(lambda x: torch.topk(x, k, dim=d).values)
    if op == "reduce":
        f = REDUCERS.get(a.get("fn"))
        if f is None:
            raise Unsupported("reduction %s" % a.get("fn"))
        dims, keep = tuple(a.get("axes") or ()), bool(a.get("keepDims"))
        return Fn(lambda x: f(x, dim=dims, keepdim=keep))
    if op == "mha":
        return MHA(a, num(a.get("embedDim"), s0[-1]), num(a.get("numHeads"), 1))
    if op == "sdpa":
        return Fn(lambda q, k=None, v=None: F.scaled_dot_product_attention(q, k if k is not None else q, v if v is not None else (k if k is not None else q), dropout_p=float(a.get("dropout") or 0.0), is_causal=bool(a.get("causal"))))
    if op == "rnn":
        cls = {"lstm": nn.LSTM, "gru": nn.GRU, "rnn": nn.RNN}[a.get("cell", "lstm")]
        m = cls(s0[-1], a["hiddenSize"], num(a.get("numLayers"), 1), bias=a.get("bias", True) is not False,
                batch_first=True, bidirectional=bool(a.get("bidirectional")))
        return RNNWrap(m)
    if op == "opaque":
        raise Unsupported("opaque layer: %s" % a.get("reason", "unknown"))
    raise Unsupported("op %s" % op)


def inputs_for(spec, batch, needs_grad):
    xs = []
    dtypes = spec.get("inputDtypes") or []
    for i, s in enumerate(spec["inputShapes"]):
        shape = [batch] + to_cf(spec, s)
        if spec["op"] == "embedding" or (i < len(dtypes) and dtypes[i] == "int"):
            hi = num((spec.get("attrs") or {}).get("numEmbeddings"), 2)
            xs.append(torch.randint(0, hi, shape, device=DEVICE))
        else:
            xs.append(torch.randn(shape, device=DEVICE, requires_grad=needs_grad))
    return xs


class Timer:
    """CUDA events on the GPU (elapsed after synchronize), perf_counter on the CPU."""

    def __enter__(self):
        if DEVICE.type == "cuda":
            self.a = torch.cuda.Event(enable_timing=True)
            self.b = torch.cuda.Event(enable_timing=True)
            self.a.record()
        else:
            self.t = time.perf_counter()
        return self

    def __exit__(self, *exc):
        if DEVICE.type == "cuda":
            self.b.record()
            torch.cuda.synchronize()
            self.ms = self.a.elapsed_time(self.b)
        else:
            self.ms = (time.perf_counter() - self.t) * 1000.0


def stats(samples):
    s = sorted(samples)
    med = statistics.median(s)
    at = lambda q: s[min(len(s) - 1, max(0, round(q * (len(s) - 1))))]
    return med, ((at(0.9) - at(0.1)) / med if med > 0 else 0.0)


def time_layer(spec, batch, warmup, reps):
    m = build(spec).to(DEVICE).train()
    xs = inputs_for(spec, batch, bool(spec.get("needsInputGrad")))
    params = [p for p in m.parameters() if p.requires_grad]
    targets = [x for x in xs if x.requires_grad] + params
    with torch.no_grad():
        y = m(*xs)
    dy = torch.randn_like(y)
    fwd, bwd = [], []
    for i in range(warmup + reps):
        with Timer() as t:
            y = m(*xs)
        if i >= warmup:
            fwd.append(t.ms)
    if DEVICE.type == "cuda":
        torch.cuda.reset_peak_memory_stats()
    for i in range(warmup + reps):
        if not targets:
            break
        # The backward pass is timed on its own: subtracting a forward median from forward+backward
        # goes to zero (and was clamped there) whenever a noisy machine stalls one forward run.
        y = m(*xs)
        with Timer() as t:
            torch.autograd.grad(y, targets, dy)
        if i >= warmup:
            bwd.append(t.ms)
    f_med, f_spread = stats(fwd)
    b_med, b_spread = stats(bwd or [0.0])
    out = dict(forwardMs=f_med, backwardMs=b_med, forwardSpread=f_spread, backwardSpread=b_spread, repetitions=reps)
    if DEVICE.type == "cuda":
        out["peakMemoryBytes"] = int(torch.cuda.max_memory_allocated())
    return out


def whole_step(specs, inputs, outputs, batch, warmup, reps):
    mods = [build(s).to(DEVICE).train() for s in specs]
    feeds = {}
    for inp in inputs:
        consumer = next((s for s in specs if inp["id"] in s["inputs"]), None)
        shape = to_cf(consumer, inp["shape"]) if consumer else inp["shape"]
        feeds[inp["id"]] = torch.randn([batch] + shape, device=DEVICE) if inp.get("dtype") != "int" else torch.randint(0, 2, [batch] + shape, device=DEVICE)
    params = [p for m in mods for p in m.parameters() if p.requires_grad]
    samples = []
    for i in range(warmup + reps):
        with Timer() as t:
            vals = dict(feeds)
            for s, m in zip(specs, mods):
                vals[s["id"]] = m(*[vals[j] for j in s["inputs"]])
            loss = sum(vals[o].float().mean() for o in outputs)
            torch.autograd.grad(loss, params)
        if i >= warmup:
            samples.append(t.ms)
    return stats(samples)


def device_name():
    if DEVICE.type == "cuda":
        return torch.cuda.get_device_name(0)
    return "CPU (torch)"


def handle(msg):
    t = msg.get("type")
    if t == "init":
        return dict(type="ready", deviceName=device_name(), backend="torch",
                    version="torch %s cuda %s" % (torch.__version__, torch.version.cuda))
    if t == "trial":
        try:
            return dict(type="result", id=msg["id"], **time_layer(msg["spec"], msg["batch"], msg["warmup"], msg["repetitions"]))
        except Unsupported as e:
            return dict(type="unsupported", id=msg["id"], reason=str(e))
    if t == "copy":
        pts = []
        for n in msg["sizesBytes"]:
            host = torch.randn(max(1, n // 4))
            samples = []
            for i in range(msg["repetitions"] + 1):
                t0 = time.perf_counter()
                d = host.to(DEVICE)
                d.cpu()
                if DEVICE.type == "cuda":
                    torch.cuda.synchronize()
                if i:
                    samples.append((time.perf_counter() - t0) * 1000.0)
            pts.append(dict(bytes=host.numel() * 4, ms=statistics.median(samples)))
        return dict(type="copyResult", id=msg["id"], points=pts)
    if t == "wholeStep":
        try:
            med, spread = whole_step(msg["specs"], msg["inputs"], msg["outputs"], msg["batch"], msg["warmup"], msg["repetitions"])
            return dict(type="wholeStepResult", id=msg["id"], ms=med, spread=spread)
        except Unsupported as e:
            return dict(type="unsupported", id=msg["id"], reason=str(e))
    if t == "exit":
        sys.exit(0)
    return None


def serve():
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        msg = json.loads(line)
        try:
            out = handle(msg)
        except SystemExit:
            raise
        except Exception as e:  # one layer's failure, reported for that layer
            out = dict(type="failed", id=msg.get("id", 0), error=("%s: %s" % (type(e).__name__, e))[:500])
            if msg.get("type") == "init":
                out = dict(type="initFailed", error=str(e))
        if out is not None:
            sys.stdout.write(json.dumps(out) + "\n")
            sys.stdout.flush()


def report(path, warmup=3, reps=10):
    """Direct mode for scripts/gpu-check.sh: one exported model spec file."""
    with open(path) as f:
        model = json.load(f)
    batch = model["batch"]
    print("== %s (batch %d) on %s, torch %s" % (model["model"], batch, device_name(), torch.__version__))
    total = 0.0
    for s in model["specs"]:
        try:
            r = time_layer(s, batch, warmup, reps)
            total += r["forwardMs"] + r["backwardMs"]
            print("  %-28s fwd %9.4f ms  bwd %9.4f ms  spread %.2f/%.2f" % (s["name"], r["forwardMs"], r["backwardMs"], r["forwardSpread"], r["backwardSpread"]))
        except Exception as e:
            print("  %-28s FAILED %s" % (s["name"], e))
    med, spread = whole_step(model["specs"], model["inputs"], model["outputs"], batch, warmup, reps)
    print("  sum of layers %.3f ms; whole step %.3f ms (spread %.2f); fidelity %.3f" % (total, med, spread, total / med))
    return total, med


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "--specs":
        for p in sys.argv[2:]:
            report(p)
    else:
        serve()
