/**
 * What the files beside a model say the user trains with, applied to plan
 * options where nothing explicit says it: the precision (precisionHint.ts, and
 * the dtype the model is loaded in, loadDtypeHint.ts),
 * the optimizer (optimizerHint.ts), the conv memory format
 * (memoryFormatHint.ts), gradient checkpointing (recomputeHint.ts), the
 * attention kernel transformers is asked for (attentionHint.ts) and the
 * framework's timing of its collectives (frameworkHint.ts), the
 * model's own file read first for each.
 * The CLI and the server list and read the files; this reads only what it is handed, and of the other Python files
 * only those that import the model's module (train.py's `from model import GPT`): a sibling script that does not
 * trains a model of its own, and its bf16 or gradient checkpointing says nothing about this one.
 */
import type { PlanOptions } from '../protocol/planOptions';
import { attentionHint, withAttentionFrom } from './attentionHint';
import { memoryFormatHint, withMemoryFormatFrom } from './memoryFormatHint';
import { optimizerHint, withOptimizerFrom } from './optimizerHint';
import { loadDtypeHint, withLoadDtype } from './loadDtypeHint';
import { precisionHint, withPrecisionFrom } from './precisionHint';
import { recomputeHint, withRecomputeFrom } from './recomputeHint';
import { localModelImports } from './modelFor';
import { frameworkHint, withFrameworkFrom } from './frameworkHint';

/** Whether any hint could still change the options: false once a flag or setting gave every one. */
export function trainingHintsApply(options: PlanOptions): boolean {
  return !(!options.batchAssumed && options.precision && options.ampStyle && options.optimizerSource && options.memoryFormat && (options.recomputeSource || options.pins?.recompute) && options.attentionKernel && options.forwardGatherStages && options.serialSyncStages && options.unshardedAccumulationStages && options.allReduceEachMicroStepStages);
}

/** The files that speak for the model: its own, the configs beside it, and the Python files that import it. */
function aboutModel(files: ReadonlyArray<{ name: string; text: string }>, modelFile: string): Array<{ name: string; text: string }> {
  const module = modelFile.replace(/\.py$/i, '');
  const imports = (text: string): boolean => localModelImports(text).some((i) => i.module === module || i.module.endsWith(`.${module}`));
  return files.filter((f) => f.name === modelFile || !/\.py$/i.test(f.name) || (/\.py$/i.test(modelFile) && imports(f.text)));
}

export function withTrainingHintsFrom(options: PlanOptions, all: ReadonlyArray<{ name: string; text: string }>, modelFile: string): PlanOptions {
  const files = aboutModel(all, modelFile);
  const precision = withLoadDtype(precisionHint(files, modelFile), loadDtypeHint(files, modelFile));
  const hinted = withOptimizerFrom(withPrecisionFrom(options, precision), optimizerHint(files, modelFile));
  const recompute = withRecomputeFrom(withMemoryFormatFrom(hinted, memoryFormatHint(files, modelFile)), recomputeHint(files, modelFile));
  const attention = withAttentionFrom(recompute, attentionHint(files, modelFile));
  return attention.forwardGatherStages && attention.serialSyncStages && attention.unshardedAccumulationStages && attention.allReduceEachMicroStepStages ? attention : withFrameworkFrom(attention, frameworkHint(files, modelFile));
}
