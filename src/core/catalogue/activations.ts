/**
 * activation (relu, gelu, softmax, …) and dropout: elementwise, shape-preserving,
 * no params. FLOPs per element from costs.ts; backward ≈ forward.
 * Saved: one tensor of the activation's size (PyTorch keeps the output for
 * relu/sigmoid/tanh/softmax and the input for gelu/silu — same size either way);
 * dropout keeps a one-byte mask per element.
 */
import type { Attrs, Shape } from '../ir';
import { product } from '../ir';
import type { ActivationFn } from '../ops';
import { fail, featureAxis, num, optInt, optStr, requireInputs } from './attrs';
import { ACTIVATION_FLOPS, DROPOUT_FLOPS_PER_ELEMENT, MASK_BYTES } from './costs';
import type { InferContext, InferOk, OpInfo } from './types';

function inferActivation(inputShapes: Shape[], attrs: Attrs, ctx: InferContext): InferOk {
  requireInputs(inputShapes, 1, 1, 'activation');
  const input = inputShapes[0];
  const fn = (optStr(attrs, 'fn') ?? 'linear') as ActivationFn;
  const perElem = ACTIVATION_FLOPS[fn];
  if (perElem === undefined) fail(`unknown activation function '${fn}'`);
  const axis = optInt(attrs, 'axis');
  if (axis !== undefined && (fn === 'softmax' || fn === 'log_softmax')) featureAxis(axis, input, `${fn} axis`);
  const elems = product(input);
  const forwardFlops = perElem * elems;
  return {
    outputShape: input,
    params: 0,
    nonTrainable: 0,
    forwardFlops,
    backwardFlops: forwardFlops,
    savedActivationBytes: fn === 'linear' ? 0 : elems * ctx.dtypeBytes,
  };
}

function inferDropout(inputShapes: Shape[], attrs: Attrs): InferOk {
  requireInputs(inputShapes, 1, 1, 'dropout');
  const rate = num(attrs, 'rate', 0.5);
  if (rate < 0 || rate > 1) fail(`dropout rate ${rate} must be between 0 and 1`);
  const elems = product(inputShapes[0]);
  return {
    outputShape: inputShapes[0],
    params: 0,
    nonTrainable: 0,
    forwardFlops: DROPOUT_FLOPS_PER_ELEMENT * elems,
    backwardFlops: elems, // multiply by the saved mask
    savedActivationBytes: elems * MASK_BYTES,
  };
}

export const activationOps: OpInfo[] = [
  { op: 'activation', family: 'activation', weighted: false, summary: 'Elementwise activation function', infer: inferActivation },
  { op: 'dropout', family: 'activation', weighted: false, summary: 'Dropout (training-time random mask)', infer: inferDropout },
];
