/**
 * The plan's line on frozen parameters (core/frozenParameters.ts): a
 * fine-tuning plan looks cheap next to full training, and the reader must see
 * why: how many parameters the code freezes, and what the plan left out for
 * them.
 */
import type { AnalyzedModel } from '../core/ir';

const millions = (n: number): string => (n >= 1e9 ? `${(n / 1e9).toFixed(2)} B` : `${(n / 1e6).toFixed(2)} M`);

export function frozenParametersLine(model: AnalyzedModel): string | undefined {
  const frozen = model.totals.frozenParams ?? 0;
  if (frozen <= 0) return undefined;
  const all = frozen + model.totals.params;
  const withoutBackward = model.layers.filter((l) => l.workload.backward === 'none').length;
  const skipped = withoutBackward > 0 ? `; ${withoutBackward} layers before the first trained one run no backward and keep no activations` : '';
  const q = model.totals.quantized;
  // Bytes per weight, constants included, so the reader can check the format: 0.516 for QLoRA's NF4 with double quantization.
  const quantized = q && q.params > 0 ? `; ${millions(q.params)} of them held quantized (bitsandbytes) in ${(q.bytes / 1e9).toFixed(2)} GB, ${(q.bytes / q.params).toFixed(3)} bytes each, dequantized before each matmul` : '';
  return `frozen parameters: ${millions(frozen)} of ${millions(all)} do not train (${q && q.params > 0 ? 'requires_grad=False in the code, or loaded quantized' : 'requires_grad=False in the code'}): planned with their weights only, no gradients, optimizer state or weight-gradient compute${quantized}${skipped}`;
}
