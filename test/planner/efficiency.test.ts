/**
 * GEMM efficiency from shape (NVIDIA "Matrix Multiplication Background User's
 * Guide": tile and wave quantization, 16-byte alignment), the implicit-GEMM
 * shapes of layers (Chetlur et al. 2014), and the Winograd/FFT gain, by hand.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { OpKind, Shape } from '../../src/core/ir';
import { fastConvGain, gemmEfficiency, layerGemms } from '../../src/planner/cost/efficiency';
import { LARGE_GEMM_EFFICIENCY } from '../../src/planner/cost/gemmCeiling';
import { resolveCluster } from '../../src/planner/index';
import { ModelBuilder } from './fixtures';

const close = (a: number, b: number, what: string): void => assert.ok(Math.abs(a - b) <= 1e-12 * Math.max(1, Math.abs(b)), `${what}: ${a} vs ${b}`);
const a100 = { ...resolveCluster('a100x8').gpus[0]!, sms: 108 };
const one = (op: OpKind, inShape: Shape, out: Shape, attrs: Record<string, unknown> = {}) => {
  const m = new ModelBuilder('m', inShape);
  m.add('l', op, ['input'], [inShape], out, {}, attrs);
  return m.layers[0]!;
};

test('large aligned GEMM: 85 % of peak less the last wave’s idle SMs', () => {
  // 8192² output in 128×128 tiles: 4096 tiles over 108 SMs = 38 waves, the last one 100/108 full.
  close(gemmEfficiency({ m: 8192, n: 8192, k: 8192, batch: 1 }, a100, 'fp16'), LARGE_GEMM_EFFICIENCY * (4096 / (38 * 108)), '8192³ fp16');
  // Exactly one full wave of 108 tiles.
  close(gemmEfficiency({ m: 128 * 108, n: 128, k: 1024, batch: 1 }, a100, 'fp32'), 0.85, 'one full wave');
  // The same as a batch of 108 independent 128×128 GEMMs.
  close(gemmEfficiency({ m: 128, n: 128, k: 1024, batch: 108 }, a100, 'fp32'), 0.85, 'batched');
  // Without an SM count: the V100's 80. 80 tiles fill one wave.
  const { sms: _, ...noSms } = a100;
  close(gemmEfficiency({ m: 128 * 80, n: 128, k: 1024, batch: 1 }, noSms, 'fp32'), 0.85, 'default 80 SMs');
});

test('split-K: one tile on 108 SMs is split along K, at most K/128 ways and 4 waves', () => {
  // K = 4096 allows 32 splits: 32 of 108 SMs busy.
  close(gemmEfficiency({ m: 128, n: 128, k: 4096, batch: 1 }, a100, 'fp32'), (0.85 * 32) / 108, 'split 32');
  // K = 256: only 2 splits.
  close(gemmEfficiency({ m: 128, n: 128, k: 256, batch: 1 }, a100, 'fp32'), (0.85 * 2) / 108, 'split 2');
  // K < 128: no split.
  close(gemmEfficiency({ m: 128, n: 128, k: 64, batch: 1 }, a100, 'fp32'), 0.85 / 108, 'no split');
  // 60 tiles, K = 1024: splits up to floor(4 · 108 / 60) = 7 ways; the best, 7, fills 420 of 432 slots.
  close(gemmEfficiency({ m: 128 * 60, n: 128, k: 1024, batch: 1 }, a100, 'fp32'), (0.85 * 420) / 432, '60 tiles, split 7');
  // K = 768 caps the split at 6; the best of 1…6 is 5 ways: 300 of 324 slots.
  close(gemmEfficiency({ m: 128 * 60, n: 128, k: 768, batch: 1 }, a100, 'fp32'), (0.85 * 300) / 324, '60 tiles, split 5');
  // 7 tiles with a long K: the 4-wave cap allows floor(432 / 7) = 61 ways; the best is 46, 322 of 324 slots
  // (77 ways, allowed by a 5-wave cap, would fill 539 of 540).
  close(gemmEfficiency({ m: 128 * 7, n: 128, k: 128 * 100, batch: 1 }, a100, 'fp32'), (0.85 * 322) / 324, '7 tiles, split 46');
  // 100 tiles: any split up to 4 fills 100/108 of the slots, as no split does.
  close(gemmEfficiency({ m: 128 * 100, n: 128, k: 1024, batch: 1 }, a100, 'fp32'), (0.85 * 100) / 108, '100 tiles');
});

test('tile quantization: the tile that pads least, a partial tile costing a full one', () => {
  const sms1 = { ...a100, sms: 1 };
  // m = 100 on one SM: 16-row tiles (7 of them, 112 rows), fill 100/112; units 7·16·128/128² = 0.875, split-K cannot beat 0.875.
  close(gemmEfficiency({ m: 100, n: 128, k: 1024, batch: 1 }, sms1, 'fp32'), 0.85 * (100 / 112) * 0.875, 'm = 100');
  // m = 256 uses two 128 tiles, no padding: one SM, 2 units, 2 waves, full.
  close(gemmEfficiency({ m: 256, n: 128, k: 1024, batch: 1 }, sms1, 'fp32'), 0.85, 'm = 256');
  // m = 96 → 32-row tiles (3 of them, no padding); units 3·32·128/128² = 0.75 on one SM; K = 64 cannot split.
  close(gemmEfficiency({ m: 96, n: 128, k: 64, batch: 1 }, sms1, 'fp32'), 0.85 * 0.75, 'm = 96');
  // With K = 1024 a 4-way split turns 0.75 units into 3: three full waves.
  close(gemmEfficiency({ m: 96, n: 128, k: 1024, batch: 1 }, sms1, 'fp32'), 0.85, 'm = 96, split 4');
  // m = 16: the 16-row tile, the smallest there is; eight of them (batch 8) fill one SM's wave exactly.
  close(gemmEfficiency({ m: 16, n: 128, k: 64, batch: 8 }, sms1, 'fp32'), 0.85, 'm = 16, batch 8');
  // Degenerate dimensions round to at least 1.
  assert.ok(gemmEfficiency({ m: 0, n: 0.2, k: 0, batch: 0 }, sms1, 'fp32') > 0);
});

test('alignment: K = 12 is a multiple of 4 only, half speed in fp16/bf16, a quarter in fp8, full in tf32 and fp32', () => {
  const g = { m: 128 * 108, n: 128, k: 12, batch: 1 };
  close(gemmEfficiency(g, a100, 'fp16'), 0.85 * 0.5, 'fp16');
  close(gemmEfficiency(g, a100, 'bf16'), 0.85 * 0.5, 'bf16');
  close(gemmEfficiency(g, a100, 'fp8'), 0.85 * 0.25, 'fp8');
  close(gemmEfficiency(g, a100, 'tf32'), 0.85, 'tf32');
  close(gemmEfficiency(g, a100, 'fp32'), 0.85, 'fp32');
  // N odd: one element per load, 1/8 in fp16.
  close(gemmEfficiency({ m: 128 * 108, n: 127, k: 1024, batch: 1 }, a100, 'fp16'), 0.85 * (127 / 128) / 8, 'odd N');
});

test('layer GEMMs: linear, conv (implicit GEMM), depthwise, attention, RNN; backward GEMMs transpose the forward', () => {
  const lin = layerGemms(one('linear', [10, 512], [10, 256]), 4, 0.5)!;
  assert.deepEqual(lin.forward, { m: 40, n: 128, k: 512, batch: 1 });
  assert.deepEqual(lin.inputGrad, { m: 40, n: 512, k: 128, batch: 1 });
  assert.deepEqual(lin.weightGrad, { m: 512, n: 128, k: 40, batch: 1 });
  assert.equal(lin.sequential, 1);
  const conv = layerGemms(one('conv', [16, 32, 32], [32, 30, 30], { kernel: [3, 3], groups: 2, inChannels: 16, outChannels: 32 }), 8, 1)!;
  assert.deepEqual(conv.forward, { m: 8 * 900, n: 16, k: 8 * 9, batch: 2 });
  const dw = layerGemms(one('conv', [16, 32, 32], [32, 30, 30], { kernel: [3, 3], depthwise: true, inChannels: 16, outChannels: 32 }), 8, 1)!;
  assert.deepEqual(dw.forward, { m: 8 * 900, n: 2, k: 9, batch: 16 });
  // Without declared channels: from the shapes (channels first).
  const bare = layerGemms(one('conv', [3, 8, 8], [6, 6, 6], { kernel: [3, 3] }), 1, 1)!;
  assert.deepEqual(bare.forward, { m: 36, n: 6, k: 27, batch: 1 });
  const mha = layerGemms(one('mha', [10, 64], [10, 64]), 2, 0.25)!;
  assert.deepEqual(mha.forward, { m: 20, n: 16, k: 64, batch: 1 });
  const sdpa = layerGemms(one('sdpa', [8, 16, 32], [8, 16, 32]), 2, 1)!;
  assert.deepEqual(sdpa.forward, { m: 16, n: 16, k: 32, batch: 16 });
  // One head with no head dim of its own (T × d): Q·Kᵀ is still T × T per sample.
  assert.deepEqual(layerGemms(one('sdpa', [16, 32], [16, 32]), 2, 1)!.forward, { m: 16, n: 16, k: 32, batch: 2 });
  const rnn = layerGemms(one('rnn', [20, 10], [20, 32], { hiddenSize: 32 }), 4, 1)!;
  assert.deepEqual(rnn.forward, { m: 4, n: 128, k: 42, batch: 1 });
  assert.equal(rnn.sequential, 20);
  assert.equal(layerGemms(one('pool', [3, 8, 8], [3, 4, 4]), 1, 1), undefined);
  assert.equal(layerGemms(one('linear', [], [4]), 1, 1), undefined);
});

test('Winograd/FFT gain: fp32 3×3 and 5×5 stride-1 dense convs only', () => {
  const conv = (attrs: Record<string, unknown>) => one('conv', [16, 32, 32], [16, 30, 30], { kernel: [3, 3], stride: [1, 1], groups: 1, ...attrs });
  assert.equal(fastConvGain(conv({}), 'fp32'), 1.6);
  assert.equal(fastConvGain(conv({ kernel: [5, 5] }), 'fp32'), 1.4);
  assert.equal(fastConvGain(conv({ kernel: [3, 5] }), 'fp32'), 1);
  assert.equal(fastConvGain(conv({ kernel: [1, 1] }), 'fp32'), 1);
  assert.equal(fastConvGain(conv({}), 'fp16'), 1);
  assert.equal(fastConvGain(conv({ stride: [2, 2] }), 'fp32'), 1);
  assert.equal(fastConvGain(conv({ stride: [1, 2] }), 'fp32'), 1);
  assert.equal(fastConvGain(conv({ groups: 2 }), 'fp32'), 1);
  assert.equal(fastConvGain(conv({ depthwise: true }), 'fp32'), 1);
  assert.equal(fastConvGain(conv({ transposed: true }), 'fp32'), 1);
  assert.equal(fastConvGain(conv({ kernel: [3, 3, 3] }), 'fp32'), 1);
  assert.equal(fastConvGain(one('linear', [10], [10]), 'fp32'), 1);
});
