/**
 * Activation recompute on the layer graph: which saved activations each mode
 * drops, and what it recomputes in exchange.
 *
 * - selective (Korthikanti et al. 2022, §4.2): recompute only the attention
 *   core (QKᵀ, softmax, dropout, attention over V), whose s²-sized tensors are
 *   most of a transformer layer's activation memory (the 5as²b term) but a
 *   small part of its FLOPs.
 * - full: checkpoint each block (torch.utils.checkpoint per transformer layer,
 *   Megatron's "full" granularity): keep only every block's input, recompute
 *   the block's forward before its backward. Blocks are read from layer names
 *   (`h.3.attn` belongs to block `h.3`); a model without repeated blocks is cut
 *   into √L segments of its layer order (Chen et al. 2016, "Training Deep Nets
 *   with Sublinear Memory Cost"). During backward one segment's activations are
 *   alive again, so the largest segment is added as workspace.
 */
import type { AnalyzedLayer, AnalyzedModel } from '../../core/ir';
import { product } from '../../core/ir';
import { MASK_BYTES } from '../../core/catalogue/costs';
import { attentionDropout, attentionSoftcap } from '../../core/ops';
import type { RecomputeMode } from '../../protocol/plan';
import { attentionKernelOf, type AttentionKernel } from '../cost/compute';

const positive = (x: number | undefined): number => (Number.isFinite(x) && (x as number) > 0 ? (x as number) : 0);

/** An s×s-shaped tensor (rank ≥ 3, the last two dims equal and > 1): attention scores or probabilities. */
function scoreShaped(shape: readonly number[] | undefined): boolean {
  return !!shape && shape.length >= 3 && shape[shape.length - 1] === shape[shape.length - 2] && shape[shape.length - 1] > 1;
}

/** Elements of the attention-score matrices a layer saves per sample (what selective recompute drops). */
export function scoreElementsPerSample(layer: AnalyzedLayer): number {
  const inputs = layer.inputShapes;
  const attrs = layer.attrs as Record<string, unknown>;
  if ((layer.op === 'mha' || layer.op === 'sdpa') && inputs.length > 0 && layer.outputShape) {
    const q = inputs[0];
    const k = inputs[1] ?? q;
    if (q.length < 2 || k.length < 2) return 0;
    const heads = layer.op === 'mha' && typeof attrs.numHeads === 'number' ? attrs.numHeads : 1;
    return product(q.slice(0, -2)) * heads * q[q.length - 2] * k[k.length - 2];
  }
  if ((layer.op === 'activation' && (attrs.fn === 'softmax' || attrs.fn === 'log_softmax')) || layer.op === 'dropout') {
    return scoreShaped(layer.outputShape) ? product(layer.outputShape!) : 0;
  }
  if (layer.op === 'matmul' && scoreShaped(inputs[0])) return product(inputs[0]);
  return 0;
}

/** True for an attention op (sdpa, mha) that runs a fused kernel, whose scores never reach memory. */
export function fusedAttention(layer: AnalyzedLayer, attention?: AttentionKernel): boolean {
  return attentionKernelOf(layer, attention) === 'fused';
}

/** Bytes of the fp32 log-sum-exp a fused attention kernel keeps per query row and head. */
const LOG_SUM_EXP_BYTES = 4;

/**
 * Saved-activation bytes per sample (model dtype) a layer keeps for its backward, and of them the fixed-size ones,
 * under the attention kernel the plan runs. The catalogue counts eager attention, which saves the T×T
 * probabilities. A fused kernel (FlashAttention, Dao et al., NeurIPS 2022, §3.1 and Algorithm 2; what PyTorch's
 * scaled_dot_product_attention runs on tensor-core GPUs) saves none of them: it keeps one fp32 log-sum-exp per
 * query row and head, and rebuilds the scores tile by tile in its backward. Q, K, V and the output are saved
 * either way (the output as the next projection's input).
 */
