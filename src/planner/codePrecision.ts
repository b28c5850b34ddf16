/**
 * The precision the model's own training code builds its trainer with (ModelSpec.runPrecision: a Lightning
 * `Trainer(precision=cfg.trainer.precision)` of a Hydra config), planned where nothing explicit chose one: a flag,
 * a setting, a training config beside the model or the launch (configs/trainingHints.ts) each win; only then does
 * the GPU's default precision apply (memory/precision choice). An autocast whose dtype the run picks (nanoGPT's
 * is_bf16_supported() test) states only its holding: fp32 parameters under autocast, at the GPU's default dtype.
 */
import type { AnalyzedModel } from '../core/ir';
import type { PlanOptions } from '../protocol/planOptions';

export function withCodePrecision(model: AnalyzedModel, options: PlanOptions): PlanOptions {
  const run = model.runPrecision;
  if (!run) return options;
  const out: PlanOptions = { ...options };
  if (run.precision && !options.precision) Object.assign(out, { precision: run.precision, precisionSource: run.source });
  // How the code holds its tensors holds whichever source chose the dtype, unless that source says how too.
  if (run.holding && !options.ampStyle) Object.assign(out, { ampStyle: run.holding, ampStyleSource: run.source });
  return out;
}
