/**
 * Whether the training code stores conv activations channels_last, read (never
 * run) from the model's file and then the Python files beside it. PyTorch's
 * default is NCHW, and cuDNN's tensor-core convolutions transpose NCHW inputs
 * and outputs to NHWC around every convolution (cost/compute.ts
 * nchwTransposeBytes); `model.to(memory_format=torch.channels_last)` removes
 * those passes, which the plan then must not price.
 *
 * Only a conversion that always runs counts: at module or function level, or
 * under `if __name__ == "__main__":`. One behind a flag (`if
 * args.channels_last:`, torchvision's and timm's reference scripts) is the
 * user's choice per run, so it is reported, not assumed.
 */
import type { PlanOptions } from '../protocol/planOptions';
import { firstCallHint } from './firstHint';
import { callArgs } from './python';

export interface MemoryFormatHint {
  memoryFormat: 'channels_last';
  /** 'train.py:12 (model.to(memory_format=torch.channels_last))'. */
  source: string;
}

/** torch's names for the layouts (torch.channels_last_3d is Conv3d's NDHWC). */
const CHANNELS_LAST = /^(torch\.)?channels_last(_3d)?$/;

/** The layout the Python files state: the model's own file first, then the others. Broken or oversized files say nothing. */
export function memoryFormatHint(files: ReadonlyArray<{ name: string; text: string }>, modelFile?: string): MemoryFormatHint | undefined {
  return firstCallHint(files, modelFile, /channels_last/, (call, name) => {
    const format = callArgs(call)?.keywords.get('memory_format');
    const fn = call.childForFieldName('function')?.text ?? '';
    if (!format || !CHANNELS_LAST.test(format.text.trim()) || !/\.(to|contiguous)$/.test(fn)) return undefined;
    return { memoryFormat: 'channels_last', source: `${name}:${call.startPosition.row + 1} (${call.text.replace(/\s+/g, ' ').slice(0, 80)})` };
  });
}

/** The options with the hint's layout, unless one was given (`--memory-format`). */
export function withMemoryFormatFrom(options: PlanOptions, hint: MemoryFormatHint | undefined): PlanOptions {
  if (!hint || options.memoryFormat) return options;
  return { ...options, memoryFormat: hint.memoryFormat, memoryFormatSource: hint.source };
}
