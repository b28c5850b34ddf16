/**
 * A script that builds its DeepSpeed config in code (DeepSpeedExamples' cifar layout: get_ds_config(args) from
 * --dtype, handed to deepspeed.initialize(config=...)) trains in that config's precision. Before, the stale JSON
 * beside it, which nothing names, gave the plan's precision (fp32 here), whatever --dtype said.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { planCommand } from '../../src/cli/commands/plan';
import { analyzeSource, initFrontends } from '../../src/frontends/index';
import { capture, root } from './helpers';

const script = join(root, 'test/fixtures/deepspeed-inline/train.py');

interface Planned { batch: number; batchSource?: string; plan: { setup: { precision: string; precisionReason: string; ampStyle: string } } }

async function planOf(...flags: string[]): Promise<Planned> {
  const r = await capture(() => planCommand.run([script, '--cluster', 'a100x8', '--json', ...flags]));
  assert.equal(r.code, 0, r.err);
  return JSON.parse(r.out) as Planned;
}

async function setupOf(...flags: string[]): Promise<Planned['plan']['setup']> {
  return (await planOf(...flags)).plan.setup;
}

test('the config the script builds decides: fp16 at --dtype’s default, with DeepSpeed’s master weights; the unnamed JSON beside it does not', async () => {
  const setup = await setupOf();
  assert.deepEqual([setup.precision, setup.ampStyle], ['fp16', 'master-weights']);
  assert.equal(setup.precisionReason, 'from train.py:53 (deepspeed.initialize config: fp16.enabled)');
});

test('its train_batch_size is the global batch the plan is for (was 128, assumed)', async () => {
  const planned = await planOf();
  assert.deepEqual([planned.batch, planned.batchSource], [16, 'train.py:53 (deepspeed.initialize config: train_batch_size 16)']);
});

test('--dtype bf16 on the command line is the run’s bf16', async () => {
  const setup = await setupOf('--script-args=--dtype bf16');
  assert.deepEqual([setup.precision, setup.precisionReason], ['bf16', 'from train.py:53 (deepspeed.initialize config: bf16.enabled)']);
});

test('--dtype fp32: neither section enabled is DeepSpeed’s fp32', async () => {
  const setup = await setupOf('--script-args=--dtype fp32');
  assert.deepEqual([setup.precision, setup.precisionReason], ['fp32', 'from train.py:53 (deepspeed.initialize config: neither bf16 nor fp16 enabled, DeepSpeed trains in fp32)']);
});

test('a config that states only the micro-batch and accumulation gives each process’s batch', async () => {
  await initFrontends();
  const source = `import deepspeed
import torch.nn as nn

net = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 10))
config = {"train_micro_batch_size_per_gpu": 8, "gradient_accumulation_steps": 4, "bf16": {"enabled": True}}
engine, _, _, _ = deepspeed.initialize(model=net, model_parameters=net.parameters(), config=config)
`;
  const r = await analyzeSource('train.py', source, {});
  assert.deepEqual(r.models[0]?.runBatch, { samples: 32, perProcess: true, source: 'train.py:6 (deepspeed.initialize config: train_micro_batch_size_per_gpu 8 × gradient_accumulation_steps 4 per process)', perForward: { samples: 8, said: "train.py:6's train_micro_batch_size_per_gpu 8" } });
  assert.deepEqual(r.models[0]?.runPrecision, { precision: 'bf16', holding: 'master-weights', source: 'train.py:6 (deepspeed.initialize config: bf16.enabled)' });
});
