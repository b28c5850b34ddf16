/**
 * Per-element FLOP constants for the cheap ops, in one place so the profiler's
 * calibration can be compared against them. They are rough on purpose: these ops
 * are memory-bound, and the planner's time for them comes from bytes moved (or
 * from profiling), not from these FLOPs. Weighted ops are counted exactly.
 *
 * Backward convention (used by every family):
 * - ops with weights: backward = 2 × forward (one pass for the input gradient,
 *   one for the weight gradient, each as costly as the forward);
 * - ops without weights: backward ≈ forward (the gradient of an elementwise op,
 *   pool or reshuffle touches the same elements once more);
 * - matmul / sdpa between two activations: backward = 2 × forward, because both
 *   operands need a gradient, each a matmul of the forward's size.
 */
import type { ActivationFn } from '../ops';

/** Forward FLOPs per output element of an activation function. */
export const ACTIVATION_FLOPS: Record<ActivationFn, number> = {
  relu: 1, // one compare/select
  relu6: 2, // two clamps
  leaky_relu: 2, // compare + multiply
  elu: 4, // exp, subtract, multiply, select
  gelu: 8, // tanh approximation: cube, 2 mul-adds, tanh, mul, add
  silu: 5, // sigmoid (exp, add, divide) + multiply
  swish: 5,
  tanh: 5,
  sigmoid: 4, // exp, add, divide, negate
  softmax: 5, // max, subtract, exp, sum, divide
  log_softmax: 5,
  softplus: 4, // exp, add, log, threshold check
  hardswish: 4,
  hardsigmoid: 3,
  linear: 0,
  abs: 1,
  neg: 1,
  exp: 4, // range reduction, polynomial, scale
  log: 4,
  sqrt: 1, // one special-function instruction
  rsqrt: 1,
  square: 1,
  pow: 2, // by a number: a square or cube is multiplies, other exponents exp(log)
  clamp: 2, // a compare against each bound
  sin: 4,
  cos: 4,
  reciprocal: 1,
  erf: 8, // a rational approximation
  masked_fill: 1, // one select by the mask
  cumsum: 1, // one add per element (a parallel scan does about twice that, but stays memory-bound)
  cast: 0, // a conversion: memory traffic only
};

/** Training-mode normalisation per element: mean (1), variance (3), normalise (2), affine (2). */
export const NORM_FLOPS_PER_ELEMENT = 8;

/** Dropout per element: draw a random number and multiply by the mask. */
export const DROPOUT_FLOPS_PER_ELEMENT = 2;

/** Softmax inside attention, per score element (same as the activation). */
export const SOFTMAX_FLOPS_PER_ELEMENT = ACTIVATION_FLOPS.softmax;

/** Logit soft-capping inside attention, per score element: cap·tanh(s / cap), a divide, the tanh and a multiply. */
export const SOFTCAP_FLOPS_PER_ELEMENT = 1 + ACTIVATION_FLOPS.tanh + 1;

/** Pointwise gate work per hidden unit per time step, on top of the matmuls. */
export const RNN_POINTWISE_FLOPS: Record<'lstm' | 'gru' | 'rnn', number> = {
  lstm: 4 * 4 + 5, // 4 gate activations (~4 each) + c = f*c + i*g, h = o*tanh(c)
  gru: 3 * 4 + 6, // 3 gate activations + reset product and interpolation
  rnn: 5, // tanh
};

/** Bytes of one saved element of a boolean mask (dropout) and of an index (PyTorch int64 token ids). */
export const MASK_BYTES = 1;
export const INDEX_BYTES = 8;
