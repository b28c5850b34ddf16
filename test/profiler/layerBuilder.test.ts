/**
 * The tfjs worker's layer builder on the pure-JS cpu backend: a reduce layer reduces the IR's axes, and a
 * channels_first spec restated channels_last (whole-step runs) moves its axes with the channels.
 */
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import * as tfcore from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-cpu';
import { Unsupported } from '../../src/profiler/worker/builtLayer';
import { buildLayer } from '../../src/profiler/worker/layerBuilder';
import { toChannelsLast } from '../../src/profiler/worker/layerLayout';
import type { TrialSpec } from '../../src/profiler/worker/messages';
import { transposeSwapAttrs } from './fixtures';
import { useRuntime } from '../../src/profiler/worker/tfRuntime';

before(async () => {
  await tfcore.setBackend('cpu');
  useRuntime(tfcore, 'test', tfcore);
});

const reduceSpec = (attrs: Record<string, unknown>, inputShape: number[]): TrialSpec => ({
  id: 'r', name: 'r', op: 'reduce', attrs: attrs as TrialSpec['attrs'], inputShapes: [inputShape], inputs: ['x'], layout: 'channels_first', needsInputGrad: true,
});

test('reduce: mean, sum, amax and amin over the IR axes (batch included in the numbering), keepDims as stated', () => {
  // x[b, i, j] = 100·b + 10·i + j on [2, 3, 4].
  const values = Array.from({ length: 24 }, (_, n) => 100 * Math.floor(n / 12) + 10 * Math.floor((n % 12) / 4) + (n % 4));
  const x = tfcore.tensor(values, [2, 3, 4]);
  const run = (attrs: Record<string, unknown>) => {
    const y = buildLayer(reduceSpec(attrs, [3, 4]), 2).apply([x]);
    return { shape: y.shape, values: Array.from(y.dataSync()) };
  };
  // Mean over i (10·i averages to 10) for each b, j.
  assert.deepEqual(run({ fn: 'mean', axes: [1], keepDims: false }), { shape: [2, 4], values: [10, 11, 12, 13, 110, 111, 112, 113] });
  assert.deepEqual(run({ fn: 'sum', axes: [-1], keepDims: true }), { shape: [2, 3, 1], values: [6, 46, 86, 406, 446, 486] });
  assert.deepEqual(run({ fn: 'amax', axes: [1, 2], keepDims: false }), { shape: [2], values: [23, 123] });
  assert.deepEqual(run({ fn: 'amin', axes: [2], keepDims: false }), { shape: [2, 3], values: [0, 10, 20, 100, 110, 120] });
  assert.throws(() => buildLayer(reduceSpec({ fn: 'median', axes: [1] }, [3, 4]), 2), (e: Error) => e instanceof Unsupported && /median/.test(e.message));
});

test('toChannelsLast: a reduce over [N, C, H, W] axes names the same axes of [N, H, W, C]', () => {
  const moved = toChannelsLast(reduceSpec({ fn: 'mean', axes: [1, -1], keepDims: false }, [8, 5, 6]));
  assert.deepEqual(moved.inputShapes, [[5, 6, 8]]);
  // C (1) sits at 3, W (-1 = 3) at 2.
  assert.deepEqual((moved.attrs as { axes: number[] }).axes, [3, 2]);
  // A rank-2 input has no channels to move.
  assert.deepEqual((toChannelsLast(reduceSpec({ fn: 'mean', axes: [1] }, [8, 5])).attrs as { axes: number[] }).axes, [1]);
});

