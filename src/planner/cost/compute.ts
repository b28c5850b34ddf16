/**
 * Analytical compute time: a roofline max(FLOPs / (peak · efficiency),
 * bytes / (bandwidth · efficiency)) plus a kernel-launch floor. GEMM-shaped
 * layers (linear, conv, attention, RNN) take their efficiency from their
 * shape and precision (cost/efficiency.ts); the rest are priced by the
 * memory roofline. No layer runs above the precision's peak.
 */
import { autocastCastsWeights } from '../../core/autocast';
import type { AnalyzedLayer, LayerWorkload, OpKind } from '../../core/ir';
import { product } from '../../core/ir';
import { samplesRun } from '../../core/oncePerForward';
import { MASK_BYTES } from '../../core/catalogue/costs';
import { attentionDropout, attentionSoftcap, attentionWindow } from '../../core/ops';
import type { Precision } from '../../protocol/plan';
import type { GpuSpec } from '../cluster/spec';
import { hasTf32TensorCores, peakTflops } from '../memory/precision';
import { eagerNormTraffic } from './eagerNorm';
import { fastConvGain, gemmEfficiency, layerGemms, type GemmShape } from './efficiency';
import { expertGroup, gatheredRows, groupedGemms, routingBookkeeping } from './expertKernels';
import { castTraffic, layerPrecision } from './pinnedDtype';

/**
 * Non-GEMM kernels (element-wise, normalisation, pooling) run on CUDA cores
 * at a few FLOPs per element loaded; a quarter of the fp32 peak keeps their
 * FLOP term below their memory term, which is what decides them (Williams et
 * al., "Roofline", CACM 2009: such kernels sit far left of the ridge point).
 */
const NON_GEMM_EFFICIENCY = 0.25;

/**
 * Fraction of datasheet memory bandwidth streaming kernels reach: BabelStream
 * (Deakin et al., 2016–2018) measures 75–90% on P100/V100/A100; kernels that
 * read and write different tensors sit at the low end.
 */
const MEMORY_EFFICIENCY = 0.75;
/** Launch/framework overhead per kernel, ms (CUDA kernel launch ≈ 5 µs); a layer's backward launches two (input and weight gradients). */
const KERNEL_LAUNCH_MS = 0.006;
/** Views cost nothing: no kernel runs. */
const FREE_OPS = new Set<OpKind>(['input', 'flatten', 'reshape', 'identity']);

/**
 * How attention runs. 'fused' (FlashAttention, Dao et al., NeurIPS 2022; what
 * PyTorch ≥ 2's scaled_dot_product_attention dispatches on tensor-core GPUs)
 * keeps the T×T scores in on-chip SRAM: only Q, K, V and the output touch HBM.
 * 'unfused' (eager attention; Megatron-LM before 2022) writes the scores and
 * probabilities to HBM between kernels, and those passes are memory-bound.
 */
export type AttentionKernel = 'fused' | 'unfused';

/**
 * The kernel an attention layer runs under the plan's choice (fused when the plan does not say); undefined for
 * layers that are not attention. sdpa follows the plan. nn.MultiheadAttention dispatches to
 * scaled_dot_product_attention only when called with need_weights=False; a call that returns its weights (the
 * default), or an mha whose call did not say (Keras), computes the T×T weights explicitly
 * (torch.nn.functional.multi_head_attention_forward).
 */
export function attentionKernelOf(layer: AnalyzedLayer, planned: AttentionKernel = 'fused'): AttentionKernel | undefined {
  if (layer.op === 'sdpa') return planned;
  if (layer.op !== 'mha') return undefined;
  return (layer.attrs as Record<string, unknown>).needWeights === false ? planned : 'unfused';
}

