/**
 * Canonical attributes per op kind: the contract between frontends (which
 * map nn.Conv2d / layers.Conv2D / tf.layers.conv2d onto these) and the
 * catalogue (which infers shapes and workload from them).
 *
 * Rules every frontend follows:
 * - Spatial lists are given per spatial dim (length = rank), expanded from
 *   scalars: kernel_size=3 on Conv2d → kernel [3, 3].
 * - `padding` is either 'same' | 'valid' (Keras/TF.js, and PyTorch's string
 *   forms) or explicit per-side pads [[before, after], …] per spatial dim;
 *   PyTorch's symmetric `padding=1` becomes [[1,1],[1,1]].
 * - Channel counts the code does not state (Keras filters-only layers, LazyConv)
 *   are left undefined: the catalogue takes them from the input shape.
 * - Axes include the batch dimension, as in the framework (see ir.ts).
 * - Any op may carry `extraParams: N`: trainable parameters the layer uses that
 *   its op does not own (an nn.Parameter class token or position table added
 *   in forward); analyzeModel adds them to the layer's params.
 * - Any op may carry `oncePerForward: true`: its work is done once per forward
 *   whatever the batch (DeBERTa's projections of its relative-position
 *   embeddings), so its workload is per forward, not per sample
 *   (core/oncePerForward.ts).
 * - Mixture-of-experts layers carry `expert: {index, count}` (an expert's own
 *   layers) or `moe: {experts, topK, role: 'router'|'dispatch'|'combine'}`;
 *   the catalogue ignores both, the planner may place experts by them.
 */
import type { OpKind, PinnedDtype } from './ir';

export type Padding = 'same' | 'valid' | Array<[number, number]>;

/**
 * A parameter tensor read in forward (nn.Parameter): `shape` is its full shape;
 * `batched` when its leading 1 stands for the batch (a [1, 197, 768] position
 * embedding added to [B, 197, 768]), so the output shape drops it.
 */
export interface ParameterAttrs {
  shape: number[];
  batched?: boolean;
  /**
   * Read through a constant index (`table[index]`: a relative position bias table indexed by a
   * precomputed index): the output has this shape while the params stay the table's elements.
   */
  gathered?: number[];
  /** A constant buffer (Swin V2's relative coordinates table fed to an MLP): no params. */
  constant?: boolean;
}

export interface ConvAttrs {
  /** 1, 2 or 3 spatial dims. */
  rank: number;
  inChannels?: number;
  /** Undefined for Keras DepthwiseConv2D, where out = in × depthMultiplier. */
  outChannels?: number;
  kernel: number[];
  stride: number[];
  padding: Padding;
  dilation: number[];
  groups: number;
  /** Keras DepthwiseConv2D: groups = in channels, out = in × depthMultiplier. */
  depthwise?: boolean;
  depthMultiplier?: number;
  bias: boolean;
  transposed?: boolean;
  /** ConvTranspose output_padding per spatial dim. */
  outputPadding?: number[];
}

/** Keras SeparableConv2D / TF.js separableConv2d: depthwise (× multiplier) then 1×1 pointwise, one bias on the output. */
export interface SeparableConvAttrs extends Omit<ConvAttrs, 'groups' | 'depthwise' | 'transposed' | 'outputPadding'> {
  outChannels: number;
  depthMultiplier: number;
}

export interface LinearAttrs {
  inFeatures?: number;
  outFeatures: number;
  bias: boolean;
}

export interface EmbeddingAttrs {
  numEmbeddings: number;
  embeddingDim: number;
}

export interface BatchNormAttrs {
  numFeatures?: number;
  /** Trainable gamma/beta (PyTorch affine, Keras center/scale). */
  scale: boolean;
  center: boolean;
  /** Running mean/var kept as non-trainable state. */
  trackRunningStats: boolean;
  /** Channel axis including batch; default 1 for channels_first, -1 for channels_last. */
  axis?: number;
}

export interface LayerNormAttrs {
  /** Trailing dims normalised; undefined = last dim of the input. */
  normalizedShape?: number[];
  scale: boolean;
  center: boolean;
}

export interface GroupNormAttrs {
  numGroups: number;
  numChannels?: number;
  affine: boolean;
}

export interface PoolAttrs {
  rank: number;
  mode: 'max' | 'avg';
  /** Ordinary pooling; absent for adaptive/global. */
  kernel?: number[];
  stride?: number[];
  padding?: Padding;
  dilation?: number[];
  ceilMode?: boolean;
  /** Adaptive pooling target size per spatial dim (null = keep that dim). */
  outputSize?: Array<number | null>;
  /** Global pooling: spatial dims removed (or kept as 1 when keepDims). */
  global?: boolean;
  keepDims?: boolean;
}

