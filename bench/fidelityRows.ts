/** What every fidelity row is, and when a plan is not yet a prediction of it (shared by the fidelity bench's case files). */
import type { PlanOutcome } from '../src/protocol/plan';
import type { PlanOptions } from '../src/protocol/planOptions';

export interface Row {
  case: string;
  published: number;
  unit: string;
  source: string;
  /** A known difference between the published run and the modelled one, shown with the row. */
  note?: string;
  predict: () => Promise<number | string>;
}

/** Why a plan is not (yet) a prediction of this case, or undefined when it is. */
export function pending(out: PlanOutcome, opts: PlanOptions): string | undefined {
  if (!out.feasible) return `infeasible: ${out.reason}`;
  // A warning names a gap that leaves the prediction short; an info line states an assumption the row's note weighs
  // (an MoE plan's balanced routing).
  const d = out.diagnostics.find((x) => x.severity !== 'info' && /not modelled|not honoured/.test(x.message));
  if (d) return `pending (${d.message.replace(/;.*$/, '')})`;
  if (opts.gpus !== undefined && out.plan.gpus !== opts.gpus) return `planned on ${out.plan.gpus} GPUs`;
  return undefined;
}
