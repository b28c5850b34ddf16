/**
 * reduce: mean, sum, amax or amin over some non-batch axes (a ViT's mean over
 * tokens, timm's `x.mean((1, 2))` on a channels-last map). No params; one op
 * per input element, and a backward that touches every input element once
 * more (the costs.ts convention for weightless ops).
 *
 * What autograd keeps (PyTorch tools/autograd/derivatives.yaml): sum and mean
 * need only the input's sizes (`grad.expand`, `mean_backward`); amax and amin
 * compare the input with the result to find where the gradient goes
 * (`restore_reduced_dims(result, dim, keepdim) == self`), so they keep both,
 * and so does the 2-norm (`norm_backward(grad, self, p, result, dim, keepdim)`:
 * self · grad / result). topk keeps only its int64 indices, where its backward
 * scatters the gradient (`value_selecting_reduction_backward`).
 */
import type { Attrs, Shape } from '../ir';
import { product } from '../ir';
import type { ReduceFn } from '../ops';
import { bool, fail, featureAxis, optInt, optIntList, optStr, requireInputs } from './attrs';
import { INDEX_BYTES } from './costs';
import type { InferContext, InferOk, OpInfo } from './types';

const FNS: readonly ReduceFn[] = ['mean', 'sum', 'amax', 'amin', 'norm', 'topk'];

/**
 * The axes a reduce names, batch included in the count (torch's dims): `axes` as written, or with `allAxes` every
 * axis of the sample, 1 … rank (a loss summed over the sample, recorded before the frontend knew its rank).
 * The workers take the same axes (profiler/trialSpecs.ts).
 */
export function reduceAxesOf(attrs: Attrs, sampleRank: number): number[] | undefined {
  if (attrs.allAxes === true) return Array.from({ length: sampleRank }, (_, i) => i + 1);
  return optIntList(attrs, 'axes');
}

function inferReduce(inputShapes: Shape[], attrs: Attrs, ctx: InferContext): InferOk {
  requireInputs(inputShapes, 1, 1, 'reduce');
  const input = inputShapes[0];
  const fn = optStr(attrs, 'fn') as ReduceFn | undefined;
  if (!fn || !FNS.includes(fn)) fail(`unknown reduction '${String(fn)}' (known: ${FNS.join(', ')})`);
  const written = reduceAxesOf(attrs, input.length);
  // A sample that is already one number: the sum over it is itself.
  if (attrs.allAxes === true && input.length === 0) return { outputShape: [], params: 0, nonTrainable: 0, forwardFlops: 1, backwardFlops: 1, savedActivationBytes: 0 };
  if (!written || written.length === 0) fail('reduce needs the axes it reduces');
  const axes = new Set(written.map((a) => featureAxis(a, input, 'reduce axis')));
  if (axes.size !== written.length) fail(`reduce axes [${written.join(', ')}] name an axis twice`);
  const keepDims = bool(attrs, 'keepDims', false);
  const elems = product(input);
  if (fn === 'topk') return inferTopk(input, [...axes], optInt(attrs, 'k'), elems);
  const outputShape = keepDims ? input.map((d, i) => (axes.has(i) ? 1 : d)) : input.filter((_, i) => !axes.has(i));
  const keepsBoth = fn === 'amax' || fn === 'amin' || fn === 'norm';
  // The 2-norm squares and adds each element; its backward scales each by grad / result.
  const perElement = fn === 'norm' ? 2 : 1;
  return {
    outputShape,
    params: 0,
    nonTrainable: 0,
    forwardFlops: perElement * elems,
    backwardFlops: perElement * elems,
    savedActivationBytes: keepsBoth ? (elems + product(outputShape)) * ctx.dtypeBytes : 0,
    saves: keepsBoth ? { inputs: [0], output: true } : undefined,
  };
}

/** The k largest along one axis: values of that shape, and int64 indices its backward scatters through. */
function inferTopk(input: Shape, axes: number[], k: number | undefined, elems: number): InferOk {
  if (axes.length !== 1) fail(`topk selects along one axis, not ${axes.length}`);
  const axis = axes[0]!;
  if (k === undefined || k < 1) fail('topk needs k ≥ 1');
  if (k > input[axis]!) fail(`topk k=${k} is more than the ${input[axis]} entries along axis ${axis}`);
  const outputShape = input.map((d, i) => (i === axis ? k : d));
  const indices = product(outputShape) * INDEX_BYTES;
  return { outputShape, params: 0, nonTrainable: 0, forwardFlops: elems, backwardFlops: elems, savedActivationBytes: indices, savedFixedBytes: indices };
}

export const reduceOps: OpInfo[] = [{ op: 'reduce', family: 'combining', weighted: false, summary: 'Reduction (mean, sum, max, min, 2-norm) over non-batch axes, or the top k along one', infer: inferReduce }];
