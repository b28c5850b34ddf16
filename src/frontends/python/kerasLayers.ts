/**
 * keras.layers types → canonical op kinds and attrs (channels_last). A layer's
 * own `activation='relu'` is recorded as attrs.activation on that layer.
 */
import type { Attrs, OpKind } from '../../core/ir';
import { bindArgs, boolArg, numArg, spatial, type Args } from './torchLayers';
import { toNumber, type Value } from './values';
import { toAttr } from './attrValues';

interface KerasDef {
  params: string[];
  build(a: Args, type: string): { op: OpKind; attrs: Attrs };
}

const rankOf = (type: string): number => Number(/([123])D/.exec(type)?.[1] ?? 2);

function kerasPadding(a: Args): 'same' | 'valid' {
  const p = a.get('padding');
  return p?.k === 'str' && p.v.toLowerCase() === 'same' ? 'same' : 'valid';
}

const ACTIVATION_NAMES: Record<string, string> = {
  relu: 'relu', relu6: 'relu6', leaky_relu: 'leaky_relu', elu: 'elu', gelu: 'gelu', silu: 'silu', swish: 'swish', tanh: 'tanh', sigmoid: 'sigmoid',
  softmax: 'softmax', log_softmax: 'log_softmax', softplus: 'softplus', hard_swish: 'hardswish', hardswish: 'hardswish', hard_sigmoid: 'hardsigmoid',
  hardsigmoid: 'hardsigmoid', linear: 'linear',
};

export function activationName(v: Value | undefined): string | undefined {
  if (!v || v.k === 'none') return undefined;
  if (v.k === 'str') return ACTIVATION_NAMES[v.v.toLowerCase()] ?? v.v;
  if (v.k === 'lib') return ACTIVATION_NAMES[v.path.split('.').pop() ?? ''];
  return undefined;
}

const conv = (kind: 'conv' | 'transpose' | 'depthwise' | 'separable'): KerasDef => ({
  params:
    kind === 'depthwise'
      ? ['kernel_size', 'strides', 'padding', 'depth_multiplier', 'data_format', 'dilation_rate', 'activation', 'use_bias']
      : kind === 'separable'
        ? ['filters', 'kernel_size', 'strides', 'padding', 'data_format', 'dilation_rate', 'depth_multiplier', 'activation', 'use_bias']
        : kind === 'transpose'
          ? ['filters', 'kernel_size', 'strides', 'padding', 'output_padding', 'data_format', 'dilation_rate', 'activation', 'use_bias']
          : ['filters', 'kernel_size', 'strides', 'padding', 'data_format', 'dilation_rate', 'groups', 'activation', 'use_bias'],
  build(a, type) {
    const rank = rankOf(type);
    const attrs: Attrs = {
      rank,
      kernel: spatial(a.get('kernel_size'), rank) ?? Array(rank).fill(1),
      stride: spatial(a.get('strides'), rank, 1) ?? Array(rank).fill(1),
      padding: kerasPadding(a),
      dilation: spatial(a.get('dilation_rate'), rank, 1) ?? Array(rank).fill(1),
      bias: boolArg(a, 'use_bias', true),
    };
    const filters = numArg(a, 'filters');
    if (kind === 'separable') return { op: 'separable_conv', attrs: { ...attrs, outChannels: filters ?? 0, depthMultiplier: numArg(a, 'depth_multiplier', 1) ?? 1 } };
    if (filters !== undefined) attrs.outChannels = filters;
    attrs.groups = numArg(a, 'groups', 1) ?? 1;
    if (kind === 'depthwise') {
      attrs.depthwise = true;
      attrs.depthMultiplier = numArg(a, 'depth_multiplier', 1) ?? 1;
    }
    if (kind === 'transpose') {
      attrs.transposed = true;
      // Absent or None is not 0: Keras then infers the length from the padding mode (see core conv).
      const outputPadding = spatial(a.get('output_padding'), rank);
      if (outputPadding) attrs.outputPadding = outputPadding;
    }
    return { op: 'conv', attrs };
  },
});

