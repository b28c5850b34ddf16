/**
 * Convolutions: conv (1–3-D, grouped, dilated, depthwise, transposed) and
 * separable_conv (Keras SeparableConv / TF.js separableConv2d).
 *
 * Output size per spatial dim (in, kernel k, stride s, dilation d, extent e = d·(k−1)+1):
 * - explicit pads [b, a]: floor((in + b + a − e) / s) + 1           (PyTorch)
 * - 'valid':              floor((in − e) / s) + 1
 * - 'same' (TF):          ceil(in / s); total pad max((out−1)·s + e − in, 0),
 *                         before = floor(total / 2) — asymmetric when odd
 * - transposed:           (in−1)·s − b − a + e + outputPadding (PyTorch); Keras/TF.js without an
 *                         output_padding: 'same' in·s, 'valid' in·s + max(e − s, 0); with one:
 *                         (in−1)·s + e − 2·pad + outputPadding, pad = floor(e / 2) for 'same', else 0
 *                         (Keras deconv_output_length, TF.js deconvLength)
 */
import type { Attrs, Shape } from '../ir';
import { product } from '../ir';
import type { Padding } from '../ops';
import { bool, fail, intList, joinChannels, optInt, optIntList, padding, posInt, requireInputs, splitChannels } from './attrs';
import type { InferContext, InferOk, OpInfo } from './types';

export interface SpatialWindow {
  kernel: number[];
  stride: number[];
  dilation: number[];
  padding: Padding;
}

/** Resolves 'same'/'valid'/explicit padding to per-dim [before, after] pads (TF 'same' semantics). */
export function resolvePads(spatial: number[], w: SpatialWindow): Array<[number, number]> {
  if (Array.isArray(w.padding)) return w.padding;
  if (w.padding === 'valid') return spatial.map(() => [0, 0]);
  return spatial.map((size, i) => {
    const out = Math.ceil(size / w.stride[i]);
    const extent = w.dilation[i] * (w.kernel[i] - 1) + 1;
    const total = Math.max((out - 1) * w.stride[i] + extent - size, 0);
    const before = Math.floor(total / 2);
    return [before, total - before];
  });
}

/** Output spatial size of a sliding window (conv or pool). `ceilMode` follows PyTorch pools. */
export function windowOutput(spatial: number[], w: SpatialWindow, what: string, ceilMode = false): number[] {
  const pads = resolvePads(spatial, w);
  return spatial.map((size, i) => {
    const extent = w.dilation[i] * (w.kernel[i] - 1) + 1;
    const padded = size + pads[i][0] + pads[i][1];
    const span = padded - extent;
    if (span < 0) fail(`${what}: kernel extent ${extent} is larger than the padded input ${padded} in spatial dim ${i}`);
    let out = (ceilMode ? Math.ceil(span / w.stride[i]) : Math.floor(span / w.stride[i])) + 1;
    // PyTorch drops a last window that would start entirely inside the right padding.
    if (ceilMode && (out - 1) * w.stride[i] >= size + pads[i][0]) out -= 1;
    return out;
  });
}

function readWindow(attrs: Attrs, rank: number): SpatialWindow {
  const kernel = intList(attrs, 'kernel', rank);
  const stride = intList(attrs, 'stride', rank, new Array(rank).fill(1));
  const dilation = intList(attrs, 'dilation', rank, new Array(rank).fill(1));
  for (const [name, list] of [['kernel', kernel], ['stride', stride], ['dilation', dilation]] as const) {
    if (list.some((v) => v <= 0)) fail(`${name} must be positive, got [${list.join(', ')}]`);
  }
  return { kernel, stride, dilation, padding: padding(attrs, rank) };
}

/** `outputPadding` undefined: Keras's and TF.js's output_padding=None, which infers the length from the padding mode. */
function transposedOutput(spatial: number[], w: SpatialWindow, outputPadding: number[] | undefined): number[] {
  return spatial.map((size, i) => {
    const s = w.stride[i];
    const extent = w.dilation[i] * (w.kernel[i] - 1) + 1;
    const op = outputPadding?.[i];
    if (op !== undefined && op >= Math.max(s, w.dilation[i])) fail(`output padding ${op} must be smaller than stride or dilation`);
    if (typeof w.padding === 'string' && op === undefined) return w.padding === 'same' ? size * s : size * s + Math.max(extent - s, 0);
    if (w.padding === 'same') return (size - 1) * s + extent - 2 * Math.floor(extent / 2) + op!;
    const [b, a] = w.padding === 'valid' ? [0, 0] : w.padding[i];
    return (size - 1) * s - b - a + extent + (op ?? 0);
  });
}

