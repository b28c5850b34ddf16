/**
 * Small behaviours of the config readers, each from the format's own rules:
 * which files are which format, DeepSpeed's stages 0–3, Accelerate's positive
 * process counts, TOML strings with escaped quotes, commented-out Megatron
 * flags, torchrun options with their value in the next word, how a setup and a
 * step time are said, and the batch split that keeps the global batch.
 */
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { checkConfig, describeSetup, detectConfigFormats, initConfigReaders, readConfigSetups, versusLine, type RunSummary } from '../../src/configs';
import { wordsFor } from '../../src/configs/comments';
import { keepGlobalBatch } from '../../src/configs/setup';

before(() => initConfigReaders());

test('format detection needs the format’s own keys, not just the extension', () => {
  assert.deepEqual(detectConfigFormats('accelerate.yaml', 'distributed_type: MULTI_GPU\n'), ['accelerate']);
  assert.deepEqual(detectConfigFormats('ci.yaml', 'jobs:\n  test:\n    runs-on: ubuntu\n'), []);
  assert.deepEqual(detectConfigFormats('notes.txt', 'num_processes: 8\n'), []);
  assert.deepEqual(detectConfigFormats('llama.toml', '[parallelism]\ntensor_parallel_degree = 2\n'), ['torchtitan']);
  assert.deepEqual(detectConfigFormats('pyproject.toml', '[project]\nname = "x"\n'), []);
  assert.deepEqual(detectConfigFormats('ds_config.json', '{"train_batch_size": 8}'), ['deepspeed']);
  assert.deepEqual(detectConfigFormats('package.json', '{"name": "x"}'), []);
});

test('DeepSpeed: stages 0–3 exist, others are reported', () => {
  const stage = (s: number) => checkConfig('ds_config.json', `{"train_batch_size": 8, "zero_optimization": {"stage": ${s}}}`, undefined).findings.filter((f) => f.code === 'unknown-value');
  assert.deepEqual(stage(0), []);
  assert.deepEqual(stage(3), []);
  assert.match(stage(4)[0]!.message, /stage 4 does not exist; DeepSpeed has stages 0-3/);
  assert.equal(stage(-1).length, 1);
});

test('Accelerate: one process or machine is fine, zero is malformed', () => {
  const malformed = (n: number) => checkConfig('accelerate.yaml', `distributed_type: MULTI_GPU\nnum_processes: ${n}\nnum_machines: 1\n`, undefined).findings.filter((f) => f.code === 'malformed-config');
  assert.deepEqual(malformed(1), []);
  assert.match(malformed(0)[0]!.message, /num_processes must be a positive whole number, got 0/);
});

test('torchtitan: numbers read after a string with escaped quotes, defaults when absent', () => {
  const text = '[job]\ndescription = "llama \\"8b\\" run"\nname = \'x\'\n\n[parallelism]\ntensor_parallel_degree = 2\n';
  const s = readConfigSetups('llama.toml', text)[0]!;
  assert.equal(s.tensorParallel?.value, 2);
  assert.equal(s.tensorParallel?.stated, true);
  assert.equal(text.slice(s.tensorParallel!.range.start, s.tensorParallel!.range.end), '2');
  assert.deepEqual([s.pipelineStages?.value, s.pipelineStages?.stated], [1, false]);
  // CPU offload: off unless the file says enable_cpu_offload = true.
  assert.deepEqual([s.cpuOffload?.value, s.cpuOffload?.stated], [false, false]);
  const on = readConfigSetups('llama.toml', `${text}\n[training]\nenable_cpu_offload = true\n`)[0]!;
  assert.deepEqual([on.cpuOffload?.value, on.cpuOffload?.stated], [true, true]);
  assert.equal(readConfigSetups('llama.toml', `${text}\n[training]\nenable_cpu_offload = false\n`)[0]!.cpuOffload?.value, false);
});

test('Megatron: a flag in a comment is not a setting, even on the first line', () => {
  const text = '# --tensor-model-parallel-size 8 was too slow\ntorchrun --nproc_per_node 8 pretrain_gpt.py --tensor-model-parallel-size 2 --micro-batch-size 1 --global-batch-size 64\n';
  const s = readConfigSetups('pretrain_gpt.sh', text).find((x) => x.tensorParallel);
  assert.ok(s, 'a Megatron setup');
  assert.equal(s.tensorParallel?.value, 2);
  assert.equal(text.slice(s.tensorParallel!.range.start, s.tensorParallel!.range.end), '2');
});

