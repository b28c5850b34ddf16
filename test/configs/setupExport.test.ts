/**
 * DeepSpeed and Accelerate exports say the plan's training setup (precision, ZeRO/FSDP stage, offload, recompute,
 * micro-batch and accumulation), so the config trains as the plan was priced; WAP's own check reads each export
 * back with no difference. Plans come from the real planner on a GPT of repeated blocks, each setup pinned.
 */
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { parse as parseYaml } from 'yaml';
import { checkConfig, exportPlan, initConfigReaders } from '../../src/configs';
import { parseToml } from '../../src/configs/tomlDoc';
import { planModel, resolveCluster } from '../../src/planner/index';
import type { ParallelPins, PlanReport, Precision } from '../../src/protocol/plan';
import type { PlanOptions } from '../../src/protocol/planOptions';
import { gptModel } from '../planner/gptSpec';

before(() => initConfigReaders());

const model = gptModel({ layers: 8, hidden: 2048, heads: 16, seq: 512 });
function plan(pins: ParallelPins, precision: Precision, extra: Partial<PlanOptions> = {}): PlanReport {
  const out = planModel(model, resolveCluster('h100x16-2node', {}), { batch: 64, objective: 'throughput', strategies: 'all', optimizer: 'adam', precision, gpus: 16, pins, ...extra });
  assert.ok(out.feasible, out.feasible ? '' : out.reason);
  return out;
}

const differences = (file: { fileName: string; content: string }, report: PlanReport) => checkConfig(file.fileName, file.content, report).findings.filter((f) => f.severity !== 'info');

test('DeepSpeed export of a ZeRO-3, bf16, full-recompute plan: its stage, precision, micro-batch and accumulation; recompute is a note; the check finds nothing to change', () => {
  const report = plan({ dataParallel: 16, tensorParallel: 1, pipelineStages: 1, zeroStage: 3, recompute: 'full', microBatch: 2 }, 'bf16');
  const s = report.plan.setup!;
  const file = exportPlan(report, 'deepspeed');
  const cfg = JSON.parse(file.content);
  assert.deepEqual(cfg.zero_optimization, { stage: 3 });
  assert.deepEqual(cfg.bf16, { enabled: true });
  assert.equal(cfg.fp16, undefined);
  assert.equal(cfg.train_micro_batch_size_per_gpu, s.microBatch);
  assert.equal(cfg.gradient_accumulation_steps, s.gradientAccumulation);
  assert.equal(cfg.train_batch_size, s.microBatch * s.gradientAccumulation * 16);
  assert.equal(cfg.train_batch_size, report.batch);
  assert.match(file.description, /recomputes activations \(full\)/);
  assert.deepEqual(differences(file, report), []);
});

test('DeepSpeed export: fp16 with optimizer offload, and a tensor-parallel plan’s data-parallel world (16 GPUs, TP 2: 8 replicas)', () => {
  const offload = plan({ dataParallel: 16, tensorParallel: 1, pipelineStages: 1, zeroStage: 2, cpuOffload: true, microBatch: 4 }, 'fp16');
  const cfg = JSON.parse(exportPlan(offload, 'deepspeed').content);
  // The plan's gradient buckets run beside the backward: DeepSpeed's ZeRO-2 does that with overlap_comm alone.
  assert.deepEqual(cfg.zero_optimization, { stage: 2, offload_optimizer: { device: 'cpu' }, overlap_comm: true });
  assert.deepEqual(cfg.fp16, { enabled: true });
  assert.deepEqual(differences(exportPlan(offload, 'deepspeed'), offload), []);
  const tp = plan({ dataParallel: 8, tensorParallel: 2, pipelineStages: 1, zeroStage: 1, microBatch: 4 }, 'bf16');
  const file = exportPlan(tp, 'deepspeed');
  const tpCfg = JSON.parse(file.content);
  assert.equal(tpCfg.train_batch_size, 64, `${tpCfg.train_micro_batch_size_per_gpu} × ${tpCfg.gradient_accumulation_steps} × 8 replicas`);
  assert.equal(tpCfg.train_micro_batch_size_per_gpu * tpCfg.gradient_accumulation_steps * 8, 64);
  assert.match(file.description, /cannot be said in a DeepSpeed config/);
  // At ZeRO-1 DeepSpeed reduces after the backward whatever the config says: the plan, priced with overlap, says so.
  assert.match(file.description, /DeepSpeed at ZeRO-1 reduces gradients after the backward, so expect a slower step/);
  // A plan priced DeepSpeed's way says nothing of it.
  const serial = plan({ dataParallel: 8, tensorParallel: 2, pipelineStages: 1, zeroStage: 1, microBatch: 4 }, 'bf16', { serialSyncStages: [0, 1, 2], serialSyncSource: 'ds.json' });
  assert.equal(serial.plan.setup!.gradientSync, 'serial');
  assert.doesNotMatch(exportPlan(serial, 'deepspeed').description, /reduces gradients after the backward/);
});

