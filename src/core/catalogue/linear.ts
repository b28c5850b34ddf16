/**
 * linear (nn.Linear, Dense, tf.layers.dense) and embedding.
 *
 * Linear acts on the last dim and is applied over all leading dims: Linear(C→D)
 * on a (T, C) sequence is T matrix-vector products, so FLOPs scale with T.
 */
import type { Attrs, Shape } from '../ir';
import { product } from '../ir';
import { bool, fail, optInt, posInt, requireInputs } from './attrs';
import { INDEX_BYTES } from './costs';
import type { InferContext, InferOk, OpInfo } from './types';

function inferLinear(inputShapes: Shape[], attrs: Attrs, ctx: InferContext): InferOk {
  requireInputs(inputShapes, 1, 1, 'linear');
  const input = inputShapes[0];
  if (input.length === 0) fail('linear needs at least a feature dim in its input, got a scalar per sample');
  const inF = input[input.length - 1];
  const declaredIn = optInt(attrs, 'inFeatures');
  if (declaredIn !== undefined && declaredIn !== inF) {
    fail(`linear expects ${declaredIn} input features, but its input [${input.join(', ')}] ends in ${inF}${input.length > 1 ? ' (flatten first?)' : ''}`);
  }
  const outF = posInt(attrs, 'outFeatures');
  const hasBias = bool(attrs, 'bias', true);
  const rows = product(input.slice(0, -1));
  const forwardFlops = rows * (2 * inF * outF + (hasBias ? outF : 0));
  return {
    outputShape: [...input.slice(0, -1), outF],
    params: inF * outF + (hasBias ? outF : 0),
    nonTrainable: 0,
    forwardFlops,
    backwardFlops: 2 * forwardFlops,
    savedActivationBytes: product(input) * ctx.dtypeBytes,
    saves: { inputs: [0] },
  };
}

function inferEmbedding(inputShapes: Shape[], attrs: Attrs): InferOk {
  requireInputs(inputShapes, 1, 1, 'embedding');
  const num = posInt(attrs, 'numEmbeddings');
  const dim = posInt(attrs, 'embeddingDim');
  const ids = product(inputShapes[0]);
  return {
    outputShape: [...inputShapes[0], dim],
    params: num * dim,
    nonTrainable: 0,
    // A gather: no arithmetic forward. Backward scatter-adds each looked-up row into the weight gradient.
    forwardFlops: 0,
    backwardFlops: ids * dim,
    // Only the token ids are kept (int64 in PyTorch), at that size whatever the training precision.
    savedActivationBytes: ids * INDEX_BYTES,
    savedFixedBytes: ids * INDEX_BYTES,
  };
}

export const linearOps: OpInfo[] = [
  { op: 'linear', family: 'linear', weighted: true, summary: 'Fully connected layer on the last dim, applied over leading dims', infer: inferLinear },
  { op: 'embedding', family: 'linear', weighted: true, summary: 'Lookup table: token ids → vectors', infer: inferEmbedding },
];
