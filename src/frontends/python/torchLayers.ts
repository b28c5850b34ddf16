/**
 * torch.nn layer types → canonical op kinds and attrs (src/core/ops.ts):
 * constructor signatures as PyTorch documents them, scalars expanded per
 * spatial dim, symmetric padding as [[p, p], …].
 */
import type { AttrValue, Attrs, OpKind } from '../../core/ir';
import { toNumber, truthy, type Value } from './values';
import { toAttr } from './attrValues';

export type Args = Map<string, Value>;

/** Binds positional and keyword arguments to a documented signature. */
export function bindArgs(params: string[], args: Value[], kwargs: Map<string, Value>): Args {
  const out: Args = new Map();
  params.forEach((p, i) => {
    if (i < args.length) out.set(p, args[i]);
  });
  for (const [k, v] of kwargs) out.set(k, v);
  return out;
}

export function numArg(a: Args, name: string, dflt?: number): number | undefined {
  const v = a.get(name);
  if (!v || v.k === 'none') return dflt;
  return toNumber(v) ?? dflt;
}

export function boolArg(a: Args, name: string, dflt: boolean): boolean {
  const v = a.get(name);
  if (!v) return dflt;
  return truthy(v) ?? dflt;
}

/** Scalar or tuple → one number per spatial dim; undefined when not literal. */
export function spatial(v: Value | undefined, rank: number, dflt?: number): number[] | undefined {
  if (!v || v.k === 'none') return dflt === undefined ? undefined : Array(rank).fill(dflt);
  const n = toNumber(v);
  if (n !== undefined) return Array(rank).fill(n);
  const a = toAttr(v);
  if (Array.isArray(a) && a.every((x) => typeof x === 'number')) return a.length === rank ? (a as number[]) : Array(rank).fill(a[0]);
  return undefined;
}

export function torchPadding(v: Value | undefined, rank: number): AttrValue {
  if (v?.k === 'str') return v.v === 'same' ? 'same' : 'valid';
  const p = spatial(v, rank, 0) ?? Array(rank).fill(0);
  return p.map((x) => [x, x]);
}

interface LayerDef {
  params: string[];
  build(a: Args, type: string): { op: OpKind; attrs: Attrs };
}

const rankOf = (type: string): number => Number(/([123])d$/.exec(type)?.[1] ?? 2);

const conv = (transposed: boolean, lazy: boolean): LayerDef => ({
  params: lazy
    ? ['out_channels', 'kernel_size', 'stride', 'padding', transposed ? 'output_padding' : 'dilation', 'groups', 'bias', transposed ? 'dilation' : 'padding_mode']
    : ['in_channels', 'out_channels', 'kernel_size', 'stride', 'padding', transposed ? 'output_padding' : 'dilation', 'groups', 'bias', transposed ? 'dilation' : 'padding_mode'],
  build(a, type) {
    const rank = rankOf(type);
    const attrs: Attrs = {
      rank,
      outChannels: numArg(a, 'out_channels') ?? null,
      kernel: spatial(a.get('kernel_size'), rank) ?? null,
      stride: spatial(a.get('stride'), rank, 1) ?? Array(rank).fill(1),
      padding: torchPadding(a.get('padding'), rank),
      dilation: spatial(a.get('dilation'), rank, 1) ?? Array(rank).fill(1),
      groups: numArg(a, 'groups', 1) ?? 1,
      bias: boolArg(a, 'bias', true),
    };
    const inCh = numArg(a, 'in_channels');
    if (inCh !== undefined) attrs.inChannels = inCh;
    if (transposed) {
      attrs.transposed = true;
      attrs.outputPadding = spatial(a.get('output_padding'), rank, 0) ?? Array(rank).fill(0);
    }
    return { op: 'conv', attrs: dropNulls(attrs) };
  },
});

