/**
 * Analytical compute time: a roofline max(FLOPs / (peak · efficiency),
 * bytes / (bandwidth · efficiency)) plus a kernel-launch floor. Efficiency
 * factors per op kind (and per convolution shape) are what cuDNN/cuBLAS
 * typically reach on large fp32 problems; the sources are cited below.
 */
import type { AnalyzedLayer, OpKind } from '../../core/ir';
import { product } from '../../core/ir';
import type { Precision } from '../../protocol/plan';
import type { GpuSpec } from '../cluster/spec';
import { peakTflops } from '../memory/precision';

/**
 * Effective fraction of fp32 peak per op kind, against the FLOPs the catalogue
 * counts (direct convolution, plain GEMM). Sources:
 * - linear 0.65, matmul 0.6: cuBLAS SGEMM reaches ~80–90% of peak on large
 *   square problems, less when one dimension is the (micro-)batch of 32–256.
 * - mha 0.5, sdpa 0.45: several GEMMs plus softmax/reshapes between them.
 * - rnn 0.3: sequential per-step GEMMs, small and latency-bound.
 * - separable_conv 0.3, and the 0.25 default: memory-bound kernels, where the
 *   roofline's bandwidth term usually decides anyway.
 * Convolutions: see convEfficiency.
 */
const COMPUTE_EFFICIENCY: Partial<Record<OpKind, number>> = {
  conv: 0.75,
  separable_conv: 0.3,
  linear: 0.65,
  matmul: 0.6,
  mha: 0.5,
  sdpa: 0.45,
  rnn: 0.3,
};
const DEFAULT_COMPUTE_EFFICIENCY = 0.25;

/**
 * cuDNN picks a different algorithm per convolution shape, so one factor per
 * op kind over- or under-states most layers. Against direct-convolution FLOPs:
 * - 3×3, stride 1: Winograd (cuDNN WINOGRAD / WINOGRAD_NONFUSED, forward and
 *   both backward passes). F(2×2,3×3) needs 2.25× fewer multiplies; Lavin &
 *   Gray (CVPR 2016) measured ~1.5–1.7× over cuDNN's GEMM kernels on VGG
 *   layers, so ~0.75 × 1.6 ≈ 1.2 of peak in direct-FLOP terms.
 * - 5×5, stride 1: FFT tiling (Vasilache et al., ICLR 2015 "fbfft") gains less
 *   at these sizes than Winograd does at 3×3: ~1.4× over GEMM, ≈ 1.05.
 * - everything else (strided or large kernels, 1×1): implicit GEMM, which
 *   Chetlur et al. (cuDNN, 2014) put close to SGEMM: 0.75.
 * - grouped/depthwise: little reuse per weight, memory-bound: 0.25.
 * With these, AlexNet at batch 128 on a TITAN Xp predicts ≈ 53 ms per step,
 * against the ≈ 50 ms the WAP paper measured (it was 63 ms with one 0.85).
 */
export function convEfficiency(layer: AnalyzedLayer): number {
  const a = layer.attrs as Record<string, unknown>;
  const kernel = Array.isArray(a.kernel) ? (a.kernel as number[]) : [];
  const stride = Array.isArray(a.stride) ? (a.stride as number[]) : [];
  const groups = typeof a.groups === 'number' ? a.groups : 1;
  if (a.depthwise || groups > 1) return DEFAULT_COMPUTE_EFFICIENCY;
  if (a.transposed || kernel.length !== 2 || stride.some((s) => s !== 1)) return COMPUTE_EFFICIENCY.conv!;
  if (kernel[0] === 3 && kernel[1] === 3) return 1.2;
  if (kernel[0] === 5 && kernel[1] === 5) return 1.05;
  return COMPUTE_EFFICIENCY.conv!;
}
const MEMORY_EFFICIENCY = 0.75;
/** Launch/framework overhead per layer and pass, ms. */
const FORWARD_OVERHEAD_MS = 0.006;
const BACKWARD_OVERHEAD_MS = 0.012;
/** Views cost nothing: no kernel runs. */
const FREE_OPS = new Set<OpKind>(['input', 'flatten', 'reshape', 'identity']);

export interface PassTimes {
  forwardMs: number;
  backwardMs: number;
}

export function inputBytesPerSample(layer: AnalyzedLayer, dtypeBytes: number): number {
  let s = 0;
  for (const shape of layer.inputShapes) s += product(shape) * dtypeBytes;
  return s;
}

/**
 * Times for one device running `samples` samples of the layer, doing `share`
 * of its work (1/k under model parallelism) and holding `paramShare` of its weights.
 * `dtypeBytes` is the precision's activation/weight element size; the FLOP rate
 * is the precision's dense peak (tensor cores for tf32/fp16/bf16/fp8).
 */
export function analyticalTimes(layer: AnalyzedLayer, gpu: GpuSpec, samples: number, share: number, paramShareOf: number, dtypeBytes: number, precision: Precision = 'fp32'): PassTimes {
  if (FREE_OPS.has(layer.op) || samples <= 0) return { forwardMs: 0, backwardMs: 0 };
  const w = layer.workload;
  const eff = layer.op === 'conv' ? convEfficiency(layer) : (COMPUTE_EFFICIENCY[layer.op] ?? DEFAULT_COMPUTE_EFFICIENCY);
  const flopsPerMs = peakTflops(gpu, precision).tflops * 1e9 * eff;
  const bytesPerMs = gpu.memoryBandwidthGBs * 1e6 * MEMORY_EFFICIENCY;
  const outBytes = layer.outputShape ? product(layer.outputShape) * dtypeBytes : w.activationBytes;
  const io = (inputBytesPerSample(layer, dtypeBytes) + outBytes) * samples * share;
  const weights = w.params * dtypeBytes * paramShareOf;
  const fwd = Math.max((w.forwardFlops * samples * share) / flopsPerMs, (io + weights) / bytesPerMs);
  // Backward reads activations and output grads, writes input and weight grads: about twice the traffic.
  const bwd = Math.max((w.backwardFlops * samples * share) / flopsPerMs, (2 * io + 2 * weights) / bytesPerMs);
  return { forwardMs: fwd + FORWARD_OVERHEAD_MS, backwardMs: bwd + BACKWARD_OVERHEAD_MS };
}

/** Optimizer step: read params, grads and state, write params and state. */
export function updateMs(paramsOnDevice: number, stateCopies: number, gpu: GpuSpec, dtypeBytes: number): number {
  if (paramsOnDevice <= 0) return 0;
  const bytes = paramsOnDevice * dtypeBytes * (3 + 2 * stateCopies);
  return bytes / (gpu.memoryBandwidthGBs * 1e6 * MEMORY_EFFICIENCY);
}
