/**
 * "Your config vs the best plan": the dimensions a config states become
 * planner pins (the caller plans twice, pinned and free), and the two
 * outcomes become one line and a JSON object. Pure: planning is the caller's.
 */
import type { ParallelPins, PlanOutcome, TrainingSetup } from '../protocol/plan';
import type { PlanOptions } from '../protocol/planOptions';
import { detectConfigFormats } from './check';
import { withLaunchedWorld } from './launchedBy';
import { launchedScriptSetup } from './launchSetup';
import { withLinkedConfig } from './linkedConfig';
import { READERS_BY_FORMAT } from './readers';
import type { ConfigFinding, FileAccess } from './types';
import { describeSetup, impliedDataParallel, statedDataParallel, statedGlobalBatch, type StatedSetup } from './setup';
import { OVERLAPPED_SYNC } from './frameworkTimings';
import { REDUCED_EACH_MICRO_STEP } from './unshardedAccumulation';

/**
 * The setups a config states, one per format that can say one (a script may hold several): their
 * values (pins, the stated batch) and `set` edits. Python-read setups (Lightning) are parsed into a
 * syntax tree that is freed on return; their edits hold offsets only, so they stay right. `files` reads a
 * DeepSpeed JSON the config names (linkedConfig.ts).
 */
export function readConfigSetups(fileName: string, text: string, files?: FileAccess): StatedSetup[] {
  const out: StatedSetup[] = [];
  for (const format of detectConfigFormats(fileName, text)) {
    const reader = READERS_BY_FORMAT.get(format);
    let setup: StatedSetup | undefined;
    try {
      setup = reader?.readSetup?.(fileName, text, files);
    } catch {
      // A file that does not parse states no setup; its check says why (a malformed-config finding), never a crash.
      continue;
    }
    if (setup) out.push(withLaunchedWorld(fileName, withLinkedConfig(fileName, setup, files), files, reader!.launchedAs));
  }
  return out;
}

/**
 * The setup "your config" compares: the config's own, else, for a launch script that states only its process count,
 * the setup of the script it launches on those processes (launchSetup.ts).
 */
export function comparedSetup(fileName: string, text: string, files?: FileAccess): StatedSetup | undefined {
  return readConfigSetups(fileName, text, files)[0] ?? (files ? launchedScriptSetup(fileName, text, files, readConfigSetups) : undefined);
}

const OFF: Pick<ParallelPins, 'tensorParallel' | 'pipelineStages' | 'contextParallel' | 'sequenceParallel'> = { tensorParallel: 1, pipelineStages: 1, contextParallel: 1, sequenceParallel: false };

/**
 * Plan options that pin what the config says: its precision, ZeRO stage,
 * recompute, offload (the optimizer state; the parameters too), degrees,
 * micro-batch, GPU count and global batch. A dimension the format cannot
 * express is pinned off (a DDP launch has no TP).
 */
