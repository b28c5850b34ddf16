/**
 * mha (nn.MultiheadAttention, Keras MultiHeadAttention) and sdpa
 * (F.scaled_dot_product_attention, or q @ kᵀ → softmax → @ v written out).
 *
 * Inputs are [..., T, E] (time then features; extra leading dims act as batch).
 * FLOPs: projections (as linear layers) + QKᵀ (2·h·Tq·Tk·dk) + softmax
 * (5 per score) + AV (2·h·Tq·Tk·dv). With h·dk = E and Tq = Tk = T this is the
 * usual 2·T²·E for each product.
 * Backward = 2 × forward: the projections are weighted (input + weight grads) and
 * the two attention products need a gradient for each operand.
 * Saved: inputs, Q/K/V, the attention probabilities and the context (the plain
 * "math" path; fused kernels that recompute probabilities save less).
 */
import type { Attrs, Shape } from '../ir';
import { product } from '../ir';
import { attentionDropout, attentionSoftcap, attentionWindow } from '../ops';
import { bool, fail, optInt, posInt, requireInputs, showShape } from './attrs';
import { broadcastShapes } from './combining';
import { MASK_BYTES, SOFTCAP_FLOPS_PER_ELEMENT, SOFTMAX_FLOPS_PER_ELEMENT } from './costs';
import type { InferContext, InferOk, OpInfo } from './types';

function seq(shape: Shape, what: string): { lead: number[]; t: number; e: number } {
  if (shape.length < 2) fail(`${what} must be [time, features] per sample (or more dims), got ${showShape(shape)}`);
  return { lead: shape.slice(0, -2), t: shape[shape.length - 2], e: shape[shape.length - 1] };
}

function coreFlops(heads: number, tq: number, tk: number, dk: number, dv: number): number {
  const scores = heads * tq * tk;
  return 2 * scores * dk + SOFTMAX_FLOPS_PER_ELEMENT * scores + 2 * scores * dv;
}

function inferMha(inputShapes: Shape[], attrs: Attrs, ctx: InferContext): InferOk {
  requireInputs(inputShapes, 1, 3, 'mha');
  // One input: self-attention. Two: Keras (query, value) with key = value. Three: (query, key, value).
  const qShape = inputShapes[0];
  const kShape = inputShapes.length === 3 ? inputShapes[1] : inputShapes[inputShapes.length - 1];
  const vShape = inputShapes[inputShapes.length - 1];
  const q = seq(qShape, 'mha query');
  const k = seq(kShape, 'mha key');
  const v = seq(vShape, 'mha value');
  if (k.t !== v.t) fail(`mha key and value lengths differ: ${showShape(kShape)} vs ${showShape(vShape)}`);
  const lead = broadcastShapes([q.lead, k.lead, v.lead], 'mha leading dims');
  const heads = posInt(attrs, 'numHeads');
  const hasBias = bool(attrs, 'bias', true);
  const keyDim = optInt(attrs, 'keyDim');

  let dk: number;
  let dv: number;
  if (keyDim !== undefined) {
    // Keras: per-head sizes are given; the output projects back to the query's feature size.
    dk = keyDim;
    dv = optInt(attrs, 'valueDim') ?? keyDim;
    if (dk <= 0 || dv <= 0) fail('mha keyDim/valueDim must be positive');
  } else {
    // PyTorch: embed_dim is split across heads; kdim/vdim are the key/value feature sizes.
    const embed = posInt(attrs, 'embedDim');
    if (q.e !== embed) fail(`mha embedDim is ${embed}, but the query has ${q.e} features`);
    const kdim = optInt(attrs, 'kdim') ?? embed;
    const vdim = optInt(attrs, 'vdim') ?? embed;
    if (k.e !== kdim) fail(`mha expects keys with ${kdim} features, got ${showShape(kShape)}`);
    if (v.e !== vdim) fail(`mha expects values with ${vdim} features, got ${showShape(vShape)}`);
    if (embed % heads !== 0) fail(`mha embedDim ${embed} is not divisible by numHeads ${heads}`);
    dk = dv = embed / heads;
  }
  const qk = heads * dk;
  const vv = heads * dv;
  const out = q.e;
  const params = q.e * qk + k.e * qk + v.e * vv + vv * out + (hasBias ? 2 * qk + vv + out : 0);
  const projectionFlops =
    2 * (q.t * q.e * qk + k.t * k.e * qk + v.t * v.e * vv + q.t * vv * out) + (hasBias ? q.t * qk + k.t * qk + v.t * vv + q.t * out : 0);
  const perLead = projectionFlops + coreFlops(heads, q.t, k.t, dk, dv);
  const forwardFlops = product(lead) * perLead;
  const distinctInputs = inputShapes.reduce((a, s) => a + product(s), 0);
  const projected = q.t * qk + k.t * qk + v.t * vv + heads * q.t * k.t;
  const saved = distinctInputs + product(lead) * (projected + q.t * vv);
  // Frozen, the four projections compute no weight gradient (one GEMM each, the forward's size, plus the bias sums)
  // and keep no input: not the query/key/value, not the attention output the out-projection reads (torch 1.13 with
  // saved_tensors_hooks: a frozen nn.MultiheadAttention saves T·E + T·E fewer elements per sample, self-attention).
  return {
    outputShape: [...lead, q.t, out],
    params,
    nonTrainable: 0,
    forwardFlops,
    backwardFlops: 2 * forwardFlops,
    savedActivationBytes: saved * ctx.dtypeBytes,
    frozen: { weightGradientFlops: product(lead) * projectionFlops, savedActivationBytes: product(lead) * projected * ctx.dtypeBytes },
  };
}

