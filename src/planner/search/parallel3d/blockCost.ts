/**
 * What one group of layers (a transformer block, or the embedding/head layers
 * around the stack) costs on one GPU for one micro-batch, under tensor
 * parallel tp (Megatron: attention heads and Linear features split, one
 * all-reduce per residual branch per pass), sequence parallel (norms,
 * dropouts and residual adds split along the sequence too; the all-reduce
 * becomes an all-gather plus a reduce-scatter of equal volume), context
 * parallel cp (ring attention: tokens split cp ways, K/V passed around the
 * ring) and expert parallel ep. Compute comes from the shared roofline
 * (cost/compute.ts) at the training precision.
 */
import { autocastCastsWeights } from '../../../core/autocast';
import type { AnalyzedLayer } from '../../../core/ir';
import { product } from '../../../core/ir';
import { samplesRun } from '../../../core/oncePerForward';
import { expertOf, moeOf } from '../../../core/moe';
import type { AmpStyle, Precision } from '../../../protocol/plan';
import type { TokenDispatcher } from '../../../protocol/planOptions';
import type { GpuSpec } from '../../cluster/spec';
import { analyticalTimes, type AttentionKernel } from '../../cost/compute';
import { savedBytesAtPrecision } from '../../memory/precision';
import { fusedAttention, savedUnderKernel } from '../../memory/recompute';
import { allGatherMs, allReduceMs, p2pMs, activationBytes, type Link } from './adapters';
import { tokenDispatchMs } from './expertLayout';
import { isAttention, keptWholeUnderTensorParallel, type BlockShape } from './blocks';

export interface GroupCost {
  /** Compute per micro-batch, ms (no communication). */
  forwardMs: number;
  backwardMs: number;
  /** Extra forward work in backward under selective (attention core) and full (whole block) recompute, ms. */
  recomputeSelectiveMs: number;
  recomputeFullMs: number;
  /** Tensor-parallel collectives per micro-batch (forward, backward), ms; not overlapped (Megatron-LM). */
  tpForwardMs: number;
  tpBackwardMs: number;
  tpBytes: number;
  /** Ring-attention KV exchange left exposed after overlapping attention compute, ms. */
  cpForwardMs: number;
  cpBackwardMs: number;
  /** Expert-parallel all-to-alls (dispatch and combine) per micro-batch, ms. */
  epMs: number;
  /** Parameters held per GPU (tensor- and expert-parallel shares). */
  params: number;
  /** Of those, the ones autocast casts to 16 bits each forward (the only ones with a cast copy). */
  castParams: number;
  /** Frozen parameters held per GPU (LayerSpec.frozen): weights only, not among `params`. */
  frozenParams: number;
  /**
   * Of params, castParams and frozenParams, the experts' (already divided by ep): ZeRO shards them over the
   * expert-data-parallel group, the data-parallel ranks that hold the same experts (estimate.ts expertShardsOf).
   */
  expertParams: number;
  expertCastParams: number;
  expertFrozenParams: number;
  /** Of those, the ones stored quantized (core/quantizedWeights.ts) and their bytes. */
  quantizedParams: number;
  quantizedBytes: number;
  /** Activation bytes kept for backward per micro-batch under each recompute mode. */
  savedNone: number;
  savedSelective: number;
  savedFull: number;
}

export interface Degrees {
  tp: number;
  cp: number;
  ep: number;
  /** Expert tensor parallel (expertLayout.ts); absent: tp. */
  etp?: number;
  sp: boolean;
  mb: number;
}

export interface CostEnv {
  gpu: GpuSpec;
  precision: Precision;
  /** Under autocast each weighted 16-bit op also casts its fp32 weights (cost/compute.ts). */
  ampStyle?: AmpStyle;
  /** Bytes per element the model was analysed at (workloads are in those bytes). */
  modelDtypeBytes: number;
  shape: BlockShape;
  tpLink: Link;
  cpLink: Link;
  epLink: Link;
  /** The expert tensor group's link (expertLayout.ts); needed where etp > 1. */
  etpLink?: Link;
  /** The expert tensor and expert-parallel groups together (expertLayout.ts), for the allgather dispatcher. */
  tpEpLink?: Link;
  /** How tokens reach other GPUs' experts (PlanOptions.tokenDispatcher); absent: all-to-all. */
  dispatcher?: TokenDispatcher;
  /** How attention runs (cost/compute.ts); fused unless the plan says otherwise. */
  attention?: AttentionKernel;
}

