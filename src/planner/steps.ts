/**
 * Long planner computations as generators that `yield` at checkpoints (per
 * layer of the chain DP, per elimination step, per local-search pass, per
 * pipeline stage). The synchronous planner drains them straight through; the
 * async planner checks for cancellation at every checkpoint and lets the event
 * loop run every few tens of ms, so a cancel lands mid-search rather than after
 * a whole GPU count. The work done, and so the result, is the same either way.
 */
export type Steps<T> = Generator<void, T, void>;

/** Runs a stepped computation to the end without pausing. */
export function drain<T>(steps: Steps<T>): T {
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
  }
}
