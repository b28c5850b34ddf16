/**
 * The best-kernel GEMM ceiling per GPU and precision: measured figures for
 * the tensor cores that fall short of the usual 85% (V100, H100), the
 * CUDA-core precisions left at the default, a spec's own measurement winning,
 * and the plan saying which ceiling it priced with.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { gemmEfficiency } from '../../src/planner/cost/efficiency';
import { gemmCeiling, gemmCeilingNote, LARGE_GEMM_EFFICIENCY } from '../../src/planner/cost/gemmCeiling';
import { ClusterSpecError, parseClusterSpec, planModel, resolveCluster } from '../../src/planner/index';
import { ModelBuilder } from './fixtures';

const close = (a: number, b: number, what: string): void => assert.ok(Math.abs(a - b) <= 1e-12, `${what}: ${a} vs ${b}`);
const v100 = () => resolveCluster('dgx1-v100').gpus[0]!;
const h100 = () => resolveCluster('h100x8').gpus[0]!;
const a100 = () => resolveCluster('a100x8').gpus[0]!;

test('V100 fp16 tensor cores top out at 83 of 125 TFLOPS (Markidis et al. 2018); its fp32 and tf32 (CUDA cores) keep 85%', () => {
  close(gemmCeiling(v100(), 'fp16'), 83 / 125, 'fp16');
  close(gemmCeiling(v100(), 'fp32'), LARGE_GEMM_EFFICIENCY, 'fp32');
  close(gemmCeiling(v100(), 'tf32'), LARGE_GEMM_EFFICIENCY, 'tf32 on Volta is the fp32 rate');
  // One full wave on the V100's 80 SMs: the shape costs nothing, so the ceiling is the efficiency.
  close(gemmEfficiency({ m: 128 * 80, n: 128, k: 1024, batch: 1 }, v100(), 'fp16'), 83 / 125, 'full wave fp16');
  close(gemmEfficiency({ m: 128 * 80, n: 128, k: 1024, batch: 1 }, v100(), 'fp32'), LARGE_GEMM_EFFICIENCY, 'full wave fp32');
});

test('Hopper is power-bound under tensor load: H100 and H200 at 792.1 of 989 for every tensor-core precision; A100 keeps the guide’s 85%', () => {
  for (const p of ['bf16', 'fp16', 'tf32', 'fp8'] as const) close(gemmCeiling(h100(), p), 792.1 / 989, `H100 ${p}`);
  close(gemmCeiling({ name: 'NVIDIA H200' }, 'bf16'), 792.1 / 989, 'H200');
  close(gemmCeiling({ name: 'NVIDIA GH200 480GB' }, 'bf16'), 821 / 989, 'GH200 has its own measurement');
  close(gemmCeiling(h100(), 'fp32'), LARGE_GEMM_EFFICIENCY, 'H100 fp32');
  for (const p of ['bf16', 'fp16', 'tf32', 'fp32'] as const) close(gemmCeiling(a100(), p), LARGE_GEMM_EFFICIENCY, `A100 ${p}`);
  close(gemmCeiling({ name: 'Mystery GPU' }, 'bf16'), LARGE_GEMM_EFFICIENCY, 'unknown GPU');
});

const spec = (gpu: Record<string, unknown>) => parseClusterSpec({ name: 'c', nodes: 1, gpusPerNode: 2, gpu: { name: 'Tesla V100-SXM2-32GB', tflops: 15.7, peakTflops: { fp16: 125 }, memoryGB: 32, memoryBandwidthGBs: 900, ...gpu }, intraNode: { bandwidthGBs: 130 } }, 'test');

test('a spec’s gemmEfficiency (the user’s own measurement) wins over the cited one, per precision, and bad values name the field', () => {
  const mine = spec({ gemmEfficiency: { fp16: 0.75 } }).gpus[0];
  close(gemmCeiling(mine, 'fp16'), 0.75, 'given fp16');
  close(gemmCeiling(mine, 'fp32'), LARGE_GEMM_EFFICIENCY, 'fp32 not given');
  assert.throws(() => spec({ gemmEfficiency: { fp16: 1.2 } }), (e: Error) => e instanceof ClusterSpecError && /gpu\.gemmEfficiency\.fp16 must be a fraction of the peak, in \(0, 1\]/.test(e.message));
  assert.throws(() => spec({ gemmEfficiency: { fp16: 0 } }), /gpu\.gemmEfficiency\.fp16 must be a positive number/);
  assert.throws(() => spec({ gemmEfficiency: { half: 0.7 } }), /gpu\.gemmEfficiency\.half is not a precision/);
  assert.throws(() => spec({ gemmEfficiency: 0.7 }), /gpu\.gemmEfficiency must be an object/);
});

test('the plan says when its GEMMs are priced under a measured ceiling, and the slower ceiling slows a GEMM-bound step', () => {
  const b = new ModelBuilder('mlp', [4096]);
  b.linear('fc1', 'x', 4096);
  b.linear('fc2', 'fc1', 4096);
  const model = b.build();
  const opts = { batch: 256, objective: 'throughput', strategies: 'dp', optimizer: 'sgd', gpus: 1, precision: 'fp16' } as const;
  const cited = planModel(model, spec({}), opts);
  const measured = planModel(model, spec({ gemmEfficiency: { fp16: 0.85 } }), opts);
  assert.ok(cited.feasible && measured.feasible);
  const note = cited.diagnostics.find((d) => d.severity === 'info' && /^GEMMs on Tesla V100-SXM2-32GB reach at most 66% of the fp16 peak/.test(d.message));
  assert.ok(note, cited.diagnostics.map((d) => d.message).join('\n'));
  assert.match(note.message, /Markidis et al\., IPDPSW 2018/);
  assert.ok(measured.diagnostics.some((d) => /reach at most 85% of the fp16 peak \(the cluster spec's gemmEfficiency\.fp16\)/.test(d.message)));
  // fc1/fc2 are 256 × 4096 × 4096 GEMMs; the other terms (launches, the optimizer's bytes) do not depend on the ceiling.
  assert.ok(cited.plan.stepTimeMs > measured.plan.stepTimeMs * 1.1, `${cited.plan.stepTimeMs} vs ${measured.plan.stepTimeMs}`);
  // The default ceiling is not worth a line.
  assert.equal(gemmCeilingNote(a100(), 'bf16'), undefined);
  const a = planModel(model, resolveCluster('a100x8'), { ...opts, precision: 'bf16' });
  assert.ok(!a.diagnostics.some((d) => /^GEMMs on/.test(d.message)));
});
