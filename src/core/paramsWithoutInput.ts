/**
 * The weights of a layer whose input shape is unknown because a layer before it could not be read. nanochat sizes
 * its Embedding from a tokenizer file WAP does not read; every layer after it then counted 0 parameters, even
 * Linear(1280, 1280), whose 1,638,400 do not depend on the input. Weights decide memory and gradient traffic, so
 * a model read only in part keeps every weight its layers' own sizes give. FLOPs and activations need the input
 * and stay unknown (the model is already incomplete, and says so).
 *
 * The layer is inferred on the smallest input its attributes describe: Linear on `[inFeatures]`, a convolution on
 * its channels at a spatial size no kernel exceeds, a norm on its features. An op whose weights need the input
 * (a lazy layer, attention) counts none.
 */
import type { Attrs, LayerSpec, Layout, Shape } from './ir';
import { inferLayer, isInferError } from './catalogue/index';

/** Larger than any kernel × dilation a model uses, so a convolution infers at any padding and stride. */
const SPATIAL = 1024;

const int = (attrs: Attrs, key: string): number | undefined => {
  const v = (attrs as Record<string, unknown>)[key];
  return typeof v === 'number' && Number.isInteger(v) && v > 0 ? v : undefined;
};

function inputsFor(layer: LayerSpec, layout: Layout): Shape[] {
  const attrs = layer.attrs ?? {};
  const channelsAt = (c: number, spatial: number[]): Shape => (layout === 'channels_first' ? [c, ...spatial] : [...spatial, c]);
  switch (layer.op) {
    case 'linear': {
      const n = int(attrs, 'inFeatures');
      return n ? [[n]] : [];
    }
    case 'embedding':
      return [[1]];
    case 'conv':
    case 'separable_conv': {
      const c = int(attrs, 'inChannels');
      const rank = int(attrs, 'rank') ?? 2;
      return c ? [channelsAt(c, Array(rank).fill(SPATIAL))] : [];
    }
    case 'layernorm': {
      const shape = (attrs as Record<string, unknown>).normalizedShape;
      return Array.isArray(shape) && shape.every((d) => typeof d === 'number' && d > 0) ? [shape as number[]] : [];
    }
    case 'batchnorm':
    case 'groupnorm': {
      const c = int(attrs, 'numFeatures') ?? int(attrs, 'numChannels');
      return c ? [channelsAt(c, [SPATIAL]), channelsAt(c, [SPATIAL, SPATIAL])] : [];
    }
    default:
      return [];
  }
}

/** The layer's parameters and buffers from its own sizes, or undefined when they need its input. */
export function paramsWithoutInput(layer: LayerSpec, layout: Layout, dtypeBytes: number): { params: number; nonTrainable: number } | undefined {
  for (const input of inputsFor(layer, layout)) {
    const result = inferLayer(layer.op, [input], layer.attrs ?? {}, { layout, dtypeBytes });
    if (!isInferError(result)) return { params: result.params, nonTrainable: result.nonTrainable };
  }
  return undefined;
}
