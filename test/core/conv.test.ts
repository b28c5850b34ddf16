import assert from 'node:assert/strict';
import { test } from 'node:test';
import { resolvePads } from '../../src/core/catalogue/conv';
import type { Attrs } from '../../src/core/ir';

import { CF, CL, err, ok } from './inferHelpers';

const conv2d = (cin: number | undefined, cout: number | undefined, k: number, extra: Attrs = {}): Attrs => ({
  rank: 2,
  ...(cin !== undefined ? { inChannels: cin } : {}),
  ...(cout !== undefined ? { outChannels: cout } : {}),
  kernel: [k, k],
  stride: [1, 1],
  padding: 'valid',
  dilation: [1, 1],
  groups: 1,
  bias: true,
  ...extra,
});

test("TF 'same' padding: out = ceil(in / stride), asymmetric pad puts the extra after", () => {
  const w = (k: number, s: number) => ({ kernel: [k], stride: [s], dilation: [1], padding: 'same' as const });
  assert.deepEqual(resolvePads([8], w(3, 2)), [[0, 1]]);
  assert.deepEqual(resolvePads([7], w(3, 2)), [[1, 1]]);
  assert.deepEqual(resolvePads([7], w(4, 2)), [[1, 2]]);
  assert.deepEqual(resolvePads([5], w(1, 2)), [[0, 0]]);
  // Keras Conv2D(8, 3, strides=2, padding='same') on 7×8×3 (channels_last).
  const r = ok('conv', [[7, 8, 3]], conv2d(undefined, 8, 3, { stride: [2, 2], padding: 'same' }), CL);
  assert.deepEqual(r.outputShape, [4, 4, 8]);
  assert.equal(r.params, 8 * 3 * 9 + 8);
  // Odd kernel, stride 2, 'same', dilation 2 on 11: out 6, extent 5, total pad max(5·2+5−11, 0) = 4.
  assert.deepEqual(ok('conv', [[11, 11, 1]], conv2d(1, 1, 3, { stride: [2, 2], dilation: [2, 2], padding: 'same' }), CL).outputShape, [6, 6, 1]);
});

test('dilation, explicit asymmetric pads and stride', () => {
  assert.deepEqual(ok('conv', [[3, 32, 32]], conv2d(3, 8, 3, { dilation: [2, 2] })).outputShape, [8, 28, 28]);
  assert.deepEqual(ok('conv', [[3, 32, 32]], conv2d(3, 8, 3, { dilation: [2, 2], padding: [[2, 2], [2, 2]] })).outputShape, [8, 32, 32]);
  assert.deepEqual(ok('conv', [[3, 32, 31]], conv2d(3, 8, 3, { stride: [2, 2], padding: [[0, 1], [1, 0]] })).outputShape, [8, 16, 15]);
});

test('grouped conv: params and FLOPs divide by groups; bad groups are reported', () => {
  const r = ok('conv', [[32, 28, 28]], conv2d(32, 64, 3, { groups: 4, padding: [[1, 1], [1, 1]] }));
  assert.deepEqual(r.outputShape, [64, 28, 28]);
  assert.equal(r.params, 64 * 8 * 9 + 64);
  assert.equal(r.forwardFlops, 2 * 64 * 28 * 28 * 8 * 9 + 64 * 28 * 28);
  assert.match(err('conv', [[30, 28, 28]], conv2d(30, 64, 3, { groups: 4 })), /not divisible by groups 4/);
  assert.match(err('conv', [[16, 28, 28]], conv2d(3, 64, 3)), /expects 3 input channels, but its input has 16/);
  assert.match(err('conv', [[3, 2, 2]], conv2d(3, 8, 5)), /larger than the padded input/);
});

test('Keras DepthwiseConv2D and SeparableConv2D', () => {
  const dw = ok('conv', [[32, 32, 16]], { ...conv2d(undefined, undefined, 3, { padding: 'same' }), depthwise: true, depthMultiplier: 2 }, CL);
  assert.deepEqual(dw.outputShape, [32, 32, 32]);
  assert.equal(dw.params, 16 * 2 * 9 + 32);
  assert.equal(dw.forwardFlops, 2 * 32 * 32 * 32 * 1 * 9 + 32 * 32 * 32);
  const sep = ok('separable_conv', [[32, 32, 16]], { rank: 2, outChannels: 64, depthMultiplier: 1, kernel: [3, 3], stride: [1, 1], padding: 'valid', dilation: [1, 1], bias: true }, CL);
  assert.deepEqual(sep.outputShape, [30, 30, 64]);
  assert.equal(sep.params, 16 * 9 + 16 * 64 + 64);
  assert.equal(sep.forwardFlops, 2 * 900 * (16 * 9 + 16 * 64) + 900 * 64);
  // Weighted: the input gradient and the weight gradient each cost a forward.
  assert.equal(sep.backwardFlops, 2 * sep.forwardFlops);
});

