/**
 * The attention kernel the code asks transformers for (configs/attentionHint.ts): `attn_implementation="eager"`
 * plans eager attention (the score matrices in memory), "sdpa" / "flash_attention_2" a fused kernel, and the plan
 * says where it came from; a flag wins; a call behind an `if` or a value WAP cannot read says nothing. The plan
 * runs the real CLI on a small BERT written in the file.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { commands } from '../../src/cli/commands/registry';
import { initConfigReaders, withTrainingHintsFrom } from '../../src/configs';
import { attentionHint } from '../../src/configs/attentionHint';
import type { PlanOptions } from '../../src/protocol/planOptions';
import { capture } from '../cli/helpers';

const dir = mkdtempSync(join(tmpdir(), 'wap-attention-'));
before(() => initConfigReaders());
after(() => rmSync(dir, { recursive: true, force: true }));

// PretrainedConfig takes attn_implementation (it becomes config._attn_implementation), as from_pretrained does.
const BERT = 'BertModel(BertConfig(hidden_size=128, num_hidden_layers=2, num_attention_heads=2, intermediate_size=512, attn_implementation=IMPL))';
const script = (impl: string): string => `from transformers import BertConfig, BertModel\nmodel = ${BERT.replace('IMPL', impl)}\n`;
const hintOf = (text: string) => attentionHint([{ name: 'train.py', text }], 'train.py');

test('what the code names: eager is unfused, sdpa and the flash kernels fused; guarded, computed or unknown names say nothing', () => {
  assert.deepEqual(hintOf(script('"eager"')), { kernel: 'unfused', source: 'train.py:2 (attn_implementation="eager")' });
  for (const impl of ['"sdpa"', "'flash_attention_2'", '"flash_attention_3"', '"flex_attention"']) assert.equal(hintOf(script(impl))?.kernel, 'fused', impl);
  assert.equal(hintOf('model = AutoModelForCausalLM.from_pretrained("x")\nmodel.set_attn_implementation("eager")\n')?.kernel, 'unfused');
  assert.equal(hintOf(script('args.attn')), undefined);
  assert.equal(hintOf(script('"kernels-community/flash-attn"')), undefined);
  assert.equal(hintOf(`if use_eager:\n    model = ${BERT.replace('IMPL', '"eager"')}\n`), undefined);
  // The model's own file speaks first.
  const both = attentionHint([{ name: 'other.py', text: script('"eager"') }, { name: 'model.py', text: script('"sdpa"') }], 'model.py');
  assert.equal(both?.kernel, 'fused');
});

test('applied where no flag chose: --attention wins', () => {
  const base: PlanOptions = { batch: 8, objective: 'throughput', strategies: 'all', optimizer: 'adam' };
  const files = [{ name: 'train.py', text: script('"eager"') }];
  const hinted = withTrainingHintsFrom(base, files, 'train.py');
  assert.deepEqual([hinted.attentionKernel, hinted.attentionSource], ['unfused', 'train.py:2 (attn_implementation="eager")']);
  const flagged = withTrainingHintsFrom({ ...base, attentionKernel: 'fused' }, files, 'train.py');
  assert.deepEqual([flagged.attentionKernel, flagged.attentionSource], ['fused', undefined]);
});

test('wap plan on a script loading eager attention keeps the score matrices, and says why', async () => {
  const plan = async (impl: string, ...extra: string[]) => {
    const file = join(dir, `${impl.replace(/\W/g, '')}.py`);
    writeFileSync(file, script(impl));
    const r = await capture(() => commands.plan!.run([file, '--cluster', 'a100x8', '--gpus', '1', '--batch', '8', '--seq-len', '512', '--json', ...extra]));
    assert.equal(r.code, 0, r.err);
    return JSON.parse(r.out) as { plan: { setup: { memoryPerGpu: { activations: number } } }; diagnostics: Array<{ message: string }> };
  };
  const eager = await plan('"eager"');
  const fused = await plan('"sdpa"');
  assert.ok(eager.diagnostics.some((d) => /^attention unfused: the code asks transformers for it \(eager\.py:2 \(attn_implementation="eager"\)\), so the plan prices eager attention/.test(d.message)), JSON.stringify(eager.diagnostics));
  // Two layers of 2 heads × 512² probabilities, kept by eager attention, at 8 samples: at least that many more bytes.
  const scores = 2 * 2 * 512 * 512 * 8 * 2;
  assert.ok(eager.plan.setup.memoryPerGpu.activations - fused.plan.setup.memoryPerGpu.activations >= scores, `${eager.plan.setup.memoryPerGpu.activations} vs ${fused.plan.setup.memoryPerGpu.activations}`);
  // The flag wins over the code.
  const flagged = await plan('"eager"', '--attention', 'fused');
  assert.equal(flagged.plan.setup.memoryPerGpu.activations, fused.plan.setup.memoryPerGpu.activations);
  assert.ok(!flagged.diagnostics.some((d) => /the code asks transformers/.test(d.message)));
});
