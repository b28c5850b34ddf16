/**
 * bitsandbytes' 8-bit optimizers (memory/optimizerState.ts): each state value
 * is one uint8 code plus its share of an fp32 absmax per block of 2048 values
 * (Dettmers et al., ICLR 2022, §2), so 8-bit Adam holds 2 × (1 + 4/2048) bytes
 * per parameter where torch's AdamW holds 8. Read from the code
 * (`bnb.optim.PagedAdamW8bit`, `optim_bits=8`) and a Trainer's `optim=`, and
 * planned on Llama-2-7b's released config as a full fine-tune script writes it.
 */
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { before, test } from 'node:test';
import { analyzeModel } from '../../src/core/analyze';
import { initConfigReaders, optimizerHint } from '../../src/configs';
import { initFrontends, parseSource } from '../../src/frontends/index';
import { fullWidthOptimizer, planModel, resolveCluster, stateBytesPerParam } from '../../src/planner/index';
import { normalizeSettings, toPlanOptions } from '../../src/server/settings';
import { withTrainingHints } from '../../src/server/trainingHints';
import type { PlanReport } from '../../src/protocol/plan';

before(async () => {
  initConfigReaders();
  await initFrontends();
});

const EIGHT_BIT_VALUE = 1 + 4 / 2048;

test('state bytes per parameter by hand: 8-bit Adam 2 × (1 + 4/2048) whatever the precision; the master copy stays where the precision keeps one', () => {
  assert.deepEqual(stateBytesPerParam('fp32', 'adam8bit'), { weights: 4, gradients: 4, optimizer: 2 * EIGHT_BIT_VALUE });
  // Mixed precision with master weights: the fp32 master (4) plus the 8-bit moments.
  assert.deepEqual(stateBytesPerParam('bf16', 'adam8bit'), { weights: 2, gradients: 2, optimizer: 4 + 2 * EIGHT_BIT_VALUE });
  // Pure bf16: torch's AdamW keeps bf16 moments (2 × 2 bytes); bitsandbytes keeps uint8 codes all the same.
  assert.deepEqual(stateBytesPerParam('bf16', 'adam', 'pure'), { weights: 2, gradients: 2, optimizer: 4 });
  assert.deepEqual(stateBytesPerParam('bf16', 'adam8bit', 'pure'), { weights: 2, gradients: 2, optimizer: 2 * EIGHT_BIT_VALUE });
  assert.deepEqual(stateBytesPerParam('tf32', 'momentum8bit'), { weights: 4, gradients: 4, optimizer: EIGHT_BIT_VALUE });
  assert.deepEqual([fullWidthOptimizer('adam8bit'), fullWidthOptimizer('momentum8bit'), fullWidthOptimizer('sgd')], ['adam', 'momentum', 'sgd']);
});

test('bitsandbytes constructors and Trainer optim names: 8-bit, paged and 32-bit variants, optim_bits=8', () => {
  const py = (text: string) => optimizerHint([{ name: 'train.py', text }]);
  assert.deepEqual(py('import bitsandbytes as bnb\nopt = bnb.optim.PagedAdamW8bit(model.parameters(), lr=2e-4)\n'), { optimizer: 'adam8bit', source: 'train.py:2 (bnb.optim.PagedAdamW8bit)' });
  assert.equal(py('from bitsandbytes.optim import Lion8bit\nopt = Lion8bit(model.parameters())\n')?.optimizer, 'momentum8bit');
  assert.equal(py('import bitsandbytes as bnb\nopt = bnb.optim.AdamW(params, optim_bits=8)\n')?.optimizer, 'adam8bit');
  assert.equal(py('import bitsandbytes as bnb\nopt = bnb.optim.AdamW(params)\n')?.optimizer, 'adam', 'bitsandbytes AdamW defaults to 32-bit state');
  assert.equal(py('import bitsandbytes as bnb\nopt = bnb.optim.PagedAdamW32bit(params)\n')?.optimizer, 'adam');
  assert.equal(py('import bitsandbytes as bnb\nopt = bnb.optim.SGD8bit(params, lr=0.1, momentum=0.9)\n')?.optimizer, 'momentum8bit');
  const trainer = (optim: string) => optimizerHint([{ name: 'ft.py', text: `from transformers import TrainingArguments\nargs = TrainingArguments(output_dir="o", optim="${optim}")\n` }], 'ft.py')?.optimizer;
  assert.deepEqual(['adamw_bnb_8bit', 'adamw_8bit', 'paged_adamw_8bit', 'lion_8bit', 'paged_lion_8bit', 'rmsprop_bnb_8bit', 'rmsprop_bnb_32bit'].map(trainer), ['adam8bit', 'adam8bit', 'adam8bit', 'momentum8bit', 'momentum8bit', 'momentum8bit', 'momentum']);
  assert.equal(trainer('ademamix_8bit'), undefined, 'AdEMAMix keeps three buffers: no guess');
  assert.equal(normalizeSettings({ optimizer: 'adam8bit' }).optimizer, 'adam8bit');
});

