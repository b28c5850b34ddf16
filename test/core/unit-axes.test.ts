/**
 * The reshape rule's `unsqueeze` / `squeeze` forms: a size-1 axis added or
 * dropped at a torch axis (batch included), worked out from the input so a
 * frontend can record it before it knows the sizes.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { err, ok } from './inferHelpers';

test('unsqueeze inserts a 1 at a batch-including axis, negative axes counted from the end', () => {
  assert.deepEqual(ok('reshape', [[10, 16]], { unsqueeze: 1 }).outputShape, [1, 10, 16]);
  assert.deepEqual(ok('reshape', [[10, 16]], { unsqueeze: 3 }).outputShape, [10, 16, 1]);
  assert.deepEqual(ok('reshape', [[10, 16]], { unsqueeze: -1 }).outputShape, [10, 16, 1]);
  assert.deepEqual(ok('reshape', [[10, 16]], { unsqueeze: -2 }).outputShape, [10, 1, 16]);
  assert.match(err('reshape', [[10, 16]], { unsqueeze: 0 }), /batch/);
  assert.match(err('reshape', [[10, 16]], { unsqueeze: 4 }), /out of range/);
});

test('squeeze drops a size-1 axis, keeps one of another size (as torch does), and squeeze() drops every 1', () => {
  assert.deepEqual(ok('reshape', [[1, 10, 16]], { squeeze: 1 }).outputShape, [10, 16]);
  assert.deepEqual(ok('reshape', [[10, 16, 1]], { squeeze: -1 }).outputShape, [10, 16]);
  assert.deepEqual(ok('reshape', [[10, 16]], { squeeze: 1 }).outputShape, [10, 16]);
  assert.deepEqual(ok('reshape', [[10, 16]], { squeeze: 0 }).outputShape, [10, 16]);
  assert.deepEqual(ok('reshape', [[1, 10, 1, 16]], { squeeze: 'all' }).outputShape, [10, 16]);
});
