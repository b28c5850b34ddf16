import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parse as parseJsonc } from 'jsonc-parser';
import { parse as parseYaml } from 'yaml';
import { checkConfig, fixAll, initConfigReaders } from '../../src/configs';
import { alexnetPlan, dataParallelPlan } from './fixtures';
import { changedSpans, readExample } from './helpers';

test('accelerate YAML: the fix changes only num_processes and gpu_ids values; comments and layout stay', () => {
  const file = 'examples/pytorch/accelerate_config.yaml';
  const before = readExample(file);
  const { findings } = checkConfig(file, before, alexnetPlan());
  const gpu = findings.find((f) => f.code === 'gpu-count');
  assert.ok(gpu, 'expected a gpu-count finding');
  assert.equal(before.slice(gpu.range.start, gpu.range.end), '8');
  assert.match(gpu.message, /^8 processes requested; the plan reaches 98% of the best throughput on 4 GPUs and saves 47% energy/);

  const { text: after } = fixAll(file, before, alexnetPlan());
  assert.deepEqual(changedSpans(before, after), [
    { line: 9, before: ',4,5,6,7', after: '', prefix: 'gpu_ids: 0,1,2,3', suffix: '      # all eight GPUs of the box' },
    { line: 14, before: '8', after: '4', prefix: 'num_processes: ', suffix: '              # one process per GPU' },
  ]);
  const parsed = parseYaml(after);
  assert.equal(parsed.num_processes, 4);
  assert.equal(parsed.gpu_ids, '0,1,2,3');
  assert.equal(parsed.mixed_precision, 'no', 'quoted scalar elsewhere untouched');
  // Fixed config is clean on the plan's count.
  assert.equal(checkConfig(file, after, alexnetPlan()).findings.filter((f) => f.code === 'gpu-count').length, 0);
});

test('accelerate YAML with NO distribution: scaling up also switches distributed_type, keeping its quotes', () => {
  const before = "# single GPU so far\ndistributed_type: 'NO'  # debugging\nnum_processes: 1\nmixed_precision: 'no'\n";
  const { text: after } = fixAll('default_config.yaml', before, dataParallelPlan(8));
  assert.deepEqual(changedSpans(before, after).map((c) => [c.line, c.before, c.after]), [
    [2, 'NO', 'MULTI_GPU'],
    [3, '1', '8'],
  ]);
  assert.ok(after.includes("distributed_type: 'MULTI_GPU'  # debugging"));
});

test('DeepSpeed JSONC: the batch fix edits one number; comments, trailing commas and order stay', () => {
  const file = 'examples/configs/ds_zero3.jsonc';
  const before = readExample(file);
  const { text: after, edits } = fixAll(file, before, alexnetPlan());
  assert.equal(edits.length, 1);
  assert.deepEqual(changedSpans(before, after), [
    { line: 7, before: '2', after: '8', prefix: '  "gradient_accumulation_steps": ', suffix: ',' },
  ]);
  const cfg = parseJsonc(after, [], { allowTrailingComma: true });
  assert.equal(cfg.train_batch_size, cfg.train_micro_batch_size_per_gpu * cfg.gradient_accumulation_steps * 4);
  assert.ok(after.startsWith('// DeepSpeed ZeRO-3 config'));
  assert.equal(checkConfig(file, after, alexnetPlan()).findings.filter((f) => f.severity === 'error').length, 0);
});

test('shell launch script: the variable the flag reads is edited where it is assigned', () => {
  const file = 'examples/pytorch/launch.sh';
  const before = readExample(file);
  const { text: after } = fixAll(file, before, alexnetPlan());
  assert.deepEqual(changedSpans(before, after).map((c) => [c.prefix, c.before, c.after]), [
    ['export CUDA_VISIBLE_DEVICES=0,1,2,3', ',4,5,6,7', ''],
    ['NGPUS=', '8', '4'],
  ]);
});

test('Lightning Trainer(devices=8) → devices=4 through the syntax tree, nothing else touched', async () => {
  await initConfigReaders();
  const file = 'examples/pytorch/train_lightning.py';
  const before = readExample(file);
  const finding = checkConfig(file, before, alexnetPlan()).findings.find((f) => f.code === 'gpu-count');
  assert.ok(finding?.fix);
  assert.equal(finding.format, 'lightning');
  assert.equal(before.slice(finding.range.start, finding.range.end), '8');
  const { text: after } = fixAll(file, before, alexnetPlan());
  assert.deepEqual(changedSpans(before, after), [
    { line: 41, before: '8', after: '4', prefix: '        devices=', suffix: ',          # one process per GPU' },
  ]);
});
