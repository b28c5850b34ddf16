/**
 * Catalogue cost conventions from the ops' shapes: backward = 2 × forward for
 * ops with weights or two activation operands (one GEMM for each gradient:
 * costs.ts; the "6N FLOPs per token" of Kaplan et al. 2020 is 2N forward + 4N
 * backward), attention's FLOPs and what it keeps for backward, matmul with a
 * transposed operand, and NumPy broadcasting.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { broadcastShapes } from '../../src/core/catalogue/combining';
import { err, ok } from './inferHelpers';

test('backward = 2 × forward for linear, conv, mha, sdpa and matmul', () => {
  const cases = [
    ok('linear', [[10, 64]], { inFeatures: 64, outFeatures: 32, bias: true }),
    ok('conv', [[3, 16, 16]], { rank: 2, inChannels: 3, outChannels: 8, kernel: [3, 3], stride: [1, 1], padding: 'valid', dilation: [1, 1], groups: 1, bias: true }),
    ok('mha', [[16, 64]], { numHeads: 4, embedDim: 64 }),
    ok('sdpa', [[4, 16, 32]], {}),
    ok('matmul', [[4, 8], [8, 16]], {}),
  ];
  for (const r of cases) {
    assert.ok(r.forwardFlops > 0);
    assert.equal(r.backwardFlops, 2 * r.forwardFlops);
  }
});

test('sdpa from its shapes: QKᵀ and AV (2·T·T·d each) plus the softmax, per head; keeps Q, K, V and the T×T probabilities', () => {
  // (heads 8, T 16, d 32) used as query, key and value.
  const r = ok('sdpa', [[8, 16, 32]], {});
  assert.deepEqual(r.outputShape, [8, 16, 32]);
  const scores = 8 * 16 * 16;
  assert.equal(r.forwardFlops, 2 * scores * 32 + 5 * scores + 2 * scores * 32);
  assert.equal(r.savedActivationBytes, (3 * 8 * 16 * 32 + scores) * 4);
  // Cross-attention: 10 queries over 20 keys/values of 16 features.
  const x = ok('sdpa', [[10, 32], [20, 32], [20, 16]], {});
  assert.deepEqual(x.outputShape, [10, 16]);
  assert.equal(x.forwardFlops, 2 * 200 * 32 + 5 * 200 + 2 * 200 * 16);
  assert.equal(x.savedActivationBytes, (10 * 32 + 20 * 32 + 20 * 16 + 200) * 4);
  assert.match(err('sdpa', [[10, 32], [20, 32]], {}), /takes \(query, key, value\) or one tensor/);
});

test('mha self-attention on (T 16, E 64), 4 heads: four E×E projections, the core, and 4E² + 4E parameters', () => {
  const r = ok('mha', [[16, 64]], { numHeads: 4, embedDim: 64 });
  assert.deepEqual(r.outputShape, [16, 64]);
  assert.equal(r.params, 4 * 64 * 64 + 4 * 64);
  const scores = 4 * 16 * 16;
  const projections = 2 * 4 * 16 * 64 * 64 + 4 * 16 * 64;
  assert.equal(r.forwardFlops, projections + 2 * scores * 16 + 5 * scores + 2 * scores * 16);
  // Saved: the input, Q, K, V, the probabilities and the attention output before the last projection.
  assert.equal(r.savedActivationBytes, (16 * 64 + 3 * 16 * 64 + scores + 16 * 64) * 4);
  // nn.MultiheadAttention.forward(query, key, value): a fourth activation operand is a mistake, not ignored.
  assert.match(err('mha', [[16, 64], [16, 64], [16, 64], [16, 64]], { numHeads: 4, embedDim: 64 }), /mha takes 1–3 inputs, got 4/);
});

test('matmul: transposeB swaps the last two dims of a 2-D or batched operand', () => {
  const t = ok('matmul', [[4, 8], [16, 8]], { transposeB: true });
  assert.deepEqual(t.outputShape, [4, 16]);
  assert.equal(t.forwardFlops, 2 * 4 * 8 * 16);
  // Both operands are kept for the backward (each one's gradient needs the other), at their own sizes.
  assert.equal(t.savedActivationBytes, (4 * 8 + 16 * 8) * 4);
  assert.equal(t.backwardFlops, 2 * t.forwardFlops);
  assert.deepEqual(ok('matmul', [[2, 4, 8], [2, 16, 8]], { transposeB: true }).outputShape, [2, 4, 16]);
  // A 1-D operand is a vector either way.
  assert.deepEqual(ok('matmul', [[4, 8], [8]], { transposeB: true }).outputShape, [4]);
  assert.match(err('matmul', [[4, 8], [16, 8]], {}), /inner dims differ/);
  // torch.matmul broadcasts the batch dims before the last two: (2, 3, 4, 8) @ (8, 5) is (2, 3, 4, 5), 6 products.
  const batched = ok('matmul', [[2, 3, 4, 8], [8, 5]], {});
  assert.deepEqual(batched.outputShape, [2, 3, 4, 5]);
  assert.equal(batched.forwardFlops, 2 * 6 * 4 * 8 * 5);
  assert.deepEqual(ok('matmul', [[3, 1, 4, 8], [2, 8, 5]], {}).outputShape, [3, 2, 4, 5]);
});

test('broadcasting aligns shapes from the right, 1s stretch, missing dims count as 1', () => {
  assert.deepEqual(broadcastShapes([[3, 1, 5], [4, 5]], 'x'), [3, 4, 5]);
  assert.deepEqual(broadcastShapes([[5], [2, 3, 5]], 'x'), [2, 3, 5]);
  assert.deepEqual(broadcastShapes([[1, 1], [7, 1], [1, 9]], 'x'), [7, 9]);
  assert.deepEqual(broadcastShapes([[], [2]], 'x'), [2]);
  assert.throws(() => broadcastShapes([[3, 4], [5, 4]], 'add'), /add: shapes .* do not match/);
  assert.deepEqual(ok('add', [[2, 3, 4], [4]], {}).outputShape, [2, 3, 4]);
});

test('swish is SiLU (x·sigmoid(x)): the same cost', () => {
  assert.equal(ok('activation', [[10, 512]], { fn: 'swish' }).forwardFlops, ok('activation', [[10, 512]], { fn: 'silu' }).forwardFlops);
});

test('pooling from its shapes: window reads, avg adds a divide per output, adaptive windows overlap as PyTorch’s do', () => {
  // MaxPool2d(3, stride 2) on 8×15×15 (PyTorch: floor((15 − 3)/2) + 1 = 7): 8·7·7 windows of 9 reads. Autograd keeps
  // the input and the int64 argmax indices (derivatives.yaml: max_pool2d_with_indices_backward(grad, self, …, result1)).
  const max = ok('pool', [[8, 15, 15]], { rank: 2, mode: 'max', kernel: [3, 3], stride: [2, 2] });
  assert.deepEqual(max.outputShape, [8, 7, 7]);
  assert.equal(max.forwardFlops, 8 * 49 * 9);
  assert.equal(max.backwardFlops, max.forwardFlops);
  assert.equal(max.savedActivationBytes, 8 * 15 * 15 * 4 + 8 * 7 * 7 * 8);
  // The int64 argmax keeps its 8 bytes under mixed precision; only the float input follows the precision.
  assert.equal(max.savedFixedBytes, 8 * 7 * 7 * 8);
  // The stride defaults to the kernel; avg adds one divide per output and keeps its input (avg_pool2d_backward(grad, self, …)).
  const avg = ok('pool', [[8, 16, 16]], { rank: 2, mode: 'avg', kernel: [2, 2] });
  assert.deepEqual(avg.outputShape, [8, 8, 8]);
  assert.equal(avg.savedFixedBytes, undefined, 'no indices');
  // Which inputs the backward keeps: max and windowed avg keep theirs; a global mean needs only the shape.
  assert.deepEqual(max.saves, { inputs: [0] });
  assert.deepEqual(avg.saves, { inputs: [0] });
  assert.equal(ok('pool', [[8, 16, 16]], { rank: 2, mode: 'avg', global: true }).saves, undefined);
  assert.deepEqual(ok('pool', [[8, 16, 16]], { rank: 2, mode: 'max', global: true }).saves, { inputs: [0] }, 'a global max still needs where the max was');
  // A pool that states no rank pools every dim but the channels.
  assert.deepEqual(ok('pool', [[8, 16, 16]], { mode: 'max', kernel: [2, 2] }).outputShape, [8, 8, 8]);
  assert.equal(avg.forwardFlops, 8 * 64 * 4 + 8 * 64);
  assert.equal(avg.savedActivationBytes, 8 * 16 * 16 * 4);
  // ceil_mode: ceil((16 − 3)/2) + 1 = 8 (a last window hanging over the edge), floor gives 7.
  assert.deepEqual(ok('pool', [[1, 16, 16]], { rank: 2, kernel: [3, 3], stride: [2, 2], ceilMode: true }).outputShape, [1, 8, 8]);
  assert.deepEqual(ok('pool', [[1, 16, 16]], { rank: 2, kernel: [3, 3], stride: [2, 2] }).outputShape, [1, 7, 7]);
  // AdaptiveAvgPool1d(3) on 10: windows [0,4) [3,7) [6,10): 4 + 4 + 4 = 12 reads per channel.
  const ad = ok('pool', [[2, 10]], { rank: 1, mode: 'avg', outputSize: [3] });
  assert.deepEqual(ad.outputShape, [2, 3]);
  assert.equal(ad.forwardFlops, 2 * 12 + 2 * 3);
  // A null output size keeps that dim; one size applies to every dim.
  assert.deepEqual(ok('pool', [[2, 10, 6]], { rank: 2, mode: 'avg', outputSize: [5, null] }).outputShape, [2, 5, 6]);
  assert.deepEqual(ok('pool', [[2, 10, 6]], { rank: 2, mode: 'avg', outputSize: 2 }).outputShape, [2, 2, 2]);
  assert.deepEqual(ok('pool', [[2, 10, 6]], { rank: 2, mode: 'avg', outputSize: [3] }).outputShape, [2, 3, 3]);
  assert.match(err('pool', [[2, 10, 6]], { rank: 2, mode: 'avg', outputSize: [3, 3, 3] }), /outputSize has 3 entries, expected 2/);
  assert.match(err('pool', [[2, 10, 6]], { rank: 2, mode: 'avg', outputSize: [0, 3] }), /must be a positive integer or null/);
  // Global pooling reads everything once and drops the spatial dims unless kept.
  const g = ok('pool', [[4, 5, 5]], { rank: 2, mode: 'avg', global: true });
  assert.deepEqual(g.outputShape, [4]);
  assert.equal(g.forwardFlops, 100 + 4);
  assert.deepEqual(ok('pool', [[4, 5, 5]], { rank: 2, mode: 'avg', global: true, keepDims: true }).outputShape, [4, 1, 1]);
  assert.match(err('pool', [[4, 5, 5]], { rank: 2, mode: 'min', kernel: [2, 2] }), /pool mode 'min' is not 'max' or 'avg'/);
  assert.match(err('pool', [[4, 5, 5]], { rank: 2 }), /kernel is missing/);
  assert.match(err('pool', [[4, 5, 5]], { rank: 2, kernel: [2, 0] }), /must be positive/);
});

test('normalisation: γ and β per normalised feature, running mean and variance not trainable, 8 FLOPs per element', () => {
  const ln = ok('layernorm', [[10, 512]], {});
  assert.deepEqual([ln.params, ln.nonTrainable, ln.forwardFlops, ln.backwardFlops, ln.savedActivationBytes], [1024, 0, 8 * 5120, 2 * 8 * 5120, 5120 * 4]);
  // No affine: nothing to learn, so the backward is one pass.
  const plain = ok('layernorm', [[10, 512]], { scale: false, center: false });
  assert.deepEqual([plain.params, plain.backwardFlops], [0, 8 * 5120]);
  assert.equal(ok('layernorm', [[10, 512]], { scale: false }).params, 512);
  assert.equal(ok('layernorm', [[10, 512]], { normalizedShape: [10, 512] }).params, 2 * 5120);
  assert.match(err('layernorm', [[10, 512]], { normalizedShape: [256] }), /does not end with it/);
  assert.match(err('layernorm', [[512]], { normalizedShape: [2, 512] }), /does not end with it/);
  const gn = ok('groupnorm', [[32, 8, 8]], { numGroups: 4 });
  assert.deepEqual([gn.params, gn.outputShape], [64, [32, 8, 8]]);
  assert.equal(ok('groupnorm', [[32, 8, 8]], { numGroups: 4, affine: false }).params, 0);
  assert.match(err('groupnorm', [[30, 8, 8]], { numGroups: 4 }), /30 channels are not divisible into 4 groups/);
  assert.match(err('groupnorm', [[32, 8, 8]], { numGroups: 4, numChannels: 16 }), /expects 16 channels, but its input has 32/);
  const bn = ok('batchnorm', [[16, 8, 8]], { numFeatures: 16 });
  assert.deepEqual([bn.params, bn.nonTrainable], [32, 32]);
  assert.equal(ok('batchnorm', [[16, 8, 8]], { trackRunningStats: false }).nonTrainable, 0);
  assert.equal(ok('batchnorm', [[16, 8, 8]], { center: false }).params, 16);
  assert.match(err('batchnorm', [[16, 8, 8]], { numFeatures: 8 }), /expects 8 features, but its input has 16/);
});

test('recurrent layers: PyTorch’s and Keras’ parameter counts, per-step GEMM FLOPs, what backward-through-time keeps', () => {
  // nn.LSTM(10, 20): weight_ih 80×10, weight_hh 80×20, two biases of 80.
  const lstm = ok('rnn', [[5, 10]], { cell: 'lstm', hiddenSize: 20 });
  assert.equal(lstm.params, 800 + 1600 + 160);
  assert.deepEqual(lstm.outputShape, [5, 20]);
  // Per step: 2·4·20·(10 + 20) GEMM FLOPs, the bias adds, 21 pointwise FLOPs per hidden unit.
  assert.equal(lstm.forwardFlops, 5 * (2 * 4 * 20 * 30 + 2 * 4 * 20 + 21 * 20));
  assert.equal(lstm.backwardFlops, 2 * lstm.forwardFlops);
  // Kept per step: the input, 4 gates and 2 states of 20.
  assert.equal(lstm.savedActivationBytes, 5 * (10 + 20 * 6) * 4);
  // nn.RNN(10, 20): one tanh (5 FLOPs) per hidden unit per step on top of the GEMMs and the two bias adds.
  assert.equal(ok('rnn', [[5, 10]], { cell: 'rnn', hiddenSize: 20 }).forwardFlops, 5 * (2 * 20 * 30 + 2 * 20 + 5 * 20));
  // nn.LSTM(10, 20, num_layers=2, bidirectional=True): the second layer reads 40 features.
  const deep = ok('rnn', [[5, 10]], { cell: 'lstm', hiddenSize: 20, numLayers: 2, bidirectional: true, returnSequences: false });
  assert.equal(deep.params, 2 * 2560 + 2 * (4 * 20 * 40 + 4 * 20 * 20 + 160));
  assert.deepEqual(deep.outputShape, [40]);
  assert.equal(deep.savedActivationBytes, (5 * (10 + 2 * 20 * 6) + 5 * (40 + 2 * 20 * 6)) * 4);
  // Keras GRU(20) on 10 features: reset_after=True (the default) has two bias vectors, False one; Keras LSTM one.
  assert.equal(ok('rnn', [[5, 10]], { cell: 'gru', hiddenSize: 20, biasStyle: 'keras' }).params, 600 + 1200 + 120);
  assert.equal(ok('rnn', [[5, 10]], { cell: 'gru', hiddenSize: 20, biasStyle: 'keras', resetAfter: false }).params, 600 + 1200 + 60);
  assert.equal(ok('rnn', [[5, 10]], { cell: 'lstm', hiddenSize: 20, biasStyle: 'keras' }).params, 4 * (20 * 30 + 20));
  assert.equal(ok('rnn', [[5, 10]], { cell: 'rnn', hiddenSize: 20, bias: false }).params, 20 * 30);
  // GRU keeps 3 gates and 1 state; 18 pointwise FLOPs per unit.
  const gru = ok('rnn', [[5, 10]], { cell: 'gru', hiddenSize: 20 });
  assert.equal(gru.savedActivationBytes, 5 * (10 + 20 * 4) * 4);
  assert.equal(gru.forwardFlops, 5 * (2 * 3 * 20 * 30 + 2 * 3 * 20 + 18 * 20));
  assert.match(err('rnn', [[5, 10, 2]], { hiddenSize: 20 }), /expects \[time, features\]/);
  assert.match(err('rnn', [[5, 10]], { hiddenSize: 20, cell: 'qrnn' }), /cell 'qrnn' is not lstm, gru or rnn/);
  assert.match(err('rnn', [[5, 10]], { hiddenSize: 20, inputSize: 12 }), /expects 12 input features, got 10/);
  assert.match(err('rnn', [[5, 10]], { hiddenSize: 20, biasStyle: 'tf' }), /biasStyle 'tf'/);
});

test('shaping ops move elements without arithmetic; interpolation reads 2^rank or 4^rank neighbours', () => {
  // torch.flatten(x, 1) on (N, 8, 4, 4); flatten(x, 2) keeps the channels; endDim bounds the fold.
  assert.deepEqual(ok('flatten', [[8, 4, 4]], {}).outputShape, [128]);
  assert.deepEqual(ok('flatten', [[8, 4, 4]], { startDim: 2 }).outputShape, [8, 16]);
  assert.deepEqual(ok('flatten', [[8, 4, 4]], { startDim: 1, endDim: 2 }).outputShape, [32, 4]);
  assert.match(err('flatten', [[8, 4, 4]], { startDim: 0 }), /folds the batch/);
  assert.match(err('flatten', [[8, 4, 4]], { startDim: 3, endDim: 2 }), /endDim 2 is before startDim 3/);
  assert.deepEqual(ok('reshape', [[8, 4, 4]], { shape: [-1, 16] }).outputShape, [8, 16]);
  assert.deepEqual(ok('reshape', [[8, 4, 4]], { shape: [2, 64] }).outputShape, [2, 64]);
  assert.match(err('reshape', [[8, 4, 4]], { shape: [-1, -1] }), /more than one -1/);
  assert.match(err('reshape', [[8, 4, 4]], { shape: [0, 128] }), /invalid size/);
  assert.match(err('reshape', [[8, 4, 4]], { shape: [-1, 7] }), /128 elements\) into \[-1, 7\]/);
  assert.match(err('reshape', [[8, 4, 4]], { shape: [2, 8] }), /\(16\)/);
  // permute(0, 2, 3, 1): NCHW → NHWC.
  assert.deepEqual(ok('permute', [[8, 4, 5]], { dims: [0, 2, 3, 1] }).outputShape, [4, 5, 8]);
  assert.deepEqual(ok('permute', [[8, 4, 5]], { dims: [0, -1, 1, 2] }).outputShape, [5, 8, 4]);
  assert.match(err('permute', [[8, 4, 5]], { dims: [0, 1, 2] }), /must list all 4 dims/);
  assert.match(err('permute', [[8, 4, 5]], { dims: [0, 1, 1, 2] }), /repeat a dim/);
  assert.match(err('permute', [[8, 4, 5]], { dims: [1, 0, 2, 3] }), /moves the batch dim/);
  // ZeroPadding2D(((1, 2), (0, 3))) on 3×5×5.
  assert.deepEqual(ok('zeropad', [[3, 5, 5]], { padding: [[1, 2], [0, 3]] }).outputShape, [3, 8, 8]);
  assert.match(err('zeropad', [[3, 5, 5]], { padding: [[1, 2], [0]] }), /not a \[before, after\] pair/);
  assert.match(err('zeropad', [[3, 5, 5]], { padding: [[-3, -2], [0, 0]] }), /empty tensor/);
  const flat = ok('flatten', [[8, 4, 4]], {});
  assert.deepEqual([flat.params, flat.forwardFlops, flat.backwardFlops, flat.savedActivationBytes], [0, 0, 0, 0]);
  // Upsample ×2 of 3×4×4: nearest copies; bilinear reads 4 neighbours (2 FLOPs each), bicubic 16.
  assert.deepEqual(ok('upsample', [[3, 4, 4]], { scale: 2 }).outputShape, [3, 8, 8]);
  assert.equal(ok('upsample', [[3, 4, 4]], { scale: 2 }).forwardFlops, 0);
  assert.equal(ok('upsample', [[3, 4, 4]], { scale: 2, mode: 'bilinear' }).forwardFlops, 2 * 4 * 3 * 64);
  assert.equal(ok('upsample', [[3, 4, 4]], { scale: 2, mode: 'bicubic' }).forwardFlops, 2 * 16 * 3 * 64);
  assert.deepEqual(ok('upsample', [[3, 4, 4]], { scale: [1.5, 2] }).outputShape, [3, 6, 8]);
  assert.deepEqual(ok('upsample', [[3, 4, 4]], { scale: [3] }).outputShape, [3, 12, 12]);
  assert.deepEqual(ok('upsample', [[3, 4, 4]], { size: [5, 7] }).outputShape, [3, 5, 7]);
  assert.match(err('upsample', [[3, 4, 4]], { scale: [1, 2, 3] }), /scale has 3 entries, expected 2/);
  assert.match(err('upsample', [[3, 4, 4]], {}), /needs a size or a scale/);
  assert.match(err('upsample', [[3, 4, 4]], { scale: 0.1 }), /empty tensor/);
  assert.match(err('upsample', [[3]], { scale: 2 }), /at least one spatial dim/);
});

test('axes count the batch: a [10]-feature tensor has dims 0 and 1 (or −1, −2); 2 is out of range', () => {
  assert.ok(ok('activation', [[10]], { fn: 'softmax', axis: 1 }));
  assert.ok(ok('activation', [[10]], { fn: 'softmax', axis: -1 }));
  assert.match(err('activation', [[10]], { fn: 'softmax', axis: 2 }), /out of range/);
  assert.match(err('activation', [[10]], { fn: 'softmax', axis: -3 }), /out of range/);
});

test('clamp activations: relu is one compare/select per element, relu6 (min(max(x, 0), 6)) one more', () => {
  const relu = ok('activation', [[100]], { fn: 'relu' }).forwardFlops;
  assert.equal(relu, 100);
  assert.equal(ok('activation', [[100]], { fn: 'relu6' }).forwardFlops, relu + 100);
});

test('attribute and input-count errors name what is wrong: zero is not a positive count, one input is singular', () => {
  // nn.MultiheadAttention(64, num_heads=0) and a depthwise conv multiplier of 0 have no valid shape.
  assert.match(err('mha', [[8, 64]], { embedDim: 64, numHeads: 0 }), /attribute 'numHeads' must be positive, got 0/);
  assert.match(err('conv', [[16, 8, 8]], { rank: 2, filters: 16, kernel: [3, 3], depthwise: true, depthMultiplier: 0 }), /attribute 'depthMultiplier' must be positive, got 0/);
  assert.match(err('activation', [[8], [8]], { fn: 'relu' }), /^activation takes 1 input, got 2$/);
  assert.match(err('matmul', [[8, 4]], {}), /^matmul takes 2 inputs, got 1$/);
});
