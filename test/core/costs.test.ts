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
});

test('matmul: transposeB swaps the last two dims of a 2-D or batched operand', () => {
  const t = ok('matmul', [[4, 8], [16, 8]], { transposeB: true });
  assert.deepEqual(t.outputShape, [4, 16]);
  assert.equal(t.forwardFlops, 2 * 4 * 8 * 16);
  assert.deepEqual(ok('matmul', [[2, 4, 8], [2, 16, 8]], { transposeB: true }).outputShape, [2, 4, 16]);
  // A 1-D operand is a vector either way.
  assert.deepEqual(ok('matmul', [[4, 8], [8]], { transposeB: true }).outputShape, [4]);
  assert.match(err('matmul', [[4, 8], [16, 8]], {}), /inner dims differ/);
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
