/**
 * Model FLOPs per sample, MFU's numerator: the work the model needs, whatever kernel runs it.
 *
 * The catalogue counts causal attention as full rows of keys (the tiles an eager kernel computes), which is the
 * hardware's count, not the model's. A query under a top-left causal mask needs only the keys up to its own position,
 * so the FLOPs the model needs are the unmasked triangle, as FlashAttention-2 counts causal attention (Dao, ICLR 2024,
 * §4.1: "for causal attention, the number of FLOPs is divided by 2"). Counted as full rows, a 128K-token causal plan
 * reported 120% MFU: more work per second than the GPUs' peak, which nothing runs.
 */
import type { AnalyzedLayer, AnalyzedModel } from '../../core/ir';
import { attentionWindow } from '../../core/ops';
import { runsOncePerForward } from '../../core/oncePerForward';

/**
 * Of an sdpa layer's counted FLOPs, the share its causal mask leaves: Σ over queries i of the keys it sees,
 * min(i + 1, keys, window), over the queries × the keys each row counts (the window when one is honoured). 1 for
 * attention without a causal mask.
 */
export function causalRequiredFraction(layer: AnalyzedLayer): number {
  if (layer.op !== 'sdpa' || (layer.attrs as Record<string, unknown>).causal !== true) return 1;
  const q = layer.inputShapes[0] ?? [];
  const k = layer.inputShapes[1] ?? q;
  if (q.length < 2 || k.length < 2) return 1;
  const queries = q[q.length - 2];
  const keys = k[k.length - 2];
  const window = attentionWindow(layer.attrs);
  const reach = window !== undefined ? Math.min(window, keys) : keys;
  if (!(queries > 0 && reach > 0)) return 1;
  // Queries 0..reach−1 see i + 1 keys (a triangle), the rest see `reach`: closed form, no loop over 128K positions.
  const rising = Math.min(queries, reach);
  const seen = (rising * (rising + 1)) / 2 + (queries - rising) * reach;
  return seen / (queries * reach);
}

/**
 * Forward plus backward FLOPs one sample needs, causal attention counted as its unmasked triangle. Work done once per
 * forward whatever the batch (core/oncePerForward.ts: DeBERTa's relative-embedding projections) is not the samples'
 * work: left out, as MFU counts per-token model FLOPs (Megatron-LM's and PaLM's formulas count no such term).
 */
export function modelFlopsPerSample(model: AnalyzedModel): number {
  let flops = 0;
  for (const layer of model.layers) {
    if (runsOncePerForward(layer)) continue;
    const w = layer.workload;
    flops += (w.forwardFlops + w.backwardFlops) * causalRequiredFraction(layer);
  }
  return flops;
}
