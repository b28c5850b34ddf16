/**
 * A plain PyTorch training loop that wraps its model itself as a training config (configs/torchScript.ts): FSDP1's
 * sharding strategy, CPUOffload and MixedPrecision, FSDP2's fully_shard (the blocks' reshard_after_forward, its
 * mesh, offload and mixed-precision policies), DDP with ZeroRedundancyOptimizer, autocast and GradScaler,
 * activation checkpointing and a DataLoader's batch, read with torch's semantics; what the run decides
 * (expressions, flags, settings WAP cannot see) is not stated; the quick-fix's exact text; half-typed scripts;
 * and scripts a framework owns staying that framework's.
 */
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { applyTextEdits, checkConfig, detectConfigFormats, fixAll, initConfigReaders, pinnedOptions, readConfigSetups, resolveLaunchedModel, type FileAccess, type StatedSetup } from '../../src/configs';
import type { PlanOptions } from '../../src/protocol/planOptions';
import { llamaPlan } from './llamaPlan';

before(() => initConfigReaders());

/** nanoGPT's train.py, cut to what decides its setup: DDP behind `if ddp:`, dtype and accumulation decided at run time. */
const NANOGPT = `import os
from contextlib import nullcontext

import torch
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.distributed import init_process_group, destroy_process_group

from model import GPTConfig, GPT

batch_size = 12
block_size = 1024
gradient_accumulation_steps = 5 * 8
dtype = 'bfloat16' if torch.cuda.is_available() and torch.cuda.is_bf16_supported() else 'float16'
exec(open('configurator.py').read())

ddp = int(os.environ.get('RANK', -1)) != -1
if ddp:
    init_process_group(backend='nccl')
    ddp_local_rank = int(os.environ['LOCAL_RANK'])
    gradient_accumulation_steps //= int(os.environ['WORLD_SIZE'])
device_type = 'cuda' if 'cuda' in device else 'cpu'
ptdtype = {'float32': torch.float32, 'bfloat16': torch.bfloat16, 'float16': torch.float16}[dtype]
ctx = nullcontext() if device_type == 'cpu' else torch.amp.autocast(device_type=device_type, dtype=ptdtype)

model = GPT(GPTConfig(**model_args))
scaler = torch.cuda.amp.GradScaler(enabled=(dtype == 'float16'))
optimizer = model.configure_optimizers(weight_decay, learning_rate, (beta1, beta2), device_type)
if ddp:
    model = DDP(model, device_ids=[ddp_local_rank])

while True:
    for micro_step in range(gradient_accumulation_steps):
        with ctx:
            logits, loss = model(X, Y)
            loss = loss / gradient_accumulation_steps
        X, Y = get_batch('train')
        scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
`;

/** A DDP loop that states everything as literals: bf16 autocast, ZeRO-1 through ZeroRedundancyOptimizer, its batch split. */
const DDP_LITERAL = `import torch
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.distributed.optim import ZeroRedundancyOptimizer
from torch.utils.data import DataLoader, DistributedSampler

from model import GPT

grad_accum = 4

model = DDP(GPT().cuda(), device_ids=[local_rank])
optimizer = ZeroRedundancyOptimizer(model.parameters(), optimizer_class=torch.optim.AdamW, lr=3e-4)
loader = DataLoader(dataset, batch_size=8, sampler=DistributedSampler(dataset))
for step, (x, y) in enumerate(loader):
    with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
        loss = model(x, y) / grad_accum
    loss.backward()
    if (step + 1) % grad_accum == 0:
        optimizer.step()
`;

