/**
 * The micro-batch the code fixes against the plan's, on nanoGPT's loop (test/fixtures/nanogpt/eval_first_train.py:
 * batch_size 12, eager attention) at a global batch of 480 on 8 A100s. Its attention keeps T×T scores, so at 60
 * samples per GPU only recompute fits, and re-running an eager attention core is no 2–4%: two accumulation steps
 * of 30 without recompute are faster, and the search finds them. The plan then says how the code must change to
 * train as planned, and stays silent when the plan runs the code's own micro-batch.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, test } from 'node:test';
import type { AnalyzedModel } from '../../src/core/ir';
import { analyzeSource, initFrontends } from '../../src/frontends/index';
import { planModel, resolveCluster } from '../../src/planner/index';
import { drain, type Steps } from '../../src/planner/steps';
import { setupLadder, walkLadder, type SetupOutcome } from '../../src/planner/search/setupLadder';
import { defaultSetup, type TableSetup } from '../../src/planner/cost/tables';
import type { PlanReport } from '../../src/protocol/plan';
import type { PlanOptions } from '../../src/protocol/planOptions';

const dir = join(__dirname, '..', 'fixtures', 'nanogpt');
let model: AnalyzedModel;
before(async () => {
  await initFrontends();
  const file = join(dir, 'eval_first_train.py');
  model = (await analyzeSource(file, readFileSync(file, 'utf8'), {}, { workspaceFolders: [dir] })).models[0]!;
});

function plan(o: Partial<PlanOptions> = {}): PlanReport {
  const out = planModel(model, resolveCluster('a100x8', {}), { batch: 480, objective: 'throughput', strategies: 'hybrid', optimizer: 'adam', gpus: 8, ...o });
  assert.ok(out.feasible, out.feasible ? '' : out.reason);
  return out;
}

test('a selective-recompute fit is compared with deeper accumulation without recompute: the faster that fits wins', () => {
  const ladder = setupLadder({ n: 1, batch: 64, base: defaultSetup('adam'), pins: {}, hasAttention: true, multiNode: false });
  assert.ok(!('reason' in ladder));
  const name = (s: TableSetup) => `${s.recompute}/a${s.microSteps}`;
  const table: Record<string, SetupOutcome> = { 'none/a1': { fits: false, stepTimeMs: 100, modelStateBytes: 1, overBytes: 50 }, 'selective/a1': { fits: true, stepTimeMs: 106 }, 'none/a2': { fits: true, stepTimeMs: 101 } };
  const tried: string[] = [];
  const walked = drain(walkLadder(ladder, 100, function* (s: TableSetup): Steps<string> {
    tried.push(name(s));
    return name(s);
  }, (n) => table[n] ?? { fits: false, stepTimeMs: 1e9, modelStateBytes: 1, overBytes: 1 }));
  assert.equal(walked.best, 'none/a2');
  assert.deepEqual(tried, ['none/a1', 'selective/a1', 'none/a2']);
});

test('nanoGPT at batch 480 on 8 A100s: 30 × 2 without recompute beats 60 × 1 with it, and the plan says the code’s 12 must change', () => {
  const free = plan();
  const s = free.plan.setup!;
  assert.equal(s.recompute, 'none');
  assert.equal(s.microBatch * s.gradientAccumulation, 60);
  assert.ok(s.gradientAccumulation > 1);
  // At 60 per GPU nothing fits without recompute: the old first fit, now beaten.
  const whole = plan({ pins: { microBatch: 60 } });
  assert.notEqual(whole.plan.setup!.recompute, 'none');
  assert.ok(free.plan.stepTimeMs < whole.plan.stepTimeMs, `${free.plan.stepTimeMs} ms vs ${whole.plan.stepTimeMs} ms`);
  const note = free.diagnostics.find((d) => d.message.startsWith('micro-batch:'));
  assert.ok(note, free.diagnostics.map((d) => d.message).join('\n'));
  assert.equal(note.severity, 'info');
  assert.match(note.message, new RegExp(`runs ${s.microBatch} samples per GPU per forward with ${s.gradientAccumulation} accumulation steps; the code runs 12 \\(eval_first_train\\.py's batch_size 12\\)`));
  assert.match(note.message, /--micro-batch 12 to price the code as written/);
  // The code's own micro-batch, planned or pinned: nothing to say.
  const asWritten = plan({ pins: { microBatch: 12 } });
  assert.equal(asWritten.plan.setup!.microBatch, 12);
  assert.equal(asWritten.diagnostics.find((d) => d.message.startsWith('micro-batch:')), undefined);
  assert.equal(plan({ batch: 96 }).diagnostics.find((d) => d.message.startsWith('micro-batch:')), undefined);
});
