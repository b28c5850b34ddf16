/**
 * Training precision: which peak a GPU computes at, how many bytes each kind
 * of tensor takes, and which precision to assume when the user did not say.
 *
 * Mixed precision (fp16/bf16/fp8) follows Micikevicius et al., "Mixed
 * Precision Training" (ICLR 2018) and the ZeRO paper (Rajbhandari et al.,
 * SC 2020, §3.1): 16-bit weights, activations and gradients, with an fp32
 * master copy of the weights and fp32 optimizer state. TF32 keeps every tensor
 * in fp32 and only runs GEMMs/convolutions on tensor cores (NVIDIA A100
 * whitepaper, 2020).
 */
import type { AmpStyle, Precision } from '../../protocol/plan';
import type { GpuSpec } from '../cluster/spec';

export class PrecisionError extends Error {
  override name = 'PrecisionError';
}

/** Bytes per element of each tensor kind under a precision. */
export interface PrecisionBytes {
  /** Working weights the kernels read (16-bit under mixed precision). */
  weight: number;
  /**
   * Under autocast: the 16-bit copy of each weight autocast makes per forward, which a Linear or convolution keeps
   * for its backward (dX = dY·W), so it lives through the step. Only the weights of the ops autocast runs in 16 bits
   * have one (core/autocast.ts autocastCastsWeights), not embeddings' or norms': modelStateBytes takes their count.
   */
  castCopy: number;
  /** fp32 master weights kept beside the 16-bit ones (0 when the weights are fp32 already). */
  master: number;
  gradient: number;
  activation: number;
  /** Each optimizer state buffer (Adam's m and v, momentum): fp32 always. */
  optimizerState: number;
}

/**
 * Saved-activation bytes at the training precision from the catalogue's (counted at the model's dtype):
 * float tensors scale by `scale` (activation bytes ÷ model dtype bytes); int64 indices and bool masks
 * (`fixed`, part of `saved`) keep their size: autocast and .half() cast floating-point tensors only.
 */
export function savedBytesAtPrecision(saved: number, fixed: number, scale: number): number {
  const f = Math.min(Math.max(0, fixed), Math.max(0, saved));
  return (Math.max(0, saved) - f) * scale + f;
}

/**
 * fp8 (Transformer Engine, NVIDIA 2022) runs GEMMs in fp8 but keeps weights,
 * gradients and most saved activations in bf16 with fp32 master weights, so
 * its bytes are bf16's; only the compute rate differs. The 16-bit styles
 * (AmpStyle) differ in what they keep in fp32:
 * - master-weights (the ZeRO paper's 2 + 2 + 12 for Adam): 16-bit weights and gradients, fp32 master and state;
 * - autocast (torch.amp): parameters, gradients (`.grad` has the parameter's dtype, so DDP all-reduces fp32) and
 *   state in fp32, plus the 16-bit copies autocast casts;
 * - pure: everything 16-bit, optimizer state included (torch optimizers keep state in the parameter's dtype).
 */
export function precisionBytes(p: Precision, style: AmpStyle = 'master-weights'): PrecisionBytes {
  if (p === 'fp32' || p === 'tf32') return { weight: 4, castCopy: 0, master: 0, gradient: 4, activation: 4, optimizerState: 4 };
  if (style === 'autocast') return { weight: 4, castCopy: 2, master: 0, gradient: 4, activation: 2, optimizerState: 4 };
  if (style === 'pure') return { weight: 2, castCopy: 0, master: 0, gradient: 2, activation: 2, optimizerState: 2 };
  // Megatron's fp32 main_grad buffer (param_and_grad_buffer.py: grad dtype torch.float under
  // accumulate_allreduce_grads_in_fp32): gradients held, accumulated and reduced at 4 bytes.
  if (style === 'fp32-gradients') return { weight: 2, castCopy: 0, master: 4, gradient: 4, activation: 2, optimizerState: 4 };
  return { weight: 2, castCopy: 0, master: 4, gradient: 2, activation: 2, optimizerState: 4 };
}

