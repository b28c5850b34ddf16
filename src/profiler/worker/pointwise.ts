/**
 * The tfjs worker's pointwise builders: reductions, activations, elementwise math
 * written in forward and arithmetic with a Python number, each the function the
 * torch worker (torch_worker.py) runs for the same node.
 */
import type { Tensor } from '@tensorflow/tfjs-core';
import type { BuiltLayer } from './builtLayer';
// The namespace the worker loaded (bundled core, or the native package's own): see tfRuntime.
import { tf } from './tfRuntime';

/** A finite number attr, else the default. */
export const num = (v: unknown, d: number): number => (typeof v === 'number' && Number.isFinite(v) ? v : d);

export const REDUCERS: Record<string, (x: Tensor, axes: number[], keepDims: boolean) => Tensor> = {
  mean: (x, axes, keep) => tf.mean(x, axes, keep),
  sum: (x, axes, keep) => tf.sum(x, axes, keep),
  amax: (x, axes, keep) => tf.max(x, axes, keep),
  amin: (x, axes, keep) => tf.min(x, axes, keep),
  norm: (x, axes, keep) => tf.sqrt(tf.sum(tf.square(x), axes, keep)),
};

export const ACTIVATIONS: Record<string, (x: Tensor, axis: number) => Tensor> = {
  relu: (x) => tf.relu(x),
  relu6: (x) => tf.relu6(x),
  leaky_relu: (x) => tf.leakyRelu(x, 0.01),
  elu: (x) => tf.elu(x),
  gelu: (x) => tf.mul(tf.mul(x, 0.5), tf.add(1, tf.tanh(tf.mul(0.7978845608, tf.add(x, tf.mul(0.044715, tf.pow(x, 3))))))),
  silu: (x) => tf.mul(x, tf.sigmoid(x)),
  swish: (x) => tf.mul(x, tf.sigmoid(x)),
  tanh: (x) => tf.tanh(x),
  sigmoid: (x) => tf.sigmoid(x),
  softmax: (x, axis) => (axis === x.rank - 1 ? tf.softmax(x) : tf.transpose(tf.softmax(tf.transpose(x, swapLast(x.rank, axis))), swapLast(x.rank, axis))),
  log_softmax: (x, axis) => tf.logSoftmax(x, axis),
  softplus: (x) => tf.softplus(x),
  hardswish: (x) => tf.div(tf.mul(x, tf.relu6(tf.add(x, 3))), 6),
  hardsigmoid: (x) => tf.div(tf.relu6(tf.add(x, 3)), 6),
  linear: (x) => tf.clone(x),
  cumsum: (x, axis) => tf.cumsum(x, axis),
};

/** Elementwise math written in forward (frontends/python/elementwise.ts), with its exponent or bounds. */
export function elementwise(fn: string, a: Record<string, unknown>): ((x: Tensor) => Tensor) | undefined {
  const unary: Record<string, (x: Tensor) => Tensor> = {
    abs: tf.abs, neg: tf.neg, exp: tf.exp, log: tf.log, sqrt: tf.sqrt, rsqrt: tf.rsqrt, square: tf.square,
    sin: tf.sin, cos: tf.cos, reciprocal: tf.reciprocal, erf: tf.erf,
  };
  if (fn === 'pow') return (x) => tf.pow(x, tf.scalar(num(a.exponent, 2)));
  // Bounds that were tensors in the code are not carried: timed as a clamp at zero, the same kernel.
  if (fn === 'clamp') {
    const [lo, hi] = [typeof a.min === 'number' ? a.min : undefined, typeof a.max === 'number' ? a.max : undefined];
    return (x) => tf.clipByValue(x, lo ?? (hi === undefined ? 0 : -Number.MAX_VALUE), hi ?? Number.MAX_VALUE);
  }
  // The mask is a buffer of the model the trial does not have: one from the activation itself, as large as it.
  if (fn === 'masked_fill') return (x) => tf.where(tf.greater(x, 0), tf.zerosLike(x), x);
  return unary[fn];
}

function swapLast(rank: number, axis: number): number[] {
  const p = Array.from({ length: rank }, (_, i) => i);
  [p[axis], p[rank - 1]] = [p[rank - 1]!, p[axis]!];
  return p;
}

/** An activation and a Python number (`x * 0.125`, `1.0 - x`): the same arithmetic, on the same side. */
export function withConstant(a: Record<string, unknown>): BuiltLayer {
  const c = num(a.constant, 1);
  const f = { '+': tf.add, '-': tf.sub, '*': tf.mul, '/': tf.div }[String(a.operator ?? '*')] ?? tf.mul;
  return { params: [], apply: ([x]) => (a.constantFirst ? f(tf.scalar(c), x!) : f(x!, tf.scalar(c))) };
}
