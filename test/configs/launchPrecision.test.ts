/**
 * `accelerate launch --mixed_precision …` in a launch script beside the model: the precision the run trains in when
 * its code says none, above the accelerate config's and a Trainer without a 16-bit flag, below code that states one.
 * Read through the CLI's real listing of a real folder, as `wap plan` does.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { initConfigReaders, precisionHint, precisionHintCandidates } from '../../src/configs';
import { withTrainingHints } from '../../src/cli/planFlags';

before(() => initConfigReaders());

const ACCELERATOR = 'from accelerate import Accelerator\nfrom model import Net\naccelerator = Accelerator()\nmodel = accelerator.prepare(Net())\n';

test('the launch flag, through the variable the script assigns, gives the precision and autocast, and says where', () => {
  const run = { name: 'run.sh', text: '#!/bin/bash\nPREC="fp16"\naccelerate launch --num_processes 8 --mixed_precision $PREC train.py --epochs 3\n' };
  const hint = precisionHint([{ name: 'train.py', text: ACCELERATOR }, run], 'train.py');
  assert.deepEqual(hint, { precision: 'fp16', source: 'run.sh (accelerate launch --mixed_precision fp16)', ampStyle: 'autocast', ampStyleSource: 'run.sh (accelerate launch --mixed_precision fp16): accelerate runs forward under torch.autocast' });
  assert.equal(precisionHint([{ name: 'train.py', text: ACCELERATOR }, { name: 'run.sh', text: 'accelerate launch --mixed_precision=no train.py\n' }], 'train.py')?.precision, 'fp32');
  // Planning model.py, which train.py imports: the launch of train.py trains it.
  assert.equal(precisionHint([{ name: 'model.py', text: 'import torch\n' }, { name: 'train.py', text: ACCELERATOR }, { name: 'run.sh', text: 'accelerate launch --mixed_precision bf16 train.py\n' }], 'model.py')?.precision, 'bf16');
});

test('the flag beats the accelerate config and a Trainer without a 16-bit flag; code that states a precision beats the flag', () => {
  const run = { name: 'run.sh', text: 'accelerate launch --config_file acc.yaml --mixed_precision fp16 train.py\n' };
  const config = { name: 'acc.yaml', text: 'distributed_type: MULTI_GPU\nmixed_precision: bf16\n' };
  const viaConfig = precisionHint([{ name: 'train.py', text: ACCELERATOR }, config, run], 'train.py');
  assert.equal(viaConfig?.precision, 'fp16');
  assert.equal(viaConfig?.ampStyle, undefined, 'accelerate hands a --config_file launch to its plugin: no style guessed');
  const trainerWithout = 'from transformers import TrainingArguments\nargs = TrainingArguments(output_dir="out")\n';
  assert.equal(precisionHint([{ name: 'train.py', text: trainerWithout }, run], 'train.py')?.precision, 'fp16');
  const trainerBf16 = 'from transformers import TrainingArguments\nargs = TrainingArguments(output_dir="out", bf16=True)\n';
  assert.equal(precisionHint([{ name: 'train.py', text: trainerBf16 }, run], 'train.py')?.precision, 'bf16');
});

test('launches that disagree, one without the flag, another script, or a script in another folder give no launch hint', () => {
  const hint = (text: string) => precisionHint([{ name: 'train.py', text: ACCELERATOR }, { name: 'run.sh', text }], 'train.py');
  assert.equal(hint('accelerate launch --mixed_precision bf16 train.py\naccelerate launch --mixed_precision fp16 train.py\n'), undefined);
  assert.equal(hint('accelerate launch --mixed_precision bf16 train.py\naccelerate launch train.py\n'), undefined);
  assert.equal(hint('accelerate launch --mixed_precision bf16 eval.py\n'), undefined);
  assert.equal(hint('accelerate launch --mixed_precision bf16 other/train.py\n'), undefined);
  assert.equal(hint('torchrun --nproc_per_node 8 train.py --mixed_precision bf16\n'), undefined, "the script's own argument is not the launcher's");
});

test('wap plan reads the launch script from the model folder', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'wap-launch-precision-'));
  writeFileSync(join(dir, 'train.py'), ACCELERATOR);
  writeFileSync(join(dir, 'launch.sh'), 'accelerate launch --num_processes 4 --mixed_precision fp16 train.py\n');
  assert.ok(precisionHintCandidates(['train.py', 'launch.sh', 'notes.txt'], 'train.py').includes('launch.sh'));
  const options = await withTrainingHints({ batch: 32, objective: 'throughput', strategies: 'hybrid', optimizer: 'adam' }, join(dir, 'train.py'));
  assert.equal(options.precision, 'fp16');
  assert.equal(options.precisionSource, 'launch.sh (accelerate launch --mixed_precision fp16)');
});