const pool = (mode: 'max' | 'avg', adaptive: boolean): LayerDef => ({
  params: adaptive ? ['output_size'] : mode === 'max' ? ['kernel_size', 'stride', 'padding', 'dilation', 'return_indices', 'ceil_mode'] : ['kernel_size', 'stride', 'padding', 'ceil_mode'],
  build(a, type): { op: OpKind; attrs: Attrs } {
    const rank = rankOf(type);
    if (adaptive) {
      const v = a.get('output_size');
      const outputSize = v && (v.k === 'tuple' || v.k === 'list') ? v.items.map((i) => toNumber(i) ?? null) : Array(rank).fill(toNumber(v) ?? 1);
      return { op: 'pool', attrs: { rank, mode, outputSize } };
    }
    const kernel = spatial(a.get('kernel_size'), rank) ?? Array(rank).fill(2);
    const strideV = a.get('stride');
    return {
      op: 'pool',
      attrs: {
        rank,
        mode,
        kernel,
        stride: strideV && strideV.k !== 'none' ? spatial(strideV, rank) ?? kernel : kernel,
        padding: torchPadding(a.get('padding'), rank),
        dilation: spatial(a.get('dilation'), rank, 1) ?? Array(rank).fill(1),
        ceilMode: boolArg(a, 'ceil_mode', false),
      },
    };
  },
});

const act = (fn: string, params: string[] = ['inplace'], axisParam?: string): LayerDef => ({
  params,
  build(a) {
    const attrs: Attrs = { fn };
    if (axisParam) attrs.axis = numArg(a, axisParam, -1) ?? -1;
    return { op: 'activation', attrs };
  },
});

const dropout: LayerDef = { params: ['p', 'inplace'], build: (a) => ({ op: 'dropout', attrs: { rate: numArg(a, 'p', 0.5) ?? 0.5 } }) };
const batchnorm: LayerDef = {
  params: ['num_features', 'eps', 'momentum', 'affine', 'track_running_stats'],
  build: (a) => {
    const affine = boolArg(a, 'affine', true);
    return { op: 'batchnorm', attrs: dropNulls({ numFeatures: numArg(a, 'num_features') ?? null, scale: affine, center: affine, trackRunningStats: boolArg(a, 'track_running_stats', true), axis: 1 }) };
  },
};
const instancenorm: LayerDef = {
  params: ['num_features', 'eps', 'momentum', 'affine', 'track_running_stats'],
  build: (a) => {
    const n = numArg(a, 'num_features') ?? 1;
    return { op: 'groupnorm', attrs: { numGroups: n, numChannels: n, affine: boolArg(a, 'affine', false) } };
  },
};
const rnn = (cell: 'lstm' | 'gru' | 'rnn'): LayerDef => ({
  params: cell === 'rnn' ? ['input_size', 'hidden_size', 'num_layers', 'nonlinearity', 'bias', 'batch_first', 'dropout', 'bidirectional'] : ['input_size', 'hidden_size', 'num_layers', 'bias', 'batch_first', 'dropout', 'bidirectional'],
  build: (a) => ({
    op: 'rnn',
    attrs: dropNulls({
      cell,
      inputSize: numArg(a, 'input_size') ?? null,
      hiddenSize: numArg(a, 'hidden_size') ?? 0,
      numLayers: numArg(a, 'num_layers', 1) ?? 1,
      bidirectional: boolArg(a, 'bidirectional', false),
      bias: boolArg(a, 'bias', true),
      returnSequences: true,
      batchFirst: boolArg(a, 'batch_first', false),
    }),
  }),
});
const pad: LayerDef = {
  params: ['padding', 'value'],
  build: (a, type) => {
    const rank = rankOf(type);
    const v = a.get('padding');
    const n = toNumber(v);
    const flat = n !== undefined ? Array(2 * rank).fill(n) : ((toAttr(v) as number[] | undefined) ?? Array(2 * rank).fill(0));
    // PyTorch lists pads last dim first: (left, right, top, bottom, …).
    const padding: Array<[number, number]> = [];
    for (let d = 0; d < rank; d++) padding.unshift([flat[2 * d] ?? 0, flat[2 * d + 1] ?? 0]);
    return { op: 'zeropad', attrs: { padding } };
  },
};
const upsample = (mode?: string): LayerDef => ({
  params: ['size', 'scale_factor', 'mode', 'align_corners'],
  build: (a) => {
    const attrs: Attrs = {};
    const size = toAttr(a.get('size'));
    const scale = toAttr(a.get('scale_factor'));
    if (typeof size === 'number') attrs.size = [size, size];
    else if (Array.isArray(size)) attrs.size = size;
    if (typeof scale === 'number') attrs.scale = [scale, scale];
    else if (Array.isArray(scale)) attrs.scale = scale;
    attrs.mode = mode ?? (a.get('mode')?.k === 'str' ? (a.get('mode') as { v: string }).v : 'nearest');
    return { op: 'upsample', attrs };
  },
});

