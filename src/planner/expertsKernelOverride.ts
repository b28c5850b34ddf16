/**
 * The experts kernel a training framework runs, where its config says it (PlanOptions.expertsKernel): Megatron-LM
 * runs a block's local experts as one grouped GEMM per projection with --moe-grouped-gemm (GroupedMLP) and one GEMM
 * per expert without it (SequentialMLP), whatever transformers would run for the same model. The model's expert
 * layers take that kernel (core/moe.ts ExpertAttrs.grouped) before either search prices them.
 */
import type { AnalyzedModel } from '../core/ir';
import { expertOf } from '../core/moe';

/** The model with every expert layer grouped (or looped) as `grouped` says. */
export function withExpertsKernel(model: AnalyzedModel, grouped: boolean): AnalyzedModel {
  let changed = false;
  const layers = model.layers.map((l) => {
    const expert = expertOf(l);
    if (!expert || (expert.grouped === true) === grouped) return l;
    changed = true;
    const { grouped: _was, ...rest } = expert;
    return { ...l, attrs: { ...l.attrs, expert: grouped ? { ...rest, grouped: true } : rest } };
  });
  return changed ? { ...model, layers } : model;
}

/** The plan's line for the kernel the framework runs, when the model has experts. */
export function expertsKernelLine(model: AnalyzedModel, grouped: boolean, source: string): string | undefined {
  if (!model.layers.some((l) => expertOf(l))) return undefined;
  return `experts priced ${grouped ? 'as one grouped GEMM per projection over each GPU\'s experts' : 'one GEMM per expert, in a loop'}: ${source}`;
}
