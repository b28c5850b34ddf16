import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { PlanOutcome } from '../../src/protocol/plan';
import type { PlanOptions } from '../../src/protocol/planOptions';
import { planModel, planModelAsync, resolveCluster } from '../../src/planner/index';
import { syntheticChain, transformer } from './fixtures';

/** A GPT-style stack of 282 layers (35 blocks) planned with every strategy on 16 GPUs: seconds of search. */
const big = () => transformer(35);
/** The per-layer search's own yields (inside a GPU count) need a model it plans: a 282-layer chain without attention. */
const bigPerLayer = () => syntheticChain(282, 2048);
const bigOptions: PlanOptions = { batch: 512, objective: 'throughput', strategies: 'all', optimizer: 'adam' };

/** The outcome without what legitimately differs between two runs (wall-clock search time). */
function comparable(out: PlanOutcome): unknown {
  const copy = JSON.parse(JSON.stringify(out));
  if (copy.search) delete copy.search.elapsedMs;
  return copy;
}

test('cancel 50 ms into a big plan rejects with Cancelled within 500 ms of the cancel', async () => {
  const token = { isCancellationRequested: false };
  const progress: number[] = [];
  const started = performance.now();
  // The cancel is due 50 ms in; a planner that never lets the event loop run sees it late, so latency is measured from when it was due.
  const dueAt = started + 50;
  const timer = setTimeout(() => (token.isCancellationRequested = true), 50);
  let rejectedAt = 0;
  await assert.rejects(
    planModelAsync(big(), resolveCluster('h100x16-2node', {}), bigOptions, { cancel: token, onProgress: (d) => progress.push(d) }).finally(() => (rejectedAt = performance.now())),
    (e: Error) => e.name === 'Cancelled',
  );
  clearTimeout(timer);
  assert.ok(token.isCancellationRequested, 'rejected before the cancel was requested');
  const latency = rejectedAt - dueAt;
  assert.ok(latency < 500, `cancellation took ${latency.toFixed(0)} ms`);
  assert.ok(progress.length < 16, 'the plan ran to the end');
});

test('a cancel inside one GPU count lands within 200 ms, before that count finishes', async () => {
  const token = { isCancellationRequested: false };
  const progress: number[] = [];
  let requestedAt = 0;
  let progressAtCancel = -1;
  const pending = planModelAsync(big(), resolveCluster('h100x16-2node', {}), bigOptions, {
    cancel: token,
    onProgress: (d) => {
      progress.push(d);
      // Count 9 of 16 (pipelines and 3-D splits: hundreds of ms) has just begun: cancel a few ms into it.
      if (d === 8)
        setTimeout(() => {
          requestedAt = performance.now();
          progressAtCancel = progress.length;
          token.isCancellationRequested = true;
        }, 5);
    },
  });
  await assert.rejects(pending, (e: Error) => e.name === 'Cancelled');
  const latency = performance.now() - requestedAt;
  assert.ok(requestedAt > 0, 'the plan ended before the cancel');
  assert.equal(progress.length, progressAtCancel, `GPU count ${progressAtCancel + 1} ran to its end before the cancel was seen`);
  assert.ok(latency < 200, `cancellation took ${latency.toFixed(0)} ms`);
});

test('the async planner lets the event loop run inside a GPU count, and plans as the sync one does', async () => {
  const cluster = resolveCluster('h100x16-2node', {});
  const options: PlanOptions = { ...bigOptions, batch: 64 };
  // Count event-loop turns (a setImmediate ticker) while each GPU count is being planned.
  let count = 1;
  const turnsPerCount = new Map<number, number>();
  let running = true;
  const tick = (): void => {
    turnsPerCount.set(count, (turnsPerCount.get(count) ?? 0) + 1);
    if (running) setImmediate(tick);
  };
  setImmediate(tick);
  const started = performance.now();
  const asyncOut = await planModelAsync(bigPerLayer(), cluster, options, { onProgress: (d) => (count = d + 1) }).finally(() => (running = false));
  const elapsed = performance.now() - started;
  assert.ok(asyncOut.feasible);
  // Between two progress reports a whole-count planner turns the loop once; this one turns it every ~20 ms of work.
  const most = Math.max(...turnsPerCount.values());
  const total = [...turnsPerCount.values()].reduce((a, b) => a + b, 0);
  assert.ok(most >= 3, `at most ${most} event-loop turns within one GPU count`);
  assert.ok(total >= elapsed / 100, `${total} turns in ${elapsed.toFixed(0)} ms`);
  assert.deepEqual(comparable(asyncOut), comparable(planModel(bigPerLayer(), cluster, options)));
  // The block search (transformer stacks) plans the same synchronously and asynchronously too.
  assert.deepEqual(comparable(await planModelAsync(big(), cluster, options)), comparable(planModel(big(), cluster, options)));
});
