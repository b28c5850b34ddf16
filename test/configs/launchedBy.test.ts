/**
 * A script that configures its training in code (TrainingArguments, a Lightning Trainer without devices=) trains on
 * the GPUs its launch script starts (configs/launchedBy.ts): "your config" is planned on that count, and says
 * where it came from. Real files in a temp project: run.sh beside the script, a launcher in the folder above.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { initConfigReaders, pinnedOptions, readConfigSetups, versusLine, type RunSummary } from '../../src/configs';
import type { PlanOptions } from '../../src/protocol/planOptions';
import { disk, writeFolder } from './helpers';

const project = mkdtempSync(join(tmpdir(), 'wap-launched-'));
const BASE: PlanOptions = { batch: 64, objective: 'throughput', strategies: 'all', optimizer: 'adam' };
const TRAINER = 'from transformers import TrainingArguments\nargs = TrainingArguments(output_dir="out", bf16=True, per_device_train_batch_size=4)\n';

before(() => initConfigReaders());
after(() => rmSync(project, { recursive: true, force: true }));

const folder = (name: string, files: Record<string, string>): string => writeFolder(project, name, files);

test('TrainingArguments in code: the GPUs are the launch script\'s, pinned and named in the comparison', () => {
  const dir = folder('beside', { 'train.py': TRAINER, 'run.sh': '#!/bin/bash\nNGPU=8\ntorchrun --nproc_per_node $NGPU train.py\n', 'notes.txt': 'train.py' });
  const [setup] = readConfigSetups(join(dir, 'train.py'), TRAINER, disk);
  assert.deepEqual([setup!.world, setup!.worldFrom], [8, 'run.sh']);
  assert.equal(pinnedOptions(BASE, setup!, 'train.py').gpus, 8);
  const run: RunSummary = { feasible: true, gpus: 8, stepTimeMs: 100, memoryPerGpuBytes: 9.5e9, mfu: 0.4, describe: '8 GPUs, ZeRO-2', warnings: [] };
  assert.match(versusLine(run, run, setup), /^your config \(8 GPUs, as run\.sh launches it\): /);
  // Without file access nothing is looked up: the search keeps the count.
  assert.equal(readConfigSetups(join(dir, 'train.py'), TRAINER)[0]!.world, undefined);
});

test('a launcher in the folder above (src/train.py), deepspeed and accelerate counts; disagreeing launchers leave the count to the search', () => {
  const above = folder('above', { 'src/train.py': TRAINER, 'launch.sh': 'deepspeed --num_gpus 4 --num_nodes 2 src/train.py --output_dir out\n' });
  assert.equal(readConfigSetups(join(above, 'src', 'train.py'), TRAINER, disk)[0]!.world, 8);
  const accelerate = folder('accelerate', { 'train.py': TRAINER, 'run.sh': 'accelerate launch --num_processes 16 ./train.py\n' });
  assert.equal(readConfigSetups(join(accelerate, 'train.py'), TRAINER, disk)[0]!.world, 16);
  const two = folder('two', { 'train.py': TRAINER, 'a.sh': 'torchrun --nproc_per_node 8 train.py\n', 'b.sh': 'torchrun --nproc_per_node 4 train.py\n' });
  assert.equal(readConfigSetups(join(two, 'train.py'), TRAINER, disk)[0]!.world, undefined);
  // Another script of the same name elsewhere is not this one.
  const other = folder('other', { 'train.py': TRAINER, 'run.sh': 'torchrun --nproc_per_node 8 tools/train.py\n' });
  assert.equal(readConfigSetups(join(other, 'train.py'), TRAINER, disk)[0]!.world, undefined);
});

test('Lightning: devices= wins; without it the launcher\'s nodes × processes', () => {
  const lightning = (devices: string) => `import lightning as L\ntrainer = L.Trainer(${devices}strategy="fsdp", precision="bf16-mixed")\n`;
  const dir = folder('lightning', { 'fit.py': lightning(''), 'job.sbatch': '#!/bin/bash\n#SBATCH --nodes=2\nsrun torchrun --nnodes 2 --nproc_per_node 8 fit.py\n' });
  assert.equal(readConfigSetups(join(dir, 'fit.py'), lightning(''), disk)[0]!.world, 16);
  assert.deepEqual([readConfigSetups(join(dir, 'fit.py'), lightning('devices=4, '), disk)[0]!.world, readConfigSetups(join(dir, 'fit.py'), lightning('devices=4, '), disk)[0]!.worldFrom], [4, undefined]);
});
