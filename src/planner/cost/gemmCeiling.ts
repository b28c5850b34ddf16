/**
 * The best fraction of a precision's datasheet peak a GPU's matrix library
 * reaches on a large, perfectly aligned GEMM: the ceiling every GEMM-shaped
 * layer's shape efficiency (cost/efficiency.ts) is a fraction of.
 *
 * It is a property of the GPU and its tensor cores, measured, not derived:
 * - default, 0.85: NVIDIA's "Matrix Multiplication Background User's Guide"
 *   (Deep Learning Performance docs, 2023), cuBLAS on large A100 fp16 GEMMs
 *   (~260 of 312 TFLOP/s); Bekman's maximum-achievable-matmul-FLOPS table
 *   (stas00/ml-engineering, compute/accelerator) measured 267.9 of 312
 *   (85.9%) on A100 SXM bf16 with CUDA 12.1, the same figure;
 * - Hopper is power-bound under tensor-core load: the same table measured
 *   792.1 of 989 (80.1%) on H100 SXM bf16 and 821 (83.0%) on GH200;
 * - Volta's tensor cores are fed less well than Ampere's (no asynchronous
 *   copy into shared memory): Markidis et al., "NVIDIA Tensor Core
 *   Programmability, Performance & Precision" (IPDPSW 2018) reached at most
 *   83 of 125 TFLOP/s with cuBLAS mixed-precision GEMM on V100.
 *
 * A measured ceiling applies to the precisions the GPU runs on its tensor
 * cores (one unit, one power limit); fp32 on CUDA cores keeps the default. A
 * spec's `gemmEfficiency` (a user's own measurement, e.g. with
 * ml-engineering's mamf-finder.py) wins over both.
 */
import type { Precision } from '../../protocol/plan';
import type { GpuSpec } from '../cluster/spec';

/** Best-kernel fraction of peak on large GEMMs when nothing more specific is known (the guide, A100). */
export const LARGE_GEMM_EFFICIENCY = 0.85;

interface MeasuredCeiling {
  match: RegExp;
  /** The precisions this GPU runs on tensor cores, which the measurement stands for. */
  precisions: readonly Precision[];
  fraction: number;
  source: string;
}

const HOPPER_TENSOR: readonly Precision[] = ['tf32', 'fp16', 'bf16', 'fp8'];

/** First match wins: GH200 before H100/H200. */
const MEASURED_CEILINGS: MeasuredCeiling[] = [
  { match: /GH200/i, precisions: HOPPER_TENSOR, fraction: 821.0 / 989, source: 'ml-engineering MAMF table: GH200 821.0 of 989 TFLOPS bf16' },
  // H200 is the same GH100 die at the same 700 W as the H100 SXM, so its clocks under tensor load are the H100's.
  { match: /H100|H200/i, precisions: HOPPER_TENSOR, fraction: 792.1 / 989, source: 'ml-engineering MAMF table: H100 SXM 792.1 of 989 TFLOPS bf16' },
  // Volta's tensor cores run fp16 only (tf32 there is the fp32 CUDA-core rate: memory/precision.ts).
  { match: /V100/i, precisions: ['fp16'], fraction: 83 / 125, source: 'Markidis et al., IPDPSW 2018: cuBLAS mixed precision at most 83 of 125 TFLOPS on V100' },
];

function measuredCeiling(name: string, precision: Precision): MeasuredCeiling | undefined {
  const gpu = MEASURED_CEILINGS.find((c) => c.match.test(name));
  return gpu?.precisions.includes(precision) ? gpu : undefined;
}

/** The best-kernel fraction of `precision`'s peak on this GPU, in (0, 1]. */
export function gemmCeiling(gpu: Pick<GpuSpec, 'name' | 'gemmEfficiency'>, precision: Precision): number {
  const given = gpu.gemmEfficiency?.[precision];
  if (given !== undefined) return given;
  return measuredCeiling(gpu.name, precision)?.fraction ?? LARGE_GEMM_EFFICIENCY;
}

/**
 * A sentence for the plan when this GPU's ceiling is not the default one (a
 * measurement for its tensor cores, or the spec's own), so a user sees why
 * its GEMMs are priced lower; undefined for the default.
 */
export function gemmCeilingNote(gpu: Pick<GpuSpec, 'name' | 'gemmEfficiency'>, precision: Precision): string | undefined {
  const percent = `${Math.round(gemmCeiling(gpu, precision) * 100)}%`;
  if (gpu.gemmEfficiency?.[precision] !== undefined) return `GEMMs on ${gpu.name} reach at most ${percent} of the ${precision} peak (the cluster spec's gemmEfficiency.${precision})`;
  const measured = measuredCeiling(gpu.name, precision);
  return measured && `GEMMs on ${gpu.name} reach at most ${percent} of the ${precision} peak (${measured.source})`;
}
