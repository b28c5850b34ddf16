/**
 * Analytical compute time: a roofline max(FLOPs / (peak · efficiency),
 * bytes / (bandwidth · efficiency)) plus a kernel-launch floor. Efficiency
 * factors per op kind are what cuDNN/cuBLAS typically reach on large fp32
 * problems; they matter more for ranking strategies than for absolute times.
 */
import type { AnalyzedLayer, OpKind } from '../../core/ir';
import { product } from '../../core/ir';
import type { GpuSpec } from '../cluster/spec';

// Conv counts direct-convolution FLOPs; cuDNN's Winograd/FFT kernels do fewer, hence an effective 0.85.
const COMPUTE_EFFICIENCY: Partial<Record<OpKind, number>> = {
  conv: 0.85,
  separable_conv: 0.3,
  linear: 0.65,
  matmul: 0.6,
  mha: 0.5,
  sdpa: 0.45,
  rnn: 0.3,
};
const DEFAULT_COMPUTE_EFFICIENCY = 0.25;
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
 */
export function analyticalTimes(layer: AnalyzedLayer, gpu: GpuSpec, samples: number, share: number, paramShareOf: number, dtypeBytes: number): PassTimes {
  if (FREE_OPS.has(layer.op) || samples <= 0) return { forwardMs: 0, backwardMs: 0 };
  const w = layer.workload;
  const eff = COMPUTE_EFFICIENCY[layer.op] ?? DEFAULT_COMPUTE_EFFICIENCY;
  const flopsPerMs = gpu.tflops * 1e9 * eff;
  const bytesPerMs = gpu.memoryBandwidthGBs * 1e6 * MEMORY_EFFICIENCY;
  const io = (inputBytesPerSample(layer, dtypeBytes) + w.activationBytes) * samples * share;
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
