/**
 * batchnorm, layernorm, groupnorm. Training-mode cost is NORM_FLOPS_PER_ELEMENT
 * per element; backward = 2 × forward when there are affine weights, else ≈ forward
 * (see costs.ts). The input is saved (the backward recomputes x̂ from it and the stats);
 * it is often also what the previous layer saves, so it is marked shared (see types.ts `saves`).
 */
import type { Attrs, Shape } from '../ir';
import { product } from '../ir';
import { bool, fail, featureAxis, optInt, optIntList, posInt, requireInputs, splitChannels } from './attrs';
import { NORM_FLOPS_PER_ELEMENT } from './costs';
import type { InferContext, InferOk, OpInfo } from './types';

function normResult(input: Shape, params: number, nonTrainable: number, ctx: InferContext): InferOk {
  const elems = product(input);
  const forwardFlops = NORM_FLOPS_PER_ELEMENT * elems;
  return {
    outputShape: input,
    params,
    nonTrainable,
    forwardFlops,
    backwardFlops: params > 0 ? 2 * forwardFlops : forwardFlops,
    // derivatives.yaml (native_batch_norm, native_layer_norm, native_group_norm): the input plus per-channel
    // (per-row, per-group) mean and inverse std, negligible beside it. The output is not saved.
    savedActivationBytes: elems * ctx.dtypeBytes,
    saves: { inputs: [0] },
  };
}

function inferBatchNorm(inputShapes: Shape[], attrs: Attrs, ctx: InferContext): InferOk {
  requireInputs(inputShapes, 1, 1, 'batchnorm');
  const input = inputShapes[0];
  if (input.length === 0) fail('batchnorm needs a channel dim');
  const axis = optInt(attrs, 'axis') ?? (ctx.layout === 'channels_first' ? 1 : -1);
  const channels = input[featureAxis(axis, input, 'batchnorm axis')];
  const declared = optInt(attrs, 'numFeatures');
  if (declared !== undefined && declared !== channels) fail(`batchnorm expects ${declared} features, but its input has ${channels} on axis ${axis}`);
  const affine = (bool(attrs, 'scale', true) ? channels : 0) + (bool(attrs, 'center', true) ? channels : 0);
  const running = bool(attrs, 'trackRunningStats', true) ? 2 * channels : 0;
  return normResult(input, affine, running, ctx);
}

function inferLayerNorm(inputShapes: Shape[], attrs: Attrs, ctx: InferContext): InferOk {
  requireInputs(inputShapes, 1, 1, 'layernorm');
  const input = inputShapes[0];
  if (input.length === 0) fail('layernorm needs at least one feature dim');
  const normalized = optIntList(attrs, 'normalizedShape') ?? [input[input.length - 1]];
  const tail = input.slice(input.length - normalized.length);
  if (normalized.length > input.length || tail.some((d, i) => d !== normalized[i])) {
    fail(`layernorm normalizes [${normalized.join(', ')}] but its input [${input.join(', ')}] does not end with it`);
  }
  const size = product(normalized);
  const params = (bool(attrs, 'scale', true) ? size : 0) + (bool(attrs, 'center', true) ? size : 0);
  return normResult(input, params, 0, ctx);
}

function inferGroupNorm(inputShapes: Shape[], attrs: Attrs, ctx: InferContext): InferOk {
  requireInputs(inputShapes, 1, 1, 'groupnorm');
  const input = inputShapes[0];
  if (input.length === 0) fail('groupnorm needs a channel dim');
  const { channels } = splitChannels(input, ctx.layout, input.length - 1, 'groupnorm');
  const declared = optInt(attrs, 'numChannels');
  if (declared !== undefined && declared !== channels) fail(`groupnorm expects ${declared} channels, but its input has ${channels}`);
  const groups = posInt(attrs, 'numGroups');
  if (channels % groups !== 0) fail(`groupnorm: ${channels} channels are not divisible into ${groups} groups`);
  return normResult(input, bool(attrs, 'affine', true) ? 2 * channels : 0, 0, ctx);
}


export const normOps: OpInfo[] = [
  { op: 'batchnorm', family: 'norm', weighted: true, summary: 'Batch normalization over the channel axis (running stats non-trainable)', infer: inferBatchNorm },
  { op: 'layernorm', family: 'norm', weighted: true, summary: 'Layer normalization over the trailing dims', infer: inferLayerNorm },
  { op: 'groupnorm', family: 'norm', weighted: true, summary: 'Group normalization over channel groups', infer: inferGroupNorm },
];
