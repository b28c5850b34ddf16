import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ALL_OP_KINDS, catalogue, opInfo } from '../../src/core/catalogue/index';

import { CF, CL, err, ok } from './inferHelpers';

test('the catalogue has an entry for every OpKind and none for unknown kinds', () => {
  for (const op of ALL_OP_KINDS) assert.equal(opInfo(op)?.op, op);
  assert.equal(Object.keys(catalogue).length, ALL_OP_KINDS.length);
  assert.equal(opInfo('nn.Frobnicate'), undefined);
  assert.match(err('nn.Frobnicate', [[1]], {}), /unknown op kind/);
  assert.match(err('linear', [[10]], { outFeatures: 'ten' }), /'outFeatures' must be a number/);
});

test('linear applies over leading dims', () => {
  const r = ok('linear', [[128, 512]], { inFeatures: 512, outFeatures: 2048, bias: true });
  assert.deepEqual(r.outputShape, [128, 2048]);
  assert.equal(r.params, 512 * 2048 + 2048);
  assert.equal(r.forwardFlops, 128 * (2 * 512 * 2048 + 2048));
  assert.match(err('linear', [[256, 6, 6]], { inFeatures: 9216, outFeatures: 10, bias: true }), /expects 9216 input features.*ends in 6.*flatten first/);
  // A flat input has nothing to flatten: no such advice.
  assert.doesNotMatch(err('linear', [[100]], { inFeatures: 64, outFeatures: 10, bias: true }), /flatten/);
});

test('batchnorm: trainable scale/center, non-trainable running stats, channel axis per layout', () => {
  const torch = ok('batchnorm', [[64, 56, 56]], { numFeatures: 64, scale: true, center: true, trackRunningStats: true });
  assert.equal(torch.params, 128);
  assert.equal(torch.nonTrainable, 128);
  const keras = ok('batchnorm', [[56, 56, 64]], { scale: true, center: false, trackRunningStats: true }, CL);
  assert.equal(keras.params, 64);
  assert.equal(keras.nonTrainable, 128);
  const noStats = ok('batchnorm', [[32, 100]], { numFeatures: 32, scale: false, center: false, trackRunningStats: false });
  assert.equal(noStats.params + noStats.nonTrainable, 0);
  assert.equal(noStats.backwardFlops, noStats.forwardFlops);
  assert.match(err('batchnorm', [[64, 56, 56]], { numFeatures: 32, scale: true, center: true, trackRunningStats: true }), /expects 32 features/);
});

test('layernorm and groupnorm', () => {
  assert.equal(ok('layernorm', [[10, 512]], { scale: true, center: true }).params, 1024);
  assert.equal(ok('layernorm', [[10, 512]], { normalizedShape: [10, 512], scale: true, center: true }).params, 10_240);
  assert.match(err('layernorm', [[10, 512]], { normalizedShape: [256], scale: true, center: true }), /does not end with it/);
  const gn = ok('groupnorm', [[256, 14, 14]], { numGroups: 32, numChannels: 256, affine: true });
  assert.equal(gn.params, 512);
  assert.match(err('groupnorm', [[250, 14, 14]], { numGroups: 32, affine: true }), /not divisible into 32 groups/);
});

test('embedding: vocab × dim params, appends the dim', () => {
  const r = ok('embedding', [[1024]], { numEmbeddings: 50257, embeddingDim: 768 });
  assert.deepEqual(r.outputShape, [1024, 768]);
  assert.equal(r.params, 38_597_376);
  assert.equal(r.forwardFlops, 0);
});

