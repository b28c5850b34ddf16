/**
 * Gradient kernels the tfjs wasm backend lacks (4.22): Conv2DBackpropFilter and
 * the two depthwise backprops; plus a fast Conv2DBackpropInput (see REPLACED). Without them, conv training fails on wasm.
 *
 * Each one is rewritten as a forward convolution the wasm backend does have
 * (XNNPACK Conv2D / DepthwiseConv2dNative), so it runs at conv speed instead of
 * the cpu backend's naive loops:
 * - filter gradient = correlation of the input with the output gradient, with
 *   batch treated as channels and the original stride turned into a dilation;
 * - input gradients (regular and depthwise) = conv of the stride-dilated
 *   output gradient with the spatially flipped filter.
 */
import * as tf from '@tensorflow/tfjs-core';
import { backend_util, registerKernel, getKernel, unregisterKernel } from '@tensorflow/tfjs-core';
import type { KernelConfig, NamedAttrMap, NamedTensorInfoMap, Tensor4D, TensorInfo } from '@tensorflow/tfjs-core';

type Conv2DInfo = backend_util.Conv2DInfo;

/** The engine hands kernels its own Tensor objects; wrap only a bare TensorInfo. */
const asTensor = (t: TensorInfo): Tensor4D =>
  (t instanceof tf.Tensor ? t : tf.engine().makeTensorFromTensorInfo(t)) as Tensor4D;

/**
 * Pads (or crops, when trailing rows/cols are never read) `x` [N,H,W,C] so that a
 * window of `span` rows starting at -padTop covers exactly what the conv read.
 */
function padOrCrop(x: Tensor4D, padTop: number, padLeft: number, spanH: number, spanW: number): Tensor4D {
  const [, h, w] = x.shape;
  const extraH = spanH - padTop - h;
  const extraW = spanW - padLeft - w;
  let t = x;
  if (extraH < 0 || extraW < 0) t = tf.slice(t, [0, 0, 0, 0], [-1, h + Math.min(extraH, 0), w + Math.min(extraW, 0), -1]);
  if (padTop || padLeft || extraH > 0 || extraW > 0) {
    t = tf.pad(t, [[0, 0], [padTop, Math.max(extraH, 0)], [padLeft, Math.max(extraW, 0)], [0, 0]]);
  }
  return t;
}

/** dW[kh,kw,ci,co] = Σ_{n,oh,ow} x[n, oh·s + kh − pt, ow·s + kw − pl, ci] · dy[n,oh,ow,co]. */
export function filterGradViaConv(x: Tensor4D, dy: Tensor4D, info: Conv2DInfo): Tensor4D {
  const { filterHeight: kh, filterWidth: kw, strideHeight: sh, strideWidth: sw } = info;
  const [, oh, ow] = dy.shape;
  const spanH = (oh - 1) * sh + kh;
  const spanW = (ow - 1) * sw + kw;
  const xp = padOrCrop(x, info.padInfo.top, info.padInfo.left, spanH, spanW);
  const xT = tf.transpose(xp, [3, 1, 2, 0]); // [Ci, Hp, Wp, N]: batch becomes channels
  const dyT = tf.transpose(dy, [1, 2, 0, 3]); // [OH, OW, N, Co]: the "filter"
  const g = tf.conv2d(xT, dyT, 1, 'valid', 'NHWC', [sh, sw]); // [Ci, KH, KW, Co]
  return tf.transpose(g, [1, 2, 0, 3]);
}

/** Depthwise filter gradient: (batch, channel) pairs become channels of one image. */
export function depthwiseFilterGradViaConv(x: Tensor4D, dy: Tensor4D, info: Conv2DInfo): Tensor4D {
  const { filterHeight: kh, filterWidth: kw, strideHeight: sh, strideWidth: sw, inChannels: c } = info;
  const [n, oh, ow, cm] = dy.shape;
  const m = cm / c;
  const spanH = (oh - 1) * sh + kh;
  const spanW = (ow - 1) * sw + kw;
  const xp = padOrCrop(x, info.padInfo.top, info.padInfo.left, spanH, spanW);
  const [, hp, wp] = xp.shape;
  const img = tf.reshape(tf.transpose(xp, [1, 2, 0, 3]), [1, hp, wp, n * c]) as Tensor4D;
  const filt = tf.reshape(tf.transpose(tf.reshape(dy, [n, oh, ow, c, m]), [1, 2, 0, 3, 4]), [oh, ow, n * c, m]);
  const g = tf.depthwiseConv2d(img, filt as tf.Tensor4D, 1, 'valid', 'NHWC', [sh, sw]); // [1, KH, KW, N·C·m]
  return tf.sum(tf.reshape(g, [kh, kw, n, c, m]), 2) as Tensor4D;
}

