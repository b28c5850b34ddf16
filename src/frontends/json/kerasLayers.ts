/**
 * Keras layer classes → canonical ops (src/core/ops.ts).
 *
 * Shared by the TF.js script frontend (tf.layers.conv2d → 'Conv2D') and the
 * Keras / TF.js JSON frontend (class_name 'Conv2D'). Both hand us the layer's
 * config with camelCase keys (JSON snake_case keys are converted first), so one
 * table serves both. Layout is channels_last unless the config says otherwise.
 */
import type { ActivationFn, Padding } from '../../core/ops';
import type { Attrs, AttrValue, OpKind } from '../../core/ir';

export interface MappedLayer {
  op: OpKind;
  attrs: Attrs;
  /** Set when the class is not in the table: the caller reports 'unknown-layer'. */
  unknown?: boolean;
  /** Set when the config says channels_first. */
  channelsFirst?: boolean;
}

export type LayerConfig = Record<string, unknown>;

/** snake_case → camelCase, so Keras JSON configs read like TF.js args. */
export function camelCaseKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(camelCaseKeys);
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value as Record<string, unknown>)) {
    out[key.replace(/_([a-z0-9])/g, (_m, c: string) => c.toUpperCase())] = camelCaseKeys(v);
  }
  return out;
}

const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
const bool = (v: unknown, dflt: boolean): boolean => (typeof v === 'boolean' ? v : dflt);

/** A scalar or list config value expanded to one entry per spatial dim. */
function perDim(v: unknown, rank: number, dflt: number): number[] {
  if (typeof v === 'number') return Array(rank).fill(v);
  if (Array.isArray(v) && v.length === rank && v.every((x) => typeof x === 'number')) return v as number[];
  if (Array.isArray(v) && v.length === 1 && typeof v[0] === 'number') return Array(rank).fill(v[0]);
  return Array(rank).fill(dflt);
}

function padding(v: unknown, kernel: number[], dilation: number[]): Padding {
  if (v === 'same') return 'same';
  // Causal conv1d pads (k-1)·d on the left only: same length out, written as explicit pads.
  if (v === 'causal') return kernel.map((k, i) => [(k - 1) * dilation[i], 0] as [number, number]);
  return 'valid';
}

const ACTIVATIONS: Record<string, ActivationFn> = {
  relu: 'relu',
  relu6: 'relu6',
  elu: 'elu',
  // No canonical fn for these: the nearest in cost (an element-wise exp/log family op).
  selu: 'elu',
  gelu: 'gelu',
  silu: 'silu',
  swish: 'swish',
  mish: 'silu',
  tanh: 'tanh',
  softsign: 'tanh',
  sigmoid: 'sigmoid',
  hardsigmoid: 'hardsigmoid',
  hardswish: 'hardswish',
  softmax: 'softmax',
  logsoftmax: 'log_softmax',
  softplus: 'softplus',
  leakyrelu: 'leaky_relu',
  linear: 'linear',
};

/** 'hard_sigmoid', 'hardSigmoid', 'logSoftmax' → canonical; undefined when unknown. */
export function activationFn(name: unknown): ActivationFn | undefined {
  if (typeof name !== 'string') return undefined;
  return ACTIVATIONS[name.replace(/[_\s-]/g, '').toLowerCase()];
}

function fusedActivation(cfg: LayerConfig, attrs: Attrs): Attrs {
  const fn = activationFn(cfg.activation);
  if (fn && fn !== 'linear') attrs.activation = fn;
  return attrs;
}

function isChannelsFirst(cfg: LayerConfig): boolean {
  return cfg.dataFormat === 'channelsFirst' || cfg.dataFormat === 'channels_first';
}

function convAttrs(cfg: LayerConfig, rank: number): Attrs {
  const kernel = perDim(cfg.kernelSize, rank, 1);
  const dilation = perDim(cfg.dilationRate, rank, 1);
  const attrs: Attrs = {
    rank,
    kernel,
    stride: perDim(cfg.strides, rank, 1),
    padding: padding(cfg.padding, kernel, dilation) as AttrValue,
    dilation,
    groups: num(cfg.groups) ?? 1,
    bias: bool(cfg.useBias, true),
  };
  if (num(cfg.filters) !== undefined) attrs.outChannels = num(cfg.filters)!;
  return fusedActivation(cfg, attrs);
}