export interface ComputeOptions {
  attention?: AttentionKernel;
  /** How activations are stored ('channels_first' = PyTorch's default NCHW); channels_last when absent. */
  memoryFormat?: 'channels_first' | 'channels_last';
  /**
   * Training runs under torch.autocast with fp32 parameters: each weighted op that computes in 16 bits first casts
   * its weights (read fp32, write 16-bit, once per forward: autocast caches casts only within one autocast region),
   * and its weight gradient comes back through that cast into the fp32 `.grad` (read 16-bit, write fp32).
   */
  autocast?: boolean;
  /**
   * At fp32, convolutions run on TF32 tensor cores where the GPU has them: PyTorch's `torch.backends.cudnn.allow_tf32`
   * defaults to True (PyTorch docs, CUDA semantics, "TensorFloat-32 (TF32) on Ampere (and later) devices"), and
   * TensorFlow enables TF32 by default since 2.4 (`tf.config.experimental.enable_tensor_float_32_execution`).
   * Matmuls keep fp32 unless the plan is tf32 (PyTorch ≥ 1.12 turns matmul TF32 off by default).
   */
  tf32Convolutions?: boolean;
  /**
   * Expert-parallel degree: a GPU holds count/ep of a block's experts, which a grouped experts kernel
   * (core/moe.ts ExpertAttrs.grouped) runs as one GEMM per projection. 1 when absent.
   */
  expertParallel?: number;
}

/** The precision a layer's GEMMs run at: an fp32 convolution on TF32 tensor cores where the framework's default allows it. */
function gemmPrecision(layer: AnalyzedLayer, gpu: GpuSpec, precision: Precision, options: ComputeOptions): Precision {
  if (precision !== 'fp32' || !options.tf32Convolutions || (layer.op !== 'conv' && layer.op !== 'separable_conv')) return precision;
  // A GPU without TF32 tensor cores (V100, TITAN Xp) stays at fp32.
  return hasTf32TensorCores(gpu) ? 'tf32' : precision;
}

/** Precisions whose convolutions run on tensor cores (implicit GEMM in NHWC). */
const TENSOR_CORE = new Set<Precision>(['tf32', 'fp16', 'bf16', 'fp8']);

/**
 * HBM bytes per sample (forward) that an NCHW tensor-core convolution spends
 * on layout transposes: cuDNN's tensor-core kernels work in NHWC, so an NCHW
 * input is transposed to NHWC before the convolution and the output back
 * after (NVIDIA, "Convolutional Layers User's Guide", Deep Learning
 * Performance docs, "Tensor Layouts in Memory: NCHW vs NHWC"; PyTorch's
 * channels_last tutorial). Each transpose reads and writes its tensor once.
 * fp32 on CUDA cores has native NCHW kernels and pays nothing.
 */
export function nchwTransposeBytes(layer: AnalyzedLayer, dtypeBytes: number, precision: Precision, format: ComputeOptions['memoryFormat']): number {
  if (format !== 'channels_first' || !TENSOR_CORE.has(precision) || (layer.op !== 'conv' && layer.op !== 'separable_conv')) return 0;
  const out = layer.outputShape ? product(layer.outputShape) * dtypeBytes : 0;
  return 2 * (product(layer.inputShapes[0] ?? []) * dtypeBytes + out);
}

/**
 * HBM passes over the T×T score matrix in unfused attention, in elements at
 * the activation precision (Megatron-LM's kernel sequence, Shoeybi et al.
 * 2019; Dao et al. 2022 §2.2, Algorithm 0 "standard attention"):
 * forward: QKᵀ writes S, the fused scale-mask-softmax reads S and writes P,
 * dropout reads P and writes P', P'·V reads P' — 6 passes, plus a 1-byte mask;
 * backward: dP = dO·Vᵀ writes, dropout-backward reads dP and writes, softmax
 * backward reads P and dP' and writes dS, dV = P'ᵀ·dO reads P', dQ and dK read
 * dS — 9 passes plus the mask read. Korthikanti et al. (2022, Table 2) count
 * the same stored tensors (5·a·s²·b bytes of softmax and dropout per layer).
 * Without dropout (a stated probability of 0: ATen returns the input) the
 * two dropout passes each way and the mask go: 4 forward, 7 backward.
 */
const UNFUSED_SCORE_PASSES = { forward: 6, backward: 9 };
const DROPOUT_SCORE_PASSES = 2;
/**
 * Soft-capped logits (Gemma 2, transformers' eager_attention_forward): `/ cap`, `tanh` and `* cap` each read the
 * scores and write them, 6 passes forward; backward, the two scalar products read the gradient and write it
 * (2 each) and tanh_backward reads the gradient and its saved result (derivatives.yaml) and writes, 7 passes.
 */
const SOFTCAP_SCORE_PASSES = { forward: 6, backward: 7 };

