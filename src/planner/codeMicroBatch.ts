/**
 * The plan's micro-batch against the one the training code fixes (RunBatch.perForward: nanoGPT's `batch_size 12`,
 * a DeepSpeed config's train_micro_batch_size_per_gpu). WAP chooses the micro-batch that trains the global batch
 * fastest, which the code runs only once it is edited: the plan says so, and how, rather than leave a step time
 * the script as written does not reach. Never changes the plan.
 */
import type { AnalyzedModel } from '../core/ir';
import type { PlanDiagnostic, PlanOutcome } from '../protocol/plan';
import type { PlanOptions } from '../protocol/planOptions';

export function codeMicroBatchNote(model: AnalyzedModel, options: PlanOptions, outcome: PlanOutcome): PlanDiagnostic | undefined {
  const code = model.runBatch?.perForward;
  const s = outcome.feasible ? outcome.plan.setup : undefined;
  // A pinned micro-batch is the user's own choice; a plan's fractional one (a pipeline's share) names no setting.
  if (!code || !s || options.pins?.microBatch !== undefined || !Number.isInteger(s.microBatch) || s.microBatch === code.samples) return undefined;
  const steps = s.gradientAccumulation === 1 ? 'no accumulation' : `${s.gradientAccumulation} accumulation steps`;
  return {
    severity: 'info',
    message: `micro-batch: the plan runs ${s.microBatch} samples per GPU per forward with ${steps}; the code runs ${code.samples} (${code.said}): ` +
      `change it to ${s.microBatch}, keeping the global batch ${outcome.batch}, to train as planned, or plan with --micro-batch ${code.samples} to price the code as written`,
  };
}

/** The outcome with the note, when the plan's micro-batch is not the code's. */
export function withCodeMicroBatchNote(model: AnalyzedModel, options: PlanOptions, outcome: PlanOutcome): PlanOutcome {
  const note = codeMicroBatchNote(model, options, outcome);
  return note ? { ...outcome, diagnostics: [...outcome.diagnostics, note] } : outcome;
}
