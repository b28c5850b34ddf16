/**
 * The builder's tensor layout. tfjs convs and pools are channels_last, so image
 * ops of a channels_first (PyTorch) model are measured on the transposed shape;
 * the work is the same. Everything else keeps the model's own shapes and axes.
 * Kept apart from the builders because the timing loop restates whole-step specs
 * with it too (`toChannelsLast`), without building anything.
 */
import type { TrialSpec } from './messages';

const IMAGE_OPS = new Set(['conv', 'separable_conv', 'pool', 'zeropad', 'upsample']);

/** Shapes (without batch) the builder expects for this layer's inputs. */
export function nativeInputShapes(spec: TrialSpec): number[][] {
  if (spec.layout !== 'channels_first' || !IMAGE_OPS.has(spec.op)) return spec.inputShapes;
  return spec.inputShapes.map((s) => (s.length >= 2 ? [...s.slice(1), s[0]!] : s));
}

const lastFirst = (s: number[]): number[] => [...s.slice(1), s[0]!];

/**
 * A channels_first spec restated channels_last, for whole-step runs where
 * tensors flow between layers: 2-D images ([C,H,W]) move C last everywhere,
 * 1-D signals only at image ops, and channel axes (batchnorm, concat, split,
 * softmax) follow.
 */
export function toChannelsLast(spec: TrialSpec): TrialSpec {
  if (spec.layout !== 'channels_first') return spec;
  const image = IMAGE_OPS.has(spec.op);
  const conv = (s: number[]) => (s.length === 3 || (image && s.length === 2) ? lastFirst(s) : s);
  const rank3 = spec.inputShapes[0]?.length === 3;
  const attrs = { ...spec.attrs } as Record<string, unknown>;
  if (rank3 && ['batchnorm', 'concat', 'split', 'activation'].includes(spec.op)) {
    const axis = typeof attrs.axis === 'number' ? attrs.axis : spec.op === 'batchnorm' ? 1 : undefined;
    if (axis === 1 || axis === -3) attrs.axis = -1;
  }
  // [N, C, H, W] axes as they sit in [N, H, W, C].
  if (rank3 && spec.op === 'reduce' && Array.isArray(attrs.axes)) attrs.axes = (attrs.axes as number[]).map((ax) => [0, 3, 1, 2][ax < 0 ? ax + 4 : ax]!);
  return {
    ...spec,
    attrs: attrs as TrialSpec['attrs'],
    inputShapes: spec.inputShapes.map(conv),
    outputShape: spec.outputShape ? conv(spec.outputShape) : undefined,
    layout: 'channels_last',
  };
}

/** Spatial output dims of an image op, in the builder's channels_last layout. */
export function nativeOut(s: TrialSpec): number[] {
  const o = s.outputShape!;
  return s.layout === 'channels_first' ? o.slice(1) : o.slice(0, -1);
}
