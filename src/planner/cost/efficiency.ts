/**
 * What fraction of the precision's peak a GEMM-shaped layer reaches, from its
 * shape alone (NVIDIA, "Matrix Multiplication Background User's Guide", Deep
 * Learning Performance docs, 2023 — cited below as "the guide"):
 *
 * - the library's best kernel on a large problem, per GPU and precision
 *   (cost/gemmCeiling.ts: cuBLAS ≈ 85% of peak in the guide's large-GEMM
 *   plots, ~260 of 312 TFLOP/s on A100 fp16; less on V100 and H100);
 * - tile quantization: the output is cut into thread-block tiles, and a
 *   partly filled edge tile costs a full one;
 * - wave quantization: tiles run in waves of one per SM, and a last, partial
 *   wave (or a problem with fewer tiles than SMs) leaves SMs idle; cuBLAS
 *   splits a long K across SMs when tiles are few (split-K);
 * - tensor-core alignment: fp16/bf16 kernels load 16-byte vectors, so the
 *   guide asks for N and K multiples of 8 (tf32: 4, fp8: 16); with smaller
 *   alignment the kernel falls back to narrower loads, in proportion.
 *
 * The result is a fraction of peak, never above 1: no layer is predicted
 * faster than the precision's peak, whatever algorithm cuDNN picks.
 */
import type { AnalyzedLayer } from '../../core/ir';
import { product } from '../../core/ir';
import type { Precision } from '../../protocol/plan';
import type { GpuSpec } from '../cluster/spec';
import { gemmCeiling } from './gemmCeiling';

/** The guide's example tile (its "128×128 tile" discussion); dimensions below it get a smaller power-of-two tile. */
const TILE = 128;
const MIN_TILE = 16;
/** Elements per 16-byte vector load, what the guide's alignment rule amounts to. */
const ALIGNMENT: Partial<Record<Precision, number>> = { tf32: 4, fp16: 8, bf16: 8, fp8: 16 };
/**
 * SMs when a spec does not say: the V100's 80 (NVIDIA Tesla V100 whitepaper, 2017).
 * Presets give their own (TITAN Xp 30, A100 108, H100 SXM5 132).
 */
export const DEFAULT_SMS = 80;

/** An M×N output with a K-long reduction, `batch` independent copies run by one kernel (groups, heads). */
export interface GemmShape {
  m: number;
  n: number;
  k: number;
  batch: number;
}

/** The tile edge (128, 64, 32 or 16) that pads this dimension least; ties go to the larger tile (more reuse). */
function tileFor(dim: number): number {
  let best = TILE;
  for (let t = TILE; t >= MIN_TILE; t /= 2) if (Math.ceil(dim / t) * t < Math.ceil(dim / best) * best) best = t;
  return best;
}

/** Waves are never split finer than this: split-K over more than a few waves only adds reduction traffic. */
const MAX_SPLIT_WAVES = 4;

/** Fraction of SM slots busy: the last wave's idle SMs count, after the split-K cuBLAS would pick. */
function waveFill(units: number, k: number, sms: number): number {
  let best = units / (Math.ceil(units / sms) * sms);
  const maxSplit = Math.max(1, Math.min(Math.floor(k / TILE), Math.floor((MAX_SPLIT_WAVES * sms) / units)));
  for (let s = 2; s <= maxSplit; s++) best = Math.max(best, (units * s) / (Math.ceil((units * s) / sms) * sms));
  return best;
}

function largestPow2Dividing(x: number, cap: number): number {
  let a = 1;
  while (a < cap && Number.isInteger(x / (a * 2))) a *= 2;
  return a;
}

/** Fraction of the precision's peak this GEMM reaches: large-kernel × tile × wave × alignment, in (0, 1]. */
export function gemmEfficiency(g: GemmShape, gpu: GpuSpec, precision: Precision): number {
  const m = Math.max(1, Math.round(g.m));
  const n = Math.max(1, Math.round(g.n));
  const k = Math.max(1, Math.round(g.k));
  const batch = Math.max(1, Math.round(g.batch));
  const sms = gpu.sms ?? DEFAULT_SMS;
  const tm = tileFor(m);
  const tn = tileFor(n);
  const tiles = Math.ceil(m / tm) * Math.ceil(n / tn) * batch;
  const tileFill = (m * n * batch) / (tiles * tm * tn);
  // A tile smaller than 128×128 occupies that share of an SM's throughput.
  const units = (tiles * tm * tn) / (TILE * TILE);
  const need = ALIGNMENT[precision];
  const align = need ? Math.min(largestPow2Dividing(n, need), largestPow2Dividing(k, need)) / need : 1;
  return Math.min(1, gemmCeiling(gpu, precision) * tileFill * waveFill(units, k, sms) * align);
}

