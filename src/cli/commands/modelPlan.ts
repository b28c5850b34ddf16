/**
 * The plan that `wap config` and `wap export` compare with / export: model
 * file → analysis → planner, with the same flags as `wap plan`.
 */
import { readFileSync } from 'node:fs';
import type { Objective, OptimizerKind, PlanOptions, PlanOutcome, StrategyMode } from '../../protocol/plan';
import { analyzeSource, sourceKindOf } from '../../frontends/index';
import { ClusterSpecError, planModel, resolveCluster } from '../../planner/index';
import { detectLocalGpus } from '../../profiler/index';
import { CliError } from '../cliError';
import { parseShapeFlag } from './analyze';

/** parseArgs option declarations shared by both commands. */
export const PLAN_FLAGS = {
  'model-name': { type: 'string' },
  input: { type: 'string' },
  batch: { type: 'string' },
  gpus: { type: 'string' },
  'max-gpus': { type: 'string' },
  cluster: { type: 'string' },
  objective: { type: 'string' },
  strategies: { type: 'string' },
  optimizer: { type: 'string' },
} as const;

export const PLAN_FLAGS_HELP = `  --model-name NAME     which model in the file (default: the first)
  --input C,H,W|T       input shape without batch
  --batch B             global batch size (default 128)
  --gpus N | --max-gpus N
  --cluster FILE|PRESET cluster spec file, 'local', or a preset (default: the planner's default)
  --objective O         throughput (default) | efficiency
  --strategies S        dp | hybrid (default) | all
  --optimizer O         sgd | momentum (default) | adam`;

export type PlanFlagValues = { [K in keyof typeof PLAN_FLAGS]?: string };

function positiveInt(flag: string, v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  if (!/^[1-9]\d*$/.test(v.trim())) throw new CliError(`--${flag} expects a positive integer, got '${v}'`);
  return Number(v);
}

function oneOf<T extends string>(flag: string, v: string | undefined, allowed: readonly T[], dflt: T): T {
  if (v === undefined) return dflt;
  if (!(allowed as readonly string[]).includes(v)) throw new CliError(`--${flag} must be one of ${allowed.join(', ')}, got '${v}'`);
  return v as T;
}

export function readTextFile(path: string, what: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    throw new CliError(`cannot read ${what} '${path}': ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
}

export async function planForModelFile(file: string, v: PlanFlagValues): Promise<PlanOutcome> {
  if (!sourceKindOf(file)) throw new CliError(`'${file}' is not a .py, .ts/.js or .json model file`);
  const options: PlanOptions = {
    batch: positiveInt('batch', v.batch) ?? 128,
    objective: oneOf<Objective>('objective', v.objective, ['throughput', 'efficiency'], 'throughput'),
    strategies: oneOf<StrategyMode>('strategies', v.strategies, ['dp', 'hybrid', 'all'], 'hybrid'),
    optimizer: oneOf<OptimizerKind>('optimizer', v.optimizer, ['sgd', 'momentum', 'adam'], 'momentum'),
  };
  const gpus = positiveInt('gpus', v.gpus);
  if (gpus !== undefined) options.gpus = gpus;
  const maxGpus = positiveInt('max-gpus', v['max-gpus']);
  if (maxGpus !== undefined) options.maxGpus = maxGpus;
  let cluster;
  try {
    const localGpus = v.cluster === 'local' ? await detectLocalGpus() : undefined;
    cluster = resolveCluster(v.cluster, { localGpus, readFile: (p) => readFileSync(p, 'utf8') });
  } catch (err) {
    if (err instanceof ClusterSpecError) throw new CliError(`cluster: ${err.message}`);
    throw err;
  }
  const text = readTextFile(file, 'model file');
  const result = await analyzeSource(file, text, v.input !== undefined ? { inputShape: parseShapeFlag(v.input) } : {});
  if (result.models.length === 0) {
    const why = result.diagnostics.find((d) => d.severity === 'error');
    throw new CliError(`no model found in '${file}'${why ? `: line ${why.line}: ${why.message}` : ''}`);
  }
  const name = v['model-name'];
  const model = name !== undefined ? result.models.find((m) => m.name === name) : result.models[0];
  if (!model) throw new CliError(`no model named '${name}' in '${file}' (found: ${result.models.map((m) => m.name).join(', ')})`);
  const outcome = planModel(model, cluster, options);
  if (outcome.feasible) outcome.file = file;
  return outcome;
}