/** FSDP1 as the PyTorch FSDP tutorial writes it: a wrap policy, a MixedPrecision kept in a variable, checkpointing applied after. */
const FSDP1 = `import functools
import torch
import torch.distributed as dist
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP, ShardingStrategy, MixedPrecision, CPUOffload
from torch.distributed.fsdp.wrap import transformer_auto_wrap_policy
from torch.distributed.algorithms._checkpoint.checkpoint_wrapper import apply_activation_checkpointing, checkpoint_wrapper, CheckpointImpl
from torch.utils.data import DataLoader, DistributedSampler

from model import Transformer, TransformerBlock

batch_size = 4
gradient_accumulation_steps = 8


def main():
    dist.init_process_group("nccl")
    model = Transformer()
    wrap_policy = functools.partial(transformer_auto_wrap_policy, transformer_layer_cls={TransformerBlock})
    bf16 = MixedPrecision(param_dtype=torch.bfloat16, reduce_dtype=torch.bfloat16, buffer_dtype=torch.bfloat16)
    model = FSDP(
        model,
        auto_wrap_policy=wrap_policy,
        sharding_strategy=ShardingStrategy.SHARD_GRAD_OP,
        mixed_precision=bf16,
        cpu_offload=CPUOffload(offload_params=True),
        device_id=torch.cuda.current_device(),
    )
    apply_activation_checkpointing(
        model,
        checkpoint_wrapper_fn=functools.partial(checkpoint_wrapper, checkpoint_impl=CheckpointImpl.NO_REENTRANT),
        check_fn=lambda m: isinstance(m, TransformerBlock),
    )
    train_loader = DataLoader(train_set, batch_size=batch_size, sampler=DistributedSampler(train_set))
    val_loader = DataLoader(val_set, batch_size=32)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
    for step, (x, y) in enumerate(train_loader):
        loss = model(x, y) / gradient_accumulation_steps
        loss.backward()
        if (step + 1) % gradient_accumulation_steps == 0:
            optimizer.step()
            optimizer.zero_grad()


if __name__ == "__main__":
    main()
`;

/** FSDP2 as torchtitan's apply_fsdp writes it: per-block fully_shard with an unpacked config dict, the root kept gathered. */
const FSDP2 = `import torch
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import fully_shard, MixedPrecisionPolicy
from torch.distributed.algorithms._checkpoint.checkpoint_wrapper import checkpoint_wrapper

from llama import ModelArgs, Transformer


def apply_fsdp(model, mesh):
    mp_policy = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
    fsdp_config = {"mesh": mesh, "mp_policy": mp_policy}
    for layer_id, block in model.layers.items():
        fully_shard(block, **fsdp_config, reshard_after_forward=True)
    fully_shard(model, **fsdp_config, reshard_after_forward=False)


def main():
    mesh = init_device_mesh("cuda", (8,))
    model = Transformer(ModelArgs())
    for layer_id, block in model.layers.named_children():
        model.layers.register_module(layer_id, checkpoint_wrapper(block))
    apply_fsdp(model, mesh)
`;

const setupOf = (text: string, file = 'train.py'): StatedSetup => {
  assert.deepEqual(detectConfigFormats(file, text), ['torch-script']);
  const [setup] = readConfigSetups(file, text);
  assert.ok(setup, 'a stated setup');
  return setup;
};

/** The dimensions as [value, stated]; undefined where the script states nothing WAP can read. */
const dims = (s: StatedSetup) => Object.fromEntries((['precision', 'zeroStage', 'hybridShard', 'cpuOffload', 'paramOffload', 'recompute', 'microBatch', 'gradientAccumulation'] as const)
  .map((k) => [k, s[k] ? [s[k]!.value, s[k]!.stated] : undefined]));