function inferConv(inputShapes: Shape[], attrs: Attrs, ctx: InferContext): InferOk {
  requireInputs(inputShapes, 1, 1, 'conv');
  const rank = posInt(attrs, 'rank', Math.max(1, inputShapes[0].length - 1));
  const { channels: inC, spatial } = splitChannels(inputShapes[0], ctx.layout, rank, `Conv${rank}d`);
  const declaredIn = optInt(attrs, 'inChannels');
  if (declaredIn !== undefined && declaredIn !== inC) fail(`conv expects ${declaredIn} input channels, but its input has ${inC}`);
  const depthwise = bool(attrs, 'depthwise', false);
  const multiplier = posInt(attrs, 'depthMultiplier', 1);
  const groups = depthwise ? inC : posInt(attrs, 'groups', 1);
  const declaredOut = optInt(attrs, 'outChannels');
  const outC = depthwise ? inC * multiplier : declaredOut ?? fail('conv: outChannels is missing');
  if (outC <= 0) fail(`conv: outChannels must be positive, got ${outC}`);
  if (inC % groups !== 0) fail(`conv: input channels ${inC} are not divisible by groups ${groups}`);
  if (outC % groups !== 0) fail(`conv: output channels ${outC} are not divisible by groups ${groups}`);
  const w = readWindow(attrs, rank);
  const transposed = bool(attrs, 'transposed', false);
  const outSpatial = transposed
    ? transposedOutput(spatial, w, optIntList(attrs, 'outputPadding', rank))
    : windowOutput(spatial, w, 'conv');
  if (outSpatial.some((d) => d <= 0)) fail(`conv output would be empty: spatial [${outSpatial.join(', ')}]`);
  const hasBias = bool(attrs, 'bias', true);
  const kernelElems = product(w.kernel);
  // Weight (out, in/groups, k…) for conv and (in, out/groups, k…) for transposed: same count.
  const params = outC * (inC / groups) * kernelElems + (hasBias ? outC : 0);
  const outElems = outC * product(outSpatial);
  // A transposed conv scatters each input element into (out/groups)·k outputs: count MACs from the input side.
  const macs = transposed ? inC * product(spatial) * (outC / groups) * kernelElems : outElems * (inC / groups) * kernelElems;
  const forwardFlops = 2 * macs + (hasBias ? outElems : 0);
  return {
    outputShape: joinChannels(outC, outSpatial, ctx.layout),
    params,
    nonTrainable: 0,
    forwardFlops,
    backwardFlops: 2 * forwardFlops,
    savedActivationBytes: product(inputShapes[0]) * ctx.dtypeBytes,
    saves: { inputs: [0] },
  };
}

function inferSeparable(inputShapes: Shape[], attrs: Attrs, ctx: InferContext): InferOk {
  requireInputs(inputShapes, 1, 1, 'separable_conv');
  const rank = posInt(attrs, 'rank', Math.max(1, inputShapes[0].length - 1));
  const { channels: inC, spatial } = splitChannels(inputShapes[0], ctx.layout, rank, `SeparableConv${rank}D`);
  const declaredIn = optInt(attrs, 'inChannels');
  if (declaredIn !== undefined && declaredIn !== inC) fail(`separable conv expects ${declaredIn} input channels, but its input has ${inC}`);
  const outC = posInt(attrs, 'outChannels');
  const mid = inC * posInt(attrs, 'depthMultiplier', 1);
  const w = readWindow(attrs, rank);
  const outSpatial = windowOutput(spatial, w, 'separable conv');
  const hasBias = bool(attrs, 'bias', true);
  const kernelElems = product(w.kernel);
  const outPositions = product(outSpatial);
  const params = mid * kernelElems + mid * outC + (hasBias ? outC : 0);
  const depthwiseMacs = outPositions * mid * kernelElems;
  const pointwiseMacs = outPositions * mid * outC;
  const forwardFlops = 2 * (depthwiseMacs + pointwiseMacs) + (hasBias ? outPositions * outC : 0);
  return {
    outputShape: joinChannels(outC, outSpatial, ctx.layout),
    params,
    nonTrainable: 0,
    forwardFlops,
    backwardFlops: 2 * forwardFlops,
    // The input of the depthwise step and the intermediate that feeds the pointwise step.
    savedActivationBytes: (product(inputShapes[0]) + outPositions * mid) * ctx.dtypeBytes,
    saves: { inputs: [0] },
  };
}

export const convOps: OpInfo[] = [
  { op: 'conv', family: 'conv', weighted: true, summary: 'Convolution (1–3-D; grouped, dilated, depthwise or transposed)', infer: inferConv },
  { op: 'separable_conv', family: 'conv', weighted: true, summary: 'Depthwise-separable convolution: depthwise × multiplier, then 1×1 pointwise, one bias', infer: inferSeparable },
];