export function pinnedOptions(base: PlanOptions, setup: StatedSetup, source: string): PlanOptions {
  const pins: ParallelPins = { ...base.pins };
  for (const key of Object.keys(setup.inexpressible) as Array<keyof typeof OFF>) if (key in OFF) (pins as Record<string, unknown>)[key] = OFF[key];
  const copy = <K extends keyof ParallelPins>(key: K, dim: { value: ParallelPins[K] } | undefined): void => {
    if (dim) pins[key] = dim.value;
  };
  copy('zeroStage', setup.zeroStage);
  copy('hybridShard', setup.hybridShard);
  copy('cpuOffload', setup.cpuOffload);
  copy('paramOffload', setup.paramOffload);
  // Parameter offload steps the optimizer on the CPU: the planner offloads its state too (and refuses the pins
  // otherwise). A config that offloads nothing offloads no parameters either.
  if (setup.paramOffload?.value) pins.cpuOffload = true;
  else if (setup.cpuOffload?.value === false) pins.paramOffload = false;
  copy('recompute', setup.recompute);
  copy('tensorParallel', setup.tensorParallel);
  copy('pipelineStages', setup.pipelineStages);
  copy('contextParallel', setup.contextParallel);
  copy('sequenceParallel', setup.sequenceParallel);
  // A run states expert parallelism where it has it; elsewhere it runs none (a Trainer, accelerate or DDP run holds every expert).
  pins.expertParallel = setup.expertParallel?.value ?? 1;
  // Where the format says how experts split (Megatron's default follows TP), the run splits them so.
  if (setup.expertTensorParallel) pins.expertTensorParallel = setup.expertTensorParallel.value;
  copy('dataParallel', setup.dataParallel);

  copy('microBatch', setup.microBatch);
  const options: PlanOptions = withStatedFramework(withStatedPrecision({ ...base, pins }, setup, source), setup, source);
  if (setup.world !== undefined) options.gpus = setup.world;
  // A config whose batch arithmetic names its ranks (DeepSpeed's three batch keys) runs on them, times the model
  // parallel degrees it states (none, for a DeepSpeed JSON).
  const implied = setup.dataParallel || setup.world !== undefined ? undefined : impliedDataParallel(setup);
  if (implied !== undefined) options.gpus = implied * (setup.tensorParallel?.value ?? 1) * (setup.pipelineStages?.value ?? 1) * (setup.contextParallel?.value ?? 1);
  const global = statedGlobalBatch(setup, statedDataParallel(setup));
  if (global !== undefined) options.batch = global;
  return options;
}

/**
 * The options with the precision a config states, and where it says it. `keepExplicit`: a precision the options
 * already hold (a flag or setting) wins, as it does for the best plan a config is compared with (the precision is
 * a numerics choice, not a parallelization one: in another, "your config" could beat "the best plan" by it alone).
 */
export function withStatedPrecision(options: PlanOptions, setup: StatedSetup, source: string, keepExplicit = false): PlanOptions {
  if (!setup.precision || (keepExplicit && options.precision)) return options;
  const out: PlanOptions = { ...options, precision: setup.precision.value, precisionSource: `${source} (${setup.label})` };
  // The style goes with the precision it is of: a 16-bit run whose launcher decides how it holds its tensors.
  if (setup.ampStyle && !(keepExplicit && options.ampStyle)) Object.assign(out, { ampStyle: setup.ampStyle.value, ampStyleSource: `${source} (${setup.ampStyle.why})` });
  return out;
}

/**
 * The options with the way the config's framework gathers ZeRO-1/2's updated weights and syncs gradients
 * (frameworkTimings.ts), for both sides of a comparison: the best plan runs on the user's framework too.
 * `keepExplicit`: a flag's wins.
 */
export function withStatedFramework(options: PlanOptions, setup: Pick<StatedSetup, 'weightGather' | 'serialSync' | 'unshardedAccumulation' | 'microStepAllReduce' | 'expertsKernel' | 'tokenDispatcher' | 'gradientReduceInFp32'>, source: string, keepExplicit = false): PlanOptions {
  let out = options;
  if (setup.weightGather && !(keepExplicit && options.forwardGatherStages)) out = { ...out, forwardGatherStages: setup.weightGather.inForward, forwardGatherSource: `${source} (${setup.weightGather.why})` };
  // And how it syncs gradients: DeepSpeed's with nothing beside them, where it says; a config that names its framework
  // without that (FSDP) syncs beside the backward, whatever another framework's config beside the model said.
  const sync = setup.serialSync ?? (setup.weightGather ? OVERLAPPED_SYNC : undefined);
  if (sync && !(keepExplicit && options.serialSyncStages)) out = { ...out, serialSyncStages: sync.stages, serialSyncSource: `${source} (${sync.why})` };
  // And whether ZeRO-2/3 accumulate unsharded (FSDP's no_sync): a config that names its framework without saying so
  // reduces every micro-step, as DeepSpeed does.
  const accumulation = setup.unshardedAccumulation ?? (setup.weightGather ? REDUCED_EACH_MICRO_STEP : undefined);
  if (accumulation && !(keepExplicit && options.unshardedAccumulationStages)) out = { ...out, unshardedAccumulationStages: accumulation.stages, unshardedAccumulationSource: `${source} (${accumulation.why})` };
  // And whether DDP all-reduces on every micro-step (a loop without no_sync), where the script says.
  const eachStep = setup.microStepAllReduce;
  if (eachStep && !(keepExplicit && options.allReduceEachMicroStepStages)) out = { ...out, allReduceEachMicroStepStages: eachStep.stages, allReduceEachMicroStepSource: `${source} (${eachStep.why})` };
  // And its experts kernel, where the config decides it over the model's code (Megatron's --moe-grouped-gemm).
  const experts = setup.expertsKernel;
  if (experts && !(keepExplicit && options.expertsKernel)) out = { ...out, expertsKernel: experts.grouped ? 'grouped' : 'loop', expertsKernelSource: `${source} (${experts.why})` };
  // And the dtype its sharded gradients are reduce-scattered in (torchtitan's mixed_precision_reduce, fp32 by default).
  if (setup.gradientReduceInFp32 && !(keepExplicit && options.gradientReduceInFp32)) out = { ...out, gradientReduceInFp32: true, gradientReduceSource: `${source} (${setup.gradientReduceInFp32.why})` };
  // And how it dispatches tokens to other GPUs' experts (Megatron's --moe-token-dispatcher-type, allgather by default).
  const dispatcher = setup.tokenDispatcher;
  if (dispatcher && !(keepExplicit && options.tokenDispatcher)) out = { ...out, tokenDispatcher: dispatcher.kind, tokenDispatcherSource: `${source} (${dispatcher.why})` };
  return out;
}

