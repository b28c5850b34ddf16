/**
 * Builders for the weighted layers that work on feature axes rather than image
 * windows: linear, the normalisations (batch and group here, layer norm through
 * `normalize`) and multi-head attention with its scaled-dot-product core.
 * Separate from the dispatcher, which only picks a builder per op.
 */
import type { Tensor } from '@tensorflow/tfjs-core';
import type { TrialSpec } from './messages';
// The namespace the worker loaded (bundled core, or the native package's own): see tfRuntime.
import { tf } from './tfRuntime';
import { num } from './pointwise';
import { axisOf, param, type BuiltLayer } from './builtLayer';

export function linear(spec: TrialSpec, inShape: number[]): BuiltLayer {
  const a = spec.attrs as Record<string, unknown>;
  const fin = inShape[inShape.length - 1]!;
  const fout = num(a.outFeatures, fin);
  const w = param([fin, fout]);
  const b = a.bias !== false ? param([fout], 0.01) : undefined;
  return {
    params: b ? [w, b] : [w],
    apply: ([x]) => {
      const lead = x!.shape.slice(0, -1);
      const y = tf.matMul(tf.reshape(x!, [-1, fin]), w);
      return tf.reshape(b ? tf.add(y, b) : y, [...lead, fout]);
    },
  };
}

/** Normalises over `axes` with batch statistics (training mode), then scales per `paramShape`. */
export function normalize(axes: number[], paramShape: number[], affine: boolean, reshapeTo?: (x: Tensor) => Tensor): BuiltLayer {
  const gamma = affine ? param(paramShape, 1) : undefined;
  const beta = affine ? param(paramShape, 0.01) : undefined;
  return {
    params: gamma && beta ? [gamma, beta] : [],
    apply: ([x]) => {
      const xr = reshapeTo ? reshapeTo(x!) : x!;
      const { mean, variance } = tf.moments(xr, axes, true);
      let y = tf.reshape(tf.mul(tf.sub(xr, mean), tf.rsqrt(tf.add(variance, 1e-5))), x!.shape);
      if (gamma && beta) y = tf.add(tf.mul(y, gamma), beta);
      return y;
    },
  };
}

export function batchnorm(spec: TrialSpec, inShape: number[]): BuiltLayer {
  const a = spec.attrs as Record<string, unknown>;
  const rank = inShape.length + 1;
  const defAxis = spec.layout === 'channels_first' && rank > 2 ? 1 : -1;
  const ch = axisOf(num(a.axis, defAxis), rank);
  const axes = Array.from({ length: rank }, (_, i) => i).filter((i) => i !== ch);
  const pshape = Array.from({ length: rank - 1 }, (_, i) => (i + 1 === ch ? inShape[i]! : 1));
  return normalize(axes, pshape, a.scale !== false || a.center !== false);
}

export function groupnorm(spec: TrialSpec, inShape: number[]): BuiltLayer {
  const a = spec.attrs as Record<string, unknown>;
  const g = num(a.numGroups, 1);
  const first = spec.layout === 'channels_first';
  const c = first ? inShape[0]! : inShape[inShape.length - 1]!;
  const s = inShape.reduce((p, d) => p * d, 1) / c;
  const pshape = first ? [c, ...inShape.slice(1).map(() => 1)] : [...inShape.slice(0, -1).map(() => 1), c];
  return normalize(first ? [2, 3] : [1, 3], pshape, a.affine !== false, (x) =>
    tf.reshape(x, first ? [x.shape[0]!, g, c / g, s] : [x.shape[0]!, s, g, c / g]),
  );
}

export function attention(spec: TrialSpec, inShape: number[]): BuiltLayer {
  const a = spec.attrs as Record<string, unknown>;
  const e = num(a.embedDim, inShape[inShape.length - 1]!);
  const h = num(a.numHeads, 1);
  const dk = typeof a.keyDim === 'number' ? a.keyDim : e / h;
  const proj = (fin: number, fout: number) => param([fin, fout]);
  const [wq, wk, wv, wo] = [proj(e, h * dk), proj(num(a.kdim, e), h * dk), proj(num(a.vdim, e), h * dk), proj(h * dk, e)];
  return {
    params: [wq!, wk!, wv!, wo!],
    apply: (xs) => {
      const q0 = xs[0]!;
      const [k0, v0] = [xs[1] ?? q0, xs[2] ?? xs[1] ?? q0];
      const heads = (x: Tensor, w: Tensor) => {
        const [n, l] = x.shape as number[];
        return tf.transpose(tf.reshape(tf.matMul(tf.reshape(x, [-1, x.shape[2]!]), w), [n!, l!, h, dk]), [0, 2, 1, 3]);
      };
      const ctx = sdpaCore(heads(q0, wq!), heads(k0, wk!), heads(v0, wv!), !!a.causal);
      const [n, l] = q0.shape as number[];
      const merged = tf.reshape(tf.transpose(ctx, [0, 2, 1, 3]), [-1, h * dk]);
      return tf.reshape(tf.matMul(merged, wo!), [n!, l!, e]);
    },
  };
}

export function sdpaCore(q: Tensor, k: Tensor, v: Tensor, causal: boolean): Tensor {
  const d = q.shape[q.rank - 1]!;
  let s = tf.div(tf.matMul(q, k, false, true), Math.sqrt(d));
  if (causal) {
    const l = s.shape[s.rank - 1]!;
    s = tf.add(s, tf.mul(tf.sub(1, tf.linalg.bandPart(tf.ones([l, l]), -1, 0)), -1e9));
  }
  return tf.matMul(tf.softmax(s), v);
}
