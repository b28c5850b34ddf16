/**
 * Ops that move or pad elements without arithmetic: input, identity, flatten,
 * reshape, permute, zeropad, upsample. They have no params; views (flatten,
 * reshape) cost nothing; copies are memory-bound and counted as 0 FLOPs, with
 * the exception of interpolating upsample modes.
 */
import type { Attrs, Shape } from '../ir';
import { product } from '../ir';
import { fail, int, intList, joinChannels, normAxis, optIntList, optStr, requireInputs, show, splitChannels } from './attrs';
import type { InferContext, InferOk, OpInfo } from './types';

function moved(outputShape: Shape, forwardFlops = 0): InferOk {
  return { outputShape, params: 0, nonTrainable: 0, forwardFlops, backwardFlops: forwardFlops, savedActivationBytes: 0 };
}

function inferPassThrough(inputShapes: Shape[]): InferOk {
  requireInputs(inputShapes, 1, 1, 'identity');
  return moved(inputShapes[0]);
}

function inferFlatten(inputShapes: Shape[], attrs: Attrs): InferOk {
  requireInputs(inputShapes, 1, 1, 'flatten');
  const input = inputShapes[0];
  const rank = input.length + 1;
  const start = normAxis(int(attrs, 'startDim', 1), rank, 'flatten startDim');
  const end = normAxis(int(attrs, 'endDim', -1), rank, 'flatten endDim');
  if (start === 0) fail('flatten from dim 0 folds the batch into the features; WAP needs the batch kept (use startDim 1)');
  if (end < start) fail(`flatten endDim ${end} is before startDim ${start}`);
  const s = start - 1;
  const e = end - 1;
  return moved([...input.slice(0, s), product(input.slice(s, e + 1)), ...input.slice(e + 1)]);
}

function inferReshape(inputShapes: Shape[], attrs: Attrs): InferOk {
  requireInputs(inputShapes, 1, 1, 'reshape');
  const input = inputShapes[0];
  if (attrs.unsqueeze !== undefined || attrs.squeeze !== undefined) return moved(unitAxisChange(input, attrs));
  const target = intList(attrs, 'shape');
  const total = product(input);
  const unknown = target.filter((d) => d === -1).length;
  if (unknown > 1) fail(`reshape target [${target.join(', ')}] has more than one -1`);
  if (target.some((d) => d < -1 || d === 0)) fail(`reshape target [${target.join(', ')}] has an invalid size`);
  const known = product(target.filter((d) => d !== -1));
  if (unknown === 1) {
    if (total % known !== 0) fail(`cannot reshape [${input.join(', ')}] (${total} elements) into [${target.join(', ')}]`);
    return moved(target.map((d) => (d === -1 ? total / known : d)));
  }
  if (known !== total) fail(`cannot reshape [${input.join(', ')}] (${total} elements) into [${target.join(', ')}] (${known})`);
  return moved(target);
}

/**
 * `unsqueeze(d)` / `squeeze(d)` / `squeeze()` as a reshape whose target follows from the input (a frontend may
 * record it before the input's sizes are known). Axes are torch's, batch included, so the batch stays axis 0;
 * squeeze keeps an axis whose size is not 1, as torch does.
 */
function unitAxisChange(input: Shape, attrs: Attrs): Shape {
  const rank = input.length + 1;
  if (attrs.unsqueeze !== undefined) {
    const axis = normAxis(int(attrs, 'unsqueeze'), rank + 1, 'unsqueeze dim');
    if (axis === 0) fail('unsqueeze(0) would move the batch off axis 0; WAP needs the batch first');
    return [...input.slice(0, axis - 1), 1, ...input.slice(axis - 1)];
  }
  if (attrs.squeeze === 'all') return input.filter((d) => d !== 1);
  const axis = normAxis(int(attrs, 'squeeze'), rank, 'squeeze dim');
  if (axis === 0 || input[axis - 1] !== 1) return input;
  return input.filter((_, i) => i !== axis - 1);
}

function inferGather(inputShapes: Shape[], attrs: Attrs): InferOk {
  requireInputs(inputShapes, 1, 1, 'gather');
  const index = intList(attrs, 'indexShape');
  if (index.some((d) => d <= 0)) fail(`gather index shape [${index.join(', ')}] has an invalid size`);
  return moved([...index, ...inputShapes[0].slice(1)]);
}

function inferPermute(inputShapes: Shape[], attrs: Attrs): InferOk {
  requireInputs(inputShapes, 1, 1, 'permute');
  const input = inputShapes[0];
  const rank = input.length + 1;
  const dims = permutationOf(attrs, rank);
  if (dims.length !== rank) fail(`permute dims [${dims.join(', ')}] must list all ${rank} dims (batch included)`);
  if (new Set(dims).size !== rank) fail(`permute dims [${dims.join(', ')}] repeat a dim`);
  if (dims[0] !== 0) fail('permute moves the batch dim; WAP needs the batch first');
  const withBatch = [0, ...input];
  return moved(dims.slice(1).map((d) => withBatch[d]));
}

