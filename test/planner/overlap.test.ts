/**
 * Compute beside a collective runs 18.9% slower (Lee et al. 2025): the closed
 * form both block-stack paths use, the event engine's per-task version, and
 * the two agreeing on the same case.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { computeEndMs, overlapExtraMs, OVERLAPPED_COMPUTE_SLOWDOWN as S } from '../../src/planner/cost/overlap';
import { Engine } from '../../src/planner/simulator/engine';

const close = (a: number, b: number, what: string) => assert.ok(Math.abs(a - b) < 1e-9, `${what}: ${a} vs ${b}`);

test('closed form: a short collective costs the compute it slowed; a long one exposes what outlasts the slowed compute', () => {
  close(overlapExtraMs(0, 10), 0, 'no collective');
  close(overlapExtraMs(5, 0), 5, 'nothing to hide behind');
  // 5 ms of collective beside 10 ms of compute: 5 ms of compute time does 5/1.189 ms of work, the rest runs after.
  close(overlapExtraMs(5, 10), (5 * S) / (1 + S), 'short');
  // 20 ms beside 10 ms: the compute, slowed, ends at 11.89 ms; the collective at 20.
  close(overlapExtraMs(20, 10), 10, 'long');
  // The two branches meet where the collective ends with the slowed compute.
  close(overlapExtraMs(10 * (1 + S), 10), 10 * S, 'boundary');
  assert.ok(overlapExtraMs(10 * (1 + S) - 1e-6, 10) <= 10 * S);
});

test('per task: compute slows inside the spans collectives run in, merged where they overlap, full speed between', () => {
  close(computeEndMs(0, 10, []), 10, 'alone');
  // Busy all along: 10 ms of work take 11.89 ms.
  close(computeEndMs(0, 10, [[0, 100]]), 10 * (1 + S), 'covered');
  // 2 ms free, then busy from 2 to 4 (2/1.189 ms of work), then free: the rest at full speed.
  close(computeEndMs(0, 10, [[2, 4]]), 4 + (10 - 2 - 2 / (1 + S)), 'gap then span');
  // Two overlapping spans count once: [2, 5] and [3, 4] are [2, 5].
  close(computeEndMs(0, 10, [[3, 4], [2, 5]]), computeEndMs(0, 10, [[2, 5]]), 'merged');
  // Spans that ended before the task starts do not touch it.
  close(computeEndMs(50, 10, [[0, 40]]), 60, 'past');
});

test('the engine stretches a backward issued beside an all-reduce, and leaves one after it alone; the closed form gives the same step', () => {
  const step = (withComm: boolean) => {
    const e = new Engine();
    const first = e.add({ kind: 'backward', layer: 'b2', resources: ['gpus:0,1'], devices: [0, 1], durationMs: 4, deps: [] });
    const reduce = withComm ? e.add({ kind: 'allreduce', layer: 'b2', resources: ['link:x'], devices: [0, 1], durationMs: 6, deps: [first] }) : -1;
    const second = e.add({ kind: 'backward', layer: 'b1', resources: ['gpus:0,1'], devices: [0, 1], durationMs: 10, deps: [] });
    const run = e.run();
    return { run, reduce, second };
  };
  const alone = step(false);
  const beside = step(true);
  close(alone.run.end[alone.second], 14, 'no collective');
  // The all-reduce runs 4..10 beside b1 (4..): six slowed ms do 6/1.189 of b1's 10 ms, the rest after.
  close(beside.run.end[beside.second], 10 + (10 - 6 / (1 + S)), 'stretched');
  close(beside.run.makespanMs - alone.run.makespanMs, overlapExtraMs(6, 10), 'closed form');
});