test('nn.MultiheadAttention(512, 8): 1,050,624 params and projection + attention FLOPs', () => {
  const T = 10;
  const E = 512;
  const r = ok('mha', [[T, E]], { embedDim: E, numHeads: 8, bias: true });
  assert.deepEqual(r.outputShape, [T, E]);
  assert.equal(r.params, 1_050_624);
  const projections = 4 * (2 * T * E * E + T * E);
  const attention = 2 * T * T * E + 2 * T * T * E + 5 * 8 * T * T;
  assert.equal(r.forwardFlops, projections + attention);
  assert.equal(r.backwardFlops, 2 * r.forwardFlops);
  assert.equal(ok('mha', [[T, E]], { embedDim: E, numHeads: 8, bias: false }).params, 4 * E * E);
  // kdim/vdim: separate q/k/v projection weights.
  assert.equal(ok('mha', [[T, E], [20, 64], [20, 32]], { embedDim: E, numHeads: 8, kdim: 64, vdim: 32, bias: true }).params, E * E + E * 64 + E * 32 + 3 * E + E * E + E);
  assert.match(err('mha', [[T, 500]], { embedDim: 500, numHeads: 8, bias: true }), /not divisible by numHeads/);
});

test('Keras MultiHeadAttention(num_heads=2, key_dim=2) on query [8,16], value [4,16]', () => {
  const r = ok('mha', [[8, 16], [4, 16]], { embedDim: 16, numHeads: 2, keyDim: 2, bias: true }, CL);
  assert.deepEqual(r.outputShape, [8, 16]);
  // query/key/value dense 16→2×2 (+4 bias each), output 2×2→16 (+16).
  assert.equal(r.params, 3 * (16 * 4 + 4) + 4 * 16 + 16);
  // A zero per-head size is refused by name, for the key and for the value alike.
  assert.match(err('mha', [[8, 16], [4, 16]], { embedDim: 16, numHeads: 2, keyDim: 0, valueDim: 2, bias: true }, CL), /keyDim\/valueDim must be positive/);
  assert.match(err('mha', [[8, 16], [4, 16]], { embedDim: 16, numHeads: 2, keyDim: 2, valueDim: 0, bias: true }, CL), /keyDim\/valueDim must be positive/);
});

test('sdpa on (T, E) and (heads, T, d)', () => {
  const flat = ok('sdpa', [[128, 512], [128, 512], [128, 512]], {});
  assert.deepEqual(flat.outputShape, [128, 512]);
  assert.equal(flat.forwardFlops, 2 * 128 * 128 * 512 * 2 + 5 * 128 * 128);
  const heads = ok('sdpa', [[8, 128, 64], [8, 128, 64], [8, 128, 64]], { causal: true });
  assert.deepEqual(heads.outputShape, [8, 128, 64]);
  assert.equal(heads.forwardFlops, 8 * (2 * 128 * 128 * 64 * 2 + 5 * 128 * 128));
  assert.match(err('sdpa', [[8, 128, 64], [8, 128, 32], [8, 128, 64]], {}), /feature sizes differ/);
});

test('LSTM/GRU params: torch two biases, Keras one (GRU reset_after keeps two)', () => {
  const lstm = ok('rnn', [[35, 10]], { cell: 'lstm', inputSize: 10, hiddenSize: 20, numLayers: 2, bidirectional: false, bias: true, returnSequences: true });
  assert.equal(lstm.params, 5_920);
  assert.deepEqual(lstm.outputShape, [35, 20]);
  assert.equal(lstm.forwardFlops % 35, 0);
  const bi = ok('rnn', [[35, 10]], { cell: 'lstm', inputSize: 10, hiddenSize: 20, numLayers: 2, bidirectional: true, bias: true, returnSequences: true });
  assert.equal(bi.params, 2 * (4 * 20 * 30 + 160) + 2 * (4 * 20 * 60 + 160));
  assert.deepEqual(bi.outputShape, [35, 40]);
  const gru = { cell: 'gru', hiddenSize: 20, numLayers: 1, bidirectional: false, bias: true, returnSequences: false };
  assert.equal(ok('rnn', [[35, 10]], gru).params, 1_920);
  assert.equal(ok('rnn', [[35, 10]], { ...gru, biasStyle: 'keras' }).params, 1_920);
  assert.equal(ok('rnn', [[35, 10]], { ...gru, biasStyle: 'keras', resetAfter: false }).params, 1_860);
  assert.deepEqual(ok('rnn', [[35, 10]], gru).outputShape, [20]);
  assert.equal(ok('rnn', [[35, 10]], { ...gru, cell: 'lstm', biasStyle: 'keras' }).params, 2_480);
  assert.equal(ok('rnn', [[35, 10]], { ...gru, cell: 'rnn' }).params, 20 * 30 + 40);
  assert.match(err('rnn', [[3, 224, 224]], gru), /expects \[time, features\]/);
});