export interface FlattenAttrs {
  /** Including batch; PyTorch default 1, torch.flatten default 0 (then batch is folded too — frontends pass 1 for the usual torch.flatten(x, 1)). */
  startDim: number;
  endDim: number;
}

/** `table[index]` with a constant integer index: rows of the first axis, output [...indexShape, ...rest]. */
export interface GatherAttrs {
  indexShape: number[];
}

export interface ReshapeAttrs {
  /** Target shape without batch; one entry may be -1. */
  shape: number[];
}

export interface PermuteAttrs {
  /** Permutation including batch (PyTorch permute(0, 2, 1)); Keras Permute's 1-based dims are converted by the frontend. */
  dims?: number[];
  /**
   * Instead of `dims`: the two dims a transpose swaps (torch's, batch included, negative from the end), for a
   * `k.transpose(-2, -1)` read where the tensor's rank is not yet known; the rank comes from the inferred input.
   */
  swap?: [number, number];
}

export interface ZeroPadAttrs {
  /** [[before, after], …] per spatial dim. */
  padding: Array<[number, number]>;
}

export interface UpsampleAttrs {
  scale?: number[];
  size?: number[];
  mode?: string;
}

export interface DropoutAttrs {
  rate: number;
}

export type ActivationFn =
  | 'relu'
  | 'relu6'
  | 'leaky_relu'
  | 'elu'
  | 'gelu'
  | 'silu'
  | 'swish'
  | 'tanh'
  | 'sigmoid'
  | 'softmax'
  | 'log_softmax'
  | 'softplus'
  | 'hardswish'
  | 'hardsigmoid'
  | 'linear'
  // Elementwise math written in forward (frontends/python/elementwise.ts): memory-bound kernels like the above.
  | 'abs'
  | 'neg'
  | 'exp'
  | 'log'
  | 'sqrt'
  | 'rsqrt'
  | 'square'
  | 'pow'
  | 'clamp'
  | 'sin'
  | 'cos'
  | 'reciprocal'
  | 'erf'
  | 'masked_fill'
  /** A running sum along `axis` (`torch.cumsum`, MoE routers' capacity positions). */
  | 'cumsum'
  /** A dtype conversion (`x.float()`, `x.type_as(y)`): attrs `from`/`to`, the plan's precision where absent. */
  | 'cast';

export interface ActivationAttrs {
  fn: ActivationFn;
  /** Softmax axis including batch. */
  axis?: number;
  /** pow's exponent, when the code gives a number. */
  exponent?: number;
  /** clamp's bounds, each when the code gives a number. */
  min?: number;
  max?: number;
  /** A cast's source and target dtypes; absent means the activations' own dtype, the plan's precision. */
  from?: PinnedDtype;
  to?: PinnedDtype;
}

export interface ConcatAttrs {
  axis: number;
}

/** 'norm' is the 2-norm (`x.norm(dim=…)`, `torch.linalg.vector_norm`); 'topk' keeps the `k` largest along one axis. */
export type ReduceFn = 'mean' | 'sum' | 'amax' | 'amin' | 'norm' | 'topk';

export interface ReduceAttrs {
  fn: ReduceFn;
  /** topk's k: the reduced axis keeps k entries. */
  k?: number;
  /** The reduced axes, including batch (torch's `dim`); never the batch itself. */
  axes: number[];
  keepDims: boolean;
}

export interface SplitAttrs {
  axis: number;
  /** Either explicit section sizes or a number of equal chunks. */
  sizes?: number[];
  chunks?: number;
  /** Which output this node is (a split node per output): 0-based. */
  index: number;
}

export interface MatmulAttrs {
  /** Transpose flags for the second operand, e.g. q @ k.transpose(-2, -1). */
  transposeB?: boolean;
}

export interface MhaAttrs {
  embedDim: number;
  numHeads: number;
  kdim?: number;
  vdim?: number;
  bias: boolean;
  /** Keras MultiHeadAttention key_dim per head; when set, projections are embedDim → numHeads × keyDim. */
  keyDim?: number;
  /** Causal mask (GPT): halves nothing in FLOPs here but is recorded for the profiler. */
  causal?: boolean;
  /** Keras MultiHeadAttention value_dim per head; defaults to keyDim. */
  valueDim?: number;
}

