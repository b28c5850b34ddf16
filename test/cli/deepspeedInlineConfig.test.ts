/**
 * A script that builds its DeepSpeed config in code (DeepSpeedExamples' cifar layout: get_ds_config(args) from
 * --dtype, handed to deepspeed.initialize(config=...)) trains in that config's precision. Before, the stale JSON
 * beside it, which nothing names, gave the plan's precision (fp32 here), whatever --dtype said.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { planCommand } from '../../src/cli/commands/plan';
import { capture, root } from './helpers';

const script = join(root, 'test/fixtures/deepspeed-inline/train.py');

async function setupOf(...flags: string[]): Promise<{ precision: string; precisionReason: string; ampStyle: string }> {
  const r = await capture(() => planCommand.run([script, '--cluster', 'a100x8', '--json', ...flags]));
  assert.equal(r.code, 0, r.err);
  return (JSON.parse(r.out) as { plan: { setup: { precision: string; precisionReason: string; ampStyle: string } } }).plan.setup;
}

test('the config the script builds decides: fp16 at --dtype’s default, with DeepSpeed’s master weights; the unnamed JSON beside it does not', async () => {
  const setup = await setupOf();
  assert.deepEqual([setup.precision, setup.ampStyle], ['fp16', 'master-weights']);
  assert.equal(setup.precisionReason, 'from train.py:53 (deepspeed.initialize config: fp16.enabled)');
});

test('--dtype bf16 on the command line is the run’s bf16', async () => {
  const setup = await setupOf('--script-args=--dtype bf16');
  assert.deepEqual([setup.precision, setup.precisionReason], ['bf16', 'from train.py:53 (deepspeed.initialize config: bf16.enabled)']);
});

test('--dtype fp32: neither section enabled is DeepSpeed’s fp32', async () => {
  const setup = await setupOf('--script-args=--dtype fp32');
  assert.deepEqual([setup.precision, setup.precisionReason], ['fp32', 'from train.py:53 (deepspeed.initialize config: neither bf16 nor fp16 enabled, DeepSpeed trains in fp32)']);
});
