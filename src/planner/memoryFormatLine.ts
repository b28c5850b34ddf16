/**
 * The plan's line on how conv activations are stored, for PyTorch models with
 * convolutions: tensor-core convolutions on NCHW tensors pay layout transposes
 * (cost/compute.ts nchwTransposeBytes), so which layout was priced, and why,
 * changes the step time of a CNN in 16 bits or tf32.
 */
import type { AnalyzedModel } from '../core/ir';
import type { Precision } from '../protocol/plan';
import type { PlanOptions } from '../protocol/planOptions';

const TENSOR_CORE = new Set<Precision>(['tf32', 'fp16', 'bf16', 'fp8']);

export function memoryFormatLine(model: AnalyzedModel, options: PlanOptions, precision: Precision): string | undefined {
  if (model.layout !== 'channels_first' || !model.layers.some((l) => l.op === 'conv' || l.op === 'separable_conv')) return undefined;
  if (options.memoryFormat === 'channels_last') return `memory format: channels_last (NHWC)${options.memoryFormatSource ? `, from ${options.memoryFormatSource}` : ''}: convolutions pay no layout transposes`;
  if (!TENSOR_CORE.has(precision)) return undefined;
  const why = options.memoryFormat ? '' : "PyTorch's default; `--memory-format channels_last` (wap.memoryFormat) when the code converts the model behind a flag";
  return `memory format: channels_first (NCHW${why ? `, ${why}` : ''}): each ${precision} convolution is priced with its NCHW↔NHWC transposes`;
}
