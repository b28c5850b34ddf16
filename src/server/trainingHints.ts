/**
 * Without an explicit wap.precision, wap.optimizer or wap.memoryFormat, the
 * files beside the model say what to plan: the precision a training config
 * states, the optimizer the code or a DeepSpeed config builds, and whether the
 * code converts the model to channels_last, the model's own file first
 * (through the configs room's readers). Read per plan, synchronously and
 * bounded (64 files, each under the config size cap), so a change to a config
 * shows in the next plan's key.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { precisionHintCandidates, trainingHintsApply, withTrainingHintsFrom } from '../configs/index';
import type { PlanOptions } from '../protocol/plan';

export function withTrainingHints(options: PlanOptions, uri: string): PlanOptions {
  if (!trainingHintsApply(options) || !uri.startsWith('file:')) return options;
  try {
    const path = fileURLToPath(uri);
    const dir = dirname(path);
    const files = precisionHintCandidates(readdirSync(dir), basename(path)).flatMap((name) => {
      try {
        return [{ name, text: readFileSync(join(dir, name), 'utf8') }];
      } catch {
        return [];
      }
    });
    return withTrainingHintsFrom(options, files, basename(path));
  } catch {
    return options;
  }
}
