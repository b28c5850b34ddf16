/**
 * Training code wraps its model before training (trainingWrappers.ts):
 * torch.compile and DDP as nanoGPT's train.py does, DataParallel, FSDP and
 * FSDP2, Accelerate's prepare, Fabric's setup, deepspeed.initialize. Each must
 * leave the model the script builds. Before, `model` became unknown and the
 * sibling file's GPT class was read with its defaults: 124 M parameters for a
 * script that trains the 355 M GPT-2 medium, without a word.
 */
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { analyzeSource, initFrontends } from '../../src/frontends';

const dir = mkdtempSync(join(tmpdir(), 'wap-wrappers-'));
before(async () => {
  await initFrontends();
  // nanoGPT's model.py, as the import tests use it.
  copyFileSync(join(__dirname, '..', 'fixtures', 'nanogpt', 'model.py'), join(dir, 'model.py'));
});
after(() => rmSync(dir, { recursive: true, force: true }));

const HEADER = 'import torch\nfrom model import GPTConfig, GPT\ngptconf = GPTConfig(n_layer=24, n_head=16, n_embd=1024, block_size=1024, bias=False)\n';

async function modelsOf(name: string, body: string): Promise<Array<{ name: string; params: number; line: number }>> {
  const file = join(dir, name);
  const text = HEADER + body;
  writeFileSync(file, text);
  const r = await analyzeSource(file, text, {}, { workspaceFolders: [dir] });
  return r.models.map((m) => ({ name: m.name, params: m.totals.params, line: m.range.line }));
}

test('every wrapper keeps the model the script builds, named after the variable that holds it', async () => {
  const plain = await modelsOf('plain.py', 'model = GPT(gptconf)\n');
  assert.equal(plain.length, 1);
  const medium = plain[0].params;
  const defaults = (await modelsOf('defaults.py', 'model = GPT(GPTConfig())\n'))[0].params;
  assert.ok(medium > 2.5 * defaults, `${medium} vs ${defaults}`);

  const variants: Array<[string, string, string]> = [
    ['nanoGPT: compile, then DDP', 'from torch.nn.parallel import DistributedDataParallel as DDP\nmodel = GPT(gptconf)\nmodel = torch.compile(model)\nmodel = DDP(model, device_ids=[0])\n', 'model'],
    ['DataParallel', 'import torch.nn as nn\nmodel = nn.DataParallel(GPT(gptconf))\n', 'model'],
    ['FSDP', 'from torch.distributed.fsdp import FullyShardedDataParallel as FSDP\nmodel = FSDP(GPT(gptconf), use_orig_params=True)\n', 'model'],
    ['FSDP2', 'from torch.distributed._composable.fsdp import fully_shard\nmodel = fully_shard(GPT(gptconf))\n', 'model'],
    ['Accelerate', "from accelerate import Accelerator\naccelerator = Accelerator(mixed_precision='bf16')\nmodel, optimizer, loader = accelerator.prepare(GPT(gptconf), opt, loader)\n", 'model'],
    ['Fabric', 'import lightning as L\nfabric = L.Fabric(devices=8)\nmodel, optimizer = fabric.setup(GPT(gptconf), opt)\n', 'model'],
    ['DeepSpeed', 'import deepspeed\nengine, optimizer, _, _ = deepspeed.initialize(args=cmd_args, model=GPT(gptconf), model_parameters=params)\n', 'engine'],
  ];
  for (const [what, body, name] of variants) {
    const models = await modelsOf(`${what.replace(/\W+/g, '_')}.py`, body);
    assert.deepEqual(models.map((m) => [m.name, m.params]), [[name, medium]], what);
  }
});

test('activation checkpointing reads through: checkpoint(block, x) and checkpoint_sequential(layers, segments, x) give the layers the plain forward gives', async () => {
  const model = (forward: string) => `import torch
from torch import nn
from torch.utils.checkpoint import checkpoint, checkpoint_sequential

class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.fc = nn.Linear(dim, dim)
    def forward(self, x, scale=1.0):
        return x + self.fc(self.norm(x)) * scale

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList([Block(64) for _ in range(3)])
        self.tail = nn.Sequential(nn.Linear(64, 64), nn.GELU(), nn.Linear(64, 10))
    def forward(self, x):
${forward}

net = Net()
`;
  const read = async (name: string, forward: string) => {
    const file = join(dir, name);
    const text = model(forward);
    writeFileSync(file, text);
    const m = (await analyzeSource(file, text, { inputShape: [16, 64] })).models.find((x) => x.name === 'net')!;
    return { layers: m.layers.map((l) => [l.name, l.outputShape]), complete: m.completeness?.complete, params: m.totals.params };
  };
  const plain = await read('plain_net.py', '        for blk in self.blocks:\n            x = blk(x, scale=0.5)\n        return self.tail(x)');
  const checkpointed = await read('ckpt_net.py', '        for blk in self.blocks:\n            x = checkpoint(blk, x, use_reentrant=False, scale=0.5)\n        return checkpoint_sequential(self.tail, 2, x, use_reentrant=False)');
  assert.equal(plain.complete, true);
  assert.deepEqual(checkpointed, plain);
  assert.equal(plain.params, 3 * (64 * 2 + 64 * 64 + 64) + 64 * 64 + 64 + 64 * 10 + 10);
});