export function savedUnderKernel(layer: AnalyzedLayer, attention: AttentionKernel | undefined, modelDtypeBytes: number): { saved: number; fixed: number } {
  const saved = positive(layer.workload.savedActivationBytes);
  const fixed = Math.min(saved, positive(layer.workload.savedFixedBytes));
  if (!fusedAttention(layer, attention)) return { saved, fixed };
  const scores = scoreElementsPerSample(layer);
  const k = layer.inputShapes[1] ?? layer.inputShapes[0];
  const keys = k && k.length >= 2 ? k[k.length - 2] : 0;
  if (scores === 0 || keys === 0) return { saved, fixed };
  const logSumExp = (scores / keys) * LOG_SUM_EXP_BYTES;
  // FlashAttention draws its dropout mask from the RNG state again in backward: no mask, no dropped copy is kept.
  const eager = eagerScoreBytes(layer, scores, modelDtypeBytes);
  return { saved: Math.max(0, saved - eager.saved) + logSumExp, fixed: Math.max(0, fixed - eager.fixed) + logSumExp };
}

/**
 * Bytes of score-shaped tensors the catalogue's eager sdpa/mha saves per sample: the probabilities, with a
 * stated dropout the dropped copy and its bool mask (the mask is the fixed-size part), and with soft-capped
 * logits tanh's result, which its backward reads.
 */
function eagerScoreBytes(layer: AnalyzedLayer, scores: number, modelDtypeBytes: number): { saved: number; fixed: number } {
  const dropout = layer.op === 'sdpa' && (attentionDropout(layer.attrs) ?? 0) > 0;
  const capped = layer.op === 'sdpa' && attentionSoftcap(layer.attrs) !== undefined ? scores * modelDtypeBytes : 0;
  return dropout ? { saved: scores * (2 * modelDtypeBytes + MASK_BYTES) + capped, fixed: scores * MASK_BYTES } : { saved: scores * modelDtypeBytes + capped, fixed: 0 };
}

/** Saved-activation bytes per sample (at the model's dtype) that selective recompute no longer keeps. */
export function selectiveSavedBytesPerSample(layer: AnalyzedLayer, modelDtypeBytes: number, attention: AttentionKernel | undefined): number {
  // A fused kernel keeps no scores: selective recompute has nothing to drop.
  if (fusedAttention(layer, attention)) return 0;
  const scores = scoreElementsPerSample(layer);
  if (scores === 0) return 0;
  // Dropout keeps a 1-byte mask per element, the others a value at the model's dtype.
  const bytes = layer.op === 'dropout' ? scores * (positive(layer.workload.savedActivationBytes) / Math.max(1, product(layer.outputShape ?? [1]))) : eagerScoreBytes(layer, scores, modelDtypeBytes).saved;
  // A score tensor another layer already saves (softmax's output read by the next matmul) is counted there, not here.
  return Math.min(positive(layer.workload.savedActivationBytes), Math.max(0, bytes - positive(layer.workload.sharedSavedBytes)));
}

/** Fraction of a layer's forward FLOPs selective recompute runs again: the attention core. */
export function selectiveRecomputeFraction(layer: AnalyzedLayer): number {
  const scores = scoreElementsPerSample(layer);
  if (scores === 0) return 0;
  const fwd = positive(layer.workload.forwardFlops);
  if (fwd === 0 || layer.op !== 'mha') return 1;
  const q = layer.inputShapes[0];
  const attrs = layer.attrs as Record<string, unknown>;
  const heads = typeof attrs.numHeads === 'number' ? attrs.numHeads : 1;
  const headDim = q[q.length - 1] / heads;
  // QKᵀ and attention·V: 2·scores·d each; softmax ~5 per score (as the catalogue counts).
  return Math.min(1, (scores * (4 * headDim + 5)) / fwd);
}

/** Full-recompute segments of a model: the block of each layer (−1 = outside any block, activations kept). */
export interface RecomputePlan {
  segmentOf: Int32Array;
  /** True for the first layer of its segment: that layer's input is what stays saved. */
  segmentStart: Uint8Array;
  /** Saved activation bytes per sample (model dtype) of each segment. */
  segmentSaved: number[];
  /** Block-based (from layer names) or √L segments. */
  kind: 'blocks' | 'sqrt';
}

