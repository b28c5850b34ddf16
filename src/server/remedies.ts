/**
 * Ways out of "does not fit": when a plan is infeasible, find what the user
 * can change in the editor so that one fits, and offer each as a code action
 * rather than as advice to type a CLI flag.
 *
 * The planner already searches the memory-saving dimensions it models (ZeRO,
 * recompute, micro-batching with accumulation, offload) when they are not
 * pinned, so a smaller batch never helps. What is left to the user is the
 * precision, when a setting or training config fixed it (the GPU's own
 * mixed precision halves activations and weights), and the hardware (WAP:
 * Select Cluster). A precision remedy is offered only when the same planner
 * says it fits, so its title is a prediction, not a guess.
 */
import type { AnalyzedModel } from '../core/ir';
import type { PlanOutcome } from '../protocol/plan';
import type { PlanOptions } from '../protocol/planOptions';
import { planModelAsync, type ClusterSpec } from '../planner';

export interface Remedy {
  /** Code action title, e.g. "Use batch 32 (fits: 410 samples/s)". */
  title: string;
  /** A setting the action writes (through the client's wap.applySetting command). */
  setting?: { key: string; value: unknown };
  /** Otherwise a client command the action runs, e.g. wap.selectCluster. */
  command?: string;
}

export async function findRemedies(
  model: AnalyzedModel,
  cluster: ClusterSpec,
  options: PlanOptions,
  cancel: { readonly isCancellationRequested: boolean } | undefined,
  selectClusterCommand: string,
): Promise<Remedy[]> {
  const remedies: Remedy[] = [];
  if (options.precision && !cancel?.isCancellationRequested) {
    // Without the fixed precision the planner picks the GPUs' best (bf16/fp16 mixed precision where they have it).
    const { precision: _fixed, precisionSource: _source, ...rest } = options;
    const outcome: PlanOutcome = await planModelAsync(model, cluster, rest, { cancel });
    if (outcome.feasible && outcome.plan.setup && outcome.plan.setup.precision !== options.precision) {
      remedies.push({
        title: `Plan in ${outcome.plan.setup.precision} instead of ${options.precision} (fits on ${outcome.plan.gpus} GPU${outcome.plan.gpus > 1 ? 's' : ''}: ${Math.round(outcome.plan.samplesPerSec).toLocaleString('en-US')} samples/s)`,
        setting: { key: 'precision', value: 'auto' },
      });
    }
  }
  remedies.push({ title: 'Choose another cluster…', command: selectClusterCommand });
  return remedies;
}

/** One line for the diagnostic: what the code actions offer. */
export function remediesSentence(remedies: readonly Remedy[]): string {
  const precision = remedies.find((r) => r.setting?.key === 'precision');
  return precision ? `Quick fixes: ${precision.title.replace(/ \(.*$/, '').toLowerCase()} fits, or choose another cluster.` : 'WAP already searched ZeRO, recompute and micro-batching; quick fix: choose another cluster.';
}