test('concat, split, add/mul broadcasting and their errors', () => {
  assert.deepEqual(ok('concat', [[64, 56, 56], [32, 56, 56]], { axis: 1 }).outputShape, [96, 56, 56]);
  assert.deepEqual(ok('concat', [[64, 56, 56], [32, 56, 56]], { axis: -3 }).outputShape, [96, 56, 56]);
  assert.match(err('concat', [[64, 56, 56], [32, 28, 28]], { axis: 1 }), /\[64, 56, 56\], \[32, 28, 28\] differ outside the concat axis/);
  assert.match(err('concat', [[64, 56, 56], [64, 56, 56]], { axis: 0 }), /batch dimension/);
  assert.deepEqual(ok('split', [[96, 10]], { axis: 1, chunks: 3, index: 2 }).outputShape, [32, 10]);
  assert.deepEqual(ok('split', [[96, 10]], { axis: 1, sizes: [64, 32], index: 1 }).outputShape, [32, 10]);
  assert.deepEqual(ok('split', [[96, 10]], { axis: 1, sizes: [40], index: 2 }).outputShape, [16, 10]);
  // torch.split(x, 32) on 96 is three sections, no empty fourth.
  assert.deepEqual(ok('split', [[96, 10]], { axis: 1, sizes: [32], index: 2 }).outputShape, [32, 10]);
  assert.match(err('split', [[96, 10]], { axis: 1, sizes: [32], index: 3 }), /output 3 does not exist/);
  assert.deepEqual(ok('split', [[96, 10]], { axis: 1, sizes: [], chunks: 3, index: 0 }).outputShape, [32, 10], 'no sizes: the chunks decide');
  // torch.split accepts empty sections.
  assert.deepEqual(ok('split', [[96, 10]], { axis: 1, sizes: [0, 96], index: 1 }).outputShape, [96, 10]);
  assert.match(err('split', [[96, 10]], { axis: 1, sizes: [-1, 97], index: 1 }), /must not be negative/);
  assert.deepEqual(ok('split', [[10, 1536]], { axis: -1, chunks: 3, index: 0 }).outputShape, [10, 512]);
  assert.match(err('split', [[96, 10]], { axis: 1, chunks: 3, index: 3 }), /output 3 does not exist/);
  assert.match(err('split', [[96, 10]], { axis: 1, chunks: 0, index: 0 }), /split chunks must be positive, got 0/);
  assert.match(err('split', [[96, 10]], { axis: 1, sizes: [64, 64], index: 0 }), /sum to 128, but the axis has 96/);
  assert.deepEqual(ok('add', [[64, 56, 56], [64, 1, 1]], {}).outputShape, [64, 56, 56]);
  assert.deepEqual(ok('mul', [[64, 56, 56], [56]], {}).outputShape, [64, 56, 56]);
  // A product keeps every factor for its backward (each gradient needs the others), at the factor's own size; a sum keeps none.
  assert.equal(ok('mul', [[64, 56, 56], [64, 1, 1]], {}).savedActivationBytes, (64 * 56 * 56 + 64) * 4);
  assert.equal(ok('add', [[64, 56, 56], [64, 56, 56]], {}).savedActivationBytes, 0);
  // n inputs take n − 1 ops per output element; one input (x + 1) still one.
  assert.equal(ok('add', [[64, 56, 56], [64, 56, 56]], {}).forwardFlops, 64 * 56 * 56);
  assert.equal(ok('add', [[10, 8], [10, 8], [10, 8]], {}).forwardFlops, 2 * 80);
  assert.equal(ok('mul', [[10, 8]], {}).forwardFlops, 80);
  // A product with a constant (x * 0.5) keeps nothing: its gradient is the constant.
  assert.equal(ok('mul', [[10, 8]], {}).saves, undefined);
  assert.deepEqual(ok('mul', [[10, 8], [10, 8]], {}).saves, { inputs: [0, 1] });
  assert.match(err('add', [[64, 56, 56], [32, 56, 56]], {}), /\[64, 56, 56\] and \[32, 56, 56\] do not match \(dim 1 of 3: 64 vs 32\)/);
  // Dims count from the left of the broadcast shape, as the shapes are printed.
  assert.match(err('mul', [[8, 10, 64], [10, 32]], {}), /\(dim 3 of 3: 64 vs 32\)/);
  const mm = ok('matmul', [[8, 10, 64], [8, 10, 64]], { transposeB: true });
  assert.deepEqual(mm.outputShape, [8, 10, 10]);
  assert.equal(mm.forwardFlops, 2 * 8 * 10 * 64 * 10);
  assert.match(err('matmul', [[8, 10, 64], [8, 10, 64]], {}), /inner dims differ/);
});

