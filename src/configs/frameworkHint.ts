/**
 * Which framework the files beside a model train it with, as far as it decides the timing of its collectives
 * (frameworkTimings.ts): when ZeRO-1/2 gather their updated weights (an FSDP config or script, a Megatron launch with
 * or without --overlap-param-gather), whether gradients sync with nothing beside them (a DeepSpeed config) and whether
 * ZeRO-2/3 accumulate them unsharded (FSDP's no_sync: unshardedAccumulation.ts), read
 * as `wap config` reads them (readConfigSetups). The model's own file first, then the others in the order given; the
 * first that names a framework wins, with what else it decides over the model's code (Megatron's experts kernel and
 * token dispatcher, FSDP's fp32 reduce dtype). Nothing named: the planner's defaults, but for a DDP script's loop that
 * all-reduces on every micro-step (no no_sync: torchScriptAccumulation.ts), which says that alone.
 */
import type { PlanOptions } from '../protocol/planOptions';
import { detectConfigFormats, MAX_CONFIG_CHARS } from './check';
import { staleDeepSpeedJson } from './inlineDeepSpeed';
import { readConfigSetups } from './evaluate';
import type { StatedSerialSync, StatedWeightGather } from './frameworkTimings';
import type { StatedSetup } from './setup';
import { REDUCED_EACH_MICRO_STEP, type StatedUnshardedAccumulation } from './unshardedAccumulation';

export interface FrameworkHint {
  weightGather?: StatedWeightGather;
  serialSync?: StatedSerialSync;
  unshardedAccumulation?: StatedUnshardedAccumulation;
  /** Whether DDP all-reduces on every micro-step (a torch script's loop without no_sync: torchScriptAccumulation.ts). */
  microStepAllReduce?: StatedSetup['microStepAllReduce'];
  /** What else the framework decides over the model's code: its experts kernel, token dispatcher, gradient reduce dtype. */
  expertsKernel?: StatedSetup['expertsKernel'];
  tokenDispatcher?: StatedSetup['tokenDispatcher'];
  gradientReduceInFp32?: StatedSetup['gradientReduceInFp32'];
  /** The file that says it. */
  file: string;
}

export function frameworkHint(files: ReadonlyArray<{ name: string; text: string }>, modelFile?: string): FrameworkHint | undefined {
  const ordered = [...files.filter((f) => f.name === modelFile), ...files.filter((f) => f.name !== modelFile)];
  // As the precision hint: a DeepSpeed JSON the script's own in-code config supersedes says nothing of its run.
  const stale = staleDeepSpeedJson(files, modelFile);
  // A file that says only how its run accumulates (the Trainer without fsdp or deepspeed, whose ZeRO-2/3 would be
  // FSDP under no_sync) speaks when no file names a framework: one that does says it all.
  let accumulationOnly: FrameworkHint | undefined;
  for (const f of ordered) {
    if (f.text.length > MAX_CONFIG_CHARS || (stale(f.name) && detectConfigFormats(f.name, f.text).includes('deepspeed'))) continue;
    const setups = readConfigSetups(f.name, f.text);
    const said = setups.find((s) => s.weightGather || s.serialSync);
    // A config that names its framework without its accumulation reduces every micro-step (evaluate.ts withStatedFramework).
    const accumulation = said?.unshardedAccumulation ?? (said?.weightGather ? REDUCED_EACH_MICRO_STEP : undefined);
    if (said) {
      const { expertsKernel, tokenDispatcher, gradientReduceInFp32 } = said;
      return {
        ...(said.weightGather ? { weightGather: said.weightGather } : {}), ...(said.serialSync ? { serialSync: said.serialSync } : {}), ...(accumulation ? { unshardedAccumulation: accumulation } : {}), ...(said.microStepAllReduce ? { microStepAllReduce: said.microStepAllReduce } : {}),
        ...(expertsKernel ? { expertsKernel } : {}), ...(tokenDispatcher ? { tokenDispatcher } : {}), ...(gradientReduceInFp32 ? { gradientReduceInFp32 } : {}),
        file: f.name,
      };
    }
    const own = setups.find((s) => s.unshardedAccumulation || s.microStepAllReduce);
    if (own) accumulationOnly ??= { ...(own.unshardedAccumulation ? { unshardedAccumulation: own.unshardedAccumulation } : {}), ...(own.microStepAllReduce ? { microStepAllReduce: own.microStepAllReduce } : {}), file: f.name };
  }
  return accumulationOnly;
}

/** The options with the hint's timings where no flag or setting says them. */
export function withFrameworkFrom(options: PlanOptions, hint: FrameworkHint | undefined): PlanOptions {
  let out = options;
  if (hint?.weightGather && !options.forwardGatherStages) out = { ...out, forwardGatherStages: hint.weightGather.inForward, forwardGatherSource: `${hint.file} (${hint.weightGather.why})` };
  if (hint?.serialSync && !options.serialSyncStages) out = { ...out, serialSyncStages: hint.serialSync.stages, serialSyncSource: `${hint.file} (${hint.serialSync.why})` };
  const accumulation = hint?.unshardedAccumulation;
  if (accumulation && !options.unshardedAccumulationStages) out = { ...out, unshardedAccumulationStages: accumulation.stages, unshardedAccumulationSource: `${hint.file} (${accumulation.why})` };
  const eachStep = hint?.microStepAllReduce;
  if (eachStep && !options.allReduceEachMicroStepStages) out = { ...out, allReduceEachMicroStepStages: eachStep.stages, allReduceEachMicroStepSource: `${hint.file} (${eachStep.why})` };
  if (hint?.expertsKernel && !options.expertsKernel) out = { ...out, expertsKernel: hint.expertsKernel.grouped ? 'grouped' : 'loop', expertsKernelSource: `${hint.file} (${hint.expertsKernel.why})` };
  if (hint?.tokenDispatcher && !options.tokenDispatcher) out = { ...out, tokenDispatcher: hint.tokenDispatcher.kind, tokenDispatcherSource: `${hint.file} (${hint.tokenDispatcher.why})` };
  if (hint?.gradientReduceInFp32 && !options.gradientReduceInFp32) out = { ...out, gradientReduceInFp32: true, gradientReduceSource: `${hint.file} (${hint.gradientReduceInFp32.why})` };
  return out;
}
