/**
 * What a DeepSpeed config states (DeepSpeed config JSON reference: bf16/fp16
 * "enabled", zero_optimization.stage 0–3, offload_optimizer.device cpu/nvme/none,
 * train_micro_batch_size_per_gpu, gradient_accumulation_steps, train_batch_size),
 * and each written value read back.
 */
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { applyTextEdits, initConfigReaders, readConfigSetups } from '../../src/configs';

before(() => initConfigReaders());
const read = (text: string) => readConfigSetups('ds_config.json', text)[0]!;

test('precision from bf16/fp16 "enabled"; "auto" is left to the HF Trainer', () => {
  assert.equal(read('{"train_batch_size": 8, "bf16": {"enabled": true}}').precision?.value, 'bf16');
  assert.equal(read('{"train_batch_size": 8, "fp16": {"enabled": true}}').precision?.value, 'fp16');
  const off = read('{"train_batch_size": 8, "fp16": {"enabled": false}}');
  assert.deepEqual([off.precision?.value, off.precision?.stated], ['fp32', true]);
  const none = read('{"train_batch_size": 8}');
  assert.deepEqual([none.precision?.value, none.precision?.stated], ['fp32', false]);
  assert.equal(read('{"train_batch_size": 8, "bf16": {"enabled": "auto"}}').precision, undefined);
  assert.equal(read('{"train_batch_size": 8, "fp16": {"enabled": "auto"}}').precision, undefined);
  // Switching fp16 → bf16 turns fp16 off and bf16 on; to fp32 turns both present sections off.
  const text = '{"train_batch_size": 8, "fp16": {"enabled": true}, "bf16": {"enabled": false}}';
  const s = read(text);
  const bf = applyTextEdits(text, s.precision!.set!('bf16')!);
  assert.deepEqual(JSON.parse(bf), { train_batch_size: 8, fp16: { enabled: false }, bf16: { enabled: true } });
  const fp32 = applyTextEdits(text, s.precision!.set!('fp32')!);
  assert.deepEqual(JSON.parse(fp32), { train_batch_size: 8, fp16: { enabled: false }, bf16: { enabled: false } });
  // No bf16 section: writing fp32 leaves it absent.
  const only = '{"train_batch_size": 8, "fp16": {"enabled": true}}';
  assert.deepEqual(JSON.parse(applyTextEdits(only, read(only).precision!.set!('fp32')!)), { train_batch_size: 8, fp16: { enabled: false } });
});

