/** The plan flags that choose how kernels run reach PlanOptions, --seq-len reaches the analysis, and bad values are refused by name. */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { planOptionsFrom } from '../../src/cli/planFlags';
import { commands } from '../../src/cli/commands/registry';
import { capture } from './helpers';

const dir = mkdtempSync(join(tmpdir(), 'wap-seq-'));
after(() => rmSync(dir, { recursive: true, force: true }));

test('--attention and --memory-format set PlanOptions; absent, the planner defaults apply', () => {
  const o = planOptionsFrom({ attention: 'unfused', 'memory-format': 'channels_last' });
  assert.equal(o.attentionKernel, 'unfused');
  assert.equal(o.memoryFormat, 'channels_last');
  const plain = planOptionsFrom({});
  assert.equal(plain.attentionKernel, undefined);
  assert.equal(plain.memoryFormat, undefined);
  assert.throws(() => planOptionsFrom({ attention: 'flash' }), /--attention must be one of fused, unfused/);
  assert.throws(() => planOptionsFrom({ 'memory-format': 'nhwc' }), /--memory-format must be one of/);
});

test('wap plan --seq-len T plans T tokens per sample and says so; without it the config length is assumed; a bad T is refused', async () => {
  const file = join(dir, 'bert.py');
  writeFileSync(file, 'from transformers import BertConfig, BertModel\nmodel = BertModel(BertConfig(hidden_size=128, num_hidden_layers=2, num_attention_heads=2, intermediate_size=512))\n');
  const plan = (...extra: string[]) => capture(() => commands.plan!.run([file, '--cluster', 'a100x8', '--gpus', '1', '--batch', '8', '--json', ...extra]));
  const short = await plan('--seq-len', '128');
  assert.equal(short.code, 0, short.err);
  assert.deepEqual(JSON.parse(short.out).sequence, { tokens: 128, source: '--seq-len' });
  const plain = await plan();
  assert.match(JSON.parse(plain.out).sequence.source, /^assumed: the max_position_embeddings .*\(512 tokens\)$/);
  const text = await capture(() => commands.plan!.run([file, '--cluster', 'a100x8', '--gpus', '1', '--batch', '8', '--seq-len', '256']));
  assert.match(text.out, /^sequence: 256 tokens per sample \(--seq-len\)$/m);
  assert.throws(() => planOptionsFrom({ 'seq-len': '0' }), /--seq-len expects a positive integer, got '0'/);
});

test('wap plan --amp-style autocast plans torch.autocast and reports it in the setup; a bad style is refused by name', async () => {
  const file = join(dir, 'bert_amp.py');
  writeFileSync(file, 'from transformers import BertConfig, BertModel\nmodel = BertModel(BertConfig(hidden_size=128, num_hidden_layers=2, num_attention_heads=2, intermediate_size=512))\n');
  const plan = (...extra: string[]) => capture(() => commands.plan!.run([file, '--cluster', 'a100x8', '--gpus', '1', '--batch', '8', '--seq-len', '128', '--precision', 'bf16', '--json', ...extra]));
  const autocast = await plan('--amp-style', 'autocast');
  assert.equal(autocast.code, 0, autocast.err);
  const setup = JSON.parse(autocast.out).plan.setup;
  assert.deepEqual([setup.ampStyle, setup.ampStyleReason], ['autocast', 'from --amp-style']);
  const plain = JSON.parse((await plan()).out).plan.setup;
  assert.equal(plain.ampStyle, 'master-weights');
  assert.ok(setup.memoryPerGpu.weights > plain.memoryPerGpu.weights, 'fp32 weights and their bf16 copies');
  const text = await capture(() => commands.plan!.run([file, '--cluster', 'a100x8', '--gpus', '1', '--batch', '8', '--seq-len', '128', '--precision', 'bf16', '--amp-style', 'pure']));
  assert.match(text.out, /^setup: bf16 \(from --precision\), pure \(from --amp-style\), /m);
  assert.throws(() => planOptionsFrom({ 'amp-style': 'O2' }), /--amp-style must be one of autocast, master-weights, fp32-gradients, pure/);
});
