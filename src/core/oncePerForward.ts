/**
 * Work a layer does once per forward call, whatever the batch.
 *
 * WAP's IR is per sample (ir.ts: shapes exclude the batch dimension, FLOPs are per sample) and the planner multiplies
 * a layer's workload by the samples each forward carries. Some work in a forward depends on no sample: transformers'
 * DeBERTa-v2 normalises its relative-position embeddings once, and every layer drops them out and projects all
 * 2·span rows through its key / query projections on a [1, 2·span, hidden] tensor, then `.repeat`s the projected rows
 * over the batch (modeling_deberta_v2.py, DisentangledSelfAttention.disentangled_attention_bias). Those projections are
 * GEMMs with a weight gradient, an eighth of DeBERTa-v3-base's forward FLOPs at 512 tokens: too large to leave out as
 * the Python frontend leaves out arithmetic on parameters alone (docs/architecture.md), and wrong by the micro-batch
 * when priced per sample.
 *
 * A frontend marks such a layer `attrs.oncePerForward: true` (core/ops.ts: any op may carry it). Its workload then
 * describes one forward of a whole micro-batch: the planner runs it once per micro-batch (`samplesRun`, read by
 * planner/cost/compute.ts analyticalTimes and the measured path of cost/tableBuilder.ts), and the model's totals keep
 * it apart from the per-sample sums (`ModelTotals.oncePerForward`, core/analyze.ts). Its parameters, gradient bytes and
 * backward FLOPs are accounted as any layer's: only how often it runs changes. Being an attr, it is part of every
 * layer signature, so a marked layer never shares a cost with a per-sample twin of the same shape.
 */
import type { Attrs, ModelTotals } from './ir';

/** Whether a frontend marked the layer as running once per forward, whatever the batch. */
export function runsOncePerForward(layer: { readonly attrs?: Attrs }): boolean {
  return layer.attrs?.oncePerForward === true;
}

/** How many samples' worth of the layer's workload a forward of `samples` samples runs: once for a once-per-forward layer. */
export function samplesRun(layer: { readonly attrs?: Attrs }, samples: number): number {
  return samples > 0 && runsOncePerForward(layer) ? 1 : samples;
}

/** The forward FLOPs of one forward over `batch` samples: the per-sample total times the batch, plus the once-per-forward work. */
export function forwardFlopsOfBatch(totals: ModelTotals, batch: number): number {
  return totals.forwardFlops * batch + (batch > 0 ? (totals.oncePerForward?.forwardFlops ?? 0) : 0);
}