test('Accelerate export: ZeRO-3 with recompute is FSDP FULL_SHARD with activation checkpointing, ZeRO-1 its DeepSpeed plugin, HSDP ZeRO-2 HYBRID_SHARD_ZERO2; each reads back clean', () => {
  const cases: Array<{ pins: ParallelPins; precision: Precision; extra?: Partial<PlanOptions>; want: Record<string, unknown> }> = [
    { pins: { dataParallel: 16, tensorParallel: 1, pipelineStages: 1, zeroStage: 3, hybridShard: false, recompute: 'full', microBatch: 2 }, precision: 'bf16', extra: { ampStyle: 'autocast' }, want: { distributed_type: 'FSDP', mixed_precision: 'bf16', fsdp_config: { fsdp_sharding_strategy: 'FULL_SHARD', fsdp_activation_checkpointing: true, fsdp_offload_params: false } } },
    { pins: { dataParallel: 16, tensorParallel: 1, pipelineStages: 1, zeroStage: 1, microBatch: 2 }, precision: 'bf16', want: { distributed_type: 'DEEPSPEED', mixed_precision: 'bf16', deepspeed_config: { zero_stage: 1, offload_optimizer_device: 'none', gradient_accumulation_steps: 2 } } },
    { pins: { dataParallel: 16, tensorParallel: 1, pipelineStages: 1, zeroStage: 2, hybridShard: true, microBatch: 4 }, precision: 'bf16', extra: { ampStyle: 'autocast' }, want: { distributed_type: 'FSDP', mixed_precision: 'bf16', fsdp_config: { fsdp_sharding_strategy: 'HYBRID_SHARD_ZERO2', fsdp_activation_checkpointing: false, fsdp_offload_params: false } } },
    { pins: { dataParallel: 16, tensorParallel: 1, pipelineStages: 1, zeroStage: 0, microBatch: 4 }, precision: 'fp32', want: { distributed_type: 'MULTI_GPU', mixed_precision: 'no' } },
  ];
  for (const c of cases) {
    const report = plan(c.pins, c.precision, c.extra);
    const file = exportPlan(report, 'accelerate');
    const cfg = parseYaml(file.content) as Record<string, unknown>;
    for (const [k, v] of Object.entries(c.want)) assert.deepEqual(cfg[k], v, `${k} for ${JSON.stringify(c.pins)}`);
    assert.deepEqual(differences(file, report), [], JSON.stringify(c.pins));
  }
});

test('a setup a config runs otherwise is said: master weights under Accelerate’s autocast, autocast under DeepSpeed', () => {
  const master = plan({ dataParallel: 16, tensorParallel: 1, pipelineStages: 1, zeroStage: 3, microBatch: 2 }, 'bf16', { ampStyle: 'master-weights' });
  assert.match(exportPlan(master, 'accelerate').description, /trains 16 bits as torch\.autocast does; the plan holds them as master-weights: plan with --amp-style autocast/);
  const autocast = plan({ dataParallel: 16, tensorParallel: 1, pipelineStages: 1, zeroStage: 1, microBatch: 2 }, 'bf16', { ampStyle: 'autocast' });
  assert.match(exportPlan(autocast, 'deepspeed').description, /DeepSpeed keeps fp32 master weights: plan with --amp-style master-weights/);
});

test('Megatron-LM export: the plan’s TP, PP, virtual stages, sequence parallel, distributed optimizer, recompute, batch and precision as pretrain_gpt.py arguments; the check reads them back clean', () => {
  const report = plan({ dataParallel: 4, tensorParallel: 2, pipelineStages: 2, zeroStage: 1, recompute: 'selective', microBatch: 4, hybridShard: false }, 'bf16');
  const s = report.plan.setup!;
  const file = exportPlan(report, 'megatron');
  assert.equal(file.fileName, 'pretrain_gpt.sh');
  const has = (flag: string) => new RegExp(`^  ${flag.replace(/[-]/g, '\\-')}$`, 'm').test(file.content);
  for (const flag of [`--tensor-model-parallel-size ${s.tensorParallel}`, `--pipeline-model-parallel-size ${s.pipelineStages}`, '--context-parallel-size 1', '--use-distributed-optimizer', '--recompute-granularity selective', `--micro-batch-size ${s.microBatch}`, '--global-batch-size 64', '--bf16']) {
    assert.ok(has(flag), `${flag} in\n${file.content}`);
  }
  assert.equal(has('--sequence-parallel'), s.sequenceParallel);
  if (s.virtualStages > 1) assert.ok(has(`--num-layers-per-virtual-pipeline-stage ${report.plan.pipeline!.layersPerStage![0]! / s.virtualStages}`), file.content);
  assert.match(file.content, /torchrun --nnodes=2 --nproc_per_node=8/);
  assert.deepEqual(differences(file, report), []);
  // Its ZeRO-1 step was priced with the updated weights gathered after the step, which Megatron can overlap: said.
  assert.match(file.description, /--overlap-param-gather overlaps it with the next forward/);
  // A ZeRO-3 plan: Megatron-FSDP's full sharding, with the flags its README requires, read back as ZeRO-3.
  const zero3 = plan({ dataParallel: 16, tensorParallel: 1, pipelineStages: 1, zeroStage: 3, hybridShard: false, microBatch: 2 }, 'fp16');
  const z3 = exportPlan(zero3, 'megatron');
  assert.match(z3.content, /^ {2}--use-megatron-fsdp$/m);
  assert.match(z3.content, /^ {2}--data-parallel-sharding-strategy optim_grads_params$/m);
  assert.match(z3.description, /written as Megatron-FSDP .*the distributed optimizer alone is ZeRO-1, which --framework megatron plans/);
  assert.deepEqual(differences(z3, zero3), []);
  assert.match(z3.content, /^ {2}--fp16$/m);
  assert.doesNotMatch(z3.description, /overlap-param-gather/);
});

