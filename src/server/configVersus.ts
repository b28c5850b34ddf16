/**
 * "your config … · best plan …" for an open training config: the model the
 * config belongs to is planned once more with the config's own setup pinned
 * (precision, ZeRO, recompute, degrees, GPU count), at the plan's batch and
 * with its optimizer so the two step times compare, and put beside the plan
 * the config is checked against, planned again in the config's precision when
 * that differs. Shown as an info diagnostic and as the config file's hover.
 */
import { basename } from 'node:path';
import { comparedSetup, pinnedOptions, summarizeRun, versusLine, planMachines, withLaunchScriptWorld, withStatedPrecision, withStatedFramework, type FileAccess, type RunSummary } from '../configs';
import type { AnalyzedModel } from '../core/ir';
import { accumulatesUnsharded, allReducesEachMicroStep, gathersInForward, planModelAsync, syncsSerially } from '../planner';
import type { PlanReport } from '../protocol/plan';
import type { PlanOptions } from '../protocol/planOptions';
import type { Environment } from './environment';
import { toPlanOptions, type WapSettings } from './settings';

export interface ConfigVersus {
  line: string;
  /** Both estimates, to weigh the config's findings by (configs/evaluate.ts weighedByVersus). */
  yours: RunSummary;
  best: RunSummary;
  /** Where the setup is stated (offsets into the config text). */
  anchor: { start: number; end: number };
}

export async function configVersus(fileName: string, text: string, plan: PlanReport, model: AnalyzedModel, settings: WapSettings, env: Environment, files?: FileAccess): Promise<ConfigVersus | undefined> {
  let setup;
  try {
    setup = comparedSetup(fileName, text, files);
  } catch {
    return undefined; // a malformed config has its own diagnostic
  }
  const cluster = await env.cluster(settings);
  // A launch script that starts one process per GPU of each machine (deepspeed without --num_gpus, torchrun
  // --nproc_per_node=gpu) runs on the plan's machines, as the CLI counts it (configs/launchWorldSetup.ts).
  if (files) setup = withLaunchScriptWorld(setup, fileName, text, plan.file, files, planMachines(plan.cluster)).setup;
  if (!setup) return undefined;
  // Both sides hold the optimizer and the 16-bit style (autocast, master weights, pure) the model's plan priced, read
  // from the code or configs beside the model: a model loaded in bf16 keeps bf16 state whatever launches it.
  const { optimizerAssumed: _assumed, ...settingsOptions } = toPlanOptions(settings);
  const style = plan.plan.setup?.ampStyle;
  const base: PlanOptions = {
    ...settingsOptions, optimizer: plan.optimizer, optimizerSource: "the model's plan", batch: plan.batch,
    ...(style && !settingsOptions.ampStyle ? { ampStyle: style, ampStyleSource: "the model's plan" } : {}),
  };
  const options = { ...pinnedOptions(base, setup, basename(fileName)), batch: plan.batch };
  const yours = summarizeRun(await planModelAsync(model, cluster.spec, options, {}));
  // The best plan trains in the precision the config states unless wap.precision says one, on the config's framework;
  // the model's plan, in another precision (from a config beside the model) or priced for another framework's
  // weight gather or gradient sync, is planned again.
  const bestOptions = withStatedFramework(withStatedPrecision(base, setup, basename(fileName), true), setup, basename(fileName), true);
  const stated = bestOptions.precision;
  const otherPrecision = !!stated && !!plan.plan.setup && plan.plan.setup.precision !== stated;
  // A plan without ZeRO-1/2 priced no gather: only a gather the next forward hides can make them win instead.
  const inForward = bestOptions.forwardGatherStages ?? [];
  const planned = plan.plan.setup;
  const otherGather = planned?.weightGather ? planned.weightGather !== (gathersInForward(inForward, planned.zeroStage) ? 'next-forward' : 'after-step') : inForward.length > 0;
  const otherSync = !!planned && planned.dataParallel * planned.contextParallel > 1 && (planned.gradientSync === 'serial') !== syncsSerially(bestOptions.serialSyncStages, planned.zeroStage);
  // And for another accumulation: FSDP's no_sync holds full gradients a plan that reduced every micro-step did not.
  const otherAccumulation = !!planned && planned.gradientAccumulation > 1 && (planned.gradientAccumulationSync === 'unsharded') !== accumulatesUnsharded(bestOptions.unshardedAccumulationStages, planned.zeroStage, planned.gradientAccumulation);
  // And for DDP all-reducing every micro-step (a loop without no_sync) where the model's plan synced once, or back.
  const otherMicroStepSync = !!planned && planned.gradientAccumulation > 1 && planned.pipelineStages <= 1 && planned.dataParallel * planned.contextParallel > 1 && (planned.gradientAccumulationSync === 'every-micro-step' && planned.zeroStage <= 1) !== allReducesEachMicroStep(bestOptions.allReduceEachMicroStepStages, planned.zeroStage, planned.gradientAccumulation);
  // And for the experts as the config's framework runs them (Megatron's dispatcher and grouped GEMM).
  const otherExperts = !!planned && planned.tokenDispatcher !== undefined && ((bestOptions.tokenDispatcher ?? 'alltoall') !== planned.tokenDispatcher || (bestOptions.expertsKernel !== undefined && bestOptions.expertsKernel !== planned.expertsKernel));
  const best = otherPrecision || otherGather || otherSync || otherAccumulation || otherMicroStepSync || otherExperts ? await planModelAsync(model, cluster.spec, bestOptions, {}) : plan;
  const bestSummary = summarizeRun(best);
  const line = versusLine(yours, bestSummary, setup);
  const caveat = yours.warnings.some((w) => /not honoured/.test(w)) ? ' (this planner version does not yet honour every pinned dimension)' : '';
  const replanned = otherPrecision ? `, best plan in the config's ${stated}` : otherGather || otherSync || otherAccumulation || otherMicroStepSync || otherExperts ? ", best plan on the config's framework" : '';
  return { line: `${line} — at batch ${plan.batch}${replanned}${caveat}`, anchor: setup.anchor, yours, best: bestSummary };
}
