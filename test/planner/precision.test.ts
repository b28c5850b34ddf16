/**
 * Precision: per-precision peaks in specs and presets, the default rules,
 * what mixed precision changes in a plan, and the errors for a missing peak.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ClusterSpecError, CLUSTER_PRESETS, parseClusterSpec, planModel, resolveCluster } from '../../src/planner/index';
import { choosePrecision, choosePrecisionFor, peakTflops, PrecisionError } from '../../src/planner/memory/index';
import type { PlanReport } from '../../src/protocol/plan';
import type { PlanOptions } from '../../src/protocol/planOptions';
import { ModelBuilder, transformer } from './fixtures';

const gpuOf = (preset: string) => CLUSTER_PRESETS[preset].spec.gpus[0];

test('presets carry dense datasheet peaks per precision; tflops stays the fp32 figure', () => {
  assert.deepEqual(gpuOf('h100x8').peakTflops, { fp32: 67, tf32: 494.7, bf16: 989.4, fp16: 989.4, fp8: 1978.9 });
  assert.deepEqual(gpuOf('a100x8').peakTflops, { fp32: 19.5, tf32: 156, bf16: 312, fp16: 312 });
  assert.deepEqual(gpuOf('dgx1-v100').peakTflops, { fp32: 15.7, fp16: 125 });
  assert.deepEqual(gpuOf('pcie4').peakTflops, { fp32: 12.1, fp16: 12.1 });
  for (const p of Object.values(CLUSTER_PRESETS)) assert.equal(p.spec.gpus[0].tflops, p.spec.gpus[0].peakTflops.fp32);
});

test('default precision: H100 and A100 → bf16, V100 → fp16, TITAN Xp → fp32; an explicit one wins and says where it came from', () => {
  assert.equal(choosePrecision(gpuOf('h100x8')).precision, 'bf16');
  assert.equal(choosePrecision(gpuOf('a100x8')).precision, 'bf16');
  const v100 = choosePrecision(gpuOf('dgx1-v100'));
  assert.equal(v100.precision, 'fp16');
  assert.match(v100.reason, /fp16 \(not bf16\) tensor cores/);
  const titan = choosePrecision(gpuOf('pcie4'));
  assert.equal(titan.precision, 'fp32');
  assert.match(titan.reason, /no 16-bit tensor cores/);
  assert.deepEqual(choosePrecision(gpuOf('h100x8'), 'fp16', 'ds_config.json (fp16.enabled)'), { precision: 'fp16', reason: 'from ds_config.json (fp16.enabled)' });
});

const spec = (gpu: Record<string, unknown>) => parseClusterSpec({ name: 'c', nodes: 1, gpusPerNode: 2, gpu: { memoryGB: 40, memoryBandwidthGBs: 1000, ...gpu }, intraNode: { bandwidthGBs: 50 } }, 'test');

test('cluster specs: peakTflops is parsed, checked field by field, and defaults tflops', () => {
  const c = spec({ name: 'Mine', peakTflops: { fp32: 20, bf16: 300 } });
  assert.equal(c.gpus[0].tflops, 20);
  assert.deepEqual(c.gpus[0].peakTflops, { fp32: 20, bf16: 300 });
  assert.throws(() => spec({ tflops: 20, peakTflops: { bf16: -1 } }), (e: Error) => e instanceof ClusterSpecError && /gpu\.peakTflops\.bf16 must be a positive number/.test(e.message));
  assert.throws(() => spec({ tflops: 20, peakTflops: { bfloat16: 300 } }), /gpu\.peakTflops\.bfloat16 is not a precision/);
  assert.throws(() => spec({ tflops: 20, peakTflops: { fp32: 30 } }), /peakTflops\.fp32 \(30\) must equal gpu\.tflops \(20\)/);
  assert.throws(() => spec({ tflops: 20, peakTflops: 300 }), /gpu\.peakTflops must be an object/);
});

test('a peak the spec lacks: a known GPU gets its cited datasheet value, an unknown one an error naming the field', () => {
  const known = spec({ name: 'NVIDIA A100-SXM4-40GB', tflops: 19.5 }).gpus[0];
  const p = peakTflops(known, 'bf16');
  assert.equal(p.tflops, 312);
  assert.match(p.defaultedFrom ?? '', /A100 datasheet/);
  const unknown = spec({ name: 'Mystery GPU', tflops: 20 }).gpus[0];
  assert.throws(() => peakTflops(unknown, 'bf16'), (e: Error) => e instanceof PrecisionError && /peakTflops\.bf16/.test(e.message) && /Mystery GPU/.test(e.message));
  assert.equal(choosePrecision(unknown).precision, 'fp32');
  // Through the planner: an infeasible result naming the field, never a throw.
  const b = new ModelBuilder('mlp', [256]);
  b.linear('fc', 'x', 256);
  const out = planModel(b.build(), spec({ name: 'Mystery GPU', tflops: 20 }), { batch: 8, objective: 'throughput', strategies: 'dp', optimizer: 'sgd', precision: 'bf16' });
  assert.equal(out.feasible, false);
  if (!out.feasible) assert.match(out.reason, /has no peakTflops\.bf16 in the cluster spec/);
  const ok = planModel(b.build(), spec({ name: 'NVIDIA A100-SXM4-40GB', tflops: 19.5 }), { batch: 8, objective: 'throughput', strategies: 'dp', optimizer: 'sgd', precision: 'bf16' });
  assert.ok(ok.feasible && ok.diagnostics.some((d) => d.severity === 'info' && /bf16 peak 312 TFLOPS from NVIDIA A100 datasheet/.test(d.message)));
});

test('mixed precision halves activation and gradient bytes, keeps fp32 master state, and computes at the tensor-core peak', () => {
  const model = transformer(2, 128, 512, 8);
  const o = (precision: 'fp32' | 'bf16'): PlanOptions => ({ batch: 32, objective: 'throughput', strategies: 'dp', optimizer: 'adam', gpus: 4, precision });
  const fp32 = planModel(model, resolveCluster('a100x8', {}), o('fp32')) as PlanReport;
  const bf16 = planModel(model, resolveCluster('a100x8', {}), o('bf16')) as PlanReport;
  const fc = (r: PlanReport) => r.plan.layers.find((l) => l.name === 'h.0.mlp.c_fc')!;
  assert.equal(fc(bf16).allreduceBytes * 2, fc(fp32).allreduceBytes, 'gradients all-reduced in 16 bits');
  const m32 = fp32.plan.setup!.memoryPerGpu;
  const m16 = bf16.plan.setup!.memoryPerGpu;
  // All but the fused attention's fp32 log-sum-exp (2 blocks × 8 heads × 128 rows × 4 B per sample, 8 samples per GPU).
  const logSumExp = 2 * 8 * 128 * 4 * 8;
  assert.ok(Math.abs(m16.activations * 2 - m32.activations - logSumExp) < 1e-6 * m32.activations, 'activations in 16 bits');
  assert.ok(Math.abs(m16.weights * 2 - m32.weights) < 1e-6 * m32.weights);
  // Master weights join the moments: 12 B/param instead of 8 B.
  assert.ok(Math.abs(m16.optimizer / m32.optimizer - 1.5) < 1e-9);
  assert.ok(fc(bf16).forwardMs < fc(fp32).forwardMs / 4, `${fc(bf16).forwardMs} vs ${fc(fp32).forwardMs}: 312 vs 19.5 TFLOPS`);
  assert.equal(bf16.plan.setup!.precisionReason, 'requested');
  assert.ok(bf16.plan.setup!.mfu <= 1 && fp32.plan.setup!.mfu <= 1);
  assert.ok(!bf16.diagnostics.some((d) => /not modelled/.test(d.message)));
});

test('a mixed cluster defaults to the best precision every GPU supports, and bad micro-batch pins name the pin', () => {
  const mixed = parseClusterSpec({ name: 'mixed', groups: [{ ...gpuOf('a100x8'), count: 2 }, { ...gpuOf('dgx1-v100'), count: 2 }], intraNode: { bandwidthGBs: 50 } }, 'test');
  const c = choosePrecisionFor(mixed.gpus);
  assert.equal(c.precision, 'fp16');
  assert.match(c.reason, /A100-SXM4-80GB: bf16; Tesla V100-SXM2-16GB: fp16/);
  assert.equal(choosePrecisionFor(mixed.gpus.slice(0, 2)).precision, 'bf16');
  const b = new ModelBuilder('mlp', [256]);
  b.linear('fc', 'x', 256);
  const o = { batch: 32, objective: 'throughput', strategies: 'dp', optimizer: 'sgd' } as const;
  const out = planModel(b.build(), mixed, { ...o, gpus: 2, pins: { microBatch: 3 } });
  assert.equal(out.feasible, false);
  if (!out.feasible) assert.match(out.reason, /pin microBatch=3: the batch of 32 over 2 GPUs \(16 samples each\) is not a multiple of 3/);
  const tooBig = planModel(b.build(), mixed, { ...o, pins: { microBatch: 64 } });
  assert.equal(tooBig.feasible, false);
  if (!tooBig.feasible) assert.match(tooBig.reason, /pin microBatch=64 is larger than the batch of 32/);
});

test('the precision the model’s training code builds its trainer with is planned where nothing explicit says one, and says where', () => {
  const model = { ...transformer(2, 128, 256, 4), runPrecision: { precision: 'fp16' as const, holding: 'pure' as const, source: 'train.py:17 (Trainer precision="16-true")' } };
  const options: PlanOptions = { batch: 16, objective: 'throughput', strategies: 'dp', optimizer: 'adam' };
  const coded = planModel(model, resolveCluster('a100x8'), options) as PlanReport;
  assert.deepEqual([coded.plan.setup?.precision, coded.plan.setup?.ampStyle], ['fp16', 'pure']);
  assert.equal(coded.plan.setup?.precisionReason, 'from train.py:17 (Trainer precision="16-true")');
  // A flag, a setting or a config beside the model wins over the code's trainer.
  const flagged = planModel(model, resolveCluster('a100x8'), { ...options, precision: 'bf16', precisionSource: '--precision' }) as PlanReport;
  assert.deepEqual([flagged.plan.setup?.precision, flagged.plan.setup?.precisionReason], ['bf16', 'from --precision']);
});
