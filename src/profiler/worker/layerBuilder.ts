/**
 * Builds one IR layer as a tfjs function with freshly initialised parameters.
 * Layout: tfjs convs and pools are channels_last, so image ops of a
 * channels_first (PyTorch) model are measured on the transposed shape; the work
 * is the same. Everything else keeps the model's own shapes and axes.
 * A layer we cannot build throws `Unsupported` with the reason.
 */
import type * as tfc from '@tensorflow/tfjs-core';
import type { Tensor } from '@tensorflow/tfjs-core';
import type { TrialSpec } from './messages';
// The namespace the worker loaded (bundled core, or the native package's own): see tfRuntime.
import { tf } from './tfRuntime';
import { ACTIVATIONS, REDUCERS, elementwise, num, withConstant } from './pointwise';

export class Unsupported extends Error {
  override name = 'Unsupported';
}

export interface BuiltLayer {
  params: tfc.Variable[];
  /** Inputs already in the builder's layout (see `nativeInputShapes`). */
  apply(xs: Tensor[]): Tensor;
}

const IMAGE_OPS = new Set(['conv', 'separable_conv', 'pool', 'zeropad', 'upsample']);

/** Shapes (without batch) the builder expects for this layer's inputs. */
export function nativeInputShapes(spec: TrialSpec): number[][] {
  if (spec.layout !== 'channels_first' || !IMAGE_OPS.has(spec.op)) return spec.inputShapes;
  return spec.inputShapes.map((s) => (s.length >= 2 ? [...s.slice(1), s[0]!] : s));
}

const lastFirst = (s: number[]): number[] => [...s.slice(1), s[0]!];

/**
 * A channels_first spec restated channels_last, for whole-step runs where
 * tensors flow between layers: 2-D images ([C,H,W]) move C last everywhere,
 * 1-D signals only at image ops, and channel axes (batchnorm, concat, split,
 * softmax) follow.
 */
export function toChannelsLast(spec: TrialSpec): TrialSpec {
  if (spec.layout !== 'channels_first') return spec;
  const image = IMAGE_OPS.has(spec.op);
  const conv = (s: number[]) => (s.length === 3 || (image && s.length === 2) ? lastFirst(s) : s);
  const rank3 = spec.inputShapes[0]?.length === 3;
  const attrs = { ...spec.attrs } as Record<string, unknown>;
  if (rank3 && ['batchnorm', 'concat', 'split', 'activation'].includes(spec.op)) {
    const axis = typeof attrs.axis === 'number' ? attrs.axis : spec.op === 'batchnorm' ? 1 : undefined;
    if (axis === 1 || axis === -3) attrs.axis = -1;
  }
  // [N, C, H, W] axes as they sit in [N, H, W, C].
  if (rank3 && spec.op === 'reduce' && Array.isArray(attrs.axes)) attrs.axes = (attrs.axes as number[]).map((ax) => [0, 3, 1, 2][ax < 0 ? ax + 4 : ax]!);
  return {
    ...spec,
    attrs: attrs as TrialSpec['attrs'],
    inputShapes: spec.inputShapes.map(conv),
    outputShape: spec.outputShape ? conv(spec.outputShape) : undefined,
    layout: 'channels_last',
  };
}

const nums = (v: unknown, rank: number, d: number): number[] =>
  Array.isArray(v) ? v.map((x) => num(x, d)) : Array.from({ length: rank }, () => num(v, d));
const axisOf = (axis: number, rank: number): number => (axis < 0 ? axis + rank : axis);

let seed = 1;
const param = (shape: number[], scale = 0.05): tfc.Variable => tf.variable(tf.randomNormal(shape, 0, scale, 'float32', seed++));

type Pad2D = 'same' | 'valid' | [[number, number], [number, number], [number, number], [number, number]];
function pad2d(p: unknown): Pad2D {
  if (p === 'same' || p === 'valid') return p;
  if (Array.isArray(p) && p.length === 2) {
    const [[t, b], [l, r]] = p as [[number, number], [number, number]];
    return t || b || l || r ? [[0, 0], [t, b], [l, r], [0, 0]] : 'valid';
  }
  if (Array.isArray(p) && p.length === 1) return pad2d([[0, 0], p[0]]);
  return 'valid';
}