const TENSOR_OPS = new Set(['linear', 'mha', 'sdpa', 'matmul', 'embedding']);

/** Fraction of the attention op's work and saved bytes that is the score matrix (h·T·T), which selective recompute drops. */
function scoreBytes(l: AnalyzedLayer, elementBytes: number): number {
  if (!isAttention(l)) return 0;
  const q = l.inputShapes[0] ?? [];
  if (q.length < 2) return 0;
  const t = q[q.length - 2];
  const lead = l.op === 'sdpa' ? product(q.slice(0, -2)) : Number((l.attrs as Record<string, unknown>).numHeads) || 1;
  return lead * t * t * elementBytes;
}

function attentionCoreShare(l: AnalyzedLayer): number {
  if (l.op === 'sdpa') return 1;
  if (l.op !== 'mha') return 0;
  const q = l.inputShapes[0] ?? [];
  const t = q[q.length - 2] ?? 1;
  const e = q[q.length - 1] ?? 1;
  // Two T×T×E products against the layer's forward FLOPs (projections included).
  return Math.min(1, (4 * t * t * e) / Math.max(1, l.workload.forwardFlops));
}

export function groupCost(layers: readonly AnalyzedLayer[], deg: Degrees, env: CostEnv, isBlock: boolean): GroupCost {
  const { tp, cp, ep, sp, mb } = deg;
  const etp = deg.etp ?? tp;
  const bytes = activationBytes(env.precision);
  const scale = bytes / env.modelDtypeBytes;
  const c: GroupCost = { forwardMs: 0, backwardMs: 0, recomputeSelectiveMs: 0, recomputeFullMs: 0, tpForwardMs: 0, tpBackwardMs: 0, tpBytes: 0, cpForwardMs: 0, cpBackwardMs: 0, epMs: 0, params: 0, castParams: 0, frozenParams: 0, expertParams: 0, expertCastParams: 0, expertFrozenParams: 0, quantizedParams: 0, quantizedBytes: 0, savedNone: 0, savedSelective: 0, savedFull: 0 };
  let attentionFwd = 0;
  let attentionBwd = 0;
  for (const l of layers) {
    const whole = keptWholeUnderTensorParallel(l);
    const tensor = TENSOR_OPS.has(l.op) && !whole;
    const out = l.outputShape ?? [];
    // Ops on the residual stream (hidden-wide) are replicated across the tensor group unless sequence parallel splits
    // them, and so is a router or gate every rank computes whole on the tokens it holds.
    const onResidual = !tensor && ((out.length > 0 && out[out.length - 1] === env.shape.hidden) || whole);
    const tpShare = tensor || !onResidual || sp ? tp : 1;
    // An expert's own layer: expert parallelism spreads the experts, so each GPU holds count/ep of them, and each
    // of those takes the tokens routed to it from all ep GPUs of its group. Under balanced routing that is the same
    // FLOPs per GPU as without it, but as fewer, ep-times-taller GEMMs: one expert here is priced on ep GPUs'
    // micro-batches, for the 1/ep of the experts a GPU holds. Priced per expert on one GPU's tokens instead, a
    // 256-expert layer (DeepSeek-V3) ran 256 short GEMMs and launches where each GPU runs 256/ep full ones.
    const isExpert = expertOf(l) !== undefined;
    const expertSpread = isExpert ? ep : 1;
    const share = 1 / (tpShare * cp);
    // An expert splits over its own tensor group (etp, expertLayout.ts), not the attention's. At etp < tp each
    // attention tensor rank dispatches its own sequence-parallel tokens, so an expert's GEMMs are etp/tp as tall and
    // etp-times wider than at etp = tp: the same FLOPs per GPU, whole experts instead of column slices.
    const columns = isExpert && tpShare > 1 ? etp : tpShare;
    const rows = isExpert && sp && tp > 1 ? etp / tp : 1;
    const heldShare = tensor ? 1 / (isExpert ? etp : tp) : 1;
    const paramShare = heldShare / expertSpread;
    // Context parallel gives each GPU 1/cp of every sample's tokens: a GEMM's rows (M, and the weight gradient's K),
    // as mb/cp samples would, not its output columns as tensor parallel splits them. Priced as a column split, a
    // 1024-token model ran its weight gradients faster at CP 2 than at CP 1 with the same tokens per GPU.
    const local = analyticalTimes(l, env.gpu, (mb * expertSpread * rows) / cp, 1 / columns, heldShare, bytes, env.precision, { attention: env.attention, autocast: env.ampStyle === 'autocast', expertParallel: ep });
    const t = { forwardMs: local.forwardMs / expertSpread, backwardMs: local.backwardMs / expertSpread };
    c.forwardMs += t.forwardMs;
    c.backwardMs += t.backwardMs;
    c.recomputeFullMs += t.forwardMs;
    // A fused kernel keeps no scores (memory/recompute.ts): selective recompute neither drops nor re-runs anything there.
    const scoresKept = !fusedAttention(l, env.attention);
    if (scoresKept) c.recomputeSelectiveMs += t.forwardMs * attentionCoreShare(l);
    if (isAttention(l)) {
      attentionFwd += t.forwardMs;
      attentionBwd += t.backwardMs;
    }
    c.params += l.workload.params * paramShare;
    if (autocastCastsWeights(l.op)) c.castParams += l.workload.params * paramShare;
    c.frozenParams += (l.workload.frozenParams ?? 0) * paramShare;
    if (expertOf(l)) {
      c.expertParams += l.workload.params * paramShare;
      if (autocastCastsWeights(l.op)) c.expertCastParams += l.workload.params * paramShare;
      c.expertFrozenParams += (l.workload.frozenParams ?? 0) * paramShare;
    }
    c.quantizedParams += (l.workload.quantized?.params ?? 0) * paramShare;
    c.quantizedBytes += (l.workload.quantized?.bytes ?? 0) * paramShare;
    // Float activations follow the precision; int64 indices and bool masks keep their size.
    const kept = savedUnderKernel(l, env.attention, env.modelDtypeBytes);
    // Work done once per forward (core/oncePerForward.ts) keeps one forward's tensors, whatever the micro-batch.
    const saved = savedBytesAtPrecision(kept.saved, kept.fixed, scale) * samplesRun(l, mb) * share;
    c.savedNone += saved;
    c.savedSelective += scoresKept ? Math.max(0, saved - scoreBytes(l, bytes) * mb * share) : saved;
    const moe = moeOf(l);
    if (moe?.role === 'router' && l.op === 'linear') {
      // Once per MoE block, at its router, the tokens this rank holds (sequence parallel splits them) reach the experts.
      const local = (mb * env.shape.seq * env.shape.hidden * bytes) / (cp * (sp ? tp : 1));
      c.epMs += tokenDispatchMs(local, moe.topK, { tp, ep, etp, sp }, env.dispatcher, { ep: env.epLink, etp: env.etpLink ?? env.tpLink, tpEp: env.tpEpLink ?? env.epLink });
    }
  }
  if (!isBlock) {
    c.recomputeFullMs = 0;
    c.recomputeSelectiveMs = 0;
    c.savedSelective = c.savedFull = c.savedNone;
  } else {
    // Full recompute keeps only each block's input (split by sequence parallel and context parallel).
    c.savedFull = (mb * env.shape.seq * env.shape.hidden * bytes) / (cp * (sp ? tp : 1));
  }
  if (tp > 1 && isBlock) {
    const residualBytes = (mb * env.shape.seq * env.shape.hidden * bytes) / cp;
    const one = sp ? 2 * allGatherMs(residualBytes, tp, env.tpLink) : allReduceMs(residualBytes, tp, env.tpLink);
    // Under sequence parallelism an MoE branch's tokens move by its dispatcher (epMs), not by a residual gather.
    const branches = env.shape.residualBranches - (sp ? (env.shape.dispatchedBranches ?? 0) : 0);
    c.tpForwardMs = branches * one;
    c.tpBackwardMs = branches * one;
    c.tpBytes = branches * residualBytes;
  }
  if (cp > 1 && isBlock) {
    // Ring attention (Liu et al., 2023): cp−1 steps, each passing the local K and V; backward passes dK/dV too.
    const kv = (2 * mb * (env.shape.seq / cp) * (env.shape.hidden / tp) * bytes);
    const attentions = layers.filter(isAttention).length;
    c.cpForwardMs = Math.max(0, attentions * (cp - 1) * p2pMs(kv, env.cpLink) - attentionFwd);
    c.cpBackwardMs = Math.max(0, attentions * (cp - 1) * p2pMs(2 * kv, env.cpLink) - attentionBwd);
  }
  return c;
}
