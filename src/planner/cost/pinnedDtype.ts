/**
 * Layers whose activations the code pins to a dtype by an explicit cast (`scores.float()` before a softmax in
 * Meta's Llama attention; frontends/python/casts.ts), and the casts themselves. A pinned layer is priced at its own
 * element size and compute precision whatever the plan's; a cast moves its elements once at each side's size, and
 * costs nothing where both sides agree: ATen's `to` returns its input then (TensorConversions.cpp, `to_impl`).
 */
import type { AnalyzedLayer, PinnedDtype } from '../../core/ir';
import { PINNED_DTYPE_BYTES } from '../../core/ir';
import type { Precision } from '../../protocol/plan';
import type { GpuSpec } from '../cluster/spec';
import { peakTflops, PrecisionError } from '../memory/precision';

/** The dtype activations have under a plan's precision (fp8 training keeps bf16 activations between its GEMMs). */
export function planActivationDtype(precision: Precision): PinnedDtype {
  if (precision === 'fp32' || precision === 'tf32') return 'fp32';
  return precision === 'fp16' ? 'fp16' : 'bf16';
}

/**
 * The element size and the GEMM precision a layer computes at. A pinned fp32 layer runs on TF32 tensor cores only
 * where the plan itself is TF32 (the user enabled it; PyTorch ≥ 1.12 leaves matmul TF32 off by default,
 * `torch.backends.cuda.matmul.allow_tf32`). A 16-bit pin on a GPU whose spec has no peak for it (bf16 on a V100)
 * runs at the fp32 rate: such GPUs emulate it on CUDA cores.
 */
export function layerPrecision(layer: AnalyzedLayer, gpu: GpuSpec, planBytes: number, plan: Precision): { bytes: number; precision: Precision } {
  const pinned = layer.activationDtype;
  if (!pinned || pinned === planActivationDtype(plan)) return { bytes: planBytes, precision: plan };
  if (pinned === 'fp32') return { bytes: PINNED_DTYPE_BYTES.fp32, precision: plan === 'tf32' ? 'tf32' : 'fp32' };
  try {
    peakTflops(gpu, pinned);
    return { bytes: PINNED_DTYPE_BYTES[pinned], precision: pinned };
  } catch (e) {
    if (e instanceof PrecisionError) return { bytes: PINNED_DTYPE_BYTES[pinned], precision: 'fp32' };
    throw e;
  }
}

/**
 * Bytes per element a cast layer reads and writes under the plan, or undefined when the layer is no cast.
 * `{ read: 0, written: 0 }` when the cast converts nothing at this precision (`.float()` in an fp32 plan).
 */
export function castTraffic(layer: AnalyzedLayer, plan: Precision): { read: number; written: number } | undefined {
  const a = layer.attrs as { fn?: unknown; from?: PinnedDtype; to?: PinnedDtype };
  if (layer.op !== 'activation' || a.fn !== 'cast') return undefined;
  const activations = planActivationDtype(plan);
  const from = a.from ?? activations;
  const to = a.to ?? activations;
  if (from === to) return { read: 0, written: 0 };
  return { read: PINNED_DTYPE_BYTES[from], written: PINNED_DTYPE_BYTES[to] };
}
