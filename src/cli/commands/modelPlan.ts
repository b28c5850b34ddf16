/**
 * The plan that `wap config` and `wap export` compare with / export: model
 * file → analysis → planner, with `wap plan`'s planner flags. Here the model
 * file is given by --model (config) or positionally (export), so the model
 * *name* is --model-name (issue #7).
 */
import type { PlanOutcome } from '../../protocol/plan';
import type { PlanOptions } from '../../protocol/planOptions';
import { planModel } from '../../planner/index';
import { loadModel, type ModelFlags } from '../modelLoading';
import { clusterFrom, PLANNER_FLAGS, plannerFlagsHelp, planOptionsFrom, withTrainingHints, type PlannerFlagValues } from '../planFlags';

/** parseArgs option declarations shared by both commands. */
export const PLAN_FLAGS = { ...PLANNER_FLAGS, 'model-name': { type: 'string' } } as const;

export const PLAN_FLAGS_HELP = plannerFlagsHelp('--model-name NAME');

/** The flags, and who states `seq-len` when a training config does rather than the user. */
export type PlanFlagValues = PlannerFlagValues & { 'model-name'?: string; sequenceSource?: string } & Pick<ModelFlags, 'launchArguments' | 'importRoot'>;

export async function planForModelFile(file: string, v: PlanFlagValues, adjust: (o: PlanOptions) => PlanOptions = (o) => o): Promise<PlanOutcome> {
  const options = adjust(planOptionsFrom(v));
  const cluster = await clusterFrom(v.cluster);
  const model = await loadModel(file, { input: v.input, 'seq-len': v['seq-len'], python: v.python, 'script-args': v['script-args'], sequenceSource: v.sequenceSource, launchArguments: v.launchArguments, importRoot: v.importRoot, modelName: v['model-name'] });
  const outcome = planModel(model, cluster, await withTrainingHints(options, file));
  if (outcome.feasible) outcome.file = file;
  return outcome;
}