/** The style a 16-bit plan uses and why: the flag, setting or training config that states it, else master weights. */
export function chooseAmpStyle(p: Precision, explicit?: AmpStyle, source?: string): { style: AmpStyle; reason: string } | undefined {
  if (!isMixed(p)) return undefined;
  if (explicit) return { style: explicit, reason: source ? `from ${source}` : 'requested' };
  return { style: 'master-weights', reason: 'default: 16-bit weights with an fp32 master copy, as DeepSpeed, Megatron-LM and FSDP MixedPrecision train (--amp-style autocast for torch.autocast)' };
}

export function isMixed(p: Precision): boolean {
  return p === 'fp16' || p === 'bf16' || p === 'fp8';
}

interface KnownPeaks {
  match: RegExp;
  peaks: Partial<Record<Precision, number>>;
  source: string;
}

/**
 * Dense (non-sparse) datasheet peaks for GPUs a spec may name without giving
 * `peakTflops`. Order matters: the first match wins (H100 PCIe before H100).
 */
const KNOWN_PEAKS: KnownPeaks[] = [
  { match: /H100.*PCIe/i, peaks: { fp32: 51, tf32: 378, bf16: 756, fp16: 756, fp8: 1513 }, source: 'NVIDIA H100 datasheet (PCIe, dense)' },
  { match: /H100|H200/i, peaks: { fp32: 67, tf32: 494.7, bf16: 989.4, fp16: 989.4, fp8: 1978.9 }, source: 'NVIDIA H100 Tensor Core GPU Architecture whitepaper (2022), SXM5 dense' },
  { match: /A100/i, peaks: { fp32: 19.5, tf32: 156, bf16: 312, fp16: 312 }, source: 'NVIDIA A100 datasheet (2020), dense' },
  { match: /V100/i, peaks: { fp32: 15.7, fp16: 125 }, source: 'NVIDIA Tesla V100 datasheet (SXM2): 125 TFLOPS fp16 tensor cores' },
  // Pascal has no tensor cores and GP102 runs native fp16 at 1/64 rate (CUDA C Programming Guide, arithmetic
  // instruction throughput for compute capability 6.1); AMP's fp16 GEMMs then compute in fp32 (cuBLAS
  // CUBLAS_COMPUTE_32F with fp16 storage), so fp16 training runs at the fp32 rate.
  { match: /TITAN Xp|GTX 10[78]0|P40\b/i, peaks: { fp32: 12.1, fp16: 12.1 }, source: 'NVIDIA TITAN Xp specifications; Pascal fp16 storage with fp32 arithmetic (CUDA C Programming Guide, CC 6.1)' },
];

export interface PeakLookup {
  tflops: number;
  /** Where a peak not in the spec came from, for a diagnostic. */
  defaultedFrom?: string;
}

/**
 * The dense peak a GPU computes at under `p`: the spec's `peakTflops[p]`, else
 * a known GPU's datasheet value (cited), else a PrecisionError naming the field.
 * tf32 on a GPU without TF32 tensor cores is fp32 (cuBLAS falls back).
 */
export function peakTflops(gpu: GpuSpec, p: Precision): PeakLookup {
  const given = gpu.peakTflops?.[p];
  if (given !== undefined) return { tflops: given };
  if (p === 'fp32') return { tflops: gpu.tflops };
  const known = KNOWN_PEAKS.find((k) => k.match.test(gpu.name));
  const value = known?.peaks[p];
  if (known && value !== undefined) return { tflops: value, defaultedFrom: `${gpu.name} ${p} peak ${value} TFLOPS from ${known.source} (the spec has no peakTflops.${p})` };
  if (p === 'tf32' && known) return { tflops: gpu.tflops, defaultedFrom: `${gpu.name} has no TF32 tensor cores: tf32 runs at the fp32 peak` };
  throw new PrecisionError(`GPU '${gpu.name}' has no peakTflops.${p} in the cluster spec: add "peakTflops": { "${p}": <dense TFLOPS from its datasheet> } to the GPU, or choose another --precision`);
}

