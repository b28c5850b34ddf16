/**
 * Ops that combine tensors: add, mul (NumPy broadcasting), concat, split (one
 * node per output section), matmul. No params.
 */
import type { Attrs, Shape } from '../ir';
import { product } from '../ir';
import { bool, fail, featureAxis, int, optInt, optIntList, requireInputs, showShape } from './attrs';
import type { InferContext, InferOk, OpInfo } from './types';

/** NumPy/PyTorch broadcasting of batch-less shapes, aligned from the right. */
export function broadcastShapes(shapes: Shape[], what: string): number[] {
  const rank = Math.max(...shapes.map((s) => s.length));
  const out: number[] = [];
  for (let i = 1; i <= rank; i++) {
    let dim = 1;
    for (const s of shapes) {
      const d = s.length - i >= 0 ? s[s.length - i] : 1;
      if (d === dim || d === 1) continue;
      if (dim !== 1) fail(`${what}: shapes ${shapes.map(showShape).join(' and ')} do not match (dim ${rank - i + 1} of ${rank}: ${dim} vs ${d}) and cannot broadcast`);
      dim = d;
    }
    out.unshift(dim);
  }
  return out;
}

function elementwise(what: 'add' | 'mul') {
  return (inputShapes: Shape[], _attrs: Attrs, ctx: InferContext): InferOk => {
    requireInputs(inputShapes, 1, Infinity, what);
    const out = broadcastShapes(inputShapes, what);
    const elems = product(out);
    // One input means an op with a constant (x + 1, x * 0.5): still one op per element.
    const forwardFlops = elems * Math.max(1, inputShapes.length - 1);
    return {
      outputShape: out,
      params: 0,
      nonTrainable: 0,
      forwardFlops,
      backwardFlops: forwardFlops,
      // The gradient of a product needs the other factors; a sum needs nothing.
      savedActivationBytes: what === 'mul' && inputShapes.length > 1 ? inputShapes.reduce((a, s) => a + product(s), 0) * ctx.dtypeBytes : 0,
      saves: what === 'mul' && inputShapes.length > 1 ? { inputs: inputShapes.map((_, i) => i) } : undefined,
    };
  };
}

function inferConcat(inputShapes: Shape[], attrs: Attrs): InferOk {
  requireInputs(inputShapes, 1, Infinity, 'concat');
  const first = inputShapes[0];
  const axis = featureAxis(int(attrs, 'axis', -1), first, 'concat axis');
  let total = 0;
  for (const s of inputShapes) {
    const same = s.length === first.length && s.every((d, i) => i === axis || d === first[i]);
    if (!same) fail(`concat on axis ${int(attrs, 'axis', -1)}: shapes ${inputShapes.map(showShape).join(', ')} differ outside the concat axis`);
    total += s[axis];
  }
  const out = [...first];
  out[axis] = total;
  return { outputShape: out, params: 0, nonTrainable: 0, forwardFlops: 0, backwardFlops: 0, savedActivationBytes: 0 };
}

/** Section sizes of a split: explicit sizes summing to the dim, a single split size (torch.split(x, 2)), or chunks (torch.chunk). */
export function splitSections(dim: number, sizes: number[] | undefined, chunks: number | undefined): number[] {
  if (sizes && sizes.length > 0) {
    if (sizes.some((s) => s < 0)) fail('split sizes must not be negative');
    const sum = sizes.reduce((a, b) => a + b, 0);
    if (sum === dim) return sizes;
    if (sizes.length === 1 && sizes[0] > 0) {
      const out: number[] = [];
      for (let left = dim; left > 0; left -= sizes[0]) out.push(Math.min(sizes[0], left));
      return out;
    }
    return fail(`split sizes [${sizes.join(', ')}] sum to ${sum}, but the axis has ${dim}`);
  }
  if (chunks !== undefined) {
    if (chunks <= 0) fail(`split chunks must be positive, got ${chunks}`);
    const size = Math.ceil(dim / chunks);
    const out: number[] = [];
    for (let left = dim; left > 0; left -= size) out.push(Math.min(size, left));
    return out;
  }
  return fail('split needs sizes or chunks');
}

function inferSplit(inputShapes: Shape[], attrs: Attrs): InferOk {
  requireInputs(inputShapes, 1, 1, 'split');
  const input = inputShapes[0];
  const axisAttr = int(attrs, 'axis', -1);
  const axis = featureAxis(axisAttr, input, 'split axis');
  const sections = splitSections(input[axis], optIntList(attrs, 'sizes'), optInt(attrs, 'chunks'));
  const index = int(attrs, 'index', 0);
  if (index < 0 || index >= sections.length) fail(`split output ${index} does not exist: axis ${axisAttr} of ${showShape(input)} splits into ${sections.length} sections`);
  const out = [...input];
  out[axis] = sections[index];
  return { outputShape: out, params: 0, nonTrainable: 0, forwardFlops: 0, backwardFlops: 0, savedActivationBytes: 0 };
}

function inferMatmul(inputShapes: Shape[], attrs: Attrs, ctx: InferContext): InferOk {
  requireInputs(inputShapes, 2, 2, 'matmul');
  const [a, b0] = inputShapes;
  if (a.length === 0 || b0.length === 0) fail('matmul operands need at least one dim');
  let b = [...b0];
  if (bool(attrs, 'transposeB', false) && b.length >= 2) b = [...b.slice(0, -2), b[b.length - 1], b[b.length - 2]];
  const aM = a.length === 1 ? [1, a[0]] : [...a];
  const bM = b.length === 1 ? [b[0], 1] : b;
  const [n, k] = aM.slice(-2);
  const [k2, m] = bM.slice(-2);
  if (k !== k2) fail(`matmul: inner dims differ: ${showShape(a)} @ ${showShape(b)} (${k} vs ${k2})`);
  const batch = broadcastShapes([aM.slice(0, -2), bM.slice(0, -2)], 'matmul batch dims');
  const out = [...batch, ...(a.length === 1 ? [] : [n]), ...(b.length === 1 ? [] : [m])];
  const forwardFlops = 2 * product(batch) * n * k * m;
  return {
    outputShape: out,
    params: 0,
    nonTrainable: 0,
    forwardFlops,
    backwardFlops: 2 * forwardFlops, // a gradient for each operand
    savedActivationBytes: (product(a) + product(b0)) * ctx.dtypeBytes,
    saves: { inputs: [0, 1] },
  };
}

export const combiningOps: OpInfo[] = [
  { op: 'add', family: 'combining', weighted: false, summary: 'Elementwise sum with broadcasting (residual connections)', infer: elementwise('add') },
  { op: 'mul', family: 'combining', weighted: false, summary: 'Elementwise product with broadcasting (gates, scaling)', infer: elementwise('mul') },
  { op: 'concat', family: 'combining', weighted: false, summary: 'Concatenation along an axis', infer: inferConcat },
  { op: 'split', family: 'combining', weighted: false, summary: 'One section of a split/chunk (one node per output)', infer: inferSplit },
  { op: 'matmul', family: 'combining', weighted: false, summary: 'Matrix product of two activations (batched)', infer: inferMatmul },
];