test("nanoGPT's DDP loop: ZeRO-0 (DDP behind `if ddp:` is how the script runs on several GPUs); its dtype, batch and accumulation are the run's", () => {
  const s = setupOf(NANOGPT);
  assert.equal(s.label, 'PyTorch DDP script');
  assert.deepEqual(dims(s), {
    // ptdtype and GradScaler(enabled=(dtype == 'float16')) are decided at run time; batch_size may be rewritten by the
    // configurator.py the script executes, and the accumulation is arithmetic divided by the world size.
    precision: undefined, zeroStage: [0, true], hybridShard: undefined, cpuOffload: [false, false], paramOffload: [false, false],
    recompute: ['none', false], microBatch: undefined, gradientAccumulation: undefined,
  });
  // Against a ZeRO-3 plan: DDP has no words for it, said with what to do; a precision the run chooses is not "inexpressible".
  const findings = checkConfig('train.py', NANOGPT, llamaPlan({ zeroStage: 3, recompute: 'none' })).findings;
  assert.deepEqual(findings.map((f) => [f.code, f.message.replace(/:.*/, '')]), [['cannot-express', 'The plan uses ZeRO 3, which a PyTorch DDP script cannot express']]);
  assert.match(findings[0]!.message, /wrap it in FSDP instead/);
  assert.equal(NANOGPT.slice(findings[0]!.range.start, findings[0]!.range.end), 'DDP(model, device_ids=[ddp_local_rank])');
});

test('DDP with literals: ZeroRedundancyOptimizer is ZeRO-1, autocast bf16, the loader\'s batch and the loop\'s accumulation; the fix rewrites autocast\'s dtype and keeps the global batch', () => {
  const s = setupOf(DDP_LITERAL);
  assert.deepEqual(dims(s), {
    precision: ['bf16', true], zeroStage: [1, true], hybridShard: undefined, cpuOffload: [false, false], paramOffload: [false, false],
    recompute: ['none', false], microBatch: [8, true], gradientAccumulation: [4, true],
  });
  // 8 × 4 × the plan's 8 replicas = 256; the plan's micro-batch 2 keeps it with accumulation 16.
  const plan = llamaPlan({ zeroStage: 1, precision: 'fp16', recompute: 'none', microBatch: 2 });
  const fixed = fixAll('train.py', DDP_LITERAL, plan).text;
  assert.equal(fixed, DDP_LITERAL.replace('grad_accum = 4', 'grad_accum = 16').replace('batch_size=8', 'batch_size=2').replace('dtype=torch.bfloat16', 'dtype=torch.float16'));
  assert.deepEqual(checkConfig('train.py', fixed, plan).findings.filter((f) => f.code === 'setup-differs'), []);
  // fp32 switches the autocast off rather than deleting the user's code; read back, the loop trains in fp32.
  const fp32 = fixAll('train.py', DDP_LITERAL, llamaPlan({ zeroStage: 1, precision: 'fp32', recompute: 'none', microBatch: 8, gradientAccumulation: 4 })).text;
  assert.equal(fp32, DDP_LITERAL.replace('dtype=torch.bfloat16)', 'dtype=torch.bfloat16, enabled=False)'));
  assert.deepEqual(readConfigSetups('train.py', fp32)[0]!.precision?.value, 'fp32');
  // The stages DDP cannot reach are said, not written; a plain DDP loop without the optimizer wrapper is ZeRO-0.
  const zero3 = checkConfig('train.py', DDP_LITERAL, llamaPlan({ zeroStage: 3, recompute: 'none', microBatch: 8, gradientAccumulation: 4 })).findings;
  assert.deepEqual(zero3.map((f) => f.code), ['cannot-express']);
  const plain = DDP_LITERAL.replace('ZeroRedundancyOptimizer(model.parameters(), optimizer_class=torch.optim.AdamW, lr=3e-4)', 'torch.optim.AdamW(model.parameters(), lr=3e-4)');
  assert.deepEqual(dims(setupOf(plain)).zeroStage, [0, true]);
});