/**
 * The tokens per sample the first of `setups` that states one trains on, with who says it ("recipe.yaml's
 * cutoff_len 2048"): the model is read at it unless `--seq-len` (wap.sequenceLength) says otherwise.
 */
export function statedSequence(setups: readonly StatedSetup[], configName: string): { tokens: number; source: string } | undefined {
  const stated = setups.find((s) => s.tokensPerSample)?.tokensPerSample;
  return stated && { tokens: stated.value, source: `${configName}'s ${stated.key} ${stated.value}` };
}

/** The global batch the config trains with, when it says (stated, or micro × accumulation × data-parallel degree). */
export function statedBatch(setup: StatedSetup): number | undefined {
  const probe = pinnedOptions({ batch: -1, objective: 'throughput', strategies: 'all', optimizer: 'adam' }, setup, '');
  return probe.batch > 0 ? probe.batch : undefined;
}

export interface RunSummary {
  feasible: boolean;
  reason?: string;
  gpus?: number;
  stepTimeMs?: number;
  samplesPerSec?: number;
  mfu?: number;
  memoryPerGpuBytes?: number;
  setup?: TrainingSetup;
  /** "ZeRO-2 + bf16 + TP 2", or the plan's strategy summary when it reports no setup. */
  describe: string;
  /** The training script's own assert refuses the config's GPU count: `reason` says which, and it is no memory limit. */
  refusedByScript?: boolean;
  /** Planner warnings (e.g. a pin this planner version does not honour yet): the comparison is only as good as they allow. */
  warnings: string[];
}

export function summarizeRun(outcome: PlanOutcome): RunSummary {
  const warnings = outcome.diagnostics.filter((d) => d.severity !== 'info').map((d) => d.message);
  if (!outcome.feasible) {
    const refusedByScript = (outcome.scaling ?? []).some((s) => s.refusedByScript && s.reason === outcome.reason);
    return { feasible: false, reason: outcome.reason, describe: 'does not fit', warnings, ...(refusedByScript ? { refusedByScript } : {}) };
  }
  const p = outcome.plan;
  const at = outcome.scaling.find((s) => s.gpus === p.gpus);
  return {
    feasible: true, gpus: p.gpus, stepTimeMs: p.stepTimeMs, samplesPerSec: p.samplesPerSec, mfu: p.setup?.mfu,
    memoryPerGpuBytes: Math.max(0, ...p.memoryPerGpuBytes), setup: p.setup,
    describe: `${p.gpus} GPU${p.gpus === 1 ? '' : 's'}${p.setup ? `, ${describeSetup(p.setup) || 'plain data parallel'}` : at?.summary ? `, ${at.summary}` : ''}`,
    warnings,
  };
}

