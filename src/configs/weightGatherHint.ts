/**
 * Which framework the files beside a model train it with, as far as it decides when ZeRO-1/2 gather their updated
 * weights (weightGatherWords.ts): an FSDP config or script, or a Megatron launch with or without
 * --overlap-param-gather, read as `wap config` reads them (readConfigSetups). The model's own file first, then the
 * others in the order given; the first that names a framework wins. A config naming none (DeepSpeed, DDP) gives no
 * hint, and the planner prices DeepSpeed's way.
 */
import type { PlanOptions } from '../protocol/planOptions';
import { MAX_CONFIG_CHARS } from './check';
import { readConfigSetups } from './evaluate';
import type { StatedWeightGather } from './weightGatherWords';

export interface WeightGatherHint extends StatedWeightGather {
  /** The file that says it. */
  file: string;
}

export function weightGatherHint(files: ReadonlyArray<{ name: string; text: string }>, modelFile?: string): WeightGatherHint | undefined {
  const ordered = [...files.filter((f) => f.name === modelFile), ...files.filter((f) => f.name !== modelFile)];
  for (const f of ordered) {
    if (f.text.length > MAX_CONFIG_CHARS) continue;
    const said = readConfigSetups(f.name, f.text).find((s) => s.weightGather)?.weightGather;
    if (said) return { ...said, file: f.name };
  }
  return undefined;
}

/** The options with the hint's gather timings where no flag or setting says them. */
export function withWeightGatherFrom(options: PlanOptions, hint: WeightGatherHint | undefined): PlanOptions {
  if (!hint || options.forwardGatherStages) return options;
  return { ...options, forwardGatherStages: hint.inForward, forwardGatherSource: `${hint.file} (${hint.why})` };
}
