/**
 * activation (relu, gelu, softmax, …) and dropout: elementwise, shape-preserving,
 * no params. FLOPs per element from costs.ts; backward ≈ forward.
 * Saved: one tensor of the activation's size (PyTorch keeps the output for
 * relu/sigmoid/tanh/softmax and the input for gelu/silu — same size, but a
 * kept output may be shared with the next layer: see SAVES_RESULT);
 * dropout keeps a one-byte mask per element.
 */
import type { Attrs, Shape } from '../ir';
import { product } from '../ir';
import type { ActivationFn } from '../ops';
import { fail, featureAxis, num, optInt, optStr, requireInputs } from './attrs';
import { ACTIVATION_FLOPS, DROPOUT_FLOPS_PER_ELEMENT, MASK_BYTES } from './costs';
import type { InferContext, InferOk, OpInfo } from './types';

/**
 * Functions whose backward reads the result rather than the input (PyTorch's
 * tools/autograd/derivatives.yaml: relu, sigmoid, tanh, _softmax and
 * _log_softmax use `result`; gelu, silu, leaky_relu, hardswish, hardsigmoid,
 * softplus, elu and hardtanh (ReLU6) use `self`; the in-place elu_ and
 * hardtanh_ switch to `result`, but the IR does not record in-place, so
 * those count the input: never less than autograd keeps). Which one matters
 * only for sharing: a ReLU's saved output is the very tensor the next conv
 * saves as its input, one allocation, not two.
 */
const SAVES_RESULT = new Set<ActivationFn>(['relu', 'sigmoid', 'tanh', 'softmax', 'log_softmax', 'exp', 'sqrt', 'rsqrt', 'reciprocal']);
/**
 * Backwards that need no activation (derivatives.yaml: neg's is `-grad`; masked_fill's reads only the mask, a
 * buffer the module owns; _to_copy's converts the gradient back and keeps only the source's options; cumsum's is a
 * reversed cumsum of the gradient, `cumsum_backward(grad, dim)`). The rest of
 * the elementwise math (abs, log, square, pow, clamp, sin, cos, erf) use `self`.
 */
const SAVES_NOTHING = new Set<ActivationFn>(['linear', 'neg', 'masked_fill', 'cast', 'cumsum']);
const PINNABLE = new Set(['fp32', 'fp16', 'bf16']);

function inferActivation(inputShapes: Shape[], attrs: Attrs, ctx: InferContext): InferOk {
  requireInputs(inputShapes, 1, 1, 'activation');
  const input = inputShapes[0];
  const fn = (optStr(attrs, 'fn') ?? 'linear') as ActivationFn;
  const perElem = ACTIVATION_FLOPS[fn];
  if (perElem === undefined) fail(`unknown activation function '${fn}'`);
  const axis = optInt(attrs, 'axis');
  if (axis !== undefined && (fn === 'softmax' || fn === 'log_softmax' || fn === 'cumsum')) featureAxis(axis, input, `${fn} axis`);
  if (fn === 'cumsum' && axis === undefined) fail('cumsum needs the axis it sums along');
  for (const side of ['from', 'to'] as const) {
    const dtype = attrs[side];
    if (fn === 'cast' && dtype !== undefined && !PINNABLE.has(dtype as string)) fail(`cast ${side} '${String(dtype)}' is not one of fp32, fp16, bf16`);
  }
  const elems = product(input);
  const forwardFlops = perElem * elems;
  return {
    outputShape: input,
    params: 0,
    nonTrainable: 0,
    forwardFlops,
    backwardFlops: forwardFlops,
    savedActivationBytes: SAVES_NOTHING.has(fn) ? 0 : elems * ctx.dtypeBytes,
    saves: SAVES_NOTHING.has(fn) ? undefined : SAVES_RESULT.has(fn) ? { output: true } : { inputs: [0] },
  };
}

function inferDropout(inputShapes: Shape[], attrs: Attrs): InferOk {
  requireInputs(inputShapes, 1, 1, 'dropout');
  const rate = num(attrs, 'rate', 0.5);
  if (rate < 0 || rate > 1) fail(`dropout rate ${rate} must be between 0 and 1`);
  const elems = product(inputShapes[0]);
  // ATen's dropout returns its input for p = 0 and multiplies by a zero scalar for p = 1 (Dropout.cpp,
  // _dropout_impl): no mask is drawn or saved. LLM configs routinely train with dropout 0.0.
  if (rate === 0 || rate === 1) return { outputShape: inputShapes[0], params: 0, nonTrainable: 0, forwardFlops: rate === 0 ? 0 : elems, backwardFlops: rate === 0 ? 0 : elems, savedActivationBytes: 0 };
  return {
    outputShape: inputShapes[0],
    params: 0,
    nonTrainable: 0,
    forwardFlops: DROPOUT_FLOPS_PER_ELEMENT * elems,
    backwardFlops: elems, // multiply by the saved mask
    savedActivationBytes: elems * MASK_BYTES,
    // The mask is bool (CUDA's fused dropout) whatever the activations' dtype.
    savedFixedBytes: elems * MASK_BYTES,
  };
}

export const activationOps: OpInfo[] = [
  { op: 'activation', family: 'activation', weighted: false, summary: 'Elementwise function: an activation, or math on activations', infer: inferActivation },
  { op: 'dropout', family: 'activation', weighted: false, summary: 'Dropout (training-time random mask)', infer: inferDropout },
];
