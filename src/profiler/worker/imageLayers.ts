/**
 * Builders for the image ops that run on tfjs's channels_last 2-D kernels:
 * convolution (plain, grouped, depthwise, transposed), separable convolution and
 * pooling. 1-D variants borrow the 2-D kernels through a height-1 axis. Separate
 * from the dispatcher because padding, kernel and stride handling is shared among
 * these and nothing else.
 */
import type * as tfc from '@tensorflow/tfjs-core';
import type { Tensor } from '@tensorflow/tfjs-core';
import type { TrialSpec } from './messages';
// The namespace the worker loaded (bundled core, or the native package's own): see tfRuntime.
import { tf } from './tfRuntime';
import { num } from './pointwise';
import { Unsupported, nums, param, type BuiltLayer } from './builtLayer';
import { nativeOut } from './layerLayout';

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

export function conv(spec: TrialSpec, inShape: number[]): BuiltLayer {
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

export function separable(spec: TrialSpec, inShape: number[]): BuiltLayer {
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

export function pool(spec: TrialSpec, inShape: number[]): BuiltLayer {
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