const pool = (mode: 'max' | 'avg', global: boolean): KerasDef => ({
  params: global ? ['data_format', 'keepdims'] : ['pool_size', 'strides', 'padding', 'data_format'],
  build(a, type): { op: OpKind; attrs: Attrs } {
    const rank = rankOf(type);
    if (global) return { op: 'pool', attrs: { rank, mode, global: true, keepDims: boolArg(a, 'keepdims', false) } };
    const kernel = spatial(a.get('pool_size'), rank, 2) ?? Array(rank).fill(2);
    const s = a.get('strides');
    return { op: 'pool', attrs: { rank, mode, kernel, stride: s && s.k !== 'none' ? spatial(s, rank) ?? kernel : kernel, padding: kerasPadding(a) } };
  },
});

const simple = (op: OpKind, attrs: Attrs = {}, params: string[] = []): KerasDef => ({ params, build: () => ({ op, attrs: { ...attrs } }) });
const dropout: KerasDef = { params: ['rate'], build: (a) => ({ op: 'dropout', attrs: { rate: numArg(a, 'rate', 0.5) ?? 0.5 } }) };
const rnn = (cell: 'lstm' | 'gru' | 'rnn'): KerasDef => ({
  params: ['units', 'activation'],
  build: (a) => ({
    op: 'rnn',
    attrs: { cell, hiddenSize: numArg(a, 'units') ?? 0, numLayers: 1, bidirectional: false, bias: boolArg(a, 'use_bias', true), returnSequences: boolArg(a, 'return_sequences', false) },
  }),
});
const norm = (op: 'batchnorm' | 'layernorm'): KerasDef => ({
  params: ['axis', 'momentum', 'epsilon', 'center', 'scale'],
  build: (a) => {
    const attrs: Attrs = { scale: boolArg(a, 'scale', true), center: boolArg(a, 'center', true) };
    if (op === 'batchnorm') {
      attrs.trackRunningStats = true;
      attrs.axis = numArg(a, 'axis', -1) ?? -1;
    }
    return { op, attrs };
  },
});