/** Adds a leading height-1 axis so 1-D convs and pools reuse the 2-D kernels. */
const to2d = (x: Tensor): tfc.Tensor4D => (x.rank === 3 ? tf.expandDims(x, 1) : x) as tfc.Tensor4D;
const from2d = (y: Tensor, rank: number): Tensor => (rank === 3 ? tf.squeeze(y, [1]) : y);

function conv(spec: TrialSpec, inShape: number[]): BuiltLayer {
  const a = spec.attrs as Record<string, unknown>;
  const rank = num(a.rank, inShape.length - 1);
  if (rank > 2) throw new Unsupported(`${rank}-D convolution is not built by the tfjs worker`);
  const cin = inShape[inShape.length - 1]!;
  const groups = a.depthwise ? cin : num(a.groups, 1);
  const cout = typeof a.outChannels === 'number' ? a.outChannels : cin * num(a.depthMultiplier, 1);
  const kernel = rank === 1 ? [1, ...nums(a.kernel, 1, 1)] : nums(a.kernel, 2, 1);
  const stride = (rank === 1 ? [1, ...nums(a.stride, 1, 1)] : nums(a.stride, 2, 1)) as [number, number];
  const dilation = nums(a.dilation, rank, 1);
  if (dilation.some((d) => d > 1)) throw new Unsupported('tfjs has no gradient for dilated convolutions');
  const pad = pad2d(rank === 1 && Array.isArray(a.padding) ? [[0, 0], ...(a.padding as number[][])] : a.padding);
  const bias = a.bias !== false ? param([cout], 0.01) : undefined;
  if (a.transposed) {
    if (groups !== 1) throw new Unsupported('grouped transposed convolution is not built by the tfjs worker');
    if (Array.isArray(pad)) throw new Unsupported('transposed convolution with explicit padding is not built by the tfjs worker');
    const w = param([...kernel, cout, cin]);
    const outHW = spec.outputShape ? nativeOut(spec) : undefined;
    return {
      params: bias ? [w, bias] : [w],
      apply: ([x]) => {
        const x4 = to2d(x!);
        const [n, h, wd] = x4.shape;
        const shape: [number, number, number, number] = outHW
          ? [n, ...(outHW.length === 2 ? [1, outHW[0]!] : outHW.slice(0, 2)), cout] as [number, number, number, number]
          : [n, h * stride[0], wd * stride[1], cout];
        let y: Tensor = tf.conv2dTranspose(x4, w as tfc.Tensor4D, shape, stride, pad as 'same' | 'valid');
        if (bias) y = tf.add(y, bias);
        return from2d(y, x!.rank);
      },
    };
  }
  if (groups === cin && groups > 1) {
    const w = param([...kernel, cin, cout / cin]);
    return {
      params: bias ? [w, bias] : [w],
      apply: ([x]) => {
        let y: Tensor = tf.depthwiseConv2d(to2d(x!), w as tfc.Tensor4D, stride, pad);
        if (bias) y = tf.add(y, bias);
        return from2d(y, x!.rank);
      },
    };
  }
  const ws = Array.from({ length: groups }, () => param([...kernel, cin / groups, cout / groups]));
  return {
    params: bias ? [...ws, bias] : ws,
    apply: ([x]) => {
      const x4 = to2d(x!);
      const parts = groups === 1 ? [x4] : tf.split(x4, groups, 3);
      const ys = parts.map((p, g) => tf.conv2d(p as tfc.Tensor4D, ws[g] as tfc.Tensor4D, stride, pad));
      let y: Tensor = ys.length === 1 ? ys[0]! : tf.concat(ys, 3);
      if (bias) y = tf.add(y, bias);
      return from2d(y, x!.rank);
    },
  };
}

/** Spatial output dims of an image op, in the builder's channels_last layout. */
function nativeOut(s: TrialSpec): number[] {
  const o = s.outputShape!;
  return s.layout === 'channels_first' ? o.slice(1) : o.slice(0, -1);
}