function poolAttrs(cfg: LayerConfig, rank: number, mode: 'max' | 'avg'): Attrs {
  const kernel = perDim(cfg.poolSize, rank, 2);
  const stride = cfg.strides == null ? kernel : perDim(cfg.strides, rank, 1);
  return { rank, mode, kernel, stride, padding: padding(cfg.padding, kernel, kernel.map(() => 1)) as AttrValue };
}

/** ZeroPadding's 1 | [a, b] | [[a, b], [c, d]] → [[before, after], …]. */
function zeroPad(v: unknown, rank: number): Array<[number, number]> {
  if (typeof v === 'number') return Array.from({ length: rank }, () => [v, v] as [number, number]);
  if (Array.isArray(v) && v.length === rank) {
    return v.map((p) => {
      if (typeof p === 'number') return [p, p] as [number, number];
      if (Array.isArray(p) && p.length === 2) return [num(p[0]) ?? 0, num(p[1]) ?? 0] as [number, number];
      return [0, 0] as [number, number];
    });
  }
  // ZeroPadding1D's [left, right].
  if (rank === 1 && Array.isArray(v) && v.length === 2) return [[num(v[0]) ?? 0, num(v[1]) ?? 0]];
  return Array.from({ length: rank }, () => [1, 1] as [number, number]);
}

function rnn(cell: 'lstm' | 'gru' | 'rnn', cfg: LayerConfig, bidirectional: boolean): MappedLayer {
  return {
    op: 'rnn',
    attrs: {
      cell,
      // Unknown sizes stay unset: the catalogue then says which attr is missing instead of guessing.
      ...(num(cfg.units) !== undefined ? { hiddenSize: num(cfg.units)! } : {}),
      numLayers: 1,
      bidirectional,
      bias: bool(cfg.useBias, true),
      returnSequences: bool(cfg.returnSequences, false),
    },
  };
}

const RANKED = /^(Conv|MaxPooling|AveragePooling|GlobalAveragePooling|GlobalMaxPooling|ZeroPadding|UpSampling|SpatialDropout)(\d)D(Transpose)?$/;