test('ConvTranspose2d: (in−1)·s − pads + dil·(k−1) + output_padding + 1', () => {
  const attrs = conv2d(16, 8, 4, { stride: [2, 2], padding: [[1, 1], [1, 1]], transposed: true });
  const r = ok('conv', [[16, 8, 8]], attrs);
  assert.deepEqual(r.outputShape, [8, 16, 16]);
  assert.equal(r.params, 16 * 8 * 16 + 8);
  assert.equal(r.forwardFlops, 2 * 16 * 64 * 8 * 16 + 8 * 256);
  const withOutPad = ok('conv', [[16, 8, 8]], conv2d(16, 8, 3, { stride: [2, 2], padding: [[1, 1], [1, 1]], transposed: true, outputPadding: [1, 1] }));
  assert.deepEqual(withOutPad.outputShape, [8, 16, 16]);
  // Keras Conv2DTranspose 'same': in × stride.
  assert.deepEqual(ok('conv', [[7, 7, 4]], conv2d(undefined, 2, 3, { stride: [2, 2], padding: 'same', transposed: true }), CL).outputShape, [14, 14, 2]);
  // Keras deconv_output_length: 'valid' without output_padding is in·s + max(e − s, 0) (kernel 2, stride 3: 24, not 23).
  assert.deepEqual(ok('conv', [[8, 8, 4]], conv2d(undefined, 2, 2, { stride: [3, 3], padding: 'valid', transposed: true }), CL).outputShape, [24, 24, 2]);
  // Kernel 3, stride 2: 8·2 + (3 − 2) = 17.
  assert.deepEqual(ok('conv', [[8, 8, 4]], conv2d(undefined, 2, 3, { stride: [2, 2], padding: 'valid', transposed: true }), CL).outputShape, [17, 17, 2]);
  // With an output_padding: (in−1)·s + e − 2·floor(e/2) + op: kernel 3 → 16 for op 1, kernel 4 → 15 for op 1 (not in·s + op).
  assert.deepEqual(ok('conv', [[8, 8, 4]], conv2d(undefined, 2, 3, { stride: [2, 2], padding: 'same', transposed: true, outputPadding: [1, 1] }), CL).outputShape, [16, 16, 2]);
  assert.deepEqual(ok('conv', [[8, 8, 4]], conv2d(undefined, 2, 4, { stride: [2, 2], padding: 'same', transposed: true, outputPadding: [1, 1] }), CL).outputShape, [15, 15, 2]);
  assert.deepEqual(ok('conv', [[8, 8, 4]], conv2d(undefined, 2, 3, { stride: [2, 2], padding: 'valid', transposed: true, outputPadding: [1, 1] }), CL).outputShape, [18, 18, 2]);
  assert.match(err('conv', [[8, 8, 4]], conv2d(undefined, 2, 3, { stride: [2, 2], padding: 'same', transposed: true, outputPadding: [2, 2] }), CL), /output padding 2 must be smaller/);
});