/** Score-matrix elements per sample: heads × T_q × T_k (sdpa on (…, T, d); mha from its heads attr). */
export function scoreElements(layer: AnalyzedLayer): number {
  const q = layer.inputShapes[0] ?? [];
  if (q.length < 2) return 0;
  const tq = q[q.length - 2];
  const k = layer.inputShapes[1] ?? q;
  const tk = k.length >= 2 ? k[k.length - 2] : tq;
  if (layer.op === 'sdpa') return product(q.slice(0, -2)) * tq * tk;
  if (layer.op === 'mha') return (Number((layer.attrs as Record<string, unknown>).numHeads) || 1) * tq * tk;
  return 0;
}

/** Extra HBM bytes per sample (forward, backward) that unfused attention spends on its score matrix. */
export function unfusedAttentionBytes(layer: AnalyzedLayer, dtypeBytes: number): { forward: number; backward: number } {
  const e = scoreElements(layer);
  const cap = attentionSoftcap(layer.attrs) !== undefined ? SOFTCAP_SCORE_PASSES : { forward: 0, backward: 0 };
  if (attentionDropout(layer.attrs) === 0) {
    const passes = { forward: UNFUSED_SCORE_PASSES.forward - DROPOUT_SCORE_PASSES + cap.forward, backward: UNFUSED_SCORE_PASSES.backward - DROPOUT_SCORE_PASSES + cap.backward };
    return { forward: e * passes.forward * dtypeBytes, backward: e * passes.backward * dtypeBytes };
  }
  const passes = { forward: UNFUSED_SCORE_PASSES.forward + cap.forward, backward: UNFUSED_SCORE_PASSES.backward + cap.backward };
  return { forward: e * (passes.forward * dtypeBytes + MASK_BYTES), backward: e * (passes.backward * dtypeBytes + MASK_BYTES) };
}

/**
 * The backward GEMM a fused attention kernel adds: it keeps no scores, so it recomputes S = QKᵀ tile by tile
 * before the four backward products (Dao et al., FlashAttention, NeurIPS 2022, Algorithm 4; FlashAttention-2,
 * ICLR 2024, §4.1: the backward does 2.5× the forward's FLOPs instead of 2×). Per sample: Tq × Tk × d_k
 * multiply-adds per head, as one batched GEMM.
 */
export function fusedRecomputeGemm(layer: AnalyzedLayer, samples: number, share: number): { flops: number; shape: GemmShape } | undefined {
  const q = layer.inputShapes[0] ?? [];
  const k = layer.inputShapes[1] ?? q;
  if (q.length < 2 || k.length < 2) return undefined;
  const tq = q[q.length - 2];
  const tk = k[k.length - 2];
  const heads = layer.op === 'mha' ? Number((layer.attrs as Record<string, unknown>).numHeads) || 1 : 1;
  const dk = q[q.length - 1] / heads;
  const copies = samples * share * heads * (layer.op === 'sdpa' ? product(q.slice(0, -2)) : 1);
  if (!(copies > 0 && dk > 0)) return undefined;
  return { flops: 2 * tq * tk * dk * copies, shape: { m: tq, n: tk, k: dk, batch: Math.max(1, copies) } };
}

/** FlashAttention-2's query and key block edge on A100 (Dao, ICLR 2024, §3.3: blocks of 64 or 128; 128 for d ≤ 128). */
const FLASH_BLOCK = 128;

/**
 * Fraction of the score tiles a fused kernel computes under sdpa's `is_causal`: FlashAttention-2 skips every key
 * block wholly after its query block (Dao, ICLR 2024, §3.1.1: "about 1.7–1.8× speedup" over no mask at long
 * sequences). PyTorch aligns the causal mask top-left: query block i sees key blocks 0..i. Eager attention
 * computes every score and masks it, and nn.MultiheadAttention's masks are general ones: 1 for those. A sliding
 * window the kernel honours (flash-attn's window_size) runs the key blocks within reach of each query block; the
 * layer's FLOPs count full rows of `window` keys, so the fraction is of those (eager: all keys, above 1).
 */