/** Maps a Keras class name plus camelCase config onto a canonical op and attrs. Never throws. */
export function mapKerasLayer(className: string, cfg: LayerConfig): MappedLayer {
  const channelsFirst = isChannelsFirst(cfg) || undefined;
  const ranked = RANKED.exec(className);
  if (ranked) {
    const [, family, rankText, transpose] = ranked;
    const rank = Number(rankText);
    switch (family) {
      case 'Conv': {
        const attrs = convAttrs(cfg, rank);
        if (transpose) {
          attrs.transposed = true;
          if (cfg.outputPadding != null) attrs.outputPadding = perDim(cfg.outputPadding, rank, 0);
        }
        return { op: 'conv', attrs, channelsFirst };
      }
      case 'MaxPooling':
        return { op: 'pool', attrs: poolAttrs(cfg, rank, 'max'), channelsFirst };
      case 'AveragePooling':
        return { op: 'pool', attrs: poolAttrs(cfg, rank, 'avg'), channelsFirst };
      case 'GlobalAveragePooling':
      case 'GlobalMaxPooling':
        return {
          op: 'pool',
          attrs: { rank, mode: family === 'GlobalMaxPooling' ? 'max' : 'avg', global: true, keepDims: bool(cfg.keepdims ?? cfg.keepDims, false) },
          channelsFirst,
        };
      case 'ZeroPadding':
        return { op: 'zeropad', attrs: { padding: zeroPad(cfg.padding, rank) }, channelsFirst };
      case 'UpSampling': {
        const scale = perDim(cfg.size, rank, 2);
        return { op: 'upsample', attrs: { scale, mode: typeof cfg.interpolation === 'string' ? cfg.interpolation : 'nearest' }, channelsFirst };
      }
      case 'SpatialDropout':
        return { op: 'dropout', attrs: { rate: num(cfg.rate) ?? 0 } };
      default:
        break;
    }
  }
  switch (className) {
    case 'DepthwiseConv2D': {
      const attrs = convAttrs(cfg, 2);
      delete attrs.outChannels;
      attrs.depthwise = true;
      attrs.depthMultiplier = num(cfg.depthMultiplier) ?? 1;
      return { op: 'conv', attrs, channelsFirst };
    }
    case 'SeparableConv1D':
    case 'SeparableConv2D': {
      const attrs = convAttrs(cfg, className === 'SeparableConv1D' ? 1 : 2);
      delete attrs.groups;
      attrs.depthMultiplier = num(cfg.depthMultiplier) ?? 1;
      return { op: 'separable_conv', attrs, channelsFirst };
    }
    case 'Dense': {
      const attrs: Attrs = { bias: bool(cfg.useBias, true) };
      if (num(cfg.units) !== undefined) attrs.outFeatures = num(cfg.units)!;
      if (num(cfg.inputDim) !== undefined) attrs.inFeatures = num(cfg.inputDim)!;
      return { op: 'linear', attrs: fusedActivation(cfg, attrs) };
    }
    case 'Embedding':
      return { op: 'embedding', attrs: { ...(num(cfg.inputDim) !== undefined ? { numEmbeddings: num(cfg.inputDim)! } : {}), ...(num(cfg.outputDim) !== undefined ? { embeddingDim: num(cfg.outputDim)! } : {}) } };
    case 'BatchNormalization': {
      const attrs: Attrs = { scale: bool(cfg.scale, true), center: bool(cfg.center, true), trackRunningStats: true };
      const axis = Array.isArray(cfg.axis) ? cfg.axis[0] : cfg.axis;
      attrs.axis = num(axis) ?? -1;
      return { op: 'batchnorm', attrs };
    }
    case 'LayerNormalization':
      return { op: 'layernorm', attrs: { scale: bool(cfg.scale, true), center: bool(cfg.center, true) } };
    case 'Flatten':
      return { op: 'flatten', attrs: { startDim: 1, endDim: -1 }, channelsFirst };
    case 'Reshape':
      return Array.isArray(cfg.targetShape)
        ? { op: 'reshape', attrs: { shape: cfg.targetShape.map((d) => (typeof d === 'number' ? d : -1)) } }
        : { op: 'opaque', attrs: { reason: 'reshape target shape not stated' } };
    case 'Permute':
      // Keras dims are 1-based and exclude batch; the IR's include it.
      return Array.isArray(cfg.dims)
        ? { op: 'permute', attrs: { dims: [0, ...cfg.dims.map((d) => num(d) ?? 0)] } }
        : { op: 'opaque', attrs: { reason: 'permute dims not stated' } };
    case 'Dropout':
    case 'GaussianDropout':
    case 'AlphaDropout':
      return { op: 'dropout', attrs: { rate: num(cfg.rate) ?? 0 } };
    case 'GaussianNoise':
    case 'Masking':
    case 'Rescaling':
    case 'Normalization':
    case 'ActivityRegularization':
      return { op: 'identity', attrs: {} };
    case 'Activation': {
      const fn = activationFn(cfg.activation);
      return fn ? { op: 'activation', attrs: { fn } } : { op: 'opaque', attrs: { reason: `activation '${String(cfg.activation)}'` }, unknown: true };
    }
    case 'ReLU':
      return { op: 'activation', attrs: { fn: num(cfg.maxValue) === 6 ? 'relu6' : 'relu' } };
    case 'ThresholdedReLU':
      return { op: 'activation', attrs: { fn: 'relu' } };
    case 'LeakyReLU':
    case 'PReLU':
      return { op: 'activation', attrs: { fn: 'leaky_relu' } };
    case 'ELU':
      return { op: 'activation', attrs: { fn: 'elu' } };
    case 'Softmax':
      return { op: 'activation', attrs: { fn: 'softmax', axis: num(Array.isArray(cfg.axis) ? cfg.axis[0] : cfg.axis) ?? -1 } };
    case 'Add':
    // Element-wise ops with the same shape and no weights cost what an add costs.
    case 'Subtract':
    case 'Average':
    case 'Maximum':
    case 'Minimum':
      return { op: 'add', attrs: {} };
    case 'Multiply':
      return { op: 'mul', attrs: {} };
    case 'Concatenate':
      return { op: 'concat', attrs: { axis: num(cfg.axis) ?? -1 } };
    case 'LSTM':
      return rnn('lstm', cfg, false);
    case 'GRU':
      return rnn('gru', cfg, false);
    case 'SimpleRNN':
      return rnn('rnn', cfg, false);
    case 'Bidirectional': {
      const inner = cfg.layer as { className?: unknown; config?: unknown } | undefined;
      const innerCfg = (inner?.config ?? {}) as LayerConfig;
      const cell = inner?.className === 'LSTM' ? 'lstm' : inner?.className === 'GRU' ? 'gru' : inner?.className === 'SimpleRNN' ? 'rnn' : undefined;
      if (!cell) return { op: 'opaque', attrs: { reason: 'Bidirectional wrapper of an unknown layer' }, unknown: true };
      return rnn(cell, innerCfg, true);
    }
    case 'MultiHeadAttention': {
      const attrs: Attrs = { numHeads: num(cfg.numHeads) ?? 1, bias: bool(cfg.useBias, true) };
      if (num(cfg.keyDim) !== undefined) attrs.keyDim = num(cfg.keyDim)!;
      if (num(cfg.valueDim) !== undefined) attrs.vdim = num(cfg.valueDim)!;
      return { op: 'mha', attrs };
    }
    default:
      return { op: 'opaque', attrs: { reason: `unknown Keras layer class '${className}'` }, unknown: true };
  }
}