export interface SdpaAttrs {
  causal?: boolean;
  /**
   * Dropout probability on the attention probabilities, when the source states it (the Hugging Face graphs
   * always do). Left unsaid, eager attention is priced as before: its passes with dropout, one saved score tensor.
   */
  dropout?: number;
  /**
   * Soft-capping of the attention logits before the softmax, cap·tanh(scores / cap) (Gemma 2's
   * `attn_logit_softcapping`: transformers' eager_attention_forward divides, takes tanh and multiplies, three
   * element-wise kernels over the scores; flash-attn ≥ 2.6 applies its `softcap` argument inside the kernel).
   */
  softcap?: number;
  /** The factor the scores are multiplied by (F.scaled_dot_product_attention's `scale`), when it is not 1/√d. Costs nothing more. */
  scale?: number;
  /**
   * A sliding window the kernel honours: query i attends keys i − window < k ≤ i, and the key tiles outside it are
   * skipped (flash-attn's `window_size`, flex_attention's sliding-window block mask). Set only where the code runs
   * such a kernel: eager and torch-sdpa attention apply a window as a mask over the full score matrix.
   */
  window?: number;
}

/** An sdpa layer's stated attention-probability dropout, or undefined when its source did not say. */
export function attentionDropout(attrs: unknown): number | undefined {
  const p = (attrs as Partial<SdpaAttrs> | undefined)?.dropout;
  return typeof p === 'number' && Number.isFinite(p) ? p : undefined;
}

/** An sdpa layer's sliding window the kernel skips outside of, or undefined. */
export function attentionWindow(attrs: unknown): number | undefined {
  const w = (attrs as Partial<SdpaAttrs> | undefined)?.window;
  return typeof w === 'number' && Number.isInteger(w) && w > 0 ? w : undefined;
}

/** An sdpa layer's logit soft-cap, or undefined when its scores are not capped. */
export function attentionSoftcap(attrs: unknown): number | undefined {
  const cap = (attrs as Partial<SdpaAttrs> | undefined)?.softcap;
  return typeof cap === 'number' && Number.isFinite(cap) && cap > 0 ? cap : undefined;
}

export interface RnnAttrs {
  cell: 'lstm' | 'gru' | 'rnn';
  inputSize?: number;
  hiddenSize: number;
  numLayers: number;
  bidirectional: boolean;
  bias: boolean;
  /** Keras return_sequences; PyTorch always returns the sequence (output[0]). */
  returnSequences: boolean;
  /** PyTorch batch_first; Keras is always batch-major. Time is the first non-batch dim in the IR either way. */
  batchFirst?: boolean;
  /**
   * Whose bias layout to count. 'torch' (default): two bias vectors per gate set
   * (b_ih and b_hh). 'keras': one per gate set, except GRU with resetAfter (the
   * Keras 2+/TF 2 default), which keeps two.
   */
  biasStyle?: 'torch' | 'keras';
  /** Keras GRU reset_after; only read when biasStyle is 'keras'. Default true. */
  resetAfter?: boolean;
}

export interface OpaqueAttrs {
  /** Why the layer is opaque: an unknown type, or a call we could not evaluate. */
  reason?: string;
}

/** Documentation map: which attrs interface belongs to which op. */
export interface OpAttrMap {
  input: Record<string, never>;
  conv: ConvAttrs;
  separable_conv: SeparableConvAttrs;
  linear: LinearAttrs;
  embedding: EmbeddingAttrs;
  batchnorm: BatchNormAttrs;
  layernorm: LayerNormAttrs;
  groupnorm: GroupNormAttrs;
  pool: PoolAttrs;
  flatten: FlattenAttrs;
  reshape: ReshapeAttrs;
  gather: GatherAttrs;
  permute: PermuteAttrs;
  zeropad: ZeroPadAttrs;
  upsample: UpsampleAttrs;
  dropout: DropoutAttrs;
  activation: ActivationAttrs;
  add: Record<string, never>;
  mul: Record<string, never>;
  concat: ConcatAttrs;
  split: SplitAttrs;
  matmul: MatmulAttrs;
  reduce: ReduceAttrs;
  mha: MhaAttrs;
  sdpa: SdpaAttrs;
  rnn: RnnAttrs;
  identity: Record<string, never>;
  parameter: ParameterAttrs;
  opaque: OpaqueAttrs;
}

export type AttrsOf<K extends OpKind> = OpAttrMap[K];
