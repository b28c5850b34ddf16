/**
 * Cost-model terms added for issue 12's fidelity rows, checked by the physics
 * they stand for (bytes over bandwidth, counts per layer), never by outputs.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { AnalyzedLayer } from '../../src/core/ir';
import { resolveCluster } from '../../src/planner/index';
import { analyticalTimes, scoreElements } from '../../src/planner/cost/compute';
import { gptModel } from './gptSpec';

const a100 = () => resolveCluster('a100x8').gpus[0]!;
const sdpaOf = (seq: number): AnalyzedLayer => gptModel({ layers: 2, hidden: 1024, heads: 16, seq }).layers.find((l) => l.op === 'sdpa')!;

/** Time unfused attention adds over the fused kernel, forward and backward. */
function unfusedExtra(l: AnalyzedLayer, gpu = a100(), bytes = 2, precision: 'fp16' | 'fp32' = 'fp16') {
  const fused = analyticalTimes(l, gpu, 4, 1, 1, bytes, precision, { attention: 'fused' });
  const unfused = analyticalTimes(l, gpu, 4, 1, 1, bytes, precision, { attention: 'unfused' });
  return { f: unfused.forwardMs - fused.forwardMs, b: unfused.backwardMs - fused.backwardMs, fused };
}

test('unfused attention: the score matrix heads·T·T is what it adds, so doubling T quadruples the extra time', () => {
  const short = sdpaOf(512);
  const long = sdpaOf(1024);
  assert.equal(scoreElements(short), 16 * 512 * 512);
  const e1 = unfusedExtra(short);
  const e2 = unfusedExtra(long);
  assert.ok(e1.f > 0 && e1.b > 0);
  assert.ok(Math.abs(e2.f / e1.f - 4) < 1e-6, `forward extra ratio ${e2.f / e1.f}`);
  // Backward passes over the scores more often than forward (dP, dropout and softmax backward).
  assert.ok(e1.b > e1.f);
  // Default (no option) is the fused kernel: FlashAttention never writes the scores.
  const plain = analyticalTimes(short, a100(), 4, 1, 1, 2, 'fp16');
  assert.equal(plain.forwardMs, e1.fused.forwardMs);
});

test('unfused attention is memory-bound: twice the HBM bandwidth halves its extra time; fp32 scores cost (6·4+1)/(6·2+1) of fp16', () => {
  const l = sdpaOf(1024);
  const gpu = a100();
  const fast = { ...gpu, memoryBandwidthGBs: 2 * gpu.memoryBandwidthGBs };
  const base = unfusedExtra(l, gpu);
  assert.ok(Math.abs(unfusedExtra(l, fast).f / base.f - 0.5) < 1e-6);
  const fp32 = unfusedExtra(l, gpu, 4, 'fp32');
  assert.ok(Math.abs(fp32.f / base.f - 25 / 13) < 1e-6, `fp32/fp16 ${fp32.f / base.f}`);
});
