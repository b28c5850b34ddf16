import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parse as parseJsonc } from 'jsonc-parser';
import { applyTextEdits, checkConfig, fixAll } from '../../src/configs';
import { alexnetPlan, pipelinePlan } from './fixtures';

const ds = (o: Record<string, unknown>): string => JSON.stringify(o, null, 2);
const findingsOf = (text: string, plan = alexnetPlan()) => checkConfig('ds_config.json', text, plan).findings;

test('train_batch_size ≠ micro × accum × world: error at the value, fix keeps the global batch via accumulation', () => {
  const text = ds({ train_batch_size: 256, train_micro_batch_size_per_gpu: 32, gradient_accumulation_steps: 1 });
  const f = findingsOf(text).find((x) => x.code === 'batch-arithmetic');
  assert.ok(f);
  assert.equal(f.severity, 'error');
  assert.equal(text.slice(f.range.start, f.range.end), '256');
  assert.equal(f.message, 'train_batch_size 256 ≠ micro 32 × accum 1 × world 4 (from the plan) = 128');
  const fixed = JSON.parse(applyTextEdits(text, f.fix!.edits));
  assert.deepEqual(fixed, { train_batch_size: 256, train_micro_batch_size_per_gpu: 32, gradient_accumulation_steps: 2 });
  // One problem, one finding: the plan's setup otherwise matches, so no second (setup) fix rewrites the accumulation too.
  assert.deepEqual(findingsOf(text).filter((x) => x.code === 'setup-differs').map((x) => x.message), []);
});

test('when accumulation cannot absorb it, the fix sets train_batch_size to the product', () => {
  const text = ds({ train_batch_size: 100, train_micro_batch_size_per_gpu: 8, gradient_accumulation_steps: 2 });
  const f = findingsOf(text).find((x) => x.code === 'batch-arithmetic')!;
  assert.equal(f.fix!.title, 'Set train_batch_size to 64');
  const out = JSON.parse(fixAll('ds_config.json', text, alexnetPlan()).text);
  assert.equal(out.train_batch_size, out.train_micro_batch_size_per_gpu * out.gradient_accumulation_steps * 4);
});

test('consistent configs have no arithmetic finding; pipeline stages shrink the data-parallel world', () => {
  assert.equal(findingsOf(ds({ train_batch_size: 128, train_micro_batch_size_per_gpu: 16, gradient_accumulation_steps: 2 })).filter((x) => x.code.startsWith('batch')).length, 0);
  // 4 GPUs in 2 stages → world 2: 128 = 16 × 4 × 2.
  assert.equal(findingsOf(ds({ train_batch_size: 128, train_micro_batch_size_per_gpu: 16, gradient_accumulation_steps: 4 }), pipelinePlan()).filter((x) => x.code === 'batch-arithmetic').length, 0);
});

test('a missing field must still be derivable on the planned world', () => {
  const f = findingsOf(ds({ train_batch_size: 100, train_micro_batch_size_per_gpu: 8 })).find((x) => x.code === 'batch-arithmetic');
  assert.ok(f);
  assert.match(f.message, /not a multiple of micro 8 × world 4/);
  // The fix rounds to the nearest multiple (100 / 32 → 3 × 32 = 96), and never below one micro-batch per GPU.
  assert.equal(f.fix!.title, 'Set train_batch_size to 96');
  assert.equal(findingsOf(ds({ train_batch_size: 12, train_micro_batch_size_per_gpu: 8 })).find((x) => x.code === 'batch-arithmetic')!.fix!.title, 'Set train_batch_size to 32');
  assert.equal(findingsOf(ds({ train_batch_size: 96, train_micro_batch_size_per_gpu: 8 })).filter((x) => x.code === 'batch-arithmetic').length, 0);
});

test('"auto" values (HF Trainer integration) are accepted and not checked', () => {
  const text = ds({ train_batch_size: 'auto', train_micro_batch_size_per_gpu: 'auto', gradient_accumulation_steps: 'auto', zero_optimization: { stage: 2 } });
  assert.deepEqual(findingsOf(text).filter((x) => x.severity !== 'info'), []);
});

test('without a plan: says the world size cannot be checked, but still catches impossible products', () => {
  const ok = checkConfig('ds.json', ds({ train_batch_size: 256, train_micro_batch_size_per_gpu: 32, gradient_accumulation_steps: 1 }), undefined).findings;
  assert.deepEqual(ok.map((x) => [x.code, x.severity]), [['batch-unchecked', 'info']]);
  assert.match(ok[0]!.message, /holds only on 8 GPU\(s\); WAP cannot check the world size without a model plan/);
  const bad = checkConfig('ds.json', ds({ train_batch_size: 250, train_micro_batch_size_per_gpu: 32, gradient_accumulation_steps: 1 }), undefined).findings;
  assert.deepEqual(bad.map((x) => [x.code, x.severity]), [['batch-arithmetic', 'error']]);
});

test('ZeRO stage out of range is an error; sharded DP next to model-parallel layers gets advice', () => {
  const text = ds({ train_batch_size: 128, train_micro_batch_size_per_gpu: 32, zero_optimization: { stage: 5 } });
  const codes = findingsOf(text).map((x) => x.code);
  assert.ok(codes.includes('unknown-value'));
  const advice = findingsOf(ds({ train_batch_size: 128, train_micro_batch_size_per_gpu: 32, zero_optimization: { stage: 2 } })).find((x) => x.code === 'model-parallel-advice');
  assert.ok(advice);
  assert.match(advice.message, /^Sharded DP \(ZeRO\/FSDP\) on 4 GPUs but the Linear layers fc6, fc7 \(split ×4 in the plan\) want model parallelism/);
});