test('autocast and GradScaler as torch runs them: cuda.amp.autocast() is float16, a GradScaler alone is fp16; an expression, a flag, a CPU autocast or a cast model state nothing', () => {
  const loop = (body: string, head = '') => `import torch\nfrom torch.nn.parallel import DistributedDataParallel as DDP\n${head}model = DDP(net)\nfor x in data:\n${body}`;
  const precision = (text: string) => setupOf(text).precision;
  assert.deepEqual([precision(loop('    with torch.cuda.amp.autocast():\n        model(x)\n'))?.value, precision(loop('    with torch.cuda.amp.autocast():\n        model(x)\n'))?.stated], ['fp16', true]);
  assert.equal(precision(loop("    with torch.amp.autocast('cuda', torch.bfloat16):\n        model(x)\n"))?.value, 'bf16');
  assert.equal(precision(loop('    with autocast(dtype=torch.bfloat16):\n        model(x)\n', 'from torch.cuda.amp import autocast\n'))?.value, 'bf16');
  assert.deepEqual([precision(loop('    scaler.scale(model(x)).backward()\n', 'scaler = torch.cuda.amp.GradScaler()\n'))?.value], ['fp16']);
  // A plain loop with none of these trains in fp32, torch's default: stated by default.
  assert.deepEqual([precision(loop('    model(x)\n'))?.value, precision(loop('    model(x)\n'))?.stated], ['fp32', false]);
  // What the run decides: not stated, never a guess.
  for (const [body, head] of [
    ['    with torch.autocast("cuda", dtype=ptdtype):\n        model(x)\n', ''],
    ['    with torch.autocast(device, dtype=torch.bfloat16):\n        model(x)\n', ''],
    ['    if args.amp:\n        with torch.autocast("cuda", dtype=torch.bfloat16):\n            model(x)\n', ''],
    ['    with torch.cuda.amp.autocast(enabled=args.amp):\n        model(x)\n', ''],
    ['    scaler.scale(model(x)).backward()\n', 'scaler = torch.cuda.amp.GradScaler(enabled=use_fp16)\n'],
    ['    model(x)\n', 'net = net.to(torch.bfloat16)\n'],
    ['    model(x)\n', 'net.half()\n'],
  ]) assert.equal(precision(loop(body!, head)), undefined, body! + head!);
  // A CPU autocast leaves the GPU in fp32.
  assert.equal(precision(loop('    with torch.autocast("cpu", dtype=torch.bfloat16):\n        model(x)\n'))?.value, 'fp32');
  // The fix adds the dtype where autocast relies on its default; a GradScaler alone cannot be rewritten into bf16.
  const bare = loop('    with torch.cuda.amp.autocast():\n        model(x)\n');
  assert.equal(fixAll('train.py', bare, llamaPlan({ zeroStage: 0, recompute: 'none' })).text, bare.replace('autocast()', 'autocast(dtype=torch.bfloat16)'));
  const scaled = loop('    scaler.scale(model(x)).backward()\n', 'scaler = torch.cuda.amp.GradScaler()\n');
  const said = checkConfig('train.py', scaled, llamaPlan({ zeroStage: 0, recompute: 'none' })).findings;
  assert.deepEqual(said.map((f) => [f.code, /^The plan uses bf16, which a PyTorch DDP script cannot express: .*torch\.autocast/.test(f.message)]), [['cannot-express', true]]);
});

test('FSDP1 as the PyTorch tutorial writes it: SHARD_GRAD_OP is ZeRO-2, CPUOffload(offload_params=True) offloads parameters with the optimizer, MixedPrecision through its variable, checkpointing is full recompute; the fix writes each keyword', () => {
  const s = setupOf(FSDP1);
  assert.equal(s.label, 'PyTorch FSDP script');
  assert.deepEqual(dims(s), {
    precision: ['bf16', true], zeroStage: [2, true], hybridShard: [false, true], cpuOffload: [true, true], paramOffload: [true, true],
    recompute: ['full', true], microBatch: [4, true], gradientAccumulation: [8, true],
  });
  assert.equal(FSDP1.slice(s.precision!.range.start, s.precision!.range.end), 'torch.bfloat16');
  // The plan: ZeRO-3 within a node, replicated across (HSDP), fp16, no offload, micro-batch 2: every keyword is
  // rewritten where it is stated (param_dtype in the variable's call), the module-level batch split too.
  const plan = llamaPlan({ zeroStage: 3, hybridShard: true, precision: 'fp16', recompute: 'full' });
  const fixed = fixAll('train.py', FSDP1, plan).text;
  assert.equal(fixed, FSDP1
    .replace('batch_size = 4', 'batch_size = 2').replace('gradient_accumulation_steps = 8', 'gradient_accumulation_steps = 16')
    .replace('MixedPrecision(param_dtype=torch.bfloat16', 'MixedPrecision(param_dtype=torch.float16')
    .replace('ShardingStrategy.SHARD_GRAD_OP', 'ShardingStrategy.HYBRID_SHARD').replace('CPUOffload(offload_params=True)', 'CPUOffload(offload_params=False)'));
  assert.deepEqual(checkConfig('train.py', fixed, plan).findings.filter((f) => f.code === 'setup-differs'), []);
  // ZeRO-1 has no ShardingStrategy: said with what to do, and the rest is still fixed.
  const zero1 = checkConfig('train.py', FSDP1, llamaPlan({ zeroStage: 1, cpuOffload: true, paramOffload: true, recompute: 'full', microBatch: 4 })).findings;
  assert.deepEqual(zero1.map((f) => f.code), ['cannot-express']);
  assert.match(zero1[0]!.message, /^The plan uses ZeRO 1, which a PyTorch FSDP script cannot express: .*ZeroRedundancyOptimizer$/);
});