test('flatten, reshape with -1, permute, zeropad, upsample, dropout, activation', () => {
  assert.deepEqual(ok('flatten', [[256, 6, 6]], { startDim: 1, endDim: -1 }).outputShape, [9216]);
  assert.deepEqual(ok('flatten', [[8, 16, 4, 4]], { startDim: 2, endDim: 3 }).outputShape, [8, 64, 4]);
  assert.match(err('flatten', [[256, 6, 6]], { startDim: 0, endDim: -1 }), /folds the batch/);
  assert.deepEqual(ok('reshape', [[256, 6, 6]], { shape: [-1, 36] }).outputShape, [256, 36]);
  assert.match(err('reshape', [[256, 6, 6]], { shape: [-1, 35] }), /cannot reshape/);
  assert.deepEqual(ok('permute', [[10, 512]], { dims: [0, 2, 1] }).outputShape, [512, 10]);
  assert.match(err('permute', [[10, 512]], { dims: [1, 0, 2] }), /batch/);
  assert.deepEqual(ok('zeropad', [[28, 28, 3]], { padding: [[0, 1], [0, 1]] }, CL).outputShape, [29, 29, 3]);
  assert.deepEqual(ok('upsample', [[64, 14, 14]], { scale: [2, 2], mode: 'nearest' }).outputShape, [64, 28, 28]);
  assert.deepEqual(ok('upsample', [[64, 14]], { scale: [2], mode: 'nearest' }).outputShape, [64, 28], 'nn.Upsample on (N, C, L)');
  assert.match(err('upsample', [[64]], { scale: [2], mode: 'nearest' }), /at least one spatial dim/);
  assert.equal(ok('upsample', [[64, 14, 14]], { size: [28, 28], mode: 'bilinear' }).forwardFlops, 8 * 64 * 28 * 28);
  const drop = ok('dropout', [[4096]], { rate: 0.5 });
  assert.equal(drop.forwardFlops, 2 * 4096, 'draw a random number, multiply by the mask: 2 per element');
  assert.deepEqual(drop.outputShape, [4096]);
  assert.equal(drop.savedActivationBytes, 4096);
  // torch 1.13: F.dropout(x, p=0.0, training=True) is x itself (no grad_fn, nothing saved); p=1.0 multiplies by a zero scalar.
  for (const rate of [0, 1]) {
    const none = ok('dropout', [[4096]], { rate });
    assert.equal(none.savedActivationBytes, 0, `rate ${rate} keeps no mask`);
    assert.equal(none.forwardFlops, rate * 4096);
  }
  assert.equal(ok('dropout', [[4096]], {}).savedActivationBytes, 4096, 'nn.Dropout() defaults to p=0.5: a mask');
  assert.match(err('dropout', [[4096]], { rate: 1.01 }), /between 0 and 1/);
  assert.match(err('dropout', [[4096]], { rate: -0.01 }), /between 0 and 1/);
  const relu = ok('activation', [[64, 55, 55]], { fn: 'relu' });
  assert.equal(relu.forwardFlops, 64 * 55 * 55);
  assert.equal(relu.savedActivationBytes, 64 * 55 * 55 * 4);
  assert.equal(ok('activation', [[10, 512]], { fn: 'gelu' }).forwardFlops, 8 * 5120);
  assert.equal(ok('activation', [[10, 512]], { fn: 'leaky_relu' }).forwardFlops, 2 * 5120, 'a compare and a multiply per element');
  assert.equal(ok('activation', [[10, 512]], { fn: 'softplus' }).forwardFlops, 4 * 5120, 'exp, add, log and the threshold check');
  // Every activation's forward, counted by hand per element (the ops its definition applies).
  const counted: Array<[string, number, string]> = [
    ['relu', 1, 'max(x, 0)'], ['relu6', 2, 'two clamps'], ['elu', 4, 'exp, subtract, multiply, select'],
    ['silu', 5, 'x · sigmoid(x): sigmoid (4) and a multiply'], ['swish', 5, 'silu by another name'], ['tanh', 5, '(e^2x − 1)/(e^2x + 1)'],
    ['sigmoid', 4, '1/(1 + e^−x): negate, exp, add, divide'], ['softmax', 5, 'max, subtract, exp, sum, divide'], ['log_softmax', 5, 'softmax’s count, a log in place of the divide'],
    ['hardswish', 4, 'x · relu6(x + 3)/6: add, clamp, scale, multiply'], ['hardsigmoid', 3, 'relu6(x + 3)/6: add, clamp, scale'], ['linear', 0, 'identity'],
  ];
  for (const [fn, perElement, why] of counted) assert.equal(ok('activation', [[10, 512]], { fn }).forwardFlops, perElement * 5120, `${fn}: ${why}`);
  // Elementwise math written in forward: memory-bound, so rough on purpose; what each backward keeps is autograd's.
  const math: Array<[string, number, 'input' | 'output' | 'nothing', string]> = [
    ['abs', 1, 'input', 'a sign clear; grad · sgn(x)'], ['neg', 1, 'nothing', 'a sign flip; −grad'], ['square', 1, 'input', 'x · x; 2x · grad'],
    ['sqrt', 1, 'output', 'one special-function instruction; grad / 2√x reads the result'], ['rsqrt', 1, 'output', 'likewise; −½ · grad · result³'],
    ['reciprocal', 1, 'output', 'one instruction; −grad · result²'], ['exp', 4, 'output', 'range reduction, polynomial, scale; grad · result'],
    ['log', 4, 'input', 'as exp; grad / x'], ['sin', 4, 'input', 'range reduction and a polynomial; grad · cos x'], ['cos', 4, 'input', 'as sin'],
    ['pow', 2, 'input', 'a cube is two multiplies; e · x^(e−1) · grad'], ['clamp', 2, 'input', 'a compare per bound; the mask from x'],
    ['erf', 8, 'input', 'a rational approximation; exp(−x²) · grad'], ['masked_fill', 1, 'nothing', 'one select; the backward reads only the mask, a buffer'],
  ];
  for (const [fn, perElement, keeps, why] of math) {
    const r = ok('activation', [[10, 512]], { fn });
    assert.equal(r.forwardFlops, perElement * 5120, `${fn}: ${why}`);
    assert.equal(r.backwardFlops, perElement * 5120, `${fn}: backward ≈ forward`);
    assert.equal(r.savedActivationBytes, keeps === 'nothing' ? 0 : 5120 * 4, `${fn} keeps ${keeps}`);
    assert.deepEqual(r.saves, keeps === 'nothing' ? undefined : keeps === 'output' ? { output: true } : { inputs: [0] }, `${fn} keeps its ${keeps}`);
  }
  assert.match(err('activation', [[10]], { fn: 'frobnicate' }), /unknown activation function/);
  assert.match(err('activation', [[10]], { fn: 'softmax', axis: 3 }), /out of range/);
  assert.match(err('opaque', [[10]], { reason: 'custom module MyBlock' }), /custom module MyBlock/);
});