/** The precision a plan uses, and why. */
export interface PrecisionChoice {
  precision: Precision;
  reason: string;
  /** For 16-bit precisions (chooseAmpStyle). */
  amp?: { style: AmpStyle; reason: string };
  /** At fp32, the share of the model's FLOPs that runs on TF32 tensor cores (its convolutions, planner/tf32Convolutions.ts). */
  tf32FlopShare?: number;
}

/**
 * An explicit precision (flag, setting or training config) wins. Otherwise the
 * GPU's best supported mixed precision, as the frameworks' guides recommend:
 * bf16 where there are bf16 tensor cores (Ampere and later: A100 whitepaper),
 * fp16 with loss scaling on Volta (V100 datasheet: fp16 tensor cores only),
 * fp32 elsewhere (no tensor cores to gain from).
 */
export function choosePrecision(gpu: GpuSpec, explicit?: Precision, source?: string): PrecisionChoice {
  if (explicit) return { precision: explicit, reason: source ? `from ${source}` : 'requested' };
  if (hasPeak(gpu, 'bf16')) return { precision: 'bf16', reason: `default: ${gpu.name} has bf16 tensor cores` };
  if (hasPeak(gpu, 'fp16') && tensorCoreGain(gpu, 'fp16')) return { precision: 'fp16', reason: `default: ${gpu.name} has fp16 (not bf16) tensor cores` };
  return { precision: 'fp32', reason: `default: ${gpu.name} has no 16-bit tensor cores` };
}

function hasPeak(gpu: GpuSpec, p: Precision): boolean {
  try {
    peakTflops(gpu, p);
    return true;
  } catch {
    return false;
  }
}

/**
 * Whether a GPU has TF32 tensor cores: a TF32 peak above its fp32 one (A100, H100). A GPU without them (V100,
 * TITAN Xp) runs tf32 at the fp32 peak, or has no TF32 peak at all.
 */
export function hasTf32TensorCores(gpu: GpuSpec): boolean {
  return hasPeak(gpu, 'tf32') && peakTflops(gpu, 'tf32').tflops > gpu.tflops;
}

/** fp16 is worth defaulting to only when it computes faster than fp32 (not on Pascal, where it is storage only). */
function tensorCoreGain(gpu: GpuSpec, p: Precision): boolean {
  return peakTflops(gpu, p).tflops > gpu.tflops * 1.5;
}

/**
 * The default for a group of GPUs: the best precision every one of them runs
 * well (a mixed A100 + V100 cluster trains in fp16, not bf16 the V100 lacks).
 */
export function choosePrecisionFor(gpus: readonly GpuSpec[], explicit?: Precision, source?: string): PrecisionChoice {
  if (explicit || gpus.length === 0) return choosePrecision(gpus[0], explicit, source);
  const distinct = [...new Map(gpus.map((g) => [g.name, g])).values()];
  const choices = distinct.map((g) => choosePrecision(g));
  if (choices.every((c) => c.precision === choices[0].precision)) return choices[0];
  const rank: Precision[] = ['fp32', 'fp16', 'bf16'];
  const worst = choices.reduce((a, b) => (rank.indexOf(b.precision) < rank.indexOf(a.precision) ? b : a));
  const ok = worst.precision === 'fp32' || distinct.every((g) => hasPeak(g, worst.precision));
  const precision = ok ? worst.precision : 'fp32';
  return { precision, reason: `default: the best precision all of ${distinct.map((g) => g.name).join(', ')} support (${choices.map((c, i) => `${distinct[i].name}: ${c.precision}`).join('; ')})` };
}