function separable(spec: TrialSpec, inShape: number[]): BuiltLayer {
  const a = spec.attrs as Record<string, unknown>;
  if (num(a.rank, 2) !== 2) throw new Unsupported('only 2-D separable convolution is built by the tfjs worker');
  const cin = inShape[inShape.length - 1]!;
  const mult = num(a.depthMultiplier, 1);
  const cout = num(a.outChannels, cin);
  const kernel = nums(a.kernel, 2, 1);
  const stride = nums(a.stride, 2, 1) as [number, number];
  const pad = pad2d(a.padding);
  if (Array.isArray(pad)) throw new Unsupported('separable convolution with explicit padding is not built by the tfjs worker');
  const dw = param([...kernel, cin, mult]);
  const pw = param([1, 1, cin * mult, cout]);
  const bias = a.bias !== false ? param([cout], 0.01) : undefined;
  return {
    params: bias ? [dw, pw, bias] : [dw, pw],
    apply: ([x]) => {
      const y = tf.separableConv2d(x as tfc.Tensor4D, dw as tfc.Tensor4D, pw as tfc.Tensor4D, stride, pad);
      return bias ? tf.add(y, bias) : y;
    },
  };
}

function linear(spec: TrialSpec, inShape: number[]): BuiltLayer {
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
function normalize(axes: number[], paramShape: number[], affine: boolean, reshapeTo?: (x: Tensor) => Tensor): BuiltLayer {
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

function batchnorm(spec: TrialSpec, inShape: number[]): BuiltLayer {
  const a = spec.attrs as Record<string, unknown>;
  const rank = inShape.length + 1;
  const defAxis = spec.layout === 'channels_first' && rank > 2 ? 1 : -1;
  const ch = axisOf(num(a.axis, defAxis), rank);
  const axes = Array.from({ length: rank }, (_, i) => i).filter((i) => i !== ch);
  const pshape = Array.from({ length: rank - 1 }, (_, i) => (i + 1 === ch ? inShape[i]! : 1));
  return normalize(axes, pshape, a.scale !== false || a.center !== false);
}

function groupnorm(spec: TrialSpec, inShape: number[]): BuiltLayer {
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

function pool(spec: TrialSpec, inShape: number[]): BuiltLayer {
  const a = spec.attrs as Record<string, unknown>;
  const rank = inShape.length - 1;
  if (rank > 2) throw new Unsupported(`${rank}-D pooling is not built by the tfjs worker`);
  const isMax = a.mode === 'max';
  const spatial = inShape.slice(0, -1);
  if (a.global) {
    const axes = spatial.map((_, i) => i + 1);
    return { params: [], apply: ([x]) => (isMax ? tf.max(x!, axes, !!a.keepDims) : tf.mean(x!, axes, !!a.keepDims)) };
  }
  let kernel: number[];
  let stride: number[];
  if (Array.isArray(a.outputSize)) {
    const out = (a.outputSize as Array<number | null>).map((o, i) => o ?? spatial[i]!);
    if (rank === 2 && out.every((o, i) => o % spatial[i]! === 0) && out.some((o, i) => o > spatial[i]!)) {
      // Output larger than the input by whole factors: every window holds one input cell, so it is a replication.
      return { params: [], apply: ([x]) => tf.image.resizeNearestNeighbor(x as tfc.Tensor4D, out as [number, number]) };
    }
    if (out.some((o, i) => spatial[i]! % o !== 0)) throw new Unsupported('adaptive pooling with a non-dividing output size');
    kernel = spatial.map((d, i) => d / out[i]!);
    stride = kernel;
  } else {
    kernel = nums(a.kernel, rank, 1);
    stride = a.stride == null ? kernel : nums(a.stride, rank, 1);
  }
  const k2 = (rank === 1 ? [1, kernel[0]!] : kernel) as [number, number];
  const s2 = (rank === 1 ? [1, stride[0]!] : stride) as [number, number];
  const p = pad2d(a.padding ?? 'valid');
  return {
    params: [],
    apply: ([x]) => {
      let x4 = to2d(x!);
      let pp: 'same' | 'valid' = 'valid';
      if (Array.isArray(p)) x4 = tf.pad(x4, p);
      else pp = p;
      const y = isMax ? tf.maxPool(x4, k2, s2, pp) : tf.avgPool(x4, k2, s2, pp);
      return from2d(y, x!.rank);
    },
  };
}

function attention(spec: TrialSpec, inShape: number[]): BuiltLayer {
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

function sdpaCore(q: Tensor, k: Tensor, v: Tensor, causal: boolean): Tensor {
  const d = q.shape[q.rank - 1]!;
  let s = tf.div(tf.matMul(q, k, false, true), Math.sqrt(d));
  if (causal) {
    const l = s.shape[s.rank - 1]!;
    s = tf.add(s, tf.mul(tf.sub(1, tf.linalg.bandPart(tf.ones([l, l]), -1, 0)), -1e9));
  }
  return tf.matMul(tf.softmax(s), v);
}

/** Keras/TF.js layers record their own `activation: 'relu'` in attrs: it runs fused after the op. */
export function buildLayer(spec: TrialSpec, batch: number): BuiltLayer {
  const layer = buildBare(spec, batch);
  const act = (spec.attrs as Record<string, unknown>).activation;
  if (spec.op === 'activation' || typeof act !== 'string' || act === 'linear') return layer;
  const fn = ACTIVATIONS[act];
  if (!fn) throw new Unsupported(`fused activation '${act}' is not built by the tfjs worker`);
  return { params: layer.params, apply: (xs) => { const y = layer.apply(xs); return fn(y, y.rank - 1); } };
}

function buildBare(spec: TrialSpec, batch: number): BuiltLayer {
  const shapes = nativeInputShapes(spec);
  const s0 = shapes[0] ?? [];
  const a = spec.attrs as Record<string, unknown>;
  const rank = s0.length + 1;
  switch (spec.op) {
    case 'input':
    case 'identity':
      return { params: [], apply: ([x]) => tf.clone(x!) };
    case 'conv':
      return conv(spec, s0);
    case 'separable_conv':
      return separable(spec, s0);
    case 'linear':
      return linear(spec, s0);
    case 'embedding': {
      const table = param([num(a.numEmbeddings, 1), num(a.embeddingDim, 1)]);
      return { params: [table], apply: ([ids]) => tf.gather(table, ids!) };
    }
    case 'batchnorm':
      return batchnorm(spec, s0);
    case 'layernorm': {
      const trailing = Array.isArray(a.normalizedShape) ? a.normalizedShape.length : 1;
      const axes = Array.from({ length: trailing }, (_, i) => rank - trailing + i);
      return normalize(axes, s0.slice(s0.length - trailing), a.scale !== false || a.center !== false);
    }
    case 'groupnorm':
      return groupnorm(spec, s0);
    case 'pool':
      return pool(spec, s0);
    case 'flatten':
    case 'reshape': {
      const out = spec.outputShape ?? [s0.reduce((p, d) => p * d, 1)];
      return { params: [], apply: ([x]) => tf.reshape(x!, [batch, ...out]) };
    }
    case 'permute': {
      const dims = (a.dims as number[]).map((d) => axisOf(d, rank));
      return { params: [], apply: ([x]) => tf.transpose(x!, dims) };
    }
    case 'zeropad': {
      const p = a.padding as Array<[number, number]>;
      return { params: [], apply: ([x]) => tf.pad(x!, [[0, 0], ...p, ...Array.from({ length: rank - 1 - p.length }, () => [0, 0] as [number, number])]) };
    }
    case 'upsample': {
      if (s0.length !== 3) throw new Unsupported('only 2-D upsampling is built by the tfjs worker');
      const scale = nums(a.scale, 2, 2);
      const size = (Array.isArray(a.size) ? a.size : [s0[0]! * scale[0]!, s0[1]! * scale[1]!]) as [number, number];
      const bilinear = typeof a.mode === 'string' && a.mode.includes('linear');
      return { params: [], apply: ([x]) => (bilinear ? tf.image.resizeBilinear(x as tfc.Tensor4D, size) : tf.image.resizeNearestNeighbor(x as tfc.Tensor4D, size)) };
    }
    case 'dropout': {
      const rate = num(a.rate, 0.5);
      return { params: [], apply: ([x]) => (rate > 0 && rate < 1 ? tf.dropout(x!, rate) : tf.clone(x!)) };
    }
    case 'activation': {
      // tfjs holds one float type: a conversion between two has nothing to run here, and is priced from its bytes.
      if (a.fn === 'cast') throw new Unsupported('a dtype cast is not built by the tfjs worker (tfjs has one float type); it is priced from the bytes it converts');
      const math = elementwise(String(a.fn), a);
      if (math) return { params: [], apply: ([x]) => math(x!) };
      const fn = ACTIVATIONS[String(a.fn)];
      if (!fn) throw new Unsupported(`activation '${String(a.fn)}' is not built by the tfjs worker`);
      const axis = axisOf(num(a.axis, -1), rank);
      return { params: [], apply: ([x]) => fn(x!, axis) };
    }
    case 'add':
    case 'mul':
      if (shapes.length === 1) return withConstant(a);
      if (spec.op === 'mul') return { params: [], apply: (xs) => xs.reduce((p, x) => tf.mul(p, x)) };
      return { params: [], apply: (xs) => xs.reduce((p, x) => tf.add(p, x)) };
    case 'concat':
      return { params: [], apply: (xs) => tf.concat(xs, axisOf(num(a.axis, -1), rank)) };
    case 'split': {
      const axis = axisOf(num(a.axis, -1), rank);
      const sizes = Array.isArray(a.sizes) ? (a.sizes as number[]) : num(a.chunks, 1);
      const index = num(a.index, 0);
      return { params: [], apply: ([x]) => tf.split(x!, sizes, axis)[index]! };
    }
    case 'matmul':
      return { params: [], apply: ([x, y]) => tf.matMul(x!, y!, false, !!a.transposeB) };
    case 'reduce': {
      if (a.fn === 'topk') {
        // tf.topk selects along the last axis only.
        if (axisOf(Array.isArray(a.axes) ? (a.axes as number[])[0]! : -1, rank) !== rank - 1) throw new Unsupported('topk along an axis other than the last is not built by the tfjs worker');
        return { params: [], apply: ([x]) => tf.topk(x!, num(a.k, 1)).values };
      }
      const reducer = REDUCERS[String(a.fn)];
      if (!reducer) throw new Unsupported(`reduction '${String(a.fn)}' is not built by the tfjs worker`);
      const axes = (Array.isArray(a.axes) ? (a.axes as number[]) : []).map((ax) => axisOf(ax, rank));
      return { params: [], apply: ([x]) => reducer(x!, axes, !!a.keepDims) };
    }
    case 'mha':
      return attention(spec, s0);
    case 'sdpa':
      return { params: [], apply: ([q, k, v]) => sdpaCore(q!, k ?? q!, v ?? k ?? q!, !!a.causal) };
    case 'rnn':
      throw new Unsupported('recurrent layers are not built by the tfjs worker yet');
    case 'opaque':
      throw new Unsupported(`opaque layer${typeof a.reason === 'string' ? `: ${a.reason}` : ''}`);
    default:
      throw new Unsupported(`op '${String(spec.op)}' is not built by the tfjs worker`);
  }
}

/** Random (not zero) inputs with batch prepended; token ids for int inputs. */
export function randomInputs(spec: TrialSpec, batch: number, vocab?: number): Tensor[] {
  return nativeInputShapes(spec).map((s, i) =>
    spec.inputDtypes?.[i] === 'int' || spec.op === 'embedding'
      ? tf.randomUniform([batch, ...s], 0, vocab ?? num((spec.attrs as Record<string, unknown>).numEmbeddings, 2), 'int32', seed++)
      : tf.randomNormal([batch, ...s], 0, 1, 'float32', seed++),
  );
}
