/**
 * The model's own plan trains at the global batch (and, where nothing beside the model says one, the precision) that
 * the launch that trains it states (configs/launchedSetupHint.ts). Real files: the Hugging Face example (run.sh runs
 * run_clm.py with torchrun), and temp projects for a Trainer configured in code, a launcher one folder up, and
 * launches that disagree.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { initConfigReaders, launchedSetupHint, withLaunchedSetup } from '../../src/configs';
import type { PlanOptions } from '../../src/protocol/planOptions';
import { disk, root, writeFolder } from './helpers';

const project = mkdtempSync(join(tmpdir(), 'wap-launched-setup-'));
const ASSUMED: PlanOptions = { batch: 128, batchAssumed: true, objective: 'throughput', strategies: 'all', optimizer: 'adam' };
const MODEL = 'import torch.nn as nn\nclass Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(64, 10)\n    def forward(self, x):\n        return self.fc(x)\n';
const TRAINER = `${MODEL}from transformers import Trainer, TrainingArguments\nmodel = Net()\nargs = TrainingArguments(output_dir="out", per_device_train_batch_size=4, gradient_accumulation_steps=2)\nTrainer(model=model, args=args).train()\n`;

before(() => initConfigReaders());
after(() => rmSync(project, { recursive: true, force: true }));

test('run_clm.py as run.sh launches it: 4 per device × 8 torchrun processes is a global batch of 32, in bf16', () => {
  const hint = launchedSetupHint(join(root, 'test/fixtures/hf-example/run_clm.py'), disk);
  assert.ok(hint.batch && !('disagree' in hint.batch), JSON.stringify(hint));
  assert.equal(hint.batch.batch, 32);
  assert.match(hint.batch.source, /^run\.sh's .*micro-batch 4 × .*8/);
  assert.deepEqual(hint.precision?.precision, 'bf16');
  const options = withLaunchedSetup(ASSUMED, hint);
  assert.equal(options.batch, 32);
  assert.equal(options.batchAssumed, undefined, 'a stated batch is not assumed');
  assert.equal(options.precision, 'bf16');
  assert.match(options.precisionSource!, /^run\.sh/);
  assert.equal(options.ampStyle, 'autocast', 'the Trainer without DeepSpeed autocasts over fp32 parameters');
});

test('a Trainer configured in code takes its launcher’s GPUs: 4 × 2 accumulation × 8; from a launcher one folder up too', () => {
  const beside = writeFolder(project, 'beside', { 'train.py': TRAINER, 'run.sh': '#!/bin/bash\ntorchrun --nproc_per_node 8 train.py\n' });
  const hint = launchedSetupHint(join(beside, 'train.py'), disk);
  assert.equal(hint.batch && !('disagree' in hint.batch) ? hint.batch.batch : undefined, 64, JSON.stringify(hint));
  const above = writeFolder(project, 'above', { 'src/train.py': TRAINER, 'launch.sh': 'deepspeed --num_gpus 4 --num_nodes 2 src/train.py\n' });
  const fromAbove = launchedSetupHint(join(above, 'src', 'train.py'), disk);
  assert.equal(fromAbove.batch && !('disagree' in fromAbove.batch) ? fromAbove.batch.batch : undefined, 64, JSON.stringify(fromAbove));
});

test('what a flag or setting chose stays; nothing stated leaves the default assumed', () => {
  const beside = writeFolder(project, 'explicit', { 'train.py': TRAINER, 'run.sh': 'torchrun --nproc_per_node 8 train.py\n' });
  const hint = launchedSetupHint(join(beside, 'train.py'), disk);
  const explicit = withLaunchedSetup({ ...ASSUMED, batch: 256, batchAssumed: undefined, batchSource: '--batch' }, hint);
  assert.deepEqual([explicit.batch, explicit.batchSource], [256, '--batch']);
  const alone = writeFolder(project, 'alone', { 'train.py': TRAINER });
  const none = launchedSetupHint(join(alone, 'train.py'), disk);
  assert.equal(none.batch, undefined, 'no launcher: the GPU count, and so the global batch, is unknown');
  assert.deepEqual(withLaunchedSetup(ASSUMED, none), ASSUMED);
});

test('launches that state different global batches are named, and the default stays assumed', () => {
  const parser = `${MODEL}from transformers import HfArgumentParser, Trainer, TrainingArguments\nmodel = Net()\n(args,) = HfArgumentParser(TrainingArguments).parse_args_into_dataclasses()\nTrainer(model=model, args=args).train()\n`;
  const dir = writeFolder(project, 'disagree', {
    'train.py': parser,
    'small.sh': 'torchrun --nproc_per_node 8 train.py --output_dir out --per_device_train_batch_size 2\n',
    'large.sh': 'torchrun --nproc_per_node 8 train.py --output_dir out --per_device_train_batch_size 8\n',
  });
  const hint = launchedSetupHint(join(dir, 'train.py'), disk);
  assert.ok(hint.batch && 'disagree' in hint.batch, JSON.stringify(hint));
  const options = withLaunchedSetup(ASSUMED, hint);
  assert.equal(options.batch, 128);
  assert.equal(options.batchAssumed, true);
  assert.match(options.batchSource!, /different global batches \((large\.sh 64, small\.sh 16|small\.sh 16, large\.sh 64)\)/);
});

test('a launch that states no batch still says how many replicas it starts, for a batch the script states per process', () => {
  const loop = `${MODEL}import torch\nfrom torch.nn.parallel import DistributedDataParallel as DDP\nbatch_size = 16\nmodel = DDP(Net())\noptimizer = torch.optim.AdamW(model.parameters())\n`;
  const dir = writeFolder(project, 'replicas', { 'train.py': loop, 'run.sh': 'torchrun --nnodes 2 --nproc_per_node 8 train.py\n' });
  const hint = launchedSetupHint(join(dir, 'train.py'), disk);
  assert.equal(hint.batch, undefined, 'no DataLoader literal: the config side reads no micro-batch');
  assert.deepEqual(hint.replicas, { count: 16, source: 'as run.sh launches train.py' });
  assert.deepEqual(withLaunchedSetup(ASSUMED, hint).launchReplicas, hint.replicas);
  // Launches that start different counts leave it unsaid.
  const two = writeFolder(project, 'replicas-disagree', { 'train.py': loop, 'a.sh': 'torchrun --nproc_per_node 8 train.py\n', 'b.sh': 'torchrun --nproc_per_node 4 train.py\n' });
  assert.equal(launchedSetupHint(join(two, 'train.py'), disk).replicas, undefined);
  // torchrun of a script that wraps nothing starts independent processes, not replicas of one model.
  const bare = writeFolder(project, 'replicas-bare', { 'train.py': loop.replace('DDP(Net())', 'Net()'), 'run.sh': 'torchrun --nproc_per_node 8 train.py\n' });
  assert.equal(launchedSetupHint(join(bare, 'train.py'), disk).replicas, undefined);
});