test('add and mul with one input: the Python number on the side the code wrote it', () => {
  const x = tfcore.tensor([[1, 2, 4]]);
  const spec = (op: 'add' | 'mul', attrs: Record<string, unknown>): TrialSpec => ({ ...reduceSpec(attrs, [3]), op });
  const run = (op: 'add' | 'mul', attrs: Record<string, unknown>) => Array.from(buildLayer(spec(op, attrs), 1).apply([x]).dataSync());
  assert.deepEqual(run('mul', { operator: '*', constant: 0.125 }), [0.125, 0.25, 0.5]);
  assert.deepEqual(run('add', { operator: '-', constant: 1, constantFirst: true }), [0, -1, -3]);
  assert.deepEqual(run('mul', { operator: '/', constant: 8, constantFirst: true }), [8, 4, 2]);
  assert.deepEqual(run('add', { operator: '+' }), [2, 3, 5]);
});

test('elementwise math as the torch worker runs it: pow by its exponent, clamp by its bound, a fill where positive', () => {
  const x = tfcore.tensor([[-2, 0.5, 4]]);
  const run = (attrs: Record<string, unknown>) => Array.from(buildLayer({ ...reduceSpec(attrs, [3]), op: 'activation' }, 1).apply([x]).dataSync());
  assert.deepEqual(run({ fn: 'pow', exponent: 3 }), [-8, 0.125, 64]);
  assert.deepEqual(run({ fn: 'pow' }), [4, 0.25, 16]);
  assert.deepEqual(run({ fn: 'clamp', max: 1 }), [-2, 0.5, 1]);
  assert.deepEqual(run({ fn: 'clamp' }), [0, 0.5, 4]);
  assert.deepEqual(run({ fn: 'neg' }), [2, -0.5, -4]);
  assert.deepEqual(run({ fn: 'masked_fill' }), [-2, 0, 0]);
  run({ fn: 'exp' }).forEach((v, i) => assert.ok(Math.abs(v - Math.exp([-2, 0.5, 4][i]!)) < 1e-5 * Math.exp(4), `exp ${v}`));
});

test('a dtype cast is not built by the tfjs worker, which holds one float type: it stays priced from its bytes', () => {
  assert.throws(() => buildLayer({ ...reduceSpec({ fn: 'cast', to: 'bf16' }, [3]), op: 'activation' }, 1), (e: Error) => e instanceof Unsupported && /one float type/.test(e.message));
});

test("a router's ops as the torch worker runs them: the 2-norm, topk along the last axis, cumsum, a transpose read before its rank was known (resolved by toTrialSpec)", () => {
  const x = tfcore.tensor([[[3, 4, 1], [0, 2, 5]]]);
  const run = (op: TrialSpec['op'], attrs: Record<string, unknown>) => {
    const y = buildLayer({ ...reduceSpec(attrs, [2, 3]), op }, 1).apply([x]);
    return { shape: y.shape, values: Array.from(y.dataSync()).map((v) => Math.round(v * 1e4) / 1e4) };
  };
  assert.deepEqual(run('reduce', { fn: 'norm', axes: [-1], keepDims: true }), { shape: [1, 2, 1], values: [Math.round(Math.sqrt(26) * 1e4) / 1e4, Math.round(Math.sqrt(29) * 1e4) / 1e4] });
  assert.deepEqual(run('reduce', { fn: 'topk', axes: [-1], k: 2, keepDims: true }), { shape: [1, 2, 2], values: [4, 3, 5, 2] });
  assert.throws(() => buildLayer({ ...reduceSpec({ fn: 'topk', axes: [1], k: 1 }, [2, 3]), op: 'reduce' }, 1), (e: Error) => e instanceof Unsupported && /topk along an axis other than the last/.test(e.message));
  assert.deepEqual(run('activation', { fn: 'cumsum', axis: -1 }), { shape: [1, 2, 3], values: [3, 7, 8, 0, 2, 7] });
  // A transpose read before its rank was known: toTrialSpec resolves its swap pair into the permutation workers build.
  assert.deepEqual(transposeSwapAttrs(), { dims: [0, 2, 1] });
  assert.deepEqual(run('permute', transposeSwapAttrs()), { shape: [1, 3, 2], values: [3, 0, 4, 2, 1, 5] });
});