test('torchrun: an option’s value may be the next word; a dangling option is ignored', () => {
  const plan = { model: 'M', cluster: { name: 'c', gpus: 8, nodes: 1 }, scaling: [], plan: { gpus: 8, samplesPerSec: 10, energyJPerSample: 0, layers: [] } } as unknown as import('../../src/protocol/plan').PlanReport;
  const text = 'torchrun --nnodes 1 --nproc_per_node 3 train.py --lr 0.1\n';
  const count = checkConfig('run.sh', text, plan).findings.filter((f) => f.code === 'gpu-count');
  assert.equal(count.length, 1);
  assert.match(count[0]!.message, /^3 processes requested/);
  assert.equal(text.slice(count[0]!.range.start, count[0]!.range.end), '3');
  assert.deepEqual(checkConfig('run.sh', 'torchrun --nproc_per_node\n', plan).findings, []);
});

test('prose words for values: numbers and their names, precision synonyms, no short or boolean words', () => {
  assert.deepEqual(wordsFor(8), ['8', 'eight']);
  assert.deepEqual(wordsFor(20), ['20']);
  assert.deepEqual(wordsFor('FP32'), ['fp32', 'float32', 'full precision', '32-bit', '32-true']);
  assert.deepEqual(wordsFor('bf16'), ['bf16', 'bfloat16', 'bf16-mixed']);
  assert.deepEqual(wordsFor('cpu'), ['cpu']);
  assert.deepEqual(wordsFor('no'), []);
  assert.deepEqual(wordsFor('none'), []);
  assert.deepEqual(wordsFor('true'), []);
  assert.deepEqual(wordsFor(true), []);
});

test('a setup in words leaves defaults out', () => {
  assert.equal(describeSetup({ zeroStage: 2, precision: 'bf16', tensorParallel: 2 }), 'ZeRO-2 + bf16 + TP 2');
  assert.equal(describeSetup({ zeroStage: 3, hybridShard: true, cpuOffload: true, tensorParallel: 4, sequenceParallel: true, pipelineStages: 2, contextParallel: 2, recompute: 'selective' }), 'HSDP ZeRO-3 + CPU offload + TP 4 + SP + PP 2 + CP 2 + selective recompute');
  assert.equal(describeSetup({ zeroStage: 0, tensorParallel: 1, pipelineStages: 1, contextParallel: 1, recompute: 'none' }), '');
});

test('versus line: seconds from 1000 ms, whole ms from 100, GB with a decimal below 10', () => {
  const run = (stepTimeMs: number, memoryPerGpuBytes = 62e9): RunSummary => ({ feasible: true, stepTimeMs, mfu: 0.41, memoryPerGpuBytes, describe: 'ZeRO-2', warnings: [] });
  assert.equal(versusLine(run(3400), run(2125)), 'your config: 3.4 s/step, 41% MFU, fits (62 GB/GPU) · best plan: 2.1 s/step (1.6×), ZeRO-2');
  assert.equal(versusLine(run(1000), run(999.6)), 'your config: 1.0 s/step, 41% MFU, fits (62 GB/GPU) · best plan: 1000 ms/step (1.0×), ZeRO-2');
  assert.equal(versusLine(run(100, 9.5e9), run(99.94)), 'your config: 100 ms/step, 41% MFU, fits (9.5 GB/GPU) · best plan: 99.9 ms/step (1.0×), ZeRO-2');
  // MFU in whole percent of the peak.
  assert.match(versusLine({ ...run(100), mfu: 0.5 }, run(100)), /, 50% MFU,/);
  assert.match(versusLine({ ...run(100), mfu: 0.996 }, run(100)), /, 100% MFU,/);
  // From 10 GB whole gigabytes: "10 GB", not "10.0 GB".
  assert.match(versusLine(run(100, 10e9), run(100)), /fits \(10 GB\/GPU\)/);
  assert.match(versusLine(run(100, 9.96e9), run(100)), /fits \(10\.0 GB\/GPU\)/);
  assert.equal(versusLine({ feasible: false, reason: 'OOM', describe: '', warnings: [] }, { feasible: false, reason: 'too big', describe: '', warnings: [] }), 'your config: does not fit (OOM) · best plan: nothing fits (too big)');
  // No speed-up is printed against a best plan that took no time (a model with nothing to compute), never "Infinity×".
  assert.equal(versusLine(run(100), run(0)), 'your config: 100 ms/step, 41% MFU, fits (62 GB/GPU) · best plan: 0.0 ms/step, ZeRO-2');
});