const seconds = (ms: number): string => (ms >= 1000 ? `${(ms / 1000).toFixed(1)} s/step` : `${ms.toFixed(ms >= 100 ? 0 : 1)} ms/step`);
// Small models use well under a gigabyte: one decimal keeps them from reading as '0 GB'.
const gb = (b: number): string => `${b < 10e9 ? (b / 1e9).toFixed(1) : Math.round(b / 1e9)} GB/GPU`;

/**
 * "your config: 3.4 s/step, 41% MFU, fits (62 GB/GPU) · best plan: 2.1 s/step (1.6×), ZeRO-2 + bf16 + TP 2".
 * A config that states what WAP does not model (NVMe offload) gets "(approximate: … not modelled)".
 */
export function versusLine(yours: RunSummary, best: RunSummary, setup?: StatedSetup): string {
  const approximate = setup?.unmodelled?.length ? ` (approximate: ${[...new Set(setup.unmodelled.map((u) => u.short))].join('; ')})` : '';
  // A GPU count from another file is named: the user sees which launch the comparison assumed.
  // Nothing states a GPU count (a plain script with no launch beside it): the plan chose it for "your config" too,
  // so the two can only differ in the rest. Said, or an equal count reads as the user's own choice.
  const searched = setup && !setup.worldFrom && statedDataParallel(setup) === undefined && yours.feasible && yours.gpus !== undefined
    ? ` (${yours.gpus} GPU${yours.gpus === 1 ? '' : 's'}: nothing here states how many processes run it, so the plan chose)` : '';
  const implied = setup && !setup.worldFrom && !setup.dataParallel && setup.world === undefined ? impliedDataParallel(setup) : undefined;
  const arithmetic = implied !== undefined ? ` (${implied} data-parallel GPU${implied === 1 ? '' : 's'}: ${setup!.globalBatch!.value} = ${setup!.microBatch!.value} × ${setup!.gradientAccumulation!.value} × ${implied})` : '';
  const launched = setup?.worldFrom ? ` (${setup.world} GPU${setup.world === 1 ? '' : 's'}, as ${setup.worldFrom} launches it)` : arithmetic || searched;
  const mine = yours.feasible
    ? `your config${launched}${approximate}: ${seconds(yours.stepTimeMs!)}${yours.mfu !== undefined ? `, ${Math.round(yours.mfu * 100)}% MFU` : ''}, fits (${gb(yours.memoryPerGpuBytes!)})`
    : yours.refusedByScript ? `your config${launched}${approximate}: ${yours.reason}` : `your config${launched}${approximate}: does not fit (${yours.reason})`;
  if (!best.feasible) return `${mine} · best plan: nothing fits (${best.reason})`;
  const speedup = yours.feasible && best.stepTimeMs! > 0 ? ` (${(yours.stepTimeMs! / best.stepTimeMs!).toFixed(1)}×)` : '';
  return `${mine} · best plan: ${seconds(best.stepTimeMs!)}${speedup}, ${best.describe}`;
}

/**
 * A setup-differs finding tells the user to change to the plan's setup. Where WAP's own estimate of their setup is
 * at least as fast as the plan (the searches are heuristics: a recompute mode, micro-batch or GPU count the config
 * already uses may be one they did not reach), that is no reason to change it: the finding is information, and
 * its fix no longer the preferred one.
 */
export function weighedByVersus(findings: ConfigFinding[], yours: RunSummary, best: RunSummary): ConfigFinding[] {
  if (!yours.feasible || !best.feasible || yours.stepTimeMs! > best.stepTimeMs!) return findings;
  const estimate = `WAP estimates your setup at least as fast (${seconds(yours.stepTimeMs!)} against ${seconds(best.stepTimeMs!)}), so this is no reason to change it`;
  return findings.map((f) => (f.code !== 'setup-differs' || f.severity === 'info' ? f : {
    ...f, severity: 'info', message: `${f.message}; ${estimate}`, ...(f.fix ? { fix: { ...f.fix, preferred: false } } : {}),
  }));
}