test("FSDP1's defaults and what it does not say: FULL_SHARD without a strategy, fp32 without MixedPrecision (the fix adds one), HYBRID_SHARD; positional settings and expressions are the run's", () => {
  const fsdp = (args: string) => `import torch\nfrom torch.distributed.fsdp import FullyShardedDataParallel as FSDP, ShardingStrategy\nmodel = FSDP(model${args})\n`;
  const bare = setupOf(fsdp(''));
  assert.deepEqual([dims(bare).zeroStage, dims(bare).hybridShard, dims(bare).cpuOffload, dims(bare).precision], [[3, false], [false, false], [false, false], ['fp32', false]]);
  assert.deepEqual([setupOf(fsdp(', sharding_strategy=ShardingStrategy.HYBRID_SHARD')).zeroStage?.value, setupOf(fsdp(', sharding_strategy=ShardingStrategy.HYBRID_SHARD')).hybridShard?.value], [3, true]);
  assert.deepEqual([setupOf(fsdp(', sharding_strategy=ShardingStrategy._HYBRID_SHARD_ZERO2')).zeroStage?.value, setupOf(fsdp(', sharding_strategy=ShardingStrategy.NO_SHARD')).zeroStage?.value], [2, 0]);
  // The fix names torch's classes through the module the script imports FSDP from, where it does not import them.
  const plan = llamaPlan({ zeroStage: 2, recompute: 'none', cpuOffload: true, paramOffload: true });
  assert.equal(fixAll('train.py', fsdp(''), plan).text, fsdp(', mixed_precision=torch.distributed.fsdp.MixedPrecision(param_dtype=torch.bfloat16), sharding_strategy=ShardingStrategy.SHARD_GRAD_OP, cpu_offload=torch.distributed.fsdp.CPUOffload(offload_params=True)'));
  // The run's choice: a strategy from the command line, settings by position, an unread **kwargs, a MixedPrecision assigned twice.
  assert.equal(setupOf(fsdp(', sharding_strategy=args.sharding')).zeroStage, undefined);
  assert.equal(setupOf(fsdp(', None, ShardingStrategy.SHARD_GRAD_OP')).zeroStage, undefined);
  assert.deepEqual([setupOf(fsdp(', **fsdp_kwargs')).zeroStage, setupOf(fsdp(', **fsdp_kwargs')).precision], [undefined, undefined]);
  const twice = 'import torch\nfrom torch.distributed.fsdp import FullyShardedDataParallel as FSDP, MixedPrecision\nmp = None\nif bf16_ready:\n    mp = MixedPrecision(param_dtype=torch.bfloat16)\nmodel = FSDP(model, mixed_precision=mp)\n';
  assert.equal(setupOf(twice).precision, undefined);
  // fairscale's FSDP is not torch's (its mixed_precision=True is fp16): the cheap detection lets it in, the reader states nothing.
  const fairscale = 'import torch\nfrom fairscale.nn import FullyShardedDataParallel as FSDP\nmodel = FSDP(model, mixed_precision=True)\n';
  assert.deepEqual([readConfigSetups('train.py', fairscale), checkConfig('train.py', fairscale, llamaPlan()).findings], [[], []]);
});