function inferSdpa(inputShapes: Shape[], attrs: Attrs, ctx: InferContext): InferOk {
  requireInputs(inputShapes, 1, 3, 'sdpa');
  const [qShape, kShape, vShape] = inputShapes.length === 3 ? inputShapes : [inputShapes[0], inputShapes[0], inputShapes[0]];
  if (inputShapes.length === 2) fail('sdpa takes (query, key, value) or one tensor used for all three');
  const q = seq(qShape, 'sdpa query');
  const k = seq(kShape, 'sdpa key');
  const v = seq(vShape, 'sdpa value');
  if (q.e !== k.e) fail(`sdpa query and key feature sizes differ: ${showShape(qShape)} vs ${showShape(kShape)}`);
  if (k.t !== v.t) fail(`sdpa key and value lengths differ: ${showShape(kShape)} vs ${showShape(vShape)}`);
  // (heads, T, d) inputs carry the heads as a leading dim, so heads = 1 here and the lead multiplies.
  const lead = broadcastShapes([q.lead, k.lead, v.lead], 'sdpa leading dims');
  // A window the kernel honours (ops.ts SdpaAttrs.window) is the model's work: each query attends `window` keys,
  // counted as full rows of them, as causal attention is counted as full rows of T (the planner runs the tiles).
  const window = attentionWindow(attrs);
  const attended = window === undefined ? k.t : Math.min(k.t, window);
  const products = product(lead) * coreFlops(1, q.t, attended, q.e, v.e);
  const scores = product(lead) * q.t * k.t;
  // Soft-capped logits (Gemma 2) add three element-wise ops per score, priced as the activation and mul layers are:
  // their backward about the forward (costs.ts), and eager keeps tanh's result for it (derivatives.yaml, tanh_backward).
  const capped = attentionSoftcap(attrs) !== undefined ? product(lead) * q.t * attended : 0;
  const softcapFlops = capped * SOFTCAP_FLOPS_PER_ELEMENT;
  // Eager attention with dropout keeps the softmax output, the dropped probabilities (the P·V product's input)
  // and a bool mask: Korthikanti et al. (2022, §4.1) count these as the 5as²b of a layer (2 + 2 + 1 bytes at fp16).
  const dropped = (attentionDropout(attrs) ?? 0) > 0 ? scores : 0;
  const saved = product(qShape) + product(kShape) + product(vShape) + scores + dropped + capped;
  return {
    outputShape: [...lead, q.t, v.e],
    params: 0,
    nonTrainable: 0,
    forwardFlops: products + softcapFlops,
    backwardFlops: 2 * products + softcapFlops,
    savedActivationBytes: saved * ctx.dtypeBytes + dropped * MASK_BYTES,
    ...(dropped > 0 ? { savedFixedBytes: dropped * MASK_BYTES } : {}),
  };
}

export const attentionOps: OpInfo[] = [
  { op: 'mha', family: 'attention', weighted: true, summary: 'Multi-head attention with input and output projections', infer: inferMha },
  { op: 'sdpa', family: 'attention', weighted: false, summary: 'Scaled dot-product attention softmax(QKᵀ/√d)·V', infer: inferSdpa },
];