/**
 * A permute's batch-including permutation at `rank` dims: its `dims`, or the identity with its `swap` pair
 * exchanged (a transpose read before its rank was known). Trial specs resolve it here too, so workers see dims.
 */
export function permutationOf(attrs: Attrs, rank: number): number[] {
  return attrs.swap !== undefined && attrs.dims === undefined ? swapped(intList(attrs, 'swap'), rank) : intList(attrs, 'dims').map((d) => normAxis(d, rank, 'permute dim'));
}

/** The identity permutation of `rank` dims with two swapped. */
function swapped(pair: number[], rank: number): number[] {
  if (pair.length !== 2) fail(`permute swap [${pair.join(', ')}] must name two dims`);
  const [a, b] = pair.map((d) => normAxis(d, rank, 'transpose dim'));
  const dims = Array.from({ length: rank }, (_, i) => i);
  [dims[a!], dims[b!]] = [dims[b!], dims[a!]];
  return dims;
}

function inferZeroPad(inputShapes: Shape[], attrs: Attrs, ctx: InferContext): InferOk {
  requireInputs(inputShapes, 1, 1, 'zeropad');
  const input = inputShapes[0];
  const pads = attrs.padding;
  if (!Array.isArray(pads)) fail(`zeropad padding ${show(pads)} must be a list of [before, after] pairs`);
  const rank = pads.length;
  const { channels, spatial } = splitChannels(input, ctx.layout, rank, 'zeropad');
  const out = spatial.map((s, i) => {
    const p = pads[i];
    if (!Array.isArray(p) || p.length !== 2 || typeof p[0] !== 'number' || typeof p[1] !== 'number') fail(`zeropad entry ${show(p)} is not a [before, after] pair`);
    return s + (p[0] as number) + (p[1] as number);
  });
  if (out.some((d) => d <= 0)) fail('zeropad would produce an empty tensor');
  return moved(joinChannels(channels, out, ctx.layout));
}

function inferUpsample(inputShapes: Shape[], attrs: Attrs, ctx: InferContext): InferOk {
  requireInputs(inputShapes, 1, 1, 'upsample');
  const input = inputShapes[0];
  const rank = input.length - 1;
  if (rank < 1) fail('upsample needs at least one spatial dim besides channels');
  const { channels, spatial } = splitChannels(input, ctx.layout, rank, 'upsample');
  const size = optIntList(attrs, 'size', rank);
  const scaleV = attrs.scale;
  let out: number[];
  if (size) out = size;
  else if (typeof scaleV === 'number') out = spatial.map((s) => Math.floor(s * scaleV));
  else if (Array.isArray(scaleV) && scaleV.every((v) => typeof v === 'number')) {
    const scales = (scaleV.length === 1 ? new Array(rank).fill(scaleV[0]) : scaleV) as number[];
    if (scales.length !== rank) fail(`upsample scale has ${scales.length} entries, expected ${rank}`);
    out = spatial.map((s, i) => Math.floor(s * scales[i]));
  } else return fail('upsample needs a size or a scale');
  if (out.some((d) => d <= 0)) fail('upsample would produce an empty tensor');
  const mode = (optStr(attrs, 'mode') ?? 'nearest').toLowerCase();
  const outElems = channels * product(out);
  // Interpolation reads 2^rank (linear) or 4^rank (cubic) neighbours with a multiply-add each; nearest only copies.
  const perElem = mode.includes('cubic') ? 2 * 4 ** rank : mode.includes('linear') ? 2 * 2 ** rank : 0;
  return moved(joinChannels(channels, out, ctx.layout), perElem * outElems);
}

export const shapingOps: OpInfo[] = [
  { op: 'input', family: 'io', weighted: false, summary: 'Model input', infer: inferPassThrough },
  { op: 'identity', family: 'shaping', weighted: false, summary: 'Identity (no-op)', infer: inferPassThrough },
  { op: 'flatten', family: 'shaping', weighted: false, summary: 'Flatten dims startDim…endDim (batch-including axes)', infer: inferFlatten },
  { op: 'gather', family: 'shaping', weighted: false, summary: 'Rows picked by a constant index (output: index shape, then the rest)', infer: inferGather },
  { op: 'reshape', family: 'shaping', weighted: false, summary: 'Reshape (target without batch, one -1 allowed; or `unsqueeze`/`squeeze` a batch-including axis)', infer: inferReshape },
  { op: 'permute', family: 'shaping', weighted: false, summary: 'Permute dims (batch-including permutation)', infer: inferPermute },
  { op: 'zeropad', family: 'shaping', weighted: false, summary: 'Zero padding of spatial dims', infer: inferZeroPad },
  { op: 'upsample', family: 'shaping', weighted: false, summary: 'Upsampling by scale or to a size', infer: inferUpsample },
];