/**
 * The output gradient spread back to input resolution: dilated by the stride
 * (zeros between rows/cols) and padded so that a stride-1 valid correlation with
 * the flipped filter yields exactly the input's height and width.
 */
function spreadOutputGrad(dy: Tensor4D, info: Conv2DInfo): Tensor4D {
  const { filterHeight: kh, filterWidth: kw, strideHeight: sh, strideWidth: sw, inHeight: h, inWidth: w } = info;
  const [n, oh, ow, cm] = dy.shape;
  let d: Tensor4D = dy;
  if (sh > 1 || sw > 1) {
    // Rank-4 reshapes and pads only: interleave zero columns, then zero rows.
    const cols = tf.pad(tf.reshape(dy, [n * oh, ow, 1, cm]), [[0, 0], [0, 0], [0, sw - 1], [0, 0]]);
    const rows = tf.pad(tf.reshape(cols, [n * oh, 1, ow * sw, cm]), [[0, 0], [0, sh - 1], [0, 0], [0, 0]]);
    d = tf.slice(tf.reshape(rows, [n, oh * sh, ow * sw, cm]), [0, 0, 0, 0], [-1, (oh - 1) * sh + 1, (ow - 1) * sw + 1, -1]) as Tensor4D;
  }
  // Output row h reads d[h + pt − (kh−1) + k'] for k' in [0, kh): start the window at −(kh−1−pt).
  const topH = kh - 1 - info.padInfo.top;
  const topW = kw - 1 - info.padInfo.left;
  if (topH < 0 || topW < 0) d = tf.slice(d, [0, Math.max(-topH, 0), Math.max(-topW, 0), 0], [-1, -1, -1, -1]);
  return padOrCrop(d, Math.max(topH, 0), Math.max(topW, 0), h + kh - 1, w + kw - 1);
}

/** Spatial flip with gather: the wasm Reverse kernel misbehaves when run inside another kernel. */
function flipSpatial(filter: Tensor4D): Tensor4D {
  const [kh, kw] = filter.shape;
  const rows = tf.tensor1d(Array.from({ length: kh }, (_, i) => kh - 1 - i), 'int32');
  const cols = tf.tensor1d(Array.from({ length: kw }, (_, i) => kw - 1 - i), 'int32');
  return tf.gather(tf.gather(filter, rows, 0), cols, 1) as Tensor4D;
}

/** dX = spread dY correlated with the flipped filter, in/out channels swapped. */
export function inputGradViaConv(dy: Tensor4D, filter: Tensor4D, info: Conv2DInfo): Tensor4D {
  const f = tf.transpose(flipSpatial(filter), [0, 1, 3, 2]) as Tensor4D; // [KH, KW, Co, Ci]
  return tf.conv2d(spreadOutputGrad(dy, info), f, 1, 'valid');
}

/** Depthwise input gradient: flipped-filter depthwise conv over the spread output gradient. */
export function depthwiseInputGradViaConv(dy: Tensor4D, filter: Tensor4D, info: Conv2DInfo): Tensor4D {
  const { filterHeight: kh, filterWidth: kw, inHeight: h, inWidth: w, inChannels: c } = info;
  const [n, , , cm] = dy.shape;
  const flipped = tf.reshape(flipSpatial(filter), [kh, kw, cm, 1]) as Tensor4D;
  const g = tf.depthwiseConv2d(spreadOutputGrad(dy, info), flipped, 1, 'valid');
  return tf.sum(tf.reshape(g, [n, h, w, c, cm / c]), 4) as Tensor4D;
}