test('keeping the global batch: the largest micro-batch ≤ the plan’s that divides the per-replica batch', () => {
  assert.deepEqual(keepGlobalBatch(64, 4, 8), { micro: 4, accumulation: 2 });
  // 48 per replica / plan micro 5: 4 divides 48, 5 does not.
  assert.deepEqual(keepGlobalBatch(96, 5, 2), { micro: 4, accumulation: 12 });
  assert.deepEqual(keepGlobalBatch(8, 16, 2), { micro: 4, accumulation: 1 });
  assert.deepEqual(keepGlobalBatch(7, 4, 1), { micro: 1, accumulation: 7 });
  assert.equal(keepGlobalBatch(10, 4, 4), undefined, '10 does not split over 4 replicas');
  assert.equal(keepGlobalBatch(2, 4, 4), undefined);
  assert.deepEqual(keepGlobalBatch(6, 4, 0), { micro: 3, accumulation: 2 });
});

test('dimensions a format cannot say are mentioned only when the plan uses them (TP 1, PP 1, CP 1 are the default)', () => {
  const setup = (over: Record<string, unknown>) => ({
    precision: 'bf16', precisionReason: '', zeroStage: 2, hybridShard: false, recompute: 'none', cpuOffload: false, microBatch: 4, gradientAccumulation: 1,
    dataParallel: 8, tensorParallel: 1, pipelineStages: 1, virtualStages: 1, contextParallel: 1, expertParallel: 1, sequenceParallel: false, mfu: 0.4, ...over,
  });
  const plan = (over: Record<string, unknown>) => ({
    model: 'M', batch: 32, cluster: { name: 'c', gpus: 8, nodes: 1 }, scaling: [],
    plan: { gpus: 8, samplesPerSec: 1, energyJPerSample: 0, layers: [], setup: setup(over) },
  }) as unknown as import('../../src/protocol/plan').PlanReport;
  const text = '{"train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 1, "bf16": {"enabled": true}, "zero_optimization": {"stage": 2}}';
  const cannot = (over: Record<string, unknown>) => checkConfig('ds_config.json', text, plan(over)).findings.filter((f) => f.code === 'cannot-express').map((f) => f.message);
  assert.deepEqual(cannot({}), []);
  const tp = cannot({ tensorParallel: 2, dataParallel: 4 });
  assert.equal(tp.length, 1);
  assert.match(tp[0]!, /TP 2|tensor/i);
  assert.equal(cannot({ pipelineStages: 2, dataParallel: 4 }).length, 1);
  assert.equal(cannot({ recompute: 'full' }).length, 1);
});

test('DeepSpeed findings without a stage point at the opening brace', () => {
  const s = readConfigSetups('ds_config.json', '  {"train_batch_size": 8}')[0]!;
  assert.deepEqual(s.anchor, { start: 2, end: 3 });
  // One sample per replica is a valid split (micro 1, accumulation 1).
  assert.deepEqual(keepGlobalBatch(4, 4, 4), { micro: 1, accumulation: 1 });
});

test('a run summary: the plan’s own scaling point describes it when no setup is reported; info diagnostics are not warnings', async () => {
  const { summarizeRun } = await import('../../src/configs');
  const outcome = {
    feasible: true,
    diagnostics: [{ severity: 'info', message: 'i' }, { severity: 'warning', message: 'w' }],
    plan: { gpus: 8, stepTimeMs: 120, samplesPerSec: 50, memoryPerGpuBytes: [3e9, 5e9] },
    scaling: [{ gpus: 4, summary: 'data ×4' }, { gpus: 8, summary: 'data ×8' }],
  } as unknown as import('../../src/protocol/plan').PlanOutcome;
  const r = summarizeRun(outcome);
  assert.equal(r.describe, '8 GPUs, data ×8');
  assert.deepEqual(r.warnings, ['w']);
  assert.equal(r.memoryPerGpuBytes, 5e9);
  const one = summarizeRun({ ...outcome, plan: { ...(outcome as { plan: object }).plan, gpus: 1 }, scaling: [] } as unknown as import('../../src/protocol/plan').PlanOutcome);
  assert.equal(one.describe, '1 GPU');
  const no = summarizeRun({ feasible: false, reason: 'OOM', diagnostics: [] } as unknown as import('../../src/protocol/plan').PlanOutcome);
  assert.deepEqual([no.feasible, no.describe, no.reason], [false, 'does not fit', 'OOM']);
});
