/**
 * The precision the model's own training code builds its trainer with (ModelSpec.runPrecision: a Lightning
 * `Trainer(precision=cfg.trainer.precision)` of a Hydra config), planned where nothing explicit chose one: a flag,
 * a setting, a training config beside the model or the launch (configs/trainingHints.ts) each win; only then does
 * the GPU's default precision apply (memory/precision choice).
 */
import type { AnalyzedModel } from '../core/ir';
import type { PlanOptions } from '../protocol/plan';

export function withCodePrecision(model: AnalyzedModel, options: PlanOptions): PlanOptions {
  const run = model.runPrecision;
  if (!run || options.precision) return options;
  const out: PlanOptions = { ...options, precision: run.precision, precisionSource: run.source };
  if (run.holding && !options.ampStyle) Object.assign(out, { ampStyle: run.holding, ampStyleSource: run.source });
  return out;
}