function conv2DBackpropInput(args: { inputs: NamedTensorInfoMap; attrs?: NamedAttrMap }): TensorInfo {
  const dy = args.inputs.dy!;
  const filter = args.inputs.filter!;
  const a = args.attrs as unknown as tf.Conv2DBackpropInputAttrs;
  const dataFormat = backend_util.convertConv2DDataFormat(a.dataFormat ?? 'NHWC');
  if (dataFormat !== 'channelsLast') throw new Error('wasm Conv2DBackpropInput: only NHWC is supported');
  const info = backend_util.computeConv2DInfo(a.inputShape, filter.shape as [number, number, number, number], a.strides, 1, a.pad, a.dimRoundingMode, false, dataFormat);
  return tf.tidy(() => inputGradViaConv(asTensor(dy), asTensor(filter), info));
}

function conv2DBackpropFilter(args: { inputs: NamedTensorInfoMap; attrs?: NamedAttrMap }): TensorInfo {
  const x = args.inputs.x!;
  const dy = args.inputs.dy!;
  const a = args.attrs as unknown as tf.Conv2DBackpropFilterAttrs;
  const dataFormat = backend_util.convertConv2DDataFormat(a.dataFormat ?? 'NHWC');
  if (dataFormat !== 'channelsLast') throw new Error('wasm Conv2DBackpropFilter: only NHWC is supported');
  const info = backend_util.computeConv2DInfo(x.shape as [number, number, number, number], a.filterShape, a.strides, 1, a.pad, a.dimRoundingMode, false, dataFormat);
  return tf.tidy(() => filterGradViaConv(asTensor(x), asTensor(dy), info));
}

function depthwiseBackpropFilter(args: { inputs: NamedTensorInfoMap; attrs?: NamedAttrMap }): TensorInfo {
  const x = args.inputs.x!;
  const dy = args.inputs.dy!;
  const a = args.attrs as unknown as tf.DepthwiseConv2dNativeBackpropFilterAttrs;
  const info = backend_util.computeConv2DInfo(x.shape as [number, number, number, number], a.filterShape, a.strides, a.dilations, a.pad, a.dimRoundingMode, true);
  return tf.tidy(() => depthwiseFilterGradViaConv(asTensor(x), asTensor(dy), info));
}

function depthwiseBackpropInput(args: { inputs: NamedTensorInfoMap; attrs?: NamedAttrMap }): TensorInfo {
  const dy = args.inputs.dy!;
  const filter = args.inputs.filter!;
  const a = args.attrs as unknown as tf.DepthwiseConv2dNativeBackpropInputAttrs;
  const info = backend_util.computeConv2DInfo(a.inputShape, filter.shape as [number, number, number, number], a.strides, a.dilations, a.pad, a.dimRoundingMode, true);
  return tf.tidy(() => depthwiseInputGradViaConv(asTensor(dy), asTensor(filter), info));
}

const kernels: KernelConfig[] = [
  { kernelName: 'Conv2DBackpropInput', backendName: 'wasm', kernelFunc: conv2DBackpropInput as KernelConfig['kernelFunc'] },
  { kernelName: 'Conv2DBackpropFilter', backendName: 'wasm', kernelFunc: conv2DBackpropFilter as KernelConfig['kernelFunc'] },
  { kernelName: 'DepthwiseConv2dNativeBackpropFilter', backendName: 'wasm', kernelFunc: depthwiseBackpropFilter as KernelConfig['kernelFunc'] },
  { kernelName: 'DepthwiseConv2dNativeBackpropInput', backendName: 'wasm', kernelFunc: depthwiseBackpropInput as KernelConfig['kernelFunc'] },
];

/**
 * wasm's own Conv2DBackpropInput is a plain loop, ~7× slower than its forward
 * conv (520 vs 78 ms for 3×3×64→64 at 8×32×32): timing it would misstate what a
 * training step costs, so ours replaces it. The others are only added if missing.
 */
const REPLACED = new Set(['Conv2DBackpropInput']);

/** Registers our kernels once per process. */
export function registerWasmGradKernels(): string[] {
  const added: string[] = [];
  for (const k of kernels) {
    const existing = getKernel(k.kernelName, 'wasm');
    if (existing?.kernelFunc === k.kernelFunc) continue;
    if (existing && !REPLACED.has(k.kernelName)) continue;
    if (existing) unregisterKernel(k.kernelName, 'wasm');
    registerKernel(k);
    added.push(k.kernelName);
  }
  return added;
}
