/**
 * What the files beside a model say the user trains with, applied to plan
 * options where nothing explicit says it: the precision (precisionHint.ts, and
 * the dtype the model is loaded in, loadDtypeHint.ts),
 * the optimizer (optimizerHint.ts), the conv memory format
 * (memoryFormatHint.ts) and gradient checkpointing (recomputeHint.ts), the
 * model's own file read first for each.
 * The CLI and the server list and read the files; this reads only what it is handed.
 */
import type { PlanOptions } from '../protocol/plan';
import { memoryFormatHint, withMemoryFormatFrom } from './memoryFormatHint';
import { optimizerHint, withOptimizerFrom } from './optimizerHint';
import { loadDtypeHint, withLoadDtype } from './loadDtypeHint';
import { precisionHint, withPrecisionFrom } from './precisionHint';
import { recomputeHint, withRecomputeFrom } from './recomputeHint';

/** Whether any hint could still change the options: false once a flag or setting gave every one. */
export function trainingHintsApply(options: PlanOptions): boolean {
  return !(options.precision && options.ampStyle && options.optimizerSource && options.memoryFormat && (options.recomputeSource || options.pins?.recompute));
}

export function withTrainingHintsFrom(options: PlanOptions, files: ReadonlyArray<{ name: string; text: string }>, modelFile: string): PlanOptions {
  const precision = withLoadDtype(precisionHint(files, modelFile), loadDtypeHint(files, modelFile));
  const hinted = withOptimizerFrom(withPrecisionFrom(options, precision), optimizerHint(files, modelFile));
  return withRecomputeFrom(withMemoryFormatFrom(hinted, memoryFormatHint(files, modelFile)), recomputeHint(files, modelFile));
}