test('ZeRO stage, offload and batch sizes; each edit reads back', () => {
  const text = '{\n  "train_batch_size": 64,\n  "train_micro_batch_size_per_gpu": 4,\n  "gradient_accumulation_steps": 2,\n  "zero_optimization": {"stage": 2, "offload_optimizer": {"device": "nvme"}}\n}\n';
  const s = read(text);
  assert.deepEqual([s.zeroStage?.value, s.cpuOffload?.value, s.microBatch?.value, s.gradientAccumulation?.value, s.globalBatch?.value], [2, true, 4, 2, 64]);
  assert.equal(text.slice(s.anchor.start, s.anchor.end), '2');
  const again = (edits: ReturnType<NonNullable<NonNullable<typeof s.zeroStage>['set']>>) => read(applyTextEdits(text, edits!));
  assert.equal(again(s.zeroStage!.set!(3)).zeroStage?.value, 3);
  assert.equal(again(s.cpuOffload!.set!(false)).cpuOffload?.value, false);
  assert.equal(again(s.microBatch!.set!(8)).microBatch?.value, 8);
  assert.equal(again(s.gradientAccumulation!.set!(1)).gradientAccumulation?.value, 1);
  assert.equal(again(s.globalBatch!.set!(128)).globalBatch?.value, 128);
  // writeAll puts several changes into one consistent text.
  const all = read(applyTextEdits(text, s.writeAll!([['zeroStage', 3], ['cpuOffload', false], ['microBatch', 2], ['gradientAccumulation', 4]])!));
  assert.deepEqual([all.zeroStage?.value, all.cpuOffload?.value, all.microBatch?.value, all.gradientAccumulation?.value], [3, false, 2, 4]);
  // No offload section and none wanted: nothing to write; wanted: the section is created.
  const bare = '{"train_micro_batch_size_per_gpu": 4}';
  const b = read(bare);
  assert.deepEqual([b.zeroStage?.value, b.zeroStage?.stated, b.cpuOffload?.value, b.cpuOffload?.stated], [0, false, false, false]);
  assert.equal(b.cpuOffload!.set!(false), undefined);
  assert.equal(read(applyTextEdits(bare, b.cpuOffload!.set!(true)!)).cpuOffload?.value, true);
  // A missing accumulation is DeepSpeed's 1, and can be written.
  assert.deepEqual([b.gradientAccumulation?.value, b.gradientAccumulation?.stated], [1, false]);
  assert.equal(read(applyTextEdits(bare, b.gradientAccumulation!.set!(4)!)).gradientAccumulation?.value, 4);
  // Not whole positive numbers, or unknown stages: not read as settings.
  const odd = read('{"train_micro_batch_size_per_gpu": 0, "gradient_accumulation_steps": 1.5, "train_batch_size": "auto", "zero_optimization": {"stage": 5, "offload_optimizer": {"device": 1}}}');
  assert.deepEqual([odd.microBatch, odd.globalBatch, odd.zeroStage, odd.cpuOffload], [undefined, undefined, undefined, undefined]);
  assert.ok(read('{"train_batch_size": 8}').inexpressible.recompute);
});

test('"enabled" as DeepSpeed reads it (pydantic bools): "true"/"yes"/"1" switch bf16 on, "false"/"off" off, "auto" is unknowable', () => {
  const precisionOf = (enabled: string) => readConfigSetups('ds_config.json', `{ "train_micro_batch_size_per_gpu": 4, "bf16": { "enabled": ${enabled} } }`)[0]!.precision?.value;
  for (const on of ['true', '"true"', '"True"', '"yes"', '"1"', '1']) assert.equal(precisionOf(on), 'bf16', on);
  for (const off of ['false', '"false"', '"off"', '"0"']) assert.equal(precisionOf(off), 'fp32', off);
  assert.equal(precisionOf('"auto"'), undefined);
  assert.equal(precisionOf('"maybe"'), undefined, 'not a bool DeepSpeed reads: no statement, not fp32');
});

test('an inconsistent batch (64 ≠ 4 × 1 × 8) gets DeepSpeed’s own arithmetic fix once, not also a setup finding when the setup is as planned', async () => {
  const { checkConfig } = await import('../../src/configs');
  const text = '{\n  "train_batch_size": 64,\n  "train_micro_batch_size_per_gpu": 4,\n  "gradient_accumulation_steps": 1,\n  "bf16": {"enabled": true},\n  "zero_optimization": {"stage": 2}\n}\n';
  const setup = {
    precision: 'bf16', precisionReason: '', zeroStage: 2, hybridShard: false, recompute: 'none', cpuOffload: false, microBatch: 4, gradientAccumulation: 2,
    dataParallel: 8, tensorParallel: 1, pipelineStages: 1, virtualStages: 1, contextParallel: 1, expertParallel: 1, sequenceParallel: false, mfu: 0.4,
  };
  const plan = {
    model: 'M', batch: 64, cluster: { name: 'c', gpus: 8, nodes: 1 }, scaling: [],
    plan: { gpus: 8, samplesPerSec: 1, energyJPerSample: 0, layers: [], setup },
  } as unknown as import('../../src/protocol/plan').PlanReport;
  const { findings } = checkConfig('ds_config.json', text, plan);
  assert.deepEqual(findings.map((f) => f.code), ['batch-arithmetic'], JSON.stringify(findings.map((f) => f.message)));
  assert.equal(findings[0]!.fix!.title, 'Set gradient_accumulation_steps to 2 (keeps train_batch_size 64)');
});