export function causalTileFraction(layer: AnalyzedLayer, kernel: AttentionKernel | undefined): number {
  if (layer.op !== 'sdpa') return 1;
  const q = layer.inputShapes[0] ?? [];
  const k = layer.inputShapes[1] ?? q;
  if (q.length < 2 || k.length < 2) return 1;
  const window = attentionWindow(layer.attrs);
  const keys = k[k.length - 2];
  // The layer's FLOPs count `window` keys a query (the catalogue); eager attention computes every key and masks.
  if (kernel !== 'fused') return window !== undefined && keys > window ? keys / window : 1;
  if ((layer.attrs as Record<string, unknown>).causal !== true) return 1;
  const nq = Math.ceil(q[q.length - 2] / FLASH_BLOCK);
  const nk = Math.ceil(k[k.length - 2] / FLASH_BLOCK);
  if (!(nq > 0 && nk > 0)) return 1;
  if (window !== undefined && window < keys) {
    // A window of w keys reaches back over ⌈w / block⌉ blocks before the query's own: each query block runs at most
    // that many + 1, fewer near the start (Σ over i of min(i + 1, reach + 1, nk)), of the w / block a row counts.
    const reach = Math.ceil(window / FLASH_BLOCK);
    let tiles = 0;
    for (let i = 0; i < nq; i++) tiles += Math.min(i + 1, reach + 1, nk);
    return tiles / (nq * (window / FLASH_BLOCK));
  }
  // Σ over query blocks i of min(nk, i + 1): a triangle up to the diagonal's end, then full rows of nk.
  const m = Math.min(nq, nk);
  return ((m * (m + 1)) / 2 + (nq - m) * nk) / (nq * nk);
}

export interface PassTimes {
  forwardMs: number;
  backwardMs: number;
}

export function inputBytesPerSample(layer: AnalyzedLayer, dtypeBytes: number): number {
  let s = 0;
  for (const shape of layer.inputShapes) s += product(shape) * dtypeBytes;
  return s;
}

/** Milliseconds for `flops` of this GEMM at its shape's efficiency, never above the peak. */
function gemmMs(flops: number, g: GemmShape, gpu: GpuSpec, precision: Precision, peakPerMs: number, gain: number): number {
  if (flops <= 0) return 0;
  return flops / (peakPerMs * Math.min(1, gemmEfficiency(g, gpu, precision) * gain));
}

/**
 * Times for one device running a forward of `samplesInForward` samples through the layer (once, for a layer
 * marked once per forward), doing `share` of its work (1/k under model parallelism) and holding `paramShare` of its weights.
 * `planDtypeBytes` is the plan precision's activation/weight element size; the FLOP rate
 * is the precision's dense peak (tensor cores for tf32/fp16/bf16/fp8). A layer a cast
 * pinned runs at its own dtype instead, and a cast moves its bytes (cost/pinnedDtype.ts).
 */
