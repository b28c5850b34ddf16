/**
 * Ways out of "does not fit": when a plan is infeasible, find what the user
 * can change in the editor so that one fits, and offer each as a code action
 * rather than as advice to type a CLI flag.
 *
 * The planner already searches every memory-saving dimension it models
 * (precision, ZeRO, recompute, micro-batching) when they are not pinned, so
 * what is left to the user is the workload and the hardware: a smaller batch
 * (wap.batchSize) or another cluster (WAP: Select Cluster). The batch found is
 * the largest power-of-two fraction of the current one that the same planner
 * says fits, so the action's title is a prediction, not a guess.
 */
import type { AnalyzedModel } from '../core/ir';
import type { PlanOptions, PlanOutcome } from '../protocol/plan';
import { planModelAsync, type ClusterSpec } from '../planner';

export interface Remedy {
  /** Code action title, e.g. "Use batch 32 (fits: 410 samples/s)". */
  title: string;
  /** A setting the action writes (through the client's wap.applySetting command). */
  setting?: { key: string; value: unknown };
  /** Otherwise a client command the action runs, e.g. wap.selectCluster. */
  command?: string;
}

/** The batch search stops after this long: remedies are a convenience and must not hold the planner queue. */
const REMEDY_BUDGET_MS = 3000;

export async function findRemedies(
  model: AnalyzedModel,
  cluster: ClusterSpec,
  options: PlanOptions,
  cancel: { readonly isCancellationRequested: boolean } | undefined,
  selectClusterCommand: string,
): Promise<Remedy[]> {
  const remedies: Remedy[] = [];
  const started = Date.now();
  for (let batch = Math.floor(options.batch / 2); batch >= 1; batch = Math.floor(batch / 2)) {
    if (cancel?.isCancellationRequested || Date.now() - started > REMEDY_BUDGET_MS) break;
    const outcome: PlanOutcome = await planModelAsync(model, cluster, { ...options, batch }, { cancel });
    if (outcome.feasible) {
      remedies.push({
        title: `Use batch ${batch} (fits on ${outcome.plan.gpus} GPU${outcome.plan.gpus > 1 ? 's' : ''}: ${Math.round(outcome.plan.samplesPerSec).toLocaleString('en-US')} samples/s)`,
        setting: { key: 'batchSize', value: batch },
      });
      break;
    }
  }
  remedies.push({ title: 'Choose another cluster…', command: selectClusterCommand });
  return remedies;
}

/** One line for the diagnostic: what the code actions offer. */
export function remediesSentence(remedies: readonly Remedy[]): string {
  const batch = remedies.find((r) => r.setting?.key === 'batchSize');
  return batch ? `Ways out (quick fixes): batch ${String(batch.setting!.value)} fits, or choose another cluster.` : 'Quick fix: choose another cluster.';
}
