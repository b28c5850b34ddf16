/**
 * Which framework the files beside a model train it with, as far as it decides the timing of its collectives
 * (frameworkTimings.ts): when ZeRO-1/2 gather their updated weights (an FSDP config or script, a Megatron launch with
 * or without --overlap-param-gather) and whether gradients sync with nothing beside them (a DeepSpeed config), read
 * as `wap config` reads them (readConfigSetups). The model's own file first, then the others in the order given; the
 * first that names a framework wins. Nothing named (a DDP script): the planner's defaults.
 */
import type { PlanOptions } from '../protocol/planOptions';
import { detectConfigFormats, MAX_CONFIG_CHARS } from './check';
import { staleDeepSpeedJson } from './inlineDeepSpeed';
import { readConfigSetups } from './evaluate';
import type { StatedSerialSync, StatedWeightGather } from './frameworkTimings';

export interface FrameworkHint {
  weightGather?: StatedWeightGather;
  serialSync?: StatedSerialSync;
  /** The file that says it. */
  file: string;
}

export function frameworkHint(files: ReadonlyArray<{ name: string; text: string }>, modelFile?: string): FrameworkHint | undefined {
  const ordered = [...files.filter((f) => f.name === modelFile), ...files.filter((f) => f.name !== modelFile)];
  // As the precision hint: a DeepSpeed JSON the script's own in-code config supersedes says nothing of its run.
  const stale = staleDeepSpeedJson(files, modelFile);
  for (const f of ordered) {
    if (f.text.length > MAX_CONFIG_CHARS || (stale(f.name) && detectConfigFormats(f.name, f.text).includes('deepspeed'))) continue;
    const said = readConfigSetups(f.name, f.text).find((s) => s.weightGather || s.serialSync);
    if (said) return { ...(said.weightGather ? { weightGather: said.weightGather } : {}), ...(said.serialSync ? { serialSync: said.serialSync } : {}), file: f.name };
  }
  return undefined;
}

/** The options with the hint's timings where no flag or setting says them. */
export function withFrameworkFrom(options: PlanOptions, hint: FrameworkHint | undefined): PlanOptions {
  let out = options;
  if (hint?.weightGather && !options.forwardGatherStages) out = { ...out, forwardGatherStages: hint.weightGather.inForward, forwardGatherSource: `${hint.file} (${hint.weightGather.why})` };
  if (hint?.serialSync && !options.serialSyncStages) out = { ...out, serialSyncStages: hint.serialSync.stages, serialSyncSource: `${hint.file} (${hint.serialSync.why})` };
  return out;
}
