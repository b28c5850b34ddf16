/**
 * The input shape WAP assumes when neither the user (`--input`) nor the code
 * states one. The guesses, in order:
 * 1. the first layer is an Embedding → a token sequence [1024] of 'int' ids;
 * 2. no conv anywhere and the first weighted layer is
 *    - Linear(inFeatures N) → [N],
 *    - an RNN with inputSize I, or MHA with embedDim E → a sequence [1024, I|E];
 * 3. otherwise an image for the first conv: channels = its inChannels (3 when
 *    unstated), spatial 224×224 for 2-D, 1024 for 1-D, 16×112×112 for 3-D (the
 *    usual video clip), placed per layout: PyTorch [3, 224, 224] (channels_first),
 *    Keras/TF.js [224, 224, 3] (channels_last).
 */
import type { Layout, LayerSpec, ModelSpec, Shape } from './ir';

export const DEFAULT_SEQUENCE_LENGTH = 1024;

export interface AssumedInput {
  shape: Shape;
  dtype: 'float' | 'int';
  /** Human words for the diagnostic: "an image (channels_first)". */
  what: string;
  /** A sequence of tokens or steps (its first axis is the length), which `--seq-len` may set. */
  sequence: boolean;
}

const CONV_OPS = new Set(['conv', 'separable_conv']);
const WEIGHTED_OPS = new Set(['conv', 'separable_conv', 'linear', 'embedding', 'rnn', 'mha']);

function numAttr(layer: LayerSpec | undefined, key: string): number | undefined {
  const v = layer?.attrs?.[key];
  return typeof v === 'number' && Number.isInteger(v) && v > 0 ? v : undefined;
}

function imageShape(channels: number, rank: number, layout: Layout): Shape {
  const spatial = rank === 1 ? [DEFAULT_SEQUENCE_LENGTH] : rank === 3 ? [16, 112, 112] : [224, 224];
  return layout === 'channels_first' ? [channels, ...spatial] : [...spatial, channels];
}

export function assumeInput(spec: ModelSpec): AssumedInput {
  const layers = spec.layers ?? [];
  const first = layers.find((l) => l.op !== 'input' && l.op !== 'identity');
  if (first?.op === 'embedding') {
    // A position table the code sizes (nanoGPT's wpe of block_size rows) is the length the model is built for; past it torch fails.
    const limit = spec.inputs.find((i) => first.inputs.includes(i.id))?.maxLength;
    if (limit) return { shape: [limit.tokens], dtype: 'int', what: `a sequence of ${limit.tokens} token ids, as many as ${limit.what}`, sequence: true };
    return { shape: [DEFAULT_SEQUENCE_LENGTH], dtype: 'int', what: `a sequence of ${DEFAULT_SEQUENCE_LENGTH} token ids`, sequence: true };
  }
  const firstConv = layers.find((l) => CONV_OPS.has(l.op));
  const firstWeighted = layers.find((l) => WEIGHTED_OPS.has(l.op));
  if (!firstConv && firstWeighted) {
    const n = numAttr(firstWeighted, 'inFeatures');
    if (firstWeighted.op === 'linear' && n) return { shape: [n], dtype: 'float', what: `a vector of ${n} features (from ${firstWeighted.name}'s inFeatures)`, sequence: false };
    const seqFeatures = firstWeighted.op === 'rnn' ? numAttr(firstWeighted, 'inputSize') : firstWeighted.op === 'mha' ? numAttr(firstWeighted, 'embedDim') : undefined;
    if (seqFeatures) {
      return { shape: [DEFAULT_SEQUENCE_LENGTH, seqFeatures], dtype: 'float', what: `a sequence of ${DEFAULT_SEQUENCE_LENGTH} steps × ${seqFeatures} features`, sequence: true };
    }
  }
  const layout = spec.layout ?? (spec.framework === 'pytorch' ? 'channels_first' : 'channels_last');
  const rank = numAttr(firstConv, 'rank') ?? 2;
  const channels = numAttr(firstConv, 'inChannels') ?? 3;
  // The run's dataset says the image, where its channels are the ones the model takes.
  const sample = spec.runSample?.shape;
  if (rank === 2 && sample?.length === 3 && sample[0] === channels) {
    const [c, h, w] = sample as [number, number, number];
    return { shape: layout === 'channels_last' ? [h, w, c] : [c, h, w], dtype: 'float', what: spec.runSample!.source, sequence: false };
  }
  return { shape: imageShape(channels, rank, layout), dtype: 'float', what: `an image (${layout})`, sequence: false };
}
