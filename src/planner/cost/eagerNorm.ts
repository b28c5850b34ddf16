/**
 * HBM traffic of an RMSNorm written in Python. Transformers' RMSNorm modules
 * (LlamaRMSNorm and its copies in Mistral, Qwen2, Gemma…; T5LayerNorm) and
 * torchtitan's default `norm_type = "rmsnorm"` (train_configs, `compile = false`)
 * are not one kernel: they upcast the input to fp32 and run pow, mean, rsqrt
 * and two multiplies as separate eager PyTorch ops (modeling_llama.py,
 * `LlamaRMSNorm.forward`; torchtitan models/norms.py). Each op reads its
 * operands from HBM and writes its result, so the norm moves about nine times
 * the bytes of a fused kernel forward and more than ten times backward, where
 * autograd runs each op's derivative formula (PyTorch
 * tools/autograd/derivatives.yaml; `pow_backward` in FunctionsManual.cpp).
 *
 * The kernels below are per normalized element; per-row work (the mean's one
 * value, `+ eps`, rsqrt and their derivatives) moves negligible bytes but
 * still launches. `a` is the activation element size and fp32 is 4 bytes; the
 * two casts disappear when the activations are fp32 already (`.to()` returns
 * the same tensor).
 */
import type { AnalyzedLayer } from '../../core/ir';

const FP32 = 4;

/** One kernel: elements read and written per normalized element, at the activation size ('a') or in fp32. */
interface EagerKernel {
  what: string;
  reads: Array<'a' | 'f32'>;
  writes: Array<'a' | 'f32'>;
  /** A dtype cast: no kernel runs when the activations are fp32. */
  cast?: true;
}

const FORWARD: EagerKernel[] = [
  { what: 'x.to(float32)', reads: ['a'], writes: ['f32'], cast: true },
  { what: 'x32.pow(2)', reads: ['f32'], writes: ['f32'] },
  { what: '.mean(-1)', reads: ['f32'], writes: [] },
  { what: '+ eps', reads: [], writes: [] },
  { what: 'rsqrt', reads: [], writes: [] },
  { what: 'x32 * rstd', reads: ['f32'], writes: ['f32'] },
  { what: '.to(dtype)', reads: ['f32'], writes: ['a'], cast: true },
  { what: 'weight * y', reads: ['a'], writes: ['a'] },
];

const BACKWARD: EagerKernel[] = [
  { what: 'dy = g * weight', reads: ['a'], writes: ['a'] },
  { what: 'g * y (for dweight)', reads: ['a', 'a'], writes: ['a'] },
  { what: 'dweight = sum over rows', reads: ['a'], writes: [] },
  { what: 'dy.to(float32)', reads: ['a'], writes: ['f32'], cast: true },
  { what: 'dx32 = dy32 * rstd', reads: ['f32'], writes: ['f32'] },
  { what: 'dy32 * x32 (for drstd)', reads: ['f32', 'f32'], writes: ['f32'] },
  { what: 'drstd = sum(-1)', reads: ['f32'], writes: [] },
  { what: 'rsqrt backward', reads: [], writes: [] },
  { what: 'mean backward: expand / n', reads: [], writes: ['f32'] },
  { what: 'x32.pow(1)', reads: ['f32'], writes: ['f32'] },
  { what: '2 * x32', reads: ['f32'], writes: ['f32'] },
  { what: 'dsq * (2 * x32)', reads: ['f32', 'f32'], writes: ['f32'] },
  { what: 'dx32 + dx32 (two paths)', reads: ['f32', 'f32'], writes: ['f32'] },
  { what: 'dx32.to(dtype)', reads: ['f32'], writes: ['a'], cast: true },
];

export interface EagerNormTraffic {
  forwardBytesPerElement: number;
  backwardBytesPerElement: number;
  forwardKernels: number;
  backwardKernels: number;
}

function sum(kernels: EagerKernel[], activationBytes: number): { bytes: number; kernels: number } {
  const upcast = activationBytes !== FP32;
  const size = (t: 'a' | 'f32') => (t === 'a' ? activationBytes : FP32);
  let bytes = 0;
  let count = 0;
  for (const k of kernels) {
    if (k.cast && !upcast) continue;
    count++;
    for (const t of [...k.reads, ...k.writes]) bytes += size(t);
  }
  return { bytes, kernels: count };
}

/** True for a norm the frontend marked as eager Python on an fp32 copy (the Hugging Face RMSNorms). */
export function isEagerNorm(layer: AnalyzedLayer): boolean {
  return layer.op === 'layernorm' && (layer.attrs as Record<string, unknown>).eagerFp32 === true;
}

/** Bytes per normalized element and kernel counts of an eager fp32 RMSNorm, or undefined for any other layer. */
export function eagerNormTraffic(layer: AnalyzedLayer, activationBytes: number): EagerNormTraffic | undefined {
  if (!isEagerNorm(layer)) return undefined;
  const forward = sum(FORWARD, activationBytes);
  const backward = sum(BACKWARD, activationBytes);
  return { forwardBytesPerElement: forward.bytes, backwardBytesPerElement: backward.bytes, forwardKernels: forward.kernels, backwardKernels: backward.kernels };
}