/** The forward GEMM and the two backward ones (input gradient, weight gradient) of a layer, per device. */
export interface LayerGemms {
  forward: GemmShape;
  inputGrad: GemmShape;
  weightGrad: GemmShape;
  /** Sequential repetitions (RNN time steps): the GEMMs above run this many times one after another. */
  sequential: number;
}

const num = (v: unknown, d: number): number => (typeof v === 'number' && Number.isFinite(v) ? v : d);

function backwardOf(f: GemmShape): Pick<LayerGemms, 'inputGrad' | 'weightGrad'> {
  // dX = dY·Wᵀ: M×K output, reduce over N. dW = Xᵀ·dY: K×N output, reduce over M.
  return { inputGrad: { m: f.m, n: f.k, k: f.n, batch: f.batch }, weightGrad: { m: f.k, n: f.n, k: f.m, batch: f.batch } };
}

/**
 * The GEMMs a layer runs for `samples` samples doing `share` of the output
 * features (model parallelism), or undefined for ops that are not GEMMs
 * (element-wise, normalisation, pooling: the memory roofline prices those).
 */
export function layerGemms(layer: AnalyzedLayer, samples: number, share: number): LayerGemms | undefined {
  const a = layer.attrs as Record<string, unknown>;
  const inShape = layer.inputShapes[0];
  const out = layer.outputShape;
  if (!inShape || !out || inShape.length === 0) return undefined;
  const last = (s: readonly number[]) => s[s.length - 1];
  let f: GemmShape | undefined;
  let sequential = 1;
  switch (layer.op) {
    case 'linear':
    case 'matmul': {
      const kDim = last(inShape);
      f = { m: (samples * product(inShape)) / kDim, n: last(out) * share, k: kDim, batch: 1 };
      break;
    }
    case 'conv':
    case 'separable_conv': {
      // Implicit GEMM (Chetlur et al., "cuDNN", 2014): M = samples × output pixels, N = out channels, K = in channels × kernel.
      const groups = Math.max(1, num(a.groups, 1));
      const kernel = Array.isArray(a.kernel) ? product(a.kernel as number[]) : 1;
      const cin = num(a.inChannels, inShape[0]);
      const cout = num(a.outChannels, out[0]);
      const depthwise = a.depthwise === true || layer.op === 'separable_conv';
      const g = depthwise ? cin : groups;
      f = { m: samples * product(out.slice(1)), n: Math.max(1, (cout / g) * share), k: (cin / g) * kernel, batch: g };
      break;
    }
    case 'mha': {
      // The projections dominate: (samples·tokens) × E by E.
      const e = last(inShape);
      f = { m: (samples * product(inShape)) / e, n: e * share, k: e, batch: 1 };
      break;
    }
    case 'sdpa': {
      // Q·Kᵀ per sequence: T × T by d, batched over samples and leading dims.
      const d = last(inShape);
      const t = inShape.length >= 2 ? inShape[inShape.length - 2] : 1;
      f = { m: t, n: t, k: d, batch: Math.max(1, (samples * share * product(inShape)) / (t * d)) };
      break;
    }
    case 'rnn': {
      // One time step: samples × (gates·hidden) by (input + hidden), repeated per step.
      const hidden = num(a.hiddenSize, last(out));
      const steps = inShape.length >= 2 ? inShape[0] : 1;
      sequential = steps;
      f = { m: samples, n: 4 * hidden * share, k: last(inShape) + hidden, batch: 1 };
      break;
    }
    default:
      return undefined;
  }
  return { forward: f, ...backwardOf(f), sequential };
}

/**
 * Winograd and FFT convolutions do fewer multiplies than the direct FLOPs the
 * catalogue counts, so cuDNN's fp32 3×3 and 5×5 stride-1 convolutions run
 * faster in direct-FLOP terms than its GEMM kernels: Lavin & Gray (CVPR 2016)
 * measured ~1.6× for F(2×2,3×3) on VGG layers; Vasilache et al. (ICLR 2015,
 * fbfft) ~1.4× for 5×5 FFT convolutions. The gain still never lifts a layer
 * above peak (the caller caps at 1). Tensor-core precisions use implicit GEMM.
 */
export function fastConvGain(layer: AnalyzedLayer, precision: Precision): number {
  if (layer.op !== 'conv' || precision !== 'fp32') return 1;
  const a = layer.attrs as Record<string, unknown>;
  const kernel = Array.isArray(a.kernel) ? (a.kernel as number[]) : [];
  const stride = Array.isArray(a.stride) ? (a.stride as number[]) : [];
  if (a.transposed || a.depthwise || num(a.groups, 1) > 1 || kernel.length !== 2 || stride.some((s) => s !== 1)) return 1;
  if (kernel[0] === 3 && kernel[1] === 3) return 1.6;
  if (kernel[0] === 5 && kernel[1] === 5) return 1.4;
  return 1;
}
