#!/usr/bin/env python3
"""WAP `validate`: a few data-parallel training steps of the analysed model, one rank per device.

Started by torchrun (`python -m torch.distributed.run --nproc_per_node N validate_dp.py --job FILE`).
The model is built from the IR layer specs exactly as the trial worker builds
layers (torch_worker.build), never from the user's source. Each rank measures,
after warm-up, the median of:

  compute    forward + backward with no gradient synchronisation;
  allreduce  the gradients all-reduced layer by layer (the planner's per-layer model);
  step       a whole DistributedDataParallel step (forward, backward with bucketed
             all-reduce overlapped, optimizer update), as a training script runs it;

and, first, an all-reduce of a few buffer sizes (the α-β calibration the
prediction's cluster is built from). The slowest rank's medians are what a
step waits for, so each number is the maximum over ranks. Rank 0 writes one
JSON object to the job's result file.
"""
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_worker as tw  # noqa: E402  (exits with one clear line when torch is missing)

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
import torch.nn as nn  # noqa: E402
from torch.nn.parallel import DistributedDataParallel as DDP  # noqa: E402


class Graph(nn.Module):
    """The IR graph: one module per layer, evaluated in topological order."""

    def __init__(self, specs, outputs):
        super().__init__()
        self.specs = specs
        self.outputs = outputs
        self.layers = nn.ModuleList([tw.build(s) for s in specs])

    def forward(self, feeds):
        vals = dict(feeds)
        for s, m in zip(self.specs, self.layers):
            vals[s["id"]] = m(*[vals[j] for j in s["inputs"]])
        return sum(vals[o].float().mean() for o in self.outputs)


def sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def timed(device, fn, warmup, steps):
    samples = []
    for i in range(warmup + steps):
        dist.barrier()
        sync(device)
        t0 = time.perf_counter()
        fn()
        sync(device)
        if i >= warmup:
            samples.append((time.perf_counter() - t0) * 1000.0)
    return statistics.median(samples)


def slowest(values, device):
    """Element-wise maximum over ranks: a synchronous step waits for the slowest rank."""
    t = torch.tensor(values, dtype=torch.float64, device=device)
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    return t.tolist()


def make_optimizer(kind, params):
    if kind == "adam":
        return torch.optim.Adam(params, lr=1e-4)
    if kind == "momentum":
        return torch.optim.SGD(params, lr=1e-4, momentum=0.9)
    return torch.optim.SGD(params, lr=1e-4)


def main(job_path):
    with open(job_path) as f:
        job = json.load(f)
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    if job["device"] == "cuda":
        torch.cuda.set_device(local_rank)
        device = torch.device("cuda", local_rank)
    else:
        device = torch.device("cpu")
        torch.set_num_threads(max(1, int(job.get("threadsPerProcess", 1))))
    tw.DEVICE = device  # the layer builders and input makers place tensors on tw.DEVICE
    dist.init_process_group("nccl" if device.type == "cuda" else "gloo")
    rank = dist.get_rank()
    torch.manual_seed(1234 + rank)
    warmup, steps = int(job["warmup"]), int(job["steps"])

    # α-β calibration of the all-reduce on these ranks (synthetic buffers, not the model's gradients).
    points = []
    for nbytes in job["calibrationBytes"]:
        buf = torch.ones(max(1, nbytes // 4), device=device)
        ms = timed(device, lambda: dist.all_reduce(buf), 1, 5)
        points.append([buf.numel() * 4, ms])
    # Memory bandwidth one rank gets while every rank streams (the optimizer update is memory-bound).
    src = torch.ones(max(1, int(job.get("memoryProbeBytes", 64 << 20)) // 4), device=device)
    dst = torch.empty_like(src)
    copy_ms = timed(device, lambda: dst.copy_(src), 1, 5)
    cal = slowest([p[1] for p in points] + [copy_ms], device)
    copy_ms = cal.pop()
    points = [dict(bytes=p[0], ms=m) for p, m in zip(points, cal)]
    memory_gbs = 2 * src.numel() * 4 / (copy_ms * 1e6)
    del src, dst

    model = Graph(job["specs"], job["outputs"]).to(device).train()
    feeds = {}
    for inp in job["inputs"]:
        consumer = next((s for s in job["specs"] if inp["id"] in s["inputs"]), None)
        shape = [job["batch"]] + (tw.to_cf(consumer, inp["shape"]) if consumer else list(inp["shape"]))
        feeds[inp["id"]] = torch.randint(0, 2, shape, device=device) if inp.get("dtype") == "int" else torch.randn(shape, device=device)
    layer_params = [[p for p in m.parameters() if p.requires_grad] for m in model.layers]
    params = [p for ps in layer_params for p in ps]

    def compute():
        loss = model(feeds)
        torch.autograd.grad(loss, params) if params else None

    grads = [[torch.randn_like(p) for p in ps] for ps in layer_params if ps]

    def allreduce():
        # Backward produces gradients last layer first; each layer's are flattened into one all-reduce.
        for gs in reversed(grads):
            flat = torch.cat([g.reshape(-1) for g in gs])
            dist.all_reduce(flat)

    ddp = DDP(model, device_ids=[local_rank] if device.type == "cuda" else None)
    opt = make_optimizer(job.get("optimizer", "sgd"), ddp.parameters())

    def step():
        opt.zero_grad(set_to_none=True)
        loss = ddp(feeds)
        loss.backward()
        opt.step()

    compute_ms = timed(device, compute, warmup, steps)
    allreduce_ms = timed(device, allreduce, warmup, steps) if grads else 0.0
    step_ms = timed(device, step, warmup, steps)
    compute_ms, allreduce_ms, step_ms = slowest([compute_ms, allreduce_ms, step_ms], device)
    if rank == 0:
        out = dict(computeMs=compute_ms, allreduceMs=allreduce_ms, stepMs=step_ms, allreducePoints=points, memoryBandwidthGBs=memory_gbs,
                   worldSize=dist.get_world_size(), torchVersion=torch.__version__, backend=dist.get_backend(),
                   deviceName=torch.cuda.get_device_name(device) if device.type == "cuda" else "CPU process",
                   params=sum(p.numel() for p in params), warmup=warmup, steps=steps)
        # Written whole, then renamed: the parent may read it as soon as it exists (a hung teardown is killed after it).
        partial = job["resultFile"] + ".partial"
        with open(partial, "w") as f:
            json.dump(out, f)
        os.replace(partial, job["resultFile"])
    dist.barrier()
    dist.destroy_process_group()


def run_reporting_errors(job_path):
    """A failing rank leaves its error in rank-<R>.err beside the job, so the parent reports it in one message."""
    try:
        main(job_path)
    except Exception as e:
        import traceback
        rank = os.environ.get("RANK", "?")
        with open(os.path.join(os.path.dirname(job_path), "rank-%s.err" % rank), "w") as f:
            f.write("%s: %s\n" % (type(e).__name__, e))
            f.write(traceback.format_exc())
        sys.stderr.write("rank %s: %s: %s\n" % (rank, type(e).__name__, e))
        sys.exit(1)


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] != "--job":
        sys.stderr.write("usage: validate_dp.py --job FILE.json (started by torchrun)\n")
        sys.exit(2)
    run_reporting_errors(sys.argv[2])
