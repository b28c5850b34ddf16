/**
 * `wap plan --measure`: real wasm trial workers time a small PyTorch model at
 * a capped batch, and the plan uses those times (not the analytical ones),
 * says which backend and device measured them, and hits the cache next time.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { planCommand, MAX_TRIAL_BATCH } from '../../src/cli/commands/plan';
import type { PlanOutcome, PlanReport } from '../../src/protocol/plan';
import { capture, TINY_TORCH } from './helpers';

const dir = mkdtempSync(join(tmpdir(), 'wap-measure-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const model = join(dir, 'tiny.py');
writeFileSync(model, TINY_TORCH);
const cache = join(dir, 'cache');
const common = [model, '--input', '3,32,32', '--batch', '64', '--cluster', 'pcie4', '--gpus', '2'];
const measure = ['--measure', '--backend', 'wasm', '--cache', cache, '--repetitions', '2'];

test('plan --measure --backend wasm: every layer measured at min(batch, 32), then all cached', async () => {
  const analytical = await capture(() => planCommand.run([...common, '--json']));
  assert.equal(analytical.code, 0, analytical.err);
  const before = JSON.parse(analytical.out) as PlanReport;
  assert.ok(before.plan.layers.every((l) => l.costSource.kind === 'analytical'));

  const first = await capture(() => planCommand.run([...common, ...measure, '--json']));
  assert.equal(first.code, 0, first.err);
  const outcome = JSON.parse(first.out) as PlanOutcome; // stdout is only the JSON
  assert.ok(outcome.feasible);
  assert.equal(outcome.batch, 64);
  assert.equal(outcome.plan.layers.length, before.plan.layers.length);
  for (const l of outcome.plan.layers) {
    assert.equal(l.costSource.kind, 'measured', l.name);
    assert.equal(l.costSource.backend, 'wasm', l.name);
    assert.equal(l.costSource.measuredBatch, MAX_TRIAL_BATCH, l.name);
  }
  assert.equal(outcome.costSources.measured, outcome.plan.layers.length);
  assert.notEqual(outcome.plan.stepTimeMs, before.plan.stepTimeMs, 'measured times change the prediction');
  const n = outcome.plan.layers.length;
  assert.match(first.err, new RegExp(`^wap: measured ${n} layers on wasm / .+ at batch ${MAX_TRIAL_BATCH}: ${n} measured, 0 cached, 0 fallback`, 'm'));
  assert.ok(readdirSync(cache).some((f) => f.startsWith('wasm-')), 'trial cache written where --cache said');

  const second = await capture(() => planCommand.run([...common, ...measure]));
  assert.equal(second.code, 0, second.err);
  const lines = second.out.split('\n');
  assert.match(lines[0]!, new RegExp(`^measured ${n} layers on wasm / .+ at batch ${MAX_TRIAL_BATCH}: 0 measured, ${n} cached, 0 fallback`));
  const header = lines.find((l) => l.startsWith('layer '))!;
  assert.match(header, /\bsource\s*$/);
  const rows = lines.slice(lines.indexOf(header) + 1, lines.indexOf(header) + 1 + n);
  assert.ok(rows.every((r) => r.trimEnd().endsWith('measured')), rows.join('\n'));
});

test('plan --measure trials at the planned batch when it is below the cap', async () => {
  const r = await capture(() => planCommand.run([model, '--input', '3,32,32', '--batch', '4', '--gpus', '1', ...measure, '--json']));
  assert.equal(r.code, 0, r.err);
  const outcome = JSON.parse(r.out) as PlanReport;
  // Measured at the planned batch itself: nothing to scale, so no measuredBatch.
  assert.ok(outcome.plan.layers.every((l) => l.costSource.kind === 'measured' && (l.costSource.measuredBatch ?? 4) === 4));
  assert.match(r.err, /at batch 4: /);
});