/** A full fine-tune script on Llama-2-7b's released config, in a directory of its own so the hints read only it. */
function fineTune(optim: string): { plan: PlanReport; params: number } {
  const dir = mkdtempSync(join(tmpdir(), 'wap-8bit-'));
  cpSync(join(__dirname, '..', 'fixtures', 'huggingface', 'llama-2-7b'), join(dir, 'llama-2-7b'), { recursive: true });
  const source = `import torch
from transformers import AutoModelForCausalLM, TrainingArguments

model = AutoModelForCausalLM.from_pretrained("./llama-2-7b", torch_dtype=torch.bfloat16)
args = TrainingArguments(output_dir="out", bf16=True, optim="${optim}", gradient_checkpointing=True)
`;
  const file = join(dir, 'finetune.py');
  writeFileSync(file, source);
  const spec = parseSource(file, source, {})?.models.find((m) => m.name === 'model');
  assert.ok(spec, 'the model is read');
  const model = analyzeModel(spec, { sequenceLength: 2048 });
  const options = withTrainingHints(toPlanOptions(normalizeSettings({})), pathToFileURL(file).href);
  const plan = planModel(model, resolveCluster('a100x8'), { ...options, batch: 8, gpus: 1 });
  assert.ok(plan.feasible, plan.feasible ? '' : plan.reason);
  return { plan, params: model.totals.params };
}

test("Llama-2-7b full fine-tune in pure bf16 on one A100: optim=\"paged_adamw_8bit\" holds a quarter of torch's fp32-width state and half of its bf16 state, and the plan says where it came from", () => {
  const eight = fineTune('paged_adamw_8bit');
  const torch = fineTune('adamw_torch');
  assert.equal(eight.plan.optimizer, 'adam8bit');
  assert.equal(torch.plan.optimizer, 'adam');
  const memory = (r: PlanReport) => r.plan.setup!.memoryPerGpu;
  // Loaded in bf16, torch's AdamW keeps bf16 moments: 4 bytes per parameter; 8-bit: 2 × (1 + 4/2048).
  assert.ok(Math.abs(memory(torch.plan).optimizer - torch.params * 4) / (torch.params * 4) < 1e-9, `${memory(torch.plan).optimizer}`);
  assert.ok(Math.abs(memory(eight.plan).optimizer - eight.params * 2 * EIGHT_BIT_VALUE) / (eight.params * 2) < 1e-9, `${memory(eight.plan).optimizer}`);
  assert.equal(memory(eight.plan).weights, memory(torch.plan).weights);
  assert.equal(memory(eight.plan).gradients, memory(torch.plan).gradients);
  // The update streams less state, so the step is no slower.
  assert.ok(eight.plan.plan.stepTimeMs < torch.plan.plan.stepTimeMs, `${eight.plan.plan.stepTimeMs} vs ${torch.plan.plan.stepTimeMs}`);
  assert.ok(
    eight.plan.diagnostics.some((d) => d.message === 'optimizer: adam8bit (Adam-style, two moments per parameter held 8-bit block-wise (bitsandbytes)), from finetune.py:5 (TrainingArguments(optim="paged_adamw_8bit"))'),
    eight.plan.diagnostics.map((d) => d.message).join('\n'),
  );
});
