/**
 * The tokens per sample a training config trains on, read by each reader that has a word for it, and used as the
 * length the model is compared at: LLaMA-Factory's full-SFT recipe of Llama-2-7b says `cutoff_len: 2048`, and was
 * compared at the model's 4,096 max positions (2.4 s/step for "your config" where 1.2 s is the run it describes).
 * The CLI on real files; the server's side is test/server/configSequence.test.ts.
 */
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { configCommand } from '../../src/cli/commands/config';
import { initConfigReaders, readConfigSetups, statedSequence } from '../../src/configs';
import { capture } from '../cli/helpers';
import { root } from './helpers';

before(() => initConfigReaders());
const project = mkdtempSync(join(tmpdir(), 'wap-config-sequence-'));
after(() => rmSync(project, { recursive: true, force: true }));

test('each format’s word for the length, where it is written, and who says it', () => {
  const read = (file: string, text: string) => {
    const stated = readConfigSetups(file, text).find((s) => s.tokensPerSample)?.tokensPerSample;
    return stated && [stated.key, stated.value, text.slice(stated.range.start, stated.range.end)];
  };
  assert.deepEqual(read('sft.yaml', 'model_name_or_path: m\nstage: sft\nfinetuning_type: full\ncutoff_len: 2048\nper_device_train_batch_size: 2\n'), ['cutoff_len', 2048, '2048']);
  assert.deepEqual(read('axolotl.yaml', 'base_model: m\nsequence_len: 4096\nmicro_batch_size: 2\ngradient_accumulation_steps: 4\n'), ['sequence_len', 4096, '4096']);
  assert.deepEqual(read('run.sh', 'torchrun --nproc_per_node 8 sft.py --max_seq_length=1024 --per_device_train_batch_size 4 --bf16\n'), ['max_seq_length', 1024, '1024']);
  assert.deepEqual(read('train.toml', '[training]\nseq_len = 8192\nlocal_batch_size = 1\n[parallelism]\ndata_parallel_shard_degree = -1\n'), ['seq_len', 8192, '8192']);
  assert.deepEqual(read('pretrain.sh', 'SEQ=4096\ntorchrun pretrain_gpt.py --tensor-model-parallel-size 2 --micro-batch-size 1 --seq-length $SEQ\n'), ['--seq-length', 4096, '4096']);
  // A value the run decides, or none, states no length.
  assert.equal(read('run.sh', 'torchrun --nproc_per_node 8 sft.py --max_seq_length $LEN --per_device_train_batch_size 4\n'), undefined);
  assert.equal(read('sft.yaml', 'model_name_or_path: m\nstage: sft\nfinetuning_type: full\nper_device_train_batch_size: 2\n'), undefined);
  assert.deepEqual(statedSequence(readConfigSetups('sft.yaml', 'model_name_or_path: m\nstage: sft\nfinetuning_type: full\ncutoff_len: 512\nper_device_train_batch_size: 2\n'), 'sft.yaml'), { tokens: 512, source: "sft.yaml's cutoff_len 512" });
});

test('wap config compares at the recipe’s cutoff_len, says so, and --seq-len still chooses', async () => {
  mkdirSync(join(project, 'models', 'llama-2-7b'), { recursive: true });
  copyFileSync(join(root, 'test/fixtures/huggingface/llama-2-7b/config.json'), join(project, 'models', 'llama-2-7b', 'config.json'));
  writeFileSync(join(project, 'ds_z3.json'), '{"zero_optimization": {"stage": 3}, "bf16": {"enabled": "auto"}, "train_micro_batch_size_per_gpu": "auto", "gradient_accumulation_steps": "auto"}\n');
  writeFileSync(join(project, 'run.sh'), '#!/bin/bash\nFORCE_TORCHRUN=1 NPROC_PER_NODE=8 llamafactory-cli train llama2_full_sft.yaml\n');
  const file = join(project, 'llama2_full_sft.yaml');
  writeFileSync(file, 'model_name_or_path: ./models/llama-2-7b\nstage: sft\ndo_train: true\nfinetuning_type: full\ndeepspeed: ds_z3.json\ncutoff_len: 2048\nper_device_train_batch_size: 1\ngradient_accumulation_steps: 2\nbf16: true\noutput_dir: out\n');
  const json = async (...flags: string[]) => JSON.parse((await capture(() => configCommand.run([file, '--cluster', 'a100x8', '--json', ...flags]))).out) as { yours: { stepTimeMs: number }; best: { stepTimeMs: number } };
  const atRecipe = await json();
  const atMax = await json('--seq-len', '4096');
  const atGiven = await json('--seq-len', '2048');
  assert.equal(atRecipe.yours.stepTimeMs, atGiven.yours.stepTimeMs, 'the recipe’s 2048 tokens, as if given');
  assert.equal(atRecipe.best.stepTimeMs, atGiven.best.stepTimeMs);
  // Twice the tokens is at least twice the work for a 7B model at these lengths.
  assert.ok(atMax.yours.stepTimeMs > 1.9 * atRecipe.yours.stepTimeMs, `${atMax.yours.stepTimeMs} vs ${atRecipe.yours.stepTimeMs}`);
  const text = await capture(() => configCommand.run([file, '--cluster', 'a100x8']));
  assert.match(text.err, /wap: at 2048 tokens per sample, llama2_full_sft\.yaml's cutoff_len 2048 \(--seq-len reads it at another length\)/);
});