export const KERAS_LAYERS: Record<string, KerasDef> = {
  Dense: { params: ['units', 'activation', 'use_bias'], build: (a) => ({ op: 'linear', attrs: { outFeatures: numArg(a, 'units') ?? 0, bias: boolArg(a, 'use_bias', true) } }) },
  Embedding: { params: ['input_dim', 'output_dim'], build: (a) => ({ op: 'embedding', attrs: { numEmbeddings: numArg(a, 'input_dim') ?? 0, embeddingDim: numArg(a, 'output_dim') ?? 0 } }) },
  BatchNormalization: norm('batchnorm'),
  LayerNormalization: norm('layernorm'),
  GroupNormalization: {
    params: ['groups', 'axis', 'epsilon', 'center', 'scale'],
    build: (a) => ({ op: 'groupnorm', attrs: { numGroups: numArg(a, 'groups', 32) ?? 32, affine: boolArg(a, 'scale', true) } }),
  },
  Flatten: simple('flatten', { startDim: 1, endDim: -1 }),
  Reshape: { params: ['target_shape'], build: (a) => ({ op: 'reshape', attrs: { shape: (toAttr(a.get('target_shape')) as number[]) ?? [] } }) },
  Permute: { params: ['dims'], build: (a) => ({ op: 'permute', attrs: { dims: [0, ...(((toAttr(a.get('dims')) as number[]) ?? []).map(Number))] } }) },
  Dropout: dropout,
  SpatialDropout1D: dropout,
  SpatialDropout2D: dropout,
  SpatialDropout3D: dropout,
  Activation: { params: ['activation'], build: (a) => ({ op: 'activation', attrs: { fn: activationName(a.get('activation')) ?? 'linear' } }) },
  ReLU: { params: ['max_value'], build: (a) => ({ op: 'activation', attrs: { fn: numArg(a, 'max_value') === 6 ? 'relu6' : 'relu' } }) },
  LeakyReLU: simple('activation', { fn: 'leaky_relu' }),
  ELU: simple('activation', { fn: 'elu' }),
  Softmax: { params: ['axis'], build: (a) => ({ op: 'activation', attrs: { fn: 'softmax', axis: numArg(a, 'axis', -1) ?? -1 } }) },
  Add: simple('add'),
  Subtract: simple('add'),
  Average: simple('add'),
  Multiply: simple('mul'),
  Concatenate: { params: ['axis'], build: (a) => ({ op: 'concat', attrs: { axis: numArg(a, 'axis', -1) ?? -1 } }) },
  MultiHeadAttention: {
    params: ['num_heads', 'key_dim', 'value_dim', 'dropout', 'use_bias'],
    build: (a) => {
      const heads = numArg(a, 'num_heads') ?? 1;
      const keyDim = numArg(a, 'key_dim') ?? 0;
      return { op: 'mha', attrs: { numHeads: heads, keyDim, embedDim: heads * keyDim, bias: boolArg(a, 'use_bias', true) } };
    },
  },
  LSTM: rnn('lstm'),
  GRU: rnn('gru'),
  SimpleRNN: rnn('rnn'),
  Identity: simple('identity'),
  InputLayer: simple('identity'),
  Rescaling: simple('identity'),
  Normalization: simple('identity'),
  RandomFlip: simple('identity'),
  RandomRotation: simple('identity'),
  RandomZoom: simple('identity'),
  RandomTranslation: simple('identity'),
  RandomContrast: simple('identity'),
};
for (const r of [1, 2, 3]) {
  KERAS_LAYERS[`Conv${r}D`] = conv('conv');
  KERAS_LAYERS[`Conv${r}DTranspose`] = conv('transpose');
  KERAS_LAYERS[`MaxPooling${r}D`] = KERAS_LAYERS[`MaxPool${r}D`] = pool('max', false);
  KERAS_LAYERS[`AveragePooling${r}D`] = KERAS_LAYERS[`AvgPool${r}D`] = pool('avg', false);
  KERAS_LAYERS[`GlobalAveragePooling${r}D`] = KERAS_LAYERS[`GlobalAvgPool${r}D`] = pool('avg', true);
  KERAS_LAYERS[`GlobalMaxPooling${r}D`] = KERAS_LAYERS[`GlobalMaxPool${r}D`] = pool('max', true);
  KERAS_LAYERS[`ZeroPadding${r}D`] = {
    params: ['padding'],
    build: (a, type) => {
      const rank = rankOf(type);
      const v = a.get('padding');
      const n = toNumber(v);
      const raw = toAttr(v);
      let padding: Array<[number, number]> = Array.from({ length: rank }, () => [n ?? 1, n ?? 1]);
      if (Array.isArray(raw)) padding = raw.map((p) => (Array.isArray(p) ? [Number(p[0]), Number(p[1])] : [Number(p), Number(p)]));
      return { op: 'zeropad', attrs: { padding } };
    },
  };
  KERAS_LAYERS[`UpSampling${r}D`] = {
    params: ['size'],
    build: (a, type) => ({ op: 'upsample', attrs: { scale: spatial(a.get('size'), rankOf(type), 2) ?? [2, 2], mode: 'nearest' } }),
  };
}
KERAS_LAYERS.DepthwiseConv2D = conv('depthwise');
KERAS_LAYERS.DepthwiseConv1D = conv('depthwise');
KERAS_LAYERS.SeparableConv2D = conv('separable');
KERAS_LAYERS.SeparableConv1D = conv('separable');

/** Keras' own to_snake_case, used for automatic layer names. */
export function kerasSnake(name: string): string {
  return name.replace(/(.)([A-Z][a-z]+)/g, '$1_$2').replace(/([a-z])([A-Z])/g, '$1_$2').toLowerCase();
}

export function buildKerasLayer(type: string, args: Value[], kwargs: Map<string, Value>): { op: OpKind; attrs: Attrs } | undefined {
  const def = KERAS_LAYERS[type];
  if (!def) return undefined;
  const a = bindArgs(def.params, args, kwargs);
  const built = def.build(a, type);
  const act = activationName(a.get('activation'));
  if (act && act !== 'linear' && type !== 'Activation') built.attrs.activation = act;
  return built;
}
