/**
 * In the editor, a training config that states its tokens per sample (LLaMA-Factory's `cutoff_len: 2048`) is
 * compared with its model planned at that length, not at the model's 4,096 max positions: the "your config · best
 * plan" line names the length, and its step times are those of the CLI at the same length.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { configCommand } from '../../src/cli/commands/config';
import { capture } from '../cli/helpers';
import { ROOT, TestServer } from './harness';

const dir = mkdtempSync(join(tmpdir(), 'wap-config-sequence-lsp-'));
const recipe = join(dir, 'llama2_full_sft.yaml');
let server: TestServer;

before(async () => {
  mkdirSync(join(dir, 'models', 'llama-2-7b'), { recursive: true });
  copyFileSync(join(ROOT, 'test/fixtures/huggingface/llama-2-7b/config.json'), join(dir, 'models', 'llama-2-7b', 'config.json'));
  writeFileSync(join(dir, 'ds_z3.json'), '{"zero_optimization": {"stage": 3}, "bf16": {"enabled": "auto"}, "train_micro_batch_size_per_gpu": "auto", "gradient_accumulation_steps": "auto"}\n');
  writeFileSync(join(dir, 'run.sh'), '#!/bin/bash\nFORCE_TORCHRUN=1 NPROC_PER_NODE=8 llamafactory-cli train llama2_full_sft.yaml\n');
  writeFileSync(recipe, 'model_name_or_path: ./models/llama-2-7b\nstage: sft\ndo_train: true\nfinetuning_type: full\ndeepspeed: ds_z3.json\ncutoff_len: 2048\nper_device_train_batch_size: 1\ngradient_accumulation_steps: 2\nbf16: true\noutput_dir: out\n');
  server = await TestServer.start({ trusted: true, root: dir, settings: { cluster: 'a100x8', batchSize: 16 } });
});
after(async () => {
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

test('the recipe is compared at its cutoff_len: the line says so, and the step times are the CLI’s at 2048 tokens', async () => {
  const uri = await server.open(recipe, readFileSync(recipe, 'utf8'), 'yaml');
  const diag = await server.until('the your-config-vs-best diagnostic', () => (server.diagnostics.get(uri) ?? []).find((d) => d.code === 'config-vs-best'), 120_000);
  assert.match(diag.message, /\(model: .*, at llama2_full_sft\.yaml's cutoff_len 2048\)$/);
  const steps = (s: string) => [...s.matchAll(/(\d+(?:\.\d+)?) (ms|s)\/step/g)].map((m) => Number(m[1]) * (m[2] === 's' ? 1000 : 1));
  const cli = await capture(() => configCommand.run([recipe, '--cluster', 'a100x8', '--batch', '16', '--seq-len', '2048']));
  const cliLine = cli.out.split('\n').find((l) => l.includes('your config'))!;
  // Both sides of the line, rounded alike: the editor planned the model at 2048 tokens too.
  assert.deepEqual(steps(diag.message), steps(cliLine), `${diag.message}\n${cliLine}`);
});