test('parameter: its elements are params; a leading 1 is the batch only when marked batched and something follows it', () => {
  const clsToken = ok('parameter', [], { shape: [1, 1, 768], batched: true });
  assert.deepEqual(clsToken.outputShape, [1, 768], 'ViT class token: (1, 1, D) is one sample of (1, D)');
  assert.equal(clsToken.params, 768);
  // A (1,) scale (a learned temperature) has nothing after its leading 1: it stays a 1-element tensor.
  assert.deepEqual(ok('parameter', [], { shape: [1], batched: true }).outputShape, [1]);
  assert.deepEqual(ok('parameter', [], { shape: [1, 197, 768] }).outputShape, [1, 197, 768], 'unmarked: the shape as declared');
  assert.deepEqual(ok('parameter', [], { shape: [30522, 768], gathered: [4, 768] }).outputShape, [4, 768]);
  assert.equal(ok('parameter', [], { shape: [30522, 768], gathered: [4, 768] }).params, 30522 * 768, 'a gathered table still counts all its rows');
  assert.equal(ok('parameter', [], { shape: [64], constant: true }).params, 0, 'a buffer the module reads has no parameters');
  assert.match(err('parameter', [], { shape: [0, 3] }), /shape is not known/);
  assert.match(err('parameter', [], { shape: [3], gathered: [] }), /gathered shape is not known/);
  assert.match(err('parameter', [], { shape: [3], gathered: [0, 3] }), /gathered shape is not known/, 'a zero-size dim is not a shape WAP knows');
});