test("FSDP2 as torchtitan writes it: the blocks' reshard_after_forward is the stage, mp_policy through an unpacked dict, checkpoint_wrapper; the fix writes reshard_after_forward and the offload policy on each call", () => {
  const s = setupOf(FSDP2);
  assert.equal(s.label, 'PyTorch FSDP2 script');
  // The mesh is apply_fsdp's parameter: whether it is 2-D is not in this function, so hybrid sharding is not stated.
  assert.deepEqual(dims(s), {
    precision: ['bf16', true], zeroStage: [3, true], hybridShard: undefined, cpuOffload: [false, false], paramOffload: [false, false],
    recompute: ['full', true], microBatch: undefined, gradientAccumulation: undefined,
  });
  const plan = llamaPlan({ zeroStage: 2, precision: 'fp16', cpuOffload: true, paramOffload: true, recompute: 'full' });
  const fixed = fixAll('train.py', FSDP2, plan).text;
  assert.equal(fixed, FSDP2
    .replace('param_dtype=torch.bfloat16', 'param_dtype=torch.float16')
    .replace('reshard_after_forward=True)', 'reshard_after_forward=False, offload_policy=torch.distributed.fsdp.CPUOffloadPolicy())')
    .replace('fully_shard(model, **fsdp_config, reshard_after_forward=False)', 'fully_shard(model, **fsdp_config, reshard_after_forward=False, offload_policy=torch.distributed.fsdp.CPUOffloadPolicy())'));
  const back = readConfigSetups('train.py', fixed)[0]!;
  assert.deepEqual([back.zeroStage?.value, back.paramOffload?.value, back.precision?.value], [2, true, 'fp16']);
  // ZeRO-0/1 are not fully_shard's: said.
  assert.match(checkConfig('train.py', FSDP2, llamaPlan({ zeroStage: 1, recompute: 'full' })).findings.map((f) => f.message).join('\n'), /The plan uses ZeRO 1, which a PyTorch FSDP2 script cannot express: .*ZeroRedundancyOptimizer/);
});

test('FSDP2 meshes and the defaults torch changed: a 2-D replicate × shard mesh is HSDP, a 1-D one is not; a lone root fully_shard without the keyword, an expression or an int reshard say nothing', () => {
  const script = (shard: string, mesh = 'mesh = init_device_mesh("cuda", (2, 8), mesh_dim_names=("replicate", "shard"))\n') =>
    `import torch\nfrom torch.distributed.device_mesh import init_device_mesh\nfrom torch.distributed._composable.fsdp import fully_shard, CPUOffloadPolicy\n${mesh}${shard}`;
  const blocks = (kw: string) => `for block in model.layers:\n    fully_shard(block, mesh=mesh${kw})\nfully_shard(model, mesh=mesh${kw.replace(/, reshard_after_forward=\w+/, '')})\n`;
  const hsdp = setupOf(script(blocks(', offload_policy=CPUOffloadPolicy()')));
  assert.deepEqual([dims(hsdp).hybridShard, dims(hsdp).zeroStage, dims(hsdp).paramOffload], [[true, true], [3, false], [true, true]]);
  assert.deepEqual(setupOf(script(blocks(''), 'mesh = init_device_mesh("cuda", (8,))\n')).hybridShard?.value, false);
  assert.deepEqual(setupOf(script(blocks(''), 'mesh = world_mesh["dp_replicate", "dp_shard"]\n')).hybridShard?.value, true);
  // A 2-D mesh whose second dimension is tensor parallel is not a replica group: unsure, nothing said.
  assert.equal(setupOf(script(blocks(''), 'mesh = init_device_mesh("cuda", (4, 2), mesh_dim_names=("dp", "tp"))\n')).hybridShard, undefined);
  // HSDP is the mesh's: a plan without it is said, not written.
  const said = checkConfig('train.py', script(blocks('')), llamaPlan({ zeroStage: 3, recompute: 'none' })).findings;
  assert.ok(said.some((f) => f.code === 'cannot-express' && /no hybrid sharding, which a PyTorch FSDP2 script cannot express: .*2-D mesh/.test(f.message)), JSON.stringify(said));
  // torch 2.4-2.6 reshard a root-only fully_shard after forward, later versions do not: unsure, so no stage.
  assert.equal(setupOf(script('fully_shard(model, mesh=mesh)\n')).zeroStage, undefined);
  assert.equal(setupOf(script('fully_shard(model, mesh=mesh, reshard_after_forward=False)\n')).zeroStage?.value, 2);
  // torchtitan's "every block but the last" is an expression: the run's.
  assert.equal(setupOf(script('for i, block in enumerate(model.layers):\n    fully_shard(block, reshard_after_forward=i < n - 1)\n')).zeroStage, undefined);
  const partial = script(blocks(', reshard_after_forward=8'));
  assert.equal(setupOf(partial).zeroStage, undefined);
  assert.deepEqual(checkConfig('train.py', partial, undefined).findings.map((f) => [f.code, partial.slice(f.range.start, f.range.end)]), [['setup-unmodelled', '8']]);
});