export function analyticalTimes(layer: AnalyzedLayer, gpu: GpuSpec, samplesInForward: number, share: number, paramShareOf: number, planDtypeBytes: number, planPrecision: Precision = 'fp32', options: ComputeOptions = {}): PassTimes {
  // Work done once per forward (core/oncePerForward.ts) runs once whatever the micro-batch: its FLOPs, bytes and GEMM rows.
  const samples = samplesRun(layer, samplesInForward);
  if (FREE_OPS.has(layer.op) || samples <= 0 || routingBookkeeping(layer)) return { forwardMs: 0, backwardMs: 0 };
  const w = layer.workload;
  const weightGradient = w.backward === undefined;
  const bytesPerMs = gpu.memoryBandwidthGBs * 1e6 * MEMORY_EFFICIENCY;
  const cast = castTraffic(layer, planPrecision);
  if (cast) {
    const times = castTimes(layer, cast, samples * share, bytesPerMs);
    return w.backward === 'none' ? { ...times, backwardMs: 0 } : times;
  }
  // Activations a cast pinned (an fp32 softmax in a bf16 plan) run at their own size and rate.
  const { bytes: dtypeBytes, precision: stored } = layerPrecision(layer, gpu, planDtypeBytes, planPrecision);
  const precision = gemmPrecision(layer, gpu, stored, options);
  const peakPerMs = peakTflops(gpu, precision).tflops * 1e9;
  const outBytes = layer.outputShape ? product(layer.outputShape) * dtypeBytes : w.activationBytes;
  const io = ((gatheredRows(layer) ? outBytes : inputBytesPerSample(layer, dtypeBytes)) + outBytes) * samples * share;
  // Frozen weights are read as trained ones are (core/frozenParameters.ts).
  const heldParams = w.params + (w.frozenParams ?? 0);
  const weights = heldParams * dtypeBytes * paramShareOf;
  const kernel = attentionKernelOf(layer, options.attention);
  const computed = causalTileFraction(layer, kernel);
  const fwdFlops = w.forwardFlops * samples * share * computed;
  const bwdFlops = w.backwardFlops * samples * share * computed;
  const group = expertGroup(layer, options.expertParallel);
  const gemms = groupedGemms(layerGemms(layer, samples, share), group);
  let fwdCompute: number;
  let bwdCompute: number;
  if (gemms) {
    const gain = fastConvGain(layer, precision);
    fwdCompute = gemmMs(fwdFlops, gemms.forward, gpu, precision, peakPerMs, gain);
    // Half the backward FLOPs compute the input gradient, half the weight gradient, each its own GEMM shape; a
    // frozen layer's backward (already halved) is the input gradient alone.
    bwdCompute = weightGradient
      ? gemmMs(bwdFlops / 2, gemms.inputGrad, gpu, precision, peakPerMs, gain) + gemmMs(bwdFlops / 2, gemms.weightGrad, gpu, precision, peakPerMs, gain)
      : gemmMs(bwdFlops, gemms.inputGrad, gpu, precision, peakPerMs, gain);
  } else {
    // CUDA cores, at the fp32 rate whatever the storage precision.
    const rate = gpu.tflops * 1e9 * NON_GEMM_EFFICIENCY;
    fwdCompute = fwdFlops / rate;
    bwdCompute = bwdFlops / rate;
  }
  // A grouped kernel's launches are shared by the experts it covers.
  const steps = (gemms?.sequential ?? 1) / group;
  let kernels = { forward: steps, backward: (weightGradient ? 2 : 1) * steps };
  let fwdBytes = io + weights;
  // Backward reads activations and output grads, writes input and weight grads: about twice the traffic (a frozen
  // layer reads its weights and writes no weight gradient).
  let bwdBytes = 2 * io + (weightGradient ? 2 : 1) * weights;
  const eager = eagerNormTraffic(layer, dtypeBytes);
  if (eager) {
    // A Python RMSNorm: one kernel per op, each through HBM (cost/eagerNorm.ts).
    const elements = (layer.outputShape ? product(layer.outputShape) : 0) * samples * share;
    fwdBytes = eager.forwardBytesPerElement * elements + weights;
    bwdBytes = eager.backwardBytesPerElement * elements + 2 * weights;
    kernels = { forward: eager.forwardKernels, backward: eager.backwardKernels };
  }
  let fwd = Math.max(fwdCompute, fwdBytes / bytesPerMs);
  let bwd = Math.max(bwdCompute, bwdBytes / bytesPerMs);
  if (options.autocast && heldParams > 0 && dtypeBytes < 4 && autocastCastsWeights(layer.op)) {
    // Separate _to_copy kernels before the op's own (the forward's) and after its weight gradient (the backward's).
    const castBytes = heldParams * paramShareOf * (4 + dtypeBytes);
    fwd += castBytes / bytesPerMs + KERNEL_LAUNCH_MS;
    if (weightGradient) bwd += castBytes / bytesPerMs + KERNEL_LAUNCH_MS;
  }
  if (heldParams > 0) {
    const dequant = dequantizeMs(w, paramShareOf, dtypeBytes, gpu);
    fwd += dequant;
    bwd += dequant;
  }
  if (kernel === 'unfused') {
    // Separate kernels run one after another: the score passes add to the GEMMs' time rather than overlap it.
    const extra = unfusedAttentionBytes(layer, dtypeBytes);
    fwd += (extra.forward * samples * share) / bytesPerMs;
    bwd += (extra.backward * samples * share) / bytesPerMs;
  } else if (kernel === 'fused') {
    const recompute = fusedRecomputeGemm(layer, samples, share);
    if (recompute) bwd += gemmMs(recompute.flops * computed, recompute.shape, gpu, precision, peakPerMs, 1);
  }
  const transpose = nchwTransposeBytes(layer, dtypeBytes, precision, options.memoryFormat) * samples * share;
  if (transpose > 0) {
    // Separate transpose kernels around the convolution; backward transposes dY in and dX out, and X again for dW.
    fwd += transpose / bytesPerMs;
    bwd += (2 * transpose) / bytesPerMs;
  }
  // Upstream of every trained parameter autograd records nothing (core/frozenParameters.ts): the forward alone.
  if (w.backward === 'none') return { forwardMs: fwd + KERNEL_LAUNCH_MS * kernels.forward, backwardMs: 0 };
  return { forwardMs: fwd + KERNEL_LAUNCH_MS * kernels.forward, backwardMs: bwd + KERNEL_LAUNCH_MS * kernels.backward };
}

