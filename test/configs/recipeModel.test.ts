/**
 * A recipe no script of the user's builds a model for (LLaMA-Factory's `llamafactory-cli train recipe.yaml`) names
 * its model itself: `model_name_or_path` as a folder or a hub id whose config.json is on disk (never downloaded) is
 * the model `wap config` compares with, found the way from_pretrained would find it.
 */
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { configCommand } from '../../src/cli/commands/config';
import { resolveLaunchedModel } from '../../src/configs';
import { pretrainedConfigPath } from '../../src/frontends/huggingface/sources';
import { capture } from '../cli/helpers';
import { disk, root } from './helpers';

const project = mkdtempSync(join(tmpdir(), 'wap-recipe-model-'));
after(() => rmSync(project, { recursive: true, force: true }));

const LLAMA_CONFIG = join(root, 'test/fixtures/huggingface/llama-2-7b/config.json');
const recipe = (model: string): string => `### model\nmodel_name_or_path: ${model}\n\n### method\nstage: sft\ndo_train: true\nfinetuning_type: full\ndeepspeed: ds_z3.json\n\n### train\nper_device_train_batch_size: 1\ngradient_accumulation_steps: 2\nbf16: true\noutput_dir: saves/llama2-7b/full/sft\n`;

test('a folder in model_name_or_path: its config.json is the model, and the launch script gives the GPUs', async () => {
  mkdirSync(join(project, 'models', 'llama-2-7b'), { recursive: true });
  copyFileSync(LLAMA_CONFIG, join(project, 'models', 'llama-2-7b', 'config.json'));
  writeFileSync(join(project, 'ds_z3.json'), '{"zero_optimization": {"stage": 3}, "bf16": {"enabled": "auto"}, "train_micro_batch_size_per_gpu": "auto", "gradient_accumulation_steps": "auto"}\n');
  const file = join(project, 'llama2_full_sft.yaml');
  const text = recipe('./models/llama-2-7b');
  writeFileSync(file, text);
  writeFileSync(join(project, 'run.sh'), '#!/bin/bash\nFORCE_TORCHRUN=1 NNODES=1 NPROC_PER_NODE=8 llamafactory-cli train llama2_full_sft.yaml\n');
  const files = { ...disk, pretrainedConfig: pretrainedConfigPath };
  assert.deepEqual(resolveLaunchedModel(file, text, files), { file: join(project, 'models', 'llama-2-7b', 'config.json'), how: 'model_name_or_path: ./models/llama-2-7b in llama2_full_sft.yaml' });
  // Without a way to find it, no model (never a guess).
  assert.equal(resolveLaunchedModel(file, text, disk), undefined);

  const r = await capture(() => configCommand.run([file, '--cluster', 'a100x8', '--seq-len', '1024']));
  assert.match(r.err, /comparing with the model in .*models\/llama-2-7b\/config\.json, found by model_name_or_path: \.\/models\/llama-2-7b in llama2_full_sft\.yaml/);
  assert.match(r.out + r.err, /your config \(8 GPUs, as run\.sh launches it\): /);
});

test('a hub id in model_name_or_path: the cached snapshot\'s config.json, or no model when it is not cached', async () => {
  const cache = join(project, 'hub');
  const snapshot = join(cache, 'models--meta-llama--Llama-2-7b-hf', 'snapshots', '01c7f73d771dfac7d292323805ebc428287df4f9');
  mkdirSync(snapshot, { recursive: true });
  copyFileSync(LLAMA_CONFIG, join(snapshot, 'config.json'));
  const file = join(project, 'hub_sft.yaml');
  const text = recipe('meta-llama/Llama-2-7b-hf');
  writeFileSync(file, text);
  const before = process.env.HF_HUB_CACHE;
  process.env.HF_HUB_CACHE = cache;
  try {
    const files = { ...disk, pretrainedConfig: pretrainedConfigPath };
    assert.equal(resolveLaunchedModel(file, text, files)?.file, join(snapshot, 'config.json'));
    assert.equal(resolveLaunchedModel(file, recipe('meta-llama/Not-Cached'), files), undefined);
  } finally {
    if (before === undefined) delete process.env.HF_HUB_CACHE;
    else process.env.HF_HUB_CACHE = before;
  }
});

test('a recipe naming a model that is not on disk: the "no model" message says which, where WAP looked and how to fetch it', async () => {
  const file = join(project, 'uncached.yaml');
  writeFileSync(file, recipe('meta-llama/Not-Cached-7b'));
  const before = process.env.HF_HUB_CACHE;
  process.env.HF_HUB_CACHE = join(project, 'empty-hub');
  try {
    const r = await capture(() => configCommand.run([file]));
    assert.match(r.err, /no model for .*uncached\.yaml: it names its model as model_name_or_path: meta-llama\/Not-Cached-7b, and the config of 'meta-llama\/Not-Cached-7b' is not on disk \(WAP never downloads\)\. Looked in: .*Fetch it with `huggingface-cli download meta-llama\/Not-Cached-7b config\.json`.*; pass --model FILE/);
  } finally {
    if (before === undefined) delete process.env.HF_HUB_CACHE;
    else process.env.HF_HUB_CACHE = before;
  }
});
