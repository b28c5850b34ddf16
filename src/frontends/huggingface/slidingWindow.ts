/**
 * Sliding-window attention in the Hugging Face graphs: a query attends only the
 * `window` keys up to itself (Phi-3's every layer, Gemma 2's alternate layers,
 * Qwen3's upper layers under use_sliding_window). WAP's attention cost model
 * has no window: it prices every layer over the whole causal sequence. That is
 * what eager and torch-sdpa attention compute, since transformers applies the
 * window as a mask over the full score matrix (masking_utils.py's sliding-window
 * causal mask: key k is kept for query q when q − window < k ≤ q), whereas a
 * flash-attention kernel given `window_size` skips the key tiles outside it.
 * So the graphs keep full attention, and this note says where the estimate is
 * high instead of leaving the window silently out.
 */
import { diagnosticAt } from '../../core/ir';
import type { HfConfig } from './configs';
import type { HfGraph } from './graph';

/**
 * The layers that attend a window: those a config's `layer_types` marks 'sliding_attention' (what newer
 * transformers writes into config.json), else the architecture's own rule for the layer index.
 */
export function windowedLayers(config: HfConfig, layerCount: number, byIndex: (layer: number) => boolean): number[] {
  const types = config.layer_types;
  const listed = Array.isArray(types) && types.length === layerCount && types.every((t) => typeof t === 'string');
  const all = Array.from({ length: layerCount }, (_, i) => i);
  return listed ? all.filter((i) => types[i] === 'sliding_attention') : all.filter(byIndex);
}

/**
 * Fraction of a causal score matrix a window keeps: query i attends min(i + 1, window) keys, so
 * window(window + 1)/2 + (T − window)·window of the T(T + 1)/2 causal scores (1 when the window spans T).
 */
export function windowedScoreFraction(tokens: number, window: number): number {
  if (window >= tokens) return 1;
  return (window * (window + 1) / 2 + (tokens - window) * window) / (tokens * (tokens + 1) / 2);
}

/** `0, 2, 4, …, 24` for a long list, every index for a short one. */
function layerList(layers: readonly number[]): string {
  return layers.length <= 5 ? layers.join(', ') : `${layers.slice(0, 3).join(', ')}, …, ${layers[layers.length - 1]}`;
}

/**
 * transformers' kernels that skip the key tiles outside a window: flash-attn takes `window_size`, and flex_attention
 * builds a sliding-window block mask. Eager and sdpa (the default) mask the full score matrix.
 */
const WINDOW_SKIPPING = new Set(['flash_attention_2', 'flash_attention_3', 'flex_attention']);

/** The kernel the code loads the model with (from_pretrained's attn_implementation), when it skips outside a window. */
function windowSkippingKernel(config: HfConfig): string | undefined {
  const named = config._attn_implementation ?? config.attn_implementation;
  return typeof named === 'string' && WINDOW_SKIPPING.has(named) ? named : undefined;
}

/**
 * Each layer's window as the attention is priced: the config's sliding window on the layers that attend one, where
 * the code's kernel skips the keys outside it (then the planner runs only those tiles); none elsewhere, which an
 * info diagnostic says (full attention priced, and how much a windowed kernel would skip at this length).
 */
export function layerWindows(g: HfGraph, config: HfConfig, what: string, windowed: readonly number[], layerCount: number, tokens: number): (layer: number) => number | undefined {
  const window = config.sliding_window;
  if (typeof window !== 'number' || !(window > 0) || windowed.length === 0) return () => undefined;
  const which = windowed.length === layerCount ? `all ${layerCount} layers attend` : `${windowed.length} of ${layerCount} layers (${layerList(windowed)}) attend`;
  const fraction = windowedScoreFraction(tokens, window);
  const kernel = windowSkippingKernel(config);
  if (kernel) {
    g.diagnostics.push(diagnosticAt('info', 'hf-sliding-window', `${what}: ${which} a sliding window of ${window} tokens, and the code runs ${kernel}, which skips the keys outside it: WAP prices those layers' attention over the window (${(100 * fraction).toFixed(0)}% of the causal scores at the configured ${tokens} tokens)`, g.range));
    const set = new Set(windowed);
    return (layer) => (set.has(layer) ? window : undefined);
  }
  const effect =
    fraction < 1
      ? `a flash-attention kernel with the window computes ${(100 * fraction).toFixed(0)}% of the causal scores at the configured ${tokens} tokens, so for it these layers' attention is over-estimated (attn_implementation="flash_attention_2" in the code prices the window)`
      : `the window spans the configured ${tokens} tokens, so nothing is over-estimated at that length, only at longer ones`;
  g.diagnostics.push(
    diagnosticAt('info', 'hf-sliding-window', `${what}: ${which} a sliding window of ${window} tokens; WAP prices them over the full causal sequence, as eager and sdpa attention compute it (the window is a mask there); ${effect}`, g.range),
  );
  return () => undefined;
}
