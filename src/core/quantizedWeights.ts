/**
 * Weights stored quantized, as bitsandbytes holds them when transformers loads
 * a model with a BitsAndBytesConfig (QLoRA's recipe, LLM.int8()). Such a weight
 * is frozen (bitsandbytes' Params4bit and Int8Params do not require grad); it
 * takes fewer bytes than the training precision's, and each matmul dequantizes
 * it to the compute dtype first (the planner prices that kernel).
 *
 * Bytes per parameter, with the quantization constants:
 * - 4-bit (NF4 or FP4): 4 bits per weight in blocks of 64, one fp32 absmax per
 *   block (bitsandbytes `quantize_4bit`, blocksize 64): 0.5 + 4/64 bytes.
 *   Double quantization keeps the absmax in 8 bits with one fp32 constant per
 *   256 of them: 8/64 + 32/(64·256) = 0.127 bits instead of 0.5 (Dettmers et
 *   al., "QLoRA", NeurIPS 2023, §3 "Double Quantization").
 * - int8 (LLM.int8(), Dettmers et al., NeurIPS 2022, §3: vector-wise
 *   quantization): one byte per weight and an fp32 scale per output row.
 * The bias, if any, stays at the compute dtype: only the weight is quantized.
 */
import type { AnalyzedLayer, QuantizedWeights } from './ir';

const BLOCK = 64;
const DOUBLE_QUANT_GROUP = 256;

/** Bytes of `params` weights stored in format `q`, with `rows` output rows (int8's per-row scales). */
export function quantizedWeightBytes(params: number, q: QuantizedWeights, rows: number): number {
  if (q.format === 'int8') return params + 4 * rows;
  const constants = q.doubleQuant ? 1 / BLOCK + 4 / (BLOCK * DOUBLE_QUANT_GROUP) : 4 / BLOCK;
  return params * (0.5 + constants);
}

/** Marks the frozen weights of quantized layers as held quantized (analyze.ts, once frozen parameters are accounted). */
export function accountQuantizedWeights(layers: AnalyzedLayer[]): void {
  for (const l of layers) {
    const q = l.quantizedWeights;
    const w = l.workload;
    if (!q || !w.frozenParams) continue;
    const rows = typeof l.attrs.outFeatures === 'number' ? l.attrs.outFeatures : 0;
    const bias = l.attrs.bias === true ? rows : 0;
    const params = Math.max(0, w.frozenParams - bias);
    if (params > 0) w.quantized = { params, bytes: quantizedWeightBytes(params, q, rows) };
  }
}