/** TF.js `tf.layers.<factory>` → Keras class name (aliases included). */
export const TFJS_FACTORY_CLASSES: Readonly<Record<string, string>> = {
  conv1d: 'Conv1D',
  conv2d: 'Conv2D',
  conv3d: 'Conv3D',
  conv2dTranspose: 'Conv2DTranspose',
  conv3dTranspose: 'Conv3DTranspose',
  depthwiseConv2d: 'DepthwiseConv2D',
  separableConv2d: 'SeparableConv2D',
  cropping2D: 'Cropping2D',
  upSampling2d: 'UpSampling2D',
  dense: 'Dense',
  embedding: 'Embedding',
  batchNormalization: 'BatchNormalization',
  layerNormalization: 'LayerNormalization',
  maxPooling1d: 'MaxPooling1D',
  maxPooling2d: 'MaxPooling2D',
  maxPooling3d: 'MaxPooling3D',
  maxPool1d: 'MaxPooling1D',
  maxPool2d: 'MaxPooling2D',
  averagePooling1d: 'AveragePooling1D',
  averagePooling2d: 'AveragePooling2D',
  averagePooling3d: 'AveragePooling3D',
  avgPool1d: 'AveragePooling1D',
  avgPool2d: 'AveragePooling2D',
  avgPooling1d: 'AveragePooling1D',
  avgPooling2d: 'AveragePooling2D',
  globalAveragePooling1d: 'GlobalAveragePooling1D',
  globalAveragePooling2d: 'GlobalAveragePooling2D',
  globalMaxPooling1d: 'GlobalMaxPooling1D',
  globalMaxPooling2d: 'GlobalMaxPooling2D',
  globalMaxPool1d: 'GlobalMaxPooling1D',
  globalMaxPool2d: 'GlobalMaxPooling2D',
  flatten: 'Flatten',
  reshape: 'Reshape',
  permute: 'Permute',
  repeatVector: 'RepeatVector',
  dropout: 'Dropout',
  spatialDropout1d: 'SpatialDropout1D',
  gaussianDropout: 'GaussianDropout',
  gaussianNoise: 'GaussianNoise',
  alphaDropout: 'AlphaDropout',
  masking: 'Masking',
  rescaling: 'Rescaling',
  activation: 'Activation',
  reLU: 'ReLU',
  leakyReLU: 'LeakyReLU',
  prelu: 'PReLU',
  elu: 'ELU',
  softmax: 'Softmax',
  thresholdedReLU: 'ThresholdedReLU',
  add: 'Add',
  subtract: 'Subtract',
  average: 'Average',
  maximum: 'Maximum',
  minimum: 'Minimum',
  multiply: 'Multiply',
  concatenate: 'Concatenate',
  dot: 'Dot',
  zeroPadding2d: 'ZeroPadding2D',
  lstm: 'LSTM',
  gru: 'GRU',
  simpleRNN: 'SimpleRNN',
  bidirectional: 'Bidirectional',
  timeDistributed: 'TimeDistributed',
  inputLayer: 'InputLayer',
};