test('Conv1d and Conv3d (PyTorch docs examples)', () => {
  const c1 = ok('conv', [[16, 50]], { rank: 1, inChannels: 16, outChannels: 33, kernel: [3], stride: [2], padding: 'valid', dilation: [1], groups: 1, bias: true });
  assert.deepEqual(c1.outputShape, [33, 24]);
  assert.equal(c1.params, 33 * 16 * 3 + 33);
  const c3 = ok('conv', [[16, 10, 50, 100]], { rank: 3, inChannels: 16, outChannels: 33, kernel: [3, 3, 3], stride: [2, 2, 2], padding: 'valid', dilation: [1, 1, 1], groups: 1, bias: true });
  assert.deepEqual(c3.outputShape, [33, 4, 24, 49]);
  assert.equal(c3.params, 14_289);
  assert.match(err('conv', [[16, 50]], conv2d(16, 8, 3)), /expects 3-D input per sample \(C, spatial…\)/);
  // A transposed conv whose padding eats its whole output, and a conv with no output channels, are refused by name.
  assert.match(err('conv', [[16, 2, 2]], conv2d(16, 8, 1, { padding: [[1, 1], [1, 1]], transposed: true })), /conv output would be empty: spatial \[0, 0\]/);
  assert.match(err('conv', [[16, 8, 8]], conv2d(16, 0, 3)), /outChannels must be positive, got 0/);
  // The hint follows the layout: channels_last (Keras) puts the channels last.
  assert.match(err('conv', [[50, 16]], conv2d(16, 8, 3), CL), /expects 3-D input per sample \(spatial…, C\)/);
});

test('pools: ceil_mode, same, adaptive with null, global keepDims', () => {
  const pool = (extra: Attrs): Attrs => ({ rank: 2, mode: 'max', kernel: [3, 3], stride: [2, 2], ...extra });
  assert.deepEqual(ok('pool', [[64, 56, 56]], pool({})).outputShape, [64, 27, 27]);
  assert.deepEqual(ok('pool', [[64, 56, 56]], pool({ ceilMode: true })).outputShape, [64, 28, 28]);
  // The last window would start in the right padding: PyTorch drops it (5 → 3, not 4).
  assert.deepEqual(ok('pool', [[1, 5, 5]], { rank: 2, mode: 'max', kernel: [2, 2], stride: [2, 2], padding: [[1, 1], [1, 1]], ceilMode: true }).outputShape, [1, 3, 3]);
  // A last window that starts inside the input's last padded element stays: torch.nn.MaxPool2d(3, 2, padding=1, ceil_mode=True) on 6×6 gives 4×4.
  assert.deepEqual(ok('pool', [[1, 6, 6]], { rank: 2, mode: 'max', kernel: [3, 3], stride: [2, 2], padding: [[1, 1], [1, 1]], ceilMode: true }).outputShape, [1, 4, 4]);
  // Stride defaults to the kernel (Keras MaxPooling2D(2), nn.MaxPool2d(2)).
  assert.deepEqual(ok('pool', [[7, 7, 8]], { rank: 2, mode: 'max', kernel: [2, 2], padding: 'same' }, CL).outputShape, [4, 4, 8]);
  assert.deepEqual(ok('pool', [[7, 7, 8]], { rank: 2, mode: 'max', kernel: [2, 2], padding: 'valid' }, CL).outputShape, [3, 3, 8]);
  assert.deepEqual(ok('pool', [[64, 10, 20]], { rank: 2, mode: 'avg', outputSize: [null, 7] }).outputShape, [64, 10, 7]);
  const gap = ok('pool', [[7, 7, 512]], { rank: 2, mode: 'avg', global: true }, CL);
  assert.deepEqual(gap.outputShape, [512]);
  assert.equal(gap.forwardFlops, 7 * 7 * 512 + 512);
  assert.equal(gap.savedActivationBytes, 0);
  assert.deepEqual(ok('pool', [[7, 7, 512]], { rank: 2, mode: 'max', global: true, keepDims: true }, CL).outputShape, [1, 1, 512]);
  assert.deepEqual(ok('pool', [[512, 7, 7]], { rank: 2, mode: 'max', global: true, keepDims: true }).outputShape, [512, 1, 1]);
  assert.match(err('pool', [[64, 56, 56]], { rank: 2, mode: 'max' }), /kernel is missing/);
});

test('a conv that states no rank takes it from its input: every dim but the channels is spatial', () => {
  const { rank: _2d, ...noRank } = conv2d(3, 8, 3);
  void _2d;
  assert.deepEqual(ok('conv', [[3, 32, 32]], noRank).outputShape, [8, 30, 30]);
  assert.deepEqual(ok('conv', [[3, 100]], { ...noRank, kernel: [3], stride: [1], dilation: [1] }).outputShape, [8, 98]);
  const sep = { outChannels: 64, depthMultiplier: 1, kernel: [3, 3], stride: [1, 1], padding: 'valid', dilation: [1, 1], bias: true };
  assert.deepEqual(ok('separable_conv', [[32, 32, 16]], sep, CL).outputShape, [30, 30, 64]);
});