test('the fixed JSONC keeps comments (parsed after the edit)', () => {
  const text = '{\n  // batch for 8 GPUs\n  "train_batch_size": 256, /* global */\n  "train_micro_batch_size_per_gpu": 32,\n  "gradient_accumulation_steps": 1,\n}\n';
  const out = fixAll('ds_config.jsonc', text, alexnetPlan()).text;
  assert.equal(out, text.replace('"gradient_accumulation_steps": 1', '"gradient_accumulation_steps": 2'));
  assert.equal(parseJsonc(out, [], { allowTrailingComma: true }).gradient_accumulation_steps, 2);
});

test('"auto" next to fixed numbers: train_batch_size must still divide by the known factors × world', () => {
  // micro 4 × world 4 = 16 does not divide 60: no accumulation the HF Trainer fills in can make it hold.
  const accumAuto = ds({ train_batch_size: 60, train_micro_batch_size_per_gpu: 4, gradient_accumulation_steps: 'auto' });
  const f = findingsOf(accumAuto).find((x) => x.code === 'batch-arithmetic');
  assert.ok(f);
  assert.equal(accumAuto.slice(f.range.start, f.range.end), '60');
  assert.match(f.message, /not a multiple of micro 4 × world 4 \(from the plan\), so no whole gradient_accumulation_steps can fill in "auto"/);
  const fixed = JSON.parse(fixAll('ds.json', accumAuto, alexnetPlan()).text);
  assert.deepEqual(fixed, { train_batch_size: 64, train_micro_batch_size_per_gpu: 4, gradient_accumulation_steps: 'auto' });
  // accum 3 × world 4 = 12 does not divide 64.
  const microAuto = ds({ train_batch_size: 64, train_micro_batch_size_per_gpu: 'auto', gradient_accumulation_steps: 3 });
  const g = findingsOf(microAuto).find((x) => x.code === 'batch-arithmetic');
  assert.ok(g);
  assert.match(g.message, /not a multiple of accum 3 × world 4 \(from the plan\), so no whole micro-batch per GPU can fill in "auto"/);
  assert.equal(JSON.parse(fixAll('ds.json', microAuto, alexnetPlan()).text).train_batch_size, 60);
  // Both auto: only the world has to divide.
  assert.ok(findingsOf(ds({ train_batch_size: 66, train_micro_batch_size_per_gpu: 'auto', gradient_accumulation_steps: 'auto' })).some((x) => x.code === 'batch-arithmetic'));
  // Divisible values stay quiet.
  for (const o of [
    { train_batch_size: 64, train_micro_batch_size_per_gpu: 4, gradient_accumulation_steps: 'auto' },
    { train_batch_size: 48, train_micro_batch_size_per_gpu: 'auto', gradient_accumulation_steps: 3 },
    { train_batch_size: 64, train_micro_batch_size_per_gpu: 'auto', gradient_accumulation_steps: 'auto' },
  ]) assert.equal(findingsOf(ds(o)).filter((x) => x.code === 'batch-arithmetic').length, 0, JSON.stringify(o));
});

test('with no ZeRO stage and no batch to point at, parallelism advice is anchored on the opening brace', () => {
  const text = '{\n  "train_micro_batch_size_per_gpu": 4\n}\n';
  const advice = checkConfig('ds_config.json', text, alexnetPlan()).findings.find((f) => f.code === 'model-parallel-advice');
  assert.ok(advice, 'alexnet’s plan splits its classifier: DP gets the model-parallel advice');
  assert.deepEqual(advice.range, { start: 0, end: 1 });
  assert.equal(text.slice(advice.range.start, advice.range.end), '{');
});

test('an "enabled" DeepSpeed would not take as a bool is an error at the value, not a silently unknown precision; "auto" and pydantic words are fine', () => {
  const text = '{"train_batch_size": 8, "bf16": {"enabled": "maybe"}}';
  const bad = checkConfig('ds_config.json', text, undefined).findings.filter((f) => f.code === 'unknown-value');
  assert.equal(bad.length, 1);
  assert.equal(bad[0]!.severity, 'error');
  assert.equal(text.slice(bad[0]!.range.start, bad[0]!.range.end), '"maybe"');
  assert.match(bad[0]!.message, /^bf16\.enabled must be true or false, got "maybe": DeepSpeed's config validation refuses it/, 'the value alone, not the text after it');
  // A long value is cut at 40 characters.
  const long = `"${'x'.repeat(60)}"`;
  const cut = checkConfig('ds_config.json', `{"bf16": {"enabled": ${long}}, "train_batch_size": 8}`, undefined).findings.find((f) => f.code === 'unknown-value')!;
  assert.ok(cut.message.startsWith(`bf16.enabled must be true or false, got ${long.slice(0, 40)}: `), cut.message);
  for (const ok of ['"auto"', '"yes"', '0', 'true']) {
    assert.deepEqual(checkConfig('ds_config.json', `{"train_batch_size": 8, "bf16": {"enabled": ${ok}}}`, undefined).findings.filter((f) => f.code === 'unknown-value'), [], ok);
  }
});