/**
 * A dtype conversion: one kernel reading each element at the source's size and writing it at the target's; its
 * backward converts the gradient back the other way. Nothing runs where the plan's dtype makes both sides agree.
 */
function castTimes(layer: AnalyzedLayer, cast: { read: number; written: number }, samples: number, bytesPerMs: number): PassTimes {
  if (cast.read === 0 && cast.written === 0) return { forwardMs: 0, backwardMs: 0 };
  const elements = (layer.outputShape ? product(layer.outputShape) : 0) * samples;
  const ms = (elements * (cast.read + cast.written)) / bytesPerMs + KERNEL_LAUNCH_MS;
  return { forwardMs: ms, backwardMs: ms };
}

/**
 * Achieved FLOP/s of a layer's forward and backward passes under analyticalTimes (for the no-layer-above-peak
 * check), counting the FLOPs the kernel runs: a causal fused kernel skips its masked tiles.
 */
export function achievedTflops(layer: AnalyzedLayer, gpu: GpuSpec, samples: number, dtypeBytes: number, precision: Precision = 'fp32'): { forward: number; backward: number } {
  const t = analyticalTimes(layer, gpu, samples, 1, 1, dtypeBytes, precision);
  const w = layer.workload;
  const run = samplesRun(layer, samples) * causalTileFraction(layer, attentionKernelOf(layer));
  return {
    forward: t.forwardMs > 0 ? (w.forwardFlops * run) / t.forwardMs / 1e9 : 0,
    backward: t.backwardMs > 0 ? (w.backwardFlops * run) / t.backwardMs / 1e9 : 0,
  };
}

/**
 * bitsandbytes dequantizes a quantized weight to the compute dtype before the forward matmul and again before the
 * input-gradient one (MatMul4Bit, MatMul8bitLt): a kernel reading the stored bytes and writing the 16-bit copy, once
 * per pass. 0 for a layer held unquantized.
 */
export function dequantizeMs(w: LayerWorkload, paramShare: number, computeDtypeBytes: number, gpu: GpuSpec): number {
  if (!w.quantized) return 0;
  const bytesPerMs = gpu.memoryBandwidthGBs * 1e6 * MEMORY_EFFICIENCY;
  return ((w.quantized.bytes + w.quantized.params * computeDtypeBytes) * paramShare) / bytesPerMs + KERNEL_LAUNCH_MS;
}

/**
 * Optimizer step: read params, grads and state, write params and state. `stateBytesPerParam`: all of a parameter's
 * state buffers (memory/optimizerState.ts), so an 8-bit optimizer moves a quarter of a 32-bit one's state.
 */
export function updateMs(paramsOnDevice: number, stateBytesPerParam: number, gpu: GpuSpec, dtypeBytes: number): number {
  if (paramsOnDevice <= 0) return 0;
  return updateBytes(paramsOnDevice, stateBytesPerParam, dtypeBytes) / (gpu.memoryBandwidthGBs * 1e6 * MEMORY_EFFICIENCY);
}

function updateBytes(params: number, stateBytesPerParam: number, dtypeBytes: number): number {
  return params * (3 * dtypeBytes + 2 * stateBytesPerParam);
}

/**
 * The offloaded optimizer step on the CPU (DeepSpeed's CPU-Adam, or torch's optimizer over FSDP's CPU shards) for
 * this GPU's shard of `params`: the same streams as the GPU update over fp32 master weights, at the rank's share of
 * host DRAM bandwidth (Adam does a handful of flops per 28 bytes, so it is memory-bound). Datasheet DRAM peaks make
 * it a lower bound. `hostShare`: GPUs' shares of the node's bandwidth each rank gets (Topology.hostShare). undefined
 * when the spec states no host memory bandwidth: the step is then not modelled.
 */
export function hostUpdateMs(params: number, stateBytesPerParam: number, gpu: GpuSpec, hostShare = 1): number | undefined {
  if (gpu.hostMemoryBandwidthGBs === undefined) return undefined;
  return params > 0 ? updateBytes(params, stateBytesPerParam, 4) / (gpu.hostMemoryBandwidthGBs * hostShare * 1e6) : 0;
}
