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
import { readConfigSetups, withStatedFramework } from './evaluate';
import type { StatedSetup } from './setup';

/** What the framework of a file beside the model decides (the StatedSetup fields withStatedFramework reads), and the file. */
export type FrameworkHint = FrameworkFacts & { file: string };
type FrameworkFacts = Pick<StatedSetup, 'weightGather' | 'serialSync' | 'unshardedAccumulation' | 'microStepAllReduce' | 'expertsKernel' | 'tokenDispatcher' | 'gradientReduceInFp32'>;

/** The facts a setup states, without the keys it leaves unset. */
function frameworkFacts(s: StatedSetup): FrameworkFacts {
  const { weightGather, serialSync, unshardedAccumulation, microStepAllReduce, expertsKernel, tokenDispatcher, gradientReduceInFp32 } = s;
  const all: FrameworkFacts = { weightGather, serialSync, unshardedAccumulation, microStepAllReduce, expertsKernel, tokenDispatcher, gradientReduceInFp32 };
  return Object.fromEntries(Object.entries(all).filter(([, v]) => v !== undefined)) as FrameworkFacts;
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
    // A config that names its framework says it all (withStatedFramework fills in what naming it implies).
    if (said) return { ...frameworkFacts(said), file: f.name };
    const own = setups.find((s) => s.unshardedAccumulation || s.microStepAllReduce);
    if (own) accumulationOnly ??= { ...(own.unshardedAccumulation ? { unshardedAccumulation: own.unshardedAccumulation } : {}), ...(own.microStepAllReduce ? { microStepAllReduce: own.microStepAllReduce } : {}), file: f.name };
  }
  return accumulationOnly;
}

/** The options with what the hint's framework decides where no flag or setting says it: `wap config`'s rule, flags first. */
export function withFrameworkFrom(options: PlanOptions, hint: FrameworkHint | undefined): PlanOptions {
  return hint ? withStatedFramework(options, hint, hint.file, true) : options;
}