test('tensor and pipeline parallelism through DTensor APIs are said as not read and left to the search, never pinned off', () => {
  const tp = 'import torch\nfrom torch.distributed.tensor.parallel import parallelize_module, ColwiseParallel\nfrom torch.distributed.fsdp import fully_shard\nparallelize_module(model, tp_mesh, {"wq": ColwiseParallel()})\nfor b in model.layers:\n    fully_shard(b, mesh=dp_mesh)\n';
  const s = setupOf(tp);
  assert.deepEqual(s.unmodelled?.map((u) => [u.short, tp.slice(u.range.start, u.range.end).slice(0, 19)]), [['tensor parallelism not read', 'parallelize_module(']]);
  const base: PlanOptions = { batch: 64, objective: 'throughput', strategies: 'all', optimizer: 'adam' };
  assert.deepEqual([pinnedOptions(base, s, 'train.py').pins?.tensorParallel, pinnedOptions(base, s, 'train.py').pins?.pipelineStages], [undefined, 1]);
  const pp = 'import torch\nfrom torch.distributed.pipelining import PipelineStage, ScheduleGPipe\nfrom torch.nn.parallel import DistributedDataParallel as DDP\nstage = PipelineStage(part, rank, world, device)\nmodel = DDP(part)\n';
  assert.deepEqual(setupOf(pp).unmodelled?.map((u) => u.short), ['pipeline parallelism not read']);
  assert.equal(pinnedOptions(base, setupOf(pp), 'train.py').pins?.pipelineStages, undefined);
  // Without them, a script has no TP/PP/CP: pinned off for "your config".
  assert.deepEqual(pinnedOptions(base, setupOf(DDP_LITERAL), 'train.py').pins?.tensorParallel, 1);
});

test('a half-typed script never throws: one malformed-config error or nothing, at every cut', () => {
  for (const script of [FSDP1, FSDP2, DDP_LITERAL]) {
    for (let cut = 0; cut <= script.length; cut += 7) {
      const text = script.slice(0, cut);
      assert.doesNotThrow(() => readConfigSetups('train.py', text), `readSetup at ${cut}`);
      const { findings } = checkConfig('train.py', text, llamaPlan());
      const broken = findings.filter((f) => f.code === 'malformed-config');
      assert.ok(broken.length === 0 || findings.length === 1, `check at ${cut}: ${JSON.stringify(findings)}`);
    }
  }
  const typing = 'import torch\nfrom torch.distributed.fsdp import FullyShardedDataParallel as FSDP, ShardingStrategy\nmodel = FSDP(model, sharding_strategy=ShardingStrategy.)\n';
  const [f] = checkConfig('train.py', typing, llamaPlan()).findings;
  assert.deepEqual([f?.code, f?.message], ['malformed-config', 'Python: syntax error inside the FullyShardedDataParallel(…) call']);
  assert.deepEqual(readConfigSetups('train.py', typing), []);
});

