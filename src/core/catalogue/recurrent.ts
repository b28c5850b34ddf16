/**
 * rnn: LSTM, GRU and simple RNN, stacked (numLayers) and bidirectional.
 * Input is [T, features] per sample (time first; frontends handle batch_first).
 *
 * Params per layer and direction, with g gate sets (LSTM 4, GRU 3, RNN 1),
 * layer input size `in` (inputSize, then hiddenSize × directions):
 *   weights g·H·(in + H)
 *   biases  PyTorch: 2·g·H (b_ih and b_hh);
 *           Keras (biasStyle 'keras'): g·H, except GRU with resetAfter (default) 2·g·H.
 * FLOPs per step: the two matmuls 2·g·H·(in + H), bias adds, pointwise gate work
 * (costs.ts); × T. Backward = 2 × forward (input + weight grads through time).
 * Saved: each layer's input sequence, gate activations and states per step.
 */
import type { Attrs, Shape } from '../ir';
import { bool, fail, optInt, optStr, posInt, requireInputs, showShape } from './attrs';
import { RNN_POINTWISE_FLOPS } from './costs';
import type { InferContext, InferOk, OpInfo } from './types';

const GATES = { lstm: 4, gru: 3, rnn: 1 } as const;

function inferRnn(inputShapes: Shape[], attrs: Attrs, ctx: InferContext): InferOk {
  requireInputs(inputShapes, 1, 1, 'rnn');
  const input = inputShapes[0];
  if (input.length !== 2) fail(`rnn expects [time, features] per sample, got ${showShape(input)}`);
  const [steps, features] = input;
  const cellName = optStr(attrs, 'cell') ?? 'lstm';
  if (!(cellName in GATES)) fail(`rnn cell '${cellName}' is not lstm, gru or rnn`);
  const cell = cellName as keyof typeof GATES;
  const declaredIn = optInt(attrs, 'inputSize');
  if (declaredIn !== undefined && declaredIn !== features) fail(`rnn expects ${declaredIn} input features, got ${features}`);
  const hidden = posInt(attrs, 'hiddenSize');
  const layers = posInt(attrs, 'numLayers', 1);
  const dirs = bool(attrs, 'bidirectional', false) ? 2 : 1;
  const hasBias = bool(attrs, 'bias', true);
  const style = optStr(attrs, 'biasStyle') ?? 'torch';
  if (style !== 'torch' && style !== 'keras') fail(`rnn biasStyle '${style}' is not 'torch' or 'keras'`);
  const g = GATES[cell];
  const biasVectors = !hasBias ? 0 : style === 'torch' ? 2 : cell === 'gru' && bool(attrs, 'resetAfter', true) ? 2 : 1;

  let params = 0;
  let stepFlops = 0;
  // The weight gradients of W_ih and W_hh (one GEMM pair per gate block, the forward's size) and the bias sums.
  let stepWeightGradientFlops = 0;
  let savedElems = 0;
  const states = cell === 'lstm' ? 2 : 1;
  for (let l = 0; l < layers; l++) {
    const inSize = l === 0 ? features : hidden * dirs;
    params += dirs * (g * hidden * (inSize + hidden) + biasVectors * g * hidden);
    stepFlops += dirs * (2 * g * hidden * (inSize + hidden) + biasVectors * g * hidden + RNN_POINTWISE_FLOPS[cell] * hidden);
    stepWeightGradientFlops += dirs * (2 * g * hidden * (inSize + hidden) + biasVectors * g * hidden);
    savedElems += steps * (inSize + dirs * hidden * (g + states));
  }
  const forwardFlops = steps * stepFlops;
  return {
    outputShape: bool(attrs, 'returnSequences', true) ? [steps, hidden * dirs] : [hidden * dirs],
    params,
    nonTrainable: 0,
    forwardFlops,
    backwardFlops: 2 * forwardFlops,
    savedActivationBytes: savedElems * ctx.dtypeBytes,
    // Frozen, the backward skips the weight gradients (cuDNN's RNNBackwardWeights is not called) but keeps its saved
    // gates and states for the input gradient.
    frozen: { weightGradientFlops: steps * stepWeightGradientFlops },
  };
}

export const recurrentOps: OpInfo[] = [
  { op: 'rnn', family: 'recurrent', weighted: true, summary: 'Recurrent layer (LSTM, GRU, RNN), stacked and/or bidirectional', infer: inferRnn },
];