/** `normalized_shape` as written: one int or a list (null when the code computes it). */
function normalizedShape(a: Args): number[] | null {
  const shape = a.get('normalized_shape');
  const n = toNumber(shape);
  return n !== undefined ? [n] : ((toAttr(shape) as number[] | undefined) ?? null);
}

export const TORCH_LAYERS: Record<string, LayerDef> = {
  Linear: {
    params: ['in_features', 'out_features', 'bias'],
    build: (a) => ({ op: 'linear', attrs: dropNulls({ inFeatures: numArg(a, 'in_features') ?? null, outFeatures: numArg(a, 'out_features') ?? 0, bias: boolArg(a, 'bias', true) }) }),
  },
  LazyLinear: { params: ['out_features', 'bias'], build: (a) => ({ op: 'linear', attrs: { outFeatures: numArg(a, 'out_features') ?? 0, bias: boolArg(a, 'bias', true) } }) },
  Embedding: {
    params: ['num_embeddings', 'embedding_dim', 'padding_idx'],
    build: (a) => ({ op: 'embedding', attrs: { numEmbeddings: numArg(a, 'num_embeddings') ?? 0, embeddingDim: numArg(a, 'embedding_dim') ?? 0 } }),
  },
  LayerNorm: {
    params: ['normalized_shape', 'eps', 'elementwise_affine', 'bias'],
    build: (a) => {
      const affine = boolArg(a, 'elementwise_affine', true);
      return { op: 'layernorm', attrs: dropNulls({ normalizedShape: normalizedShape(a), scale: affine, center: affine && boolArg(a, 'bias', true) }) };
    },
  },
  /**
   * torch ≥ 2.4. Its first releases ran a composite of eager ops (rms_norm was CompositeImplicitAutograd); later
   * ones dispatch CUDA to one fused kernel (aten::_fused_rms_norm), priced here as nn.LayerNorm is.
   */
  RMSNorm: {
    params: ['normalized_shape', 'eps', 'elementwise_affine'],
    build: (a) => ({ op: 'layernorm', attrs: dropNulls({ normalizedShape: normalizedShape(a), scale: boolArg(a, 'elementwise_affine', true), center: false, rms: true }) }),
  },
  GroupNorm: {
    params: ['num_groups', 'num_channels', 'eps', 'affine'],
    build: (a) => ({ op: 'groupnorm', attrs: dropNulls({ numGroups: numArg(a, 'num_groups') ?? 1, numChannels: numArg(a, 'num_channels') ?? null, affine: boolArg(a, 'affine', true) }) }),
  },
  Flatten: { params: ['start_dim', 'end_dim'], build: (a) => ({ op: 'flatten', attrs: { startDim: numArg(a, 'start_dim', 1) ?? 1, endDim: numArg(a, 'end_dim', -1) ?? -1 } }) },
  Identity: { params: [], build: () => ({ op: 'identity', attrs: {} }) },
  // The reshape target depends on the input's rank: torchRuntime completes it when the module is called.
  Unflatten: {
    params: ['dim', 'unflattened_size'],
    build: (a) => ({ op: 'reshape', attrs: { dim: numArg(a, 'dim', 1) ?? 1, sizes: (toAttr(a.get('unflattened_size')) as number[] | undefined) ?? [] } }),
  },
  MultiheadAttention: {
    params: ['embed_dim', 'num_heads', 'dropout', 'bias', 'add_bias_kv', 'add_zero_attn', 'kdim', 'vdim', 'batch_first'],
    build: (a) => ({
      op: 'mha',
      attrs: dropNulls({ embedDim: numArg(a, 'embed_dim') ?? 0, numHeads: numArg(a, 'num_heads') ?? 1, kdim: numArg(a, 'kdim') ?? null, vdim: numArg(a, 'vdim') ?? null, bias: boolArg(a, 'bias', true) }),
    }),
  },
  LSTM: rnn('lstm'),
  GRU: rnn('gru'),
  RNN: rnn('rnn'),
  ReLU: act('relu'),
  ReLU6: act('relu6'),
  LeakyReLU: act('leaky_relu', ['negative_slope', 'inplace']),
  ELU: act('elu', ['alpha', 'inplace']),
  GELU: act('gelu', ['approximate']),
  SiLU: act('silu'),
  Tanh: act('tanh', []),
  Sigmoid: act('sigmoid', []),
  Softmax: act('softmax', ['dim'], 'dim'),
  LogSoftmax: act('log_softmax', ['dim'], 'dim'),
  Softplus: act('softplus', ['beta', 'threshold']),
  Hardswish: act('hardswish'),
  Hardsigmoid: act('hardsigmoid'),
  Dropout: dropout,
  Dropout1d: dropout,
  Dropout2d: dropout,
  Dropout3d: dropout,
  AlphaDropout: dropout,
  BatchNorm1d: batchnorm,
  BatchNorm2d: batchnorm,
  BatchNorm3d: batchnorm,
  SyncBatchNorm: batchnorm,
  InstanceNorm1d: instancenorm,
  InstanceNorm2d: instancenorm,
  InstanceNorm3d: instancenorm,
  Upsample: upsample(),
  UpsamplingNearest2d: upsample('nearest'),
  UpsamplingBilinear2d: upsample('bilinear'),
};
for (const r of [1, 2, 3]) {
  TORCH_LAYERS[`Conv${r}d`] = conv(false, false);
  TORCH_LAYERS[`ConvTranspose${r}d`] = conv(true, false);
  TORCH_LAYERS[`LazyConv${r}d`] = conv(false, true);
  TORCH_LAYERS[`MaxPool${r}d`] = pool('max', false);
  TORCH_LAYERS[`AvgPool${r}d`] = pool('avg', false);
  TORCH_LAYERS[`AdaptiveAvgPool${r}d`] = pool('avg', true);
  TORCH_LAYERS[`AdaptiveMaxPool${r}d`] = pool('max', true);
  for (const p of ['ZeroPad', 'ConstantPad', 'ReflectionPad', 'ReplicationPad', 'CircularPad']) TORCH_LAYERS[`${p}${r}d`] = pad;
}

/** Builds a torch.nn layer's op and attrs; undefined for types not in the table. */
export function buildTorchLayer(type: string, args: Value[], kwargs: Map<string, Value>): { op: OpKind; attrs: Attrs } | undefined {
  const def = TORCH_LAYERS[type];
  if (!def) return undefined;
  return def.build(bindArgs(def.params, args, kwargs), type);
}

/** Copies without the null entries (deleting keys would push the object into V8's slow dictionary mode). */
function dropNulls(attrs: Attrs): Attrs {
  const out: Attrs = {};
  for (const k in attrs) if (attrs[k] !== null) out[k] = attrs[k];
  return out;
}