test('scripts a framework wraps stay that framework\'s: Lightning, the Hugging Face Trainer, accelerate; a script without a wrapper is no config', () => {
  const lightning = 'import torch\nimport lightning as L\nfrom torch.distributed.fsdp import ShardingStrategy\nfrom torch.nn.parallel import DistributedDataParallel\ntrainer = L.Trainer(strategy=L.pytorch.strategies.FSDPStrategy(sharding_strategy=ShardingStrategy.SHARD_GRAD_OP))\n';
  assert.deepEqual(detectConfigFormats('fit.py', lightning), ['lightning']);
  const hf = 'import torch\nfrom transformers import Trainer, TrainingArguments\nfrom torch.distributed.fsdp import FullyShardedDataParallel\nargs = TrainingArguments(output_dir="o", fsdp="full_shard")\n';
  assert.deepEqual(detectConfigFormats('ft.py', hf), ['hf-trainer']);
  const accelerate = 'import torch\nfrom accelerate import Accelerator\nfrom torch.nn.parallel import DistributedDataParallel\naccelerator = Accelerator()\nmodel = accelerator.prepare(model)\n';
  assert.deepEqual(detectConfigFormats('train.py', accelerate), []);
  // The same loop wrapping the model itself is a torch-script config.
  assert.deepEqual(detectConfigFormats('train.py', 'import torch\nfrom torch.nn.parallel import DistributedDataParallel\nmodel = DistributedDataParallel(model)\n'), ['torch-script']);
  assert.deepEqual(detectConfigFormats('model.py', 'import torch\nclass GPT(torch.nn.Module): ...\n'), []);
  assert.deepEqual(detectConfigFormats('notes.md', NANOGPT), []);
});

test('the script is its own launcher: its model is what it imports from a local module, its GPU count the launch script\'s', () => {
  const files: Record<string, string> = { 'p/train.py': FSDP1, 'p/model.py': 'class Transformer: ...\n', 'p/run.sh': 'torchrun --nproc_per_node 8 train.py\n' };
  const io: FileAccess = {
    read: (path) => files[path],
    list: (dir) => Object.keys(files).filter((p) => p.startsWith(`${dir}/`)).map((p) => p.slice(dir.length + 1)),
  };
  assert.deepEqual(resolveLaunchedModel('p/train.py', FSDP1, io), { file: 'p/model.py', modelName: 'Transformer', how: 'imported by train.py, the PyTorch script train.py' });
  const [setup] = readConfigSetups('p/train.py', FSDP1, io);
  assert.deepEqual([setup!.world, setup!.worldFrom], [8, 'run.sh']);
  assert.equal(pinnedOptions({ batch: 64, objective: 'throughput', strategies: 'all', optimizer: 'adam' }, setup!, 'train.py').batch, 4 * 8 * 8);
  // The check's own fix, applied: only the stage the plan changes is rewritten.
  const plan = llamaPlan({ zeroStage: 2, recompute: 'full', cpuOffload: true, paramOffload: true, microBatch: 4 });
  const fix = checkConfig('p/train.py', FSDP1, plan, undefined, io).findings.find((f) => f.fix)?.fix;
  assert.equal(fix, undefined, 'the tutorial script already trains the plan');
  const differs = checkConfig('p/train.py', FSDP1, llamaPlan({ zeroStage: 3, recompute: 'full', cpuOffload: true, paramOffload: true, microBatch: 4 }), undefined, io).findings.find((f) => f.fix)!;
  assert.equal(applyTextEdits(FSDP1, differs.fix!.edits), FSDP1.replace('ShardingStrategy.SHARD_GRAD_OP', 'ShardingStrategy.FULL_SHARD'));
});
