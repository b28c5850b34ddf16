/**
 * Without an explicit wap.precision, the training config beside the model file
 * says which precision to plan (through the configs room's reader). Read per
 * plan, synchronously and bounded (64 files, each under the config size cap),
 * so a change to the config shows in the next plan's key.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { precisionHint, precisionHintCandidates, withPrecisionFrom } from '../configs/index';
import type { PlanOptions } from '../protocol/plan';

export function withPrecisionHint(options: PlanOptions, uri: string): PlanOptions {
  if ((options.precision && options.ampStyle) || !uri.startsWith('file:')) return options;
  try {
    const dir = dirname(fileURLToPath(uri));
    const files = precisionHintCandidates(readdirSync(dir)).flatMap((name) => {
      try {
        return [{ name, text: readFileSync(join(dir, name), 'utf8') }];
      } catch {
        return [];
      }
    });
    return withPrecisionFrom(options, precisionHint(files));
  } catch {
    return options;
  }
}