const BLOCK = /^(.*?\.\d+)(?:\.|$)/;

const plans = new WeakMap<AnalyzedModel, RecomputePlan>();

export function recomputePlan(model: AnalyzedModel): RecomputePlan {
  const hit = plans.get(model);
  if (hit) return hit;
  const L = model.layers.length;
  const segmentOf = new Int32Array(L).fill(-1);
  const keys = model.layers.map((l) => BLOCK.exec(l.name)?.[1]);
  const members = new Map<string, number[]>();
  keys.forEach((k, i) => k !== undefined && members.set(k, [...(members.get(k) ?? []), i]));
  const blocks = [...members.values()].filter((m) => m.length >= 2);
  let kind: RecomputePlan['kind'] = 'blocks';
  if (blocks.length >= 2) {
    blocks.forEach((m, s) => m.forEach((i) => (segmentOf[i] = s)));
  } else {
    kind = 'sqrt';
    const size = Math.max(1, Math.ceil(Math.sqrt(L)));
    for (let i = 0; i < L; i++) segmentOf[i] = Math.floor(i / size);
  }
  const count = Math.max(0, ...segmentOf) + 1;
  const segmentSaved = new Array<number>(count).fill(0);
  const segmentStart = new Uint8Array(L);
  const seen = new Set<number>();
  for (let i = 0; i < L; i++) {
    const s = segmentOf[i];
    if (s < 0) continue;
    segmentSaved[s] += positive(model.layers[i].workload.savedActivationBytes);
    if (!seen.has(s)) {
      seen.add(s);
      segmentStart[i] = 1;
    }
  }
  const made = { segmentOf, segmentStart, segmentSaved, kind };
  plans.set(model, made);
  return made;
}

/**
 * Saved-activation bytes per sample (model dtype) a layer keeps under a mode,
 * of them the int64 indices and bool masks (fixedBytesPerSample: their size
 * does not follow the precision), and the fraction of its forward recomputed
 * before its backward. Under full recompute a segment's first layer keeps its
 * input; the rest keep nothing.
 */
export function keptActivations(
  layer: AnalyzedLayer,
  index: number,
  mode: RecomputeMode,
  plan: RecomputePlan,
  modelDtypeBytes: number,
  inputBytesPerSample: number,
  attention?: AttentionKernel,
): { savedBytesPerSample: number; fixedBytesPerSample: number; recomputeFraction: number } {
  const { saved, fixed } = savedUnderKernel(layer, attention, modelDtypeBytes);
  if (mode === 'selective') {
    const drop = selectiveSavedBytesPerSample(layer, modelDtypeBytes, attention);
    // What selective recompute drops from a dropout is its mask: the fixed bytes go first there.
    const kept = saved - drop;
    return { savedBytesPerSample: kept, fixedBytesPerSample: Math.min(fixed, kept), recomputeFraction: drop > 0 ? selectiveRecomputeFraction(layer) : 0 };
  }
  if (mode === 'full' && plan.segmentOf[index] >= 0) {
    return { savedBytesPerSample: plan.segmentStart[index] ? inputBytesPerSample : 0, fixedBytesPerSample: 0, recomputeFraction: 1 };
  }
  return { savedBytesPerSample: saved, fixedBytesPerSample: fixed, recomputeFraction: 0 };
}

/** The largest segment's activations (per sample, model dtype): alive again while its backward runs. */
export function largestSegmentBytesPerSample(plan: RecomputePlan): number {
  return plan.segmentSaved.reduce((a, b) => Math.max(a, b), 0);
}

/** True when selective recompute would save anything on this model: it keeps attention scores under this kernel. */
export function hasAttentionScores(model: AnalyzedModel, attention?: AttentionKernel): boolean {
  return model.layers.some((l) => !fusedAttention(l, attention) && scoreElementsPerSample(l) > 0);
}
