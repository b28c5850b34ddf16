/**
 * Which optimizer's state a plan holds when nothing states one. The code, a
 * DeepSpeed config, a flag or a setting win (configs/optimizerHint.ts sets
 * PlanOptions.optimizerSource); otherwise the model's kind decides, as the
 * recipes people train it with do, and the plan says it assumed:
 * - models with attention: AdamW (transformers' Trainer defaults to
 *   optim "adamw_torch"; Megatron-LM's --optimizer defaults to adam;
 *   torchtitan and nanoGPT build AdamW): two fp32 moments per parameter;
 * - the rest (CNNs, MLPs): SGD with momentum 0.9, the default of torchvision's
 *   classification reference recipes (references/classification/train.py).
 */
import type { AnalyzedModel } from '../core/ir';
import type { OptimizerKind } from '../protocol/plan';
import type { PlanOptions } from '../protocol/planOptions';
import { attentionKernelOf } from './cost/compute';

const STATE: Record<OptimizerKind, string> = {
  adam: 'Adam-style, two moments per parameter',
  momentum: 'one momentum buffer per parameter',
  sgd: 'plain SGD, no state per parameter',
  adam8bit: "Adam-style, two moments per parameter held 8-bit block-wise (bitsandbytes)",
  momentum8bit: "one state buffer per parameter held 8-bit block-wise (bitsandbytes)",
};

function assumed(model: AnalyzedModel): { optimizer: OptimizerKind; why: string } {
  if (model.layers.some((l) => attentionKernelOf(l) !== undefined)) {
    return { optimizer: 'adam', why: "a model with attention: AdamW, the default of transformers' Trainer, Megatron-LM and torchtitan" };
  }
  return { optimizer: 'momentum', why: "SGD with momentum, the default of torchvision's reference training recipes" };
}

/** The options with the optimizer the plan prices: the given one, or where the caller defaulted it, the model kind's. */
export function withPlannedOptimizer(model: AnalyzedModel, options: PlanOptions): PlanOptions {
  if (!options.optimizerAssumed || options.optimizerSource) return options;
  const a = assumed(model);
  return a.optimizer === options.optimizer ? options : { ...options, optimizer: a.optimizer };
}

/** The plan's line on its optimizer: which, and where it came from or why it was assumed. */
export function optimizerLine(model: AnalyzedModel, options: PlanOptions): string {
  const what = `optimizer: ${options.optimizer} (${STATE[options.optimizer]})`;
  if (options.optimizerSource) return `${what}, from ${options.optimizerSource}`;
  if (!options.optimizerAssumed) return what;
  return `${what}, assumed (${assumed(model).why}): the code and training config beside the model build no optimizer WAP reads (8-bit and factored ones are not modelled); --optimizer (wap.optimizer) sets it`;
}
