/**
 * The planner flags every planning command shares (`wap plan`, `wap config`,
 * `wap export`): their parseArgs declarations, their help lines, and their
 * translation into PlanOptions and a ClusterSpec.
 */
import { readFileSync } from 'node:fs';
import type { Objective, OptimizerKind, PlanOptions, StrategyMode } from '../protocol/plan';
import { ClusterSpecError, CLUSTER_PRESETS, DEFAULT_PRESET, resolveCluster, type ClusterSpec } from '../planner/index';
import { detectLocalGpus } from '../profiler/index';
import { oneOf, positiveInt } from './args';
import { CliError } from './cliError';

export const DEFAULT_PLAN_BATCH = 128;

/** parseArgs declarations; the model-choosing flag differs per command and is not here. */
export const PLANNER_FLAGS = {
  input: { type: 'string' },
  batch: { type: 'string' },
  gpus: { type: 'string' },
  'max-gpus': { type: 'string' },
  cluster: { type: 'string' },
  objective: { type: 'string' },
  strategies: { type: 'string' },
  optimizer: { type: 'string' },
} as const;

export type PlannerFlagValues = { [K in keyof typeof PLANNER_FLAGS]?: string };

/** Help lines for PLANNER_FLAGS, led by the command's own model-choosing flag. */
export function plannerFlagsHelp(modelFlag: string): string {
  return `  ${modelFlag.padEnd(21)} which model in the file (default: the first)
  --input C,H,W|T       input shape without batch
  --batch B             global batch size (default ${DEFAULT_PLAN_BATCH})
  --gpus N              use exactly N GPUs
  --max-gpus N          consider at most N GPUs
  --cluster FILE|PRESET cluster spec file, 'local' (nvidia-smi), or a preset (${Object.keys(CLUSTER_PRESETS).join(', ')}; default ${DEFAULT_PRESET})
  --objective O         throughput (default) | efficiency (smallest n within 5% of the best)
  --strategies S        dp (WAP: data parallel, choose n) | hybrid (default) | all (adds pipelines)
  --optimizer O         sgd | momentum (default) | adam`;
}

export function planOptionsFrom(v: PlannerFlagValues): PlanOptions {
  const options: PlanOptions = {
    batch: positiveInt('batch', v.batch) ?? DEFAULT_PLAN_BATCH,
    objective: oneOf<Objective>('objective', v.objective, ['throughput', 'efficiency'], 'throughput'),
    strategies: oneOf<StrategyMode>('strategies', v.strategies, ['dp', 'hybrid', 'all'], 'hybrid'),
    optimizer: oneOf<OptimizerKind>('optimizer', v.optimizer, ['sgd', 'momentum', 'adam'], 'momentum'),
  };
  const gpus = positiveInt('gpus', v.gpus);
  if (gpus !== undefined) options.gpus = gpus;
  const maxGpus = positiveInt('max-gpus', v['max-gpus']);
  if (maxGpus !== undefined) options.maxGpus = maxGpus;
  return options;
}

/** `--cluster`: a preset, a spec file, 'local' (nvidia-smi via the profiler) or the default preset. */
export async function clusterFrom(ref: string | undefined): Promise<ClusterSpec> {
  try {
    const localGpus = ref === 'local' ? await detectLocalGpus() : undefined;
    return resolveCluster(ref, { localGpus, readFile: (p) => readFileSync(p, 'utf8') });
  } catch (err) {
    if (err instanceof ClusterSpecError) throw new CliError(`cluster: ${err.message}`);
    throw err;
  }
}
