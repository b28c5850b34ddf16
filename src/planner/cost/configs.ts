/**
 * Per-layer parallel configurations and the tensor layouts they consume and
 * produce. On a group of n devices every configuration uses all n: d batch
 * shards × k model shards, device = di·k + ki.
 *
 * split kinds:
 *  - none:  k = 1, plain data parallel of degree d.
 *  - out:   output channels/features split k ways (column parallel); needs the full input.
 *  - in:    Linear input features split (Megatron row parallel); output partial sums are all-reduced.
 *  - heads: attention heads split (Megatron attention); all-reduce out in forward, in in backward.
 *  - shard: an element-/channel-wise op working on a feature shard as is.
 *  - rep:   k devices compute the same thing (ops that cannot be split).
 */
import type { AnalyzedLayer, Layout as TensorLayout } from '../../core/ir';
import type { StrategyMode } from '../../protocol/plan';

export type SplitKind = 'none' | 'out' | 'in' | 'heads' | 'shard' | 'rep';

export interface LayerConfig {
  d: number;
  k: number;
  split: SplitKind;
}

/** d batch shards; with k > 1 features are either sharded k ways or replicated on the k devices. */
export interface Layout {
  d: number;
  k: number;
  sharded: boolean;
}

export type OpClass = 'column' | 'linear' | 'heads' | 'shardable' | 'other';

const SHARDABLE = new Set(['activation', 'dropout', 'pool', 'batchnorm', 'flatten', 'add', 'mul', 'identity', 'zeropad', 'upsample', 'sdpa']);

export function opClass(layer: AnalyzedLayer): OpClass {
  switch (layer.op) {
    case 'linear':
      return 'linear';
    case 'conv':
    case 'embedding':
      return (layer.attrs as Record<string, unknown>).transposed ? 'other' : 'column';
    case 'mha':
      return 'heads';
    case 'activation': {
      const fn = (layer.attrs as Record<string, unknown>).fn;
      // Softmax normalises along the (possibly sharded) feature axis.
      return fn === 'softmax' || fn === 'log_softmax' ? 'other' : 'shardable';
    }
    default:
      return SHARDABLE.has(layer.op) ? 'shardable' : 'other';
  }
}

/**
 * The size a column split divides: a conv's output channels sit on dim 0 of a
 * channels_first shape (C,H,W) and on the last dim of a channels_last one
 * (H,W,C); other ops split their last (feature) dim.
 */
export function outFeatures(layer: AnalyzedLayer, layout: TensorLayout = 'channels_first'): number {
  const s = layer.outputShape;
  if (!s || s.length === 0) return 1;
  if (layer.op === 'conv' && layout === 'channels_first') return s[0]!;
  return s[s.length - 1]!;
}

export function divisors(n: number): number[] {
  const out: number[] = [];
  for (let i = 1; i <= n; i++) if (n % i === 0) out.push(i);
  return out;
}

/** All configurations for a layer on n devices under a strategy mode. */
export function layerConfigs(layer: AnalyzedLayer, n: number, mode: StrategyMode, layout: TensorLayout = 'channels_first'): LayerConfig[] {
  if (mode === 'dp' || n === 1) return [{ d: n, k: 1, split: 'none' }];
  const cls = opClass(layer);
  const out: LayerConfig[] = [];
  const features = outFeatures(layer, layout);
  const heads = Number((layer.attrs as Record<string, unknown>).numHeads) || 1;
  const inFeatures = layer.inputShapes[0]?.[layer.inputShapes[0].length - 1] ?? 1;
  for (const k of divisors(n)) {
    const d = n / k;
    if (k === 1) {
      out.push({ d, k, split: 'none' });
      continue;
    }
    if (cls === 'column' || cls === 'linear') {
      if (features >= k) out.push({ d, k, split: 'out' });
      if (cls === 'linear' && inFeatures >= k) out.push({ d, k, split: 'in' });
    } else if (cls === 'heads') {
      if (heads % k === 0) out.push({ d, k, split: 'heads' });
    } else if (cls === 'shardable') {
      out.push({ d, k, split: 'shard' }, { d, k, split: 'rep' });
    } else {
      out.push({ d, k, split: 'rep' });
    }
  }
  return out;
}

export function inputLayout(c: LayerConfig): Layout {
  if (c.k === 1) return { d: c.d, k: 1, sharded: false };
  return { d: c.d, k: c.k, sharded: c.split === 'in' || c.split === 'shard' };
}

export function outputLayout(c: LayerConfig): Layout {
  if (c.k === 1) return { d: c.d, k: 1, sharded: false };
  return { d: c.d, k: c.k, sharded: c.split === 'out' || c.split === 'shard' };
}

export function layoutKey(l: Layout): string {
  return `${l.d}x${l.k}${l.sharded ? 's' : 'r'}`;
}

/** Fraction of the layer's compute one device does. */
export function computeShare(c: LayerConfig): number {
  return c.split === 'rep' || c.split === 'none' ? 1 : 1 / c.k;
}

/** Fraction of the layer's parameters one device holds. */
export function paramShare(c: LayerConfig): number {
  return c.split === 'rep' || c.split === 'none' ? 1 : 1 / c.k;
}

export function describeConfig(c: LayerConfig): string {
  if (c.k === 1) return c.d === 1 ? 'single GPU' : `data ×${c.d}`;
  // Words a user knows: what the split divides, not the kernel jargon ("row-model").
  const what = { out: 'model parallel (split outputs)', in: 'model parallel (split inputs)', heads: 'model parallel (split heads)', shard: 'sharded', rep: 'replicated', none: 'model parallel' }[c.split];
  return c.d === 1 ? `${what} ×${c.k}` : `data ×${c.d} · ${what} ×${c.k}`;
}
