/**
 * Gradient checkpointing read from the training code (recomputeHint.ts): the
 * calls that switch it on pin full recompute, so the plan prices what the user
 * runs and says so; one behind a flag, or a value WAP cannot read, says
 * nothing, and `--recompute` (even `auto`) wins. The last test runs the real
 * CLI on a QLoRA-style script beside Llama-2-7b's config.json.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { initConfigReaders } from '../../src/configs';
import { recomputeHint, withRecomputeFrom } from '../../src/configs/recomputeHint';
import type { PlanOptions } from '../../src/protocol/planOptions';

const root = join(__dirname, '..', '..');

before(() => initConfigReaders());

const script = (body: string) => ({ name: 'train.py', text: `import torch\nfrom transformers import AutoModelForCausalLM, TrainingArguments\n${body}` });

test('gradient_checkpointing_enable(), TrainingArguments(gradient_checkpointing=True) and prepare_model_for_kbit_training pin full recompute', () => {
  assert.deepEqual(recomputeHint([script('model = AutoModelForCausalLM.from_pretrained("x")\nmodel.gradient_checkpointing_enable()\n')]), { recompute: 'full', source: 'train.py:4 (model.gradient_checkpointing_enable())' });
  assert.equal(recomputeHint([script('args = TrainingArguments(output_dir="out", bf16=True,\n    gradient_checkpointing=True)\n')])?.source, 'train.py:3 (TrainingArguments(output_dir="out", bf16=True, gradient_checkpointing=True))');
  assert.equal(recomputeHint([script('from peft import prepare_model_for_kbit_training\nmodel = prepare_model_for_kbit_training(model)\n')])?.recompute, 'full');
  // Said off, behind a flag, or not readable: no hint.
  for (const body of [
    'model = prepare_model_for_kbit_training(model, use_gradient_checkpointing=False)\n',
    'if args.gradient_checkpointing:\n    model.gradient_checkpointing_enable()\n',
    'args = TrainingArguments(output_dir="out", gradient_checkpointing=cli.gc)\n',
    'args = TrainingArguments(output_dir="out", gradient_checkpointing=False)\n',
    '# model.gradient_checkpointing_enable()\n',
  ]) {
    assert.equal(recomputeHint([script(body)]), undefined, body);
  }
  // The model's own file is read first.
  const other = { name: 'other.py', text: 'model.gradient_checkpointing_enable()\n' };
  assert.equal(recomputeHint([other, script('args = TrainingArguments(gradient_checkpointing=True)\n')], 'train.py')?.source.split(':')[0], 'train.py');
});

test('a flag wins over the code, even --recompute auto', () => {
  const base: PlanOptions = { batch: 8, objective: 'throughput', strategies: 'all', optimizer: 'adam' };
  const hint = { recompute: 'full' as const, source: 'train.py:4' };
  assert.deepEqual(withRecomputeFrom(base, hint).pins, { recompute: 'full' });
  assert.equal(withRecomputeFrom({ ...base, recomputeSource: '--recompute' }, hint).pins, undefined);
  assert.deepEqual(withRecomputeFrom({ ...base, pins: { recompute: 'selective' } }, hint).pins, { recompute: 'selective' });
});

test('wap plan on a script that enables gradient checkpointing plans full recompute and says where it came from; --recompute auto lets the search choose', () => {
  const built = spawnSync('flock', ['/tmp/wap-build-server.lock', process.execPath, 'scripts/build.mjs'], { cwd: root, encoding: 'utf8' });
  assert.equal(built.status, 0, built.stderr);
  const work = mkdtempSync(join(tmpdir(), 'wap-recompute-'));
  copyFileSync(join(root, 'dist', 'cli.js'), join(work, 'cli.js'));
  for (const wasm of ['web-tree-sitter.wasm', 'tree-sitter-python.wasm']) if (existsSync(join(root, 'dist', wasm))) copyFileSync(join(root, 'dist', wasm), join(work, wasm));
  cpSync(join(root, 'test', 'fixtures', 'huggingface', 'llama-2-7b'), join(work, 'llama-2-7b'), { recursive: true });
  writeFileSync(join(work, 'sft.py'), 'import torch\nfrom transformers import AutoModelForCausalLM\n\nmodel = AutoModelForCausalLM.from_pretrained("./llama-2-7b", torch_dtype=torch.bfloat16)\nmodel.gradient_checkpointing_enable()\n');
  const plan = (...extra: string[]) => {
    const r = spawnSync(process.execPath, [join(work, 'cli.js'), 'plan', join(work, 'sft.py'), '--batch', '64', '--seq-len', '2048', '--cluster', 'a100x8', '--json', ...extra], { encoding: 'utf8', timeout: 180_000, maxBuffer: 64 << 20 });
    assert.equal(r.status, 0, r.stderr);
    return JSON.parse(r.stdout) as { plan: { stepTimeMs: number; setup: { recompute: string } }; diagnostics: Array<{ message: string }> };
  };
  const code = plan();
  assert.equal(code.plan.setup.recompute, 'full');
  assert.ok(code.diagnostics.some((d) => d.message.startsWith('recompute full: the code switches gradient checkpointing on (sft.py:5 (model.gradient_checkpointing_enable()))')), code.diagnostics.map((d) => d.message).join('\n'));
  const searched = plan('--recompute', 'auto');
  assert.notEqual(searched.plan.setup.recompute, 'full');
  assert.ok(searched.plan.stepTimeMs < code.plan.stepTimeMs, `searched ${searched.plan.stepTimeMs} ms vs the code's ${code.plan.stepTimeMs} ms`);
});
