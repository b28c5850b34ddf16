/**
 * What a DDP loop that all-reduces on every micro-step costs, said on the plan (PlanOptions.allReduceEachMicroStepStages,
 * priced by both searches: cost/tableBuilder.ts, simulator/iteration.ts, search/parallel3d/estimate.ts). DDP's
 * reducer syncs every backward run while require_backward_grad_sync is True (torch nn/parallel/distributed.py
 * forward); `no_sync()` "disable[s] gradient synchronizations across DDP processes. Within this context, gradients
 * will be accumulated on module variables, which will later be synchronized in the first forward-backward pass
 * exiting the context" (its docstring). So a plan priced with every micro-step syncing says what the A−1 extra
 * all-reduces cost: the plan's own step, less the same plan priced syncing once (each search re-prices its winner).
 */
import type { PlanDiagnostic, TrainingSetup } from '../protocol/plan';
import type { CostTables } from './cost/tables';
import { simulateIteration } from './simulator/iteration';

/** The fix, as the two ways DDP scripts write it. */
const NO_SYNC_FIX = "run the micro-steps before the last under `with model.no_sync():` (or set `model.require_backward_grad_sync = (micro_step == gradient_accumulation_steps - 1)` before each forward, as nanoGPT does)";

/** Whether the setup was priced with ZeRO-0/1 all-reducing on every micro-step (collectiveTiming.ts withCollectiveTimings). */
export function allReducedEachMicroStep(setup: TrainingSetup): boolean {
  return setup.gradientAccumulationSync === 'every-micro-step' && setup.zeroStage <= 1;
}

/**
 * The info line on a plan priced with every micro-step all-reducing: what its A−1 extra all-reduces cost per step,
 * `stepMs` (the plan's) less `syncOnceMs()` (the same plan priced syncing once), and how no_sync() saves it.
 */
export function noSyncSavingNote(setup: TrainingSetup, stepMs: number, syncOnceMs: () => number): PlanDiagnostic | undefined {
  if (!allReducedEachMicroStep(setup)) return undefined;
  const a = setup.gradientAccumulation;
  const savedMs = Math.max(0, stepMs - syncOnceMs());
  const what = `each of the ${a} micro-steps all-reduces its gradients (${setup.gradientAccumulationSyncReason})`;
  // Below a hundredth of a millisecond the backward hid them: no fix is worth suggesting for time.
  if (savedMs < 0.01) return { severity: 'info', message: `${what}: the backward hides the ${a - 1} extra all-reduces here, so no_sync() would save no time` };
  const share = ((savedMs / stepMs) * 100).toFixed(1);
  return {
    severity: 'info',
    message: `${what}: the ${a - 1} before the last cost ${savedMs.toFixed(2)} ms per step (${share}% of ${stepMs.toFixed(1)} ms); to sync once, ${NO_SYNC_FIX}`,
  };
}

/** The per-layer plan's step re-simulated with the same choice syncing once per step, ms. */
export function syncOnceStepMs(tables: CostTables, choice: ArrayLike<number>): number {
  const { allReduceEachMicroStepStages: _each, ...once } = tables.setup;
  return simulateIteration({ ...tables, setup: once }, choice).makespanMs;
}
