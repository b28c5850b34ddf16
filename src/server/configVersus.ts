/**
 * "your config … · best plan …" for an open training config: the model the
 * config belongs to is planned once more with the config's own setup pinned
 * (precision, ZeRO, recompute, degrees, GPU count), at the plan's batch so
 * the two step times compare, and put beside the plan the config is checked
 * against. Shown as an info diagnostic and as the config file's hover.
 */
import { basename } from 'node:path';
import { pinnedOptions, readConfigSetups, summarizeRun, versusLine } from '../configs';
import type { AnalyzedModel } from '../core/ir';
import { planModelAsync } from '../planner';
import type { PlanReport } from '../protocol/plan';
import type { Environment } from './environment';
import { toPlanOptions, type WapSettings } from './settings';

export interface ConfigVersus {
  line: string;
  /** Where the setup is stated (offsets into the config text). */
  anchor: { start: number; end: number };
}

export async function configVersus(fileName: string, text: string, plan: PlanReport, model: AnalyzedModel, settings: WapSettings, env: Environment): Promise<ConfigVersus | undefined> {
  let setup;
  try {
    setup = readConfigSetups(fileName, text)[0];
  } catch {
    return undefined; // a malformed config has its own diagnostic
  }
  if (!setup) return undefined;
  const options = { ...pinnedOptions(toPlanOptions(settings), setup, basename(fileName)), batch: plan.batch };
  const cluster = await env.cluster(settings);
  const yours = summarizeRun(await planModelAsync(model, cluster.spec, options, {}));
  const line = versusLine(yours, summarizeRun(plan));
  const caveat = yours.warnings.some((w) => /not honoured/.test(w)) ? ' (this planner version does not yet honour every pinned dimension)' : '';
  return { line: `${line} — at batch ${plan.batch}${caveat}`, anchor: setup.anchor };
}