test('Megatron-LM fp8: --fp8-format beside --bf16 reads as fp8, and a plan in fp8 writes it', () => {
  const script = (extra: string) => `#!/usr/bin/env bash\ntorchrun --nproc_per_node=8 pretrain_gpt.py --tensor-model-parallel-size 1 --pipeline-model-parallel-size 1 --micro-batch-size 2 --global-batch-size 64 --bf16 ${extra}\n`;
  const report = plan({ dataParallel: 16, tensorParallel: 1, pipelineStages: 1, zeroStage: 1, hybridShard: false, microBatch: 4 }, 'fp8');
  assert.match(exportPlan(report, 'megatron').content, /^ {2}--fp8-format hybrid$/m);
  const precisionFinding = (text: string) => checkConfig('pretrain_gpt.sh', text, report).findings.find((f) => /trains with (bf16|fp8)/.test(f.message));
  assert.equal(precisionFinding(script('--fp8-format hybrid')), undefined, 'fp8 read as fp8');
  assert.match(precisionFinding(script(''))?.message ?? '', /trains with bf16/);
});

test('torchtitan export: FSDP2 shard and replicate degrees (HSDP), reshard for ZeRO-2, TP/PP/CP, batch, precision and checkpointing; the check reads them back clean', () => {
  const cases: Array<{ pins: ParallelPins; want: Record<string, Record<string, unknown>> }> = [
    { pins: { dataParallel: 16, tensorParallel: 1, pipelineStages: 1, zeroStage: 3, hybridShard: true, recompute: 'selective', microBatch: 4 }, want: { parallelism: { data_parallel_shard_degree: 8, data_parallel_replicate_degree: 2, fsdp_reshard_after_forward: 'default', tensor_parallel_degree: 1 }, activation_checkpoint: { mode: 'selective' } } },
    { pins: { dataParallel: 8, tensorParallel: 2, pipelineStages: 1, zeroStage: 2, hybridShard: false, recompute: 'full', microBatch: 4 }, want: { parallelism: { data_parallel_shard_degree: 8, data_parallel_replicate_degree: 1, fsdp_reshard_after_forward: 'never', tensor_parallel_degree: 2 }, activation_checkpoint: { mode: 'full' } } },
    { pins: { dataParallel: 16, tensorParallel: 1, pipelineStages: 1, zeroStage: 0, recompute: 'none', microBatch: 2 }, want: { parallelism: { data_parallel_shard_degree: 1, data_parallel_replicate_degree: 16 }, activation_checkpoint: { mode: 'none' } } },
  ];
  for (const c of cases) {
    const report = plan(c.pins, 'bf16');
    const s = report.plan.setup!;
    const file = exportPlan(report, 'torchtitan');
    assert.equal(file.fileName, 'wap_torchtitan.toml');
    const toml = parseTomlSections(file.content);
    for (const [table, keys] of Object.entries(c.want)) for (const [k, v] of Object.entries(keys)) assert.deepEqual(toml[table]?.[k], v, `${table}.${k} for ${JSON.stringify(c.pins)}`);
    assert.deepEqual(toml.training, { local_batch_size: s.microBatch, global_batch_size: 64, mixed_precision_param: 'bfloat16', enable_cpu_offload: false });
    assert.deepEqual(differences(file, report), [], JSON.stringify(c.pins));
  }
  // ZeRO-1 has no FSDP2 form: written as ZeRO-2, and said.
  const zero1 = plan({ dataParallel: 16, tensorParallel: 1, pipelineStages: 1, zeroStage: 1, hybridShard: false, microBatch: 2 }, 'bf16');
  assert.match(exportPlan(zero1, 'torchtitan').description, /FSDP2 has no optimizer-only sharding \(ZeRO-1\): written as ZeRO-2/);
});

/** The export's TOML as the configs room's own parser reads it: table → key → value. */
function parseTomlSections(text: string): Record<string, Record<string, unknown>> {
  const out: Record<string, Record<string, unknown>> = {};
  for (const e of parseToml(text).entries) (out[e.table] ??= {})[e.key] = e.value;
  return out;
}
