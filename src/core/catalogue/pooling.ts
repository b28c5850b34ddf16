/**
 * pool: ordinary (max/avg with kernel, stride, padding, dilation, ceil_mode),
 * adaptive (PyTorch AdaptiveAvgPool2d((7, 7)); null keeps a dim) and global
 * (GlobalAveragePooling2D, keepDims).
 *
 * FLOPs: one compare or add per element in each window (+1 divide per output
 * for avg). Backward ≈ forward (routes or spreads each gradient once).
 * Saved (PyTorch tools/autograd/derivatives.yaml): max pools keep their input
 * and the argmax indices (max_pool2d_with_indices saves `self` and `result1`,
 * int64 per output element); windowed and adaptive avg pools keep their input
 * (avg_pool2d_backward and _adaptive_avg_pool2d_backward take `self`, also
 * for an adaptive pool to 1×1: measured with torch 1.13); only a global
 * average (Keras GlobalAveragePooling, a reduce-mean) keeps nothing.
 * The input is usually also saved by the layer before (a ReLU's output), so
 * it is marked shared (types.ts `saves`) and counted once.
 */
import type { Attrs, Shape } from '../ir';
import { product } from '../ir';
import { bool, fail, joinChannels, optIntList, optStr, padding, posInt, requireInputs, splitChannels, show } from './attrs';
import { windowOutput } from './conv';
import { INDEX_BYTES } from './costs';
import type { InferContext, InferOk, OpInfo } from './types';

/** Elements read by adaptive pooling along one dim: windows are [floor(i·in/out), ceil((i+1)·in/out)). */
function adaptiveReads(size: number, out: number): number {
  let reads = 0;
  for (let i = 0; i < out; i++) reads += Math.ceil(((i + 1) * size) / out) - Math.floor((i * size) / out);
  return reads;
}

function readOutputSize(attrs: Attrs, rank: number): Array<number | null> | undefined {
  const v = attrs.outputSize;
  if (v === undefined || v === null) return undefined;
  const list = typeof v === 'number' ? new Array(rank).fill(v) : v;
  if (!Array.isArray(list)) fail(`outputSize ${show(v)} must be a list`);
  const sizes = (list.length === 1 && rank > 1 ? new Array(rank).fill(list[0]) : list) as unknown[];
  if (sizes.length !== rank) fail(`outputSize has ${sizes.length} entries, expected ${rank}`);
  return sizes.map((s) => {
    if (s === null) return null;
    if (typeof s === 'number' && Number.isInteger(s) && s > 0) return s;
    return fail(`outputSize entry ${show(s as never)} must be a positive integer or null`);
  });
}

function inferPool(inputShapes: Shape[], attrs: Attrs, ctx: InferContext): InferOk {
  requireInputs(inputShapes, 1, 1, 'pool');
  const input = inputShapes[0];
  const rank = posInt(attrs, 'rank', Math.max(1, input.length - 1));
  const { channels, spatial } = splitChannels(input, ctx.layout, rank, `Pool${rank}d`);
  const mode = optStr(attrs, 'mode') ?? 'max';
  if (mode !== 'max' && mode !== 'avg') fail(`pool mode '${mode}' is not 'max' or 'avg'`);
  const inElems = product(input);

  let outSpatial: number[];
  let reads: number;
  let squeeze = false;
  const outputSize = readOutputSize(attrs, rank);
  if (bool(attrs, 'global', false)) {
    outSpatial = spatial.map(() => 1);
    reads = inElems;
    squeeze = !bool(attrs, 'keepDims', false);
  } else if (outputSize) {
    outSpatial = spatial.map((s, i) => outputSize[i] ?? s);
    reads = channels * spatial.reduce((acc, s, i) => acc * adaptiveReads(s, outSpatial[i]), 1);
  } else {
    const kernel = optIntList(attrs, 'kernel', rank) ?? fail('pool: kernel is missing (and it is neither adaptive nor global)');
    // PyTorch and Keras both default the stride to the kernel size.
    const stride = optIntList(attrs, 'stride', rank) ?? kernel;
    const dilation = optIntList(attrs, 'dilation', rank) ?? new Array(rank).fill(1);
    if ([...kernel, ...stride, ...dilation].some((v) => v <= 0)) fail('pool kernel, stride and dilation must be positive');
    const window = { kernel, stride, dilation, padding: padding(attrs, rank) };
    outSpatial = windowOutput(spatial, window, 'pool', bool(attrs, 'ceilMode', false));
    if (outSpatial.some((d) => d <= 0)) fail(`pool output would be empty: spatial [${outSpatial.join(', ')}]`);
    reads = channels * product(outSpatial) * product(kernel);
  }

  const outElems = channels * product(outSpatial);
  const meanOnly = bool(attrs, 'global', false);
  const forwardFlops = reads + (mode === 'avg' ? outElems : 0);
  return {
    outputShape: squeeze ? [channels] : joinChannels(channels, outSpatial, ctx.layout),
    params: 0,
    nonTrainable: 0,
    forwardFlops,
    backwardFlops: forwardFlops,
    savedActivationBytes: mode === 'max' ? inElems * ctx.dtypeBytes + outElems * INDEX_BYTES : meanOnly ? 0 : inElems * ctx.dtypeBytes,
    // max_pool2d_with_indices returns its argmax as int64 (ATen's native_functions.yaml), under autocast too.
    ...(mode === 'max' ? { savedFixedBytes: outElems * INDEX_BYTES } : {}),
    saves: mode === 'max' || !meanOnly ? { inputs: [0] } : undefined,
  };
}

export const poolingOps: OpInfo[] = [
  { op: 'pool', family: 'pooling', weighted: false, summary: 'Max/average pooling: windowed, adaptive or global', infer: inferPool },
];
