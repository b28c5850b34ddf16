/**
 * Without an explicit wap.precision, wap.optimizer or wap.memoryFormat, the
 * files beside the model say what to plan: the precision a training config
 * states, the optimizer the code or a DeepSpeed config builds, and whether the
 * code converts the model to channels_last, the model's own file first
 * (through the configs room's readers); without a wap.batchSize, the global batch the launch that trains the model
 * states (launchedSetupHint.ts). Read per plan, synchronously and
 * bounded (64 files, each under the config size cap), so a change to a config
 * shows in the next plan's key.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { launchedSetupHint, precisionHintCandidates, trainingHintsApply, withLaunchedSetup, withTrainingHintsFrom, type FileAccess } from '../configs/index';
import { pretrainedConfigPath } from '../frontends/huggingface/sources';
import { listOrEmpty, readOrUndefined } from './diskFiles';
import type { PlanOptions } from '../protocol/planOptions';

/** The launch scripts and the files they name, as the disk has them (the hints read the disk, not open editors). */
const DISK: FileAccess = { read: readOrUndefined, list: listOrEmpty, pretrainedConfig: pretrainedConfigPath };

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
    const hinted = withTrainingHintsFrom(options, files, basename(path));
    return hinted.batchAssumed || !hinted.precision ? withLaunchedSetup(hinted, launchedSetupHint(path, DISK)) : hinted;
  } catch {
    return options;
  }
}