test("a router's ops by hand: the 2-norm keeps input and result, topk keeps only its int64 indices, cumsum keeps nothing", () => {
  // x.norm(dim=-1, keepdim=True) over [16, 32]: squares and adds each element; backward scales each by grad / norm.
  const norm = ok('reduce', [[16, 32]], { fn: 'norm', axes: [-1], keepDims: true });
  assert.deepEqual(norm.outputShape, [16, 1]);
  assert.equal(norm.forwardFlops, 2 * 16 * 32);
  assert.equal(norm.savedActivationBytes, (16 * 32 + 16) * 4);
  // torch.topk(probs, 2, dim=-1) over [16, 8]: values [16, 2]; autograd keeps the 16 × 2 int64 indices it scatters through.
  const topk = ok('reduce', [[16, 8]], { fn: 'topk', axes: [-1], k: 2, keepDims: true });
  assert.deepEqual(topk.outputShape, [16, 2]);
  assert.equal(topk.savedActivationBytes, 16 * 2 * 8);
  assert.equal(topk.savedFixedBytes, 16 * 2 * 8, 'indices stay int64 whatever the precision');
  assert.match(err('reduce', [[16, 8]], { fn: 'topk', axes: [-1], k: 9, keepDims: true }), /topk k=9 is more than the 8 entries along axis/);
  assert.match(err('reduce', [[16, 8]], { fn: 'topk', axes: [-1, -2], k: 2, keepDims: true }), /topk selects along one axis, not 2/);
  // torch.cumsum(probs, dim=1): its backward is a reversed cumsum of the gradient, needing no activation.
  const cumsum = ok('activation', [[16, 8]], { fn: 'cumsum', axis: 1 });
  assert.deepEqual(cumsum.outputShape, [16, 8]);
  assert.equal(cumsum.savedActivationBytes, 0);
  assert.match(err('activation', [[16, 8]], { fn: 'cumsum' }), /cumsum needs the axis it sums along/);
});
