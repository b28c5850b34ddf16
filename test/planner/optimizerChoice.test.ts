/**
 * The optimizer a plan prices when its caller defaulted it (no flag, setting,
 * code or config said one) follows the model's kind (AdamW for attention
 * models, momentum SGD for the rest) and says it assumed; a stated or given
 * one is never overridden.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { planModel, resolveCluster } from '../../src/planner/index';
import type { PlanReport } from '../../src/protocol/plan';
import type { PlanOptions } from '../../src/protocol/planOptions';
import { ModelBuilder, transformer } from './fixtures';

const opts = (o: Partial<PlanOptions> = {}): PlanOptions => ({ batch: 8, objective: 'throughput', strategies: 'dp', optimizer: 'momentum', gpus: 1, precision: 'fp32', ...o });
const line = (r: PlanReport) => r.diagnostics.find((d) => d.message.startsWith('optimizer: '))!.message;

test('an attention model with no optimizer stated is planned with AdamW’s two moments, and the plan says it assumed so', () => {
  const model = transformer(2, 64, 256, 4);
  const assumed = planModel(model, resolveCluster('a100x8'), opts({ optimizerAssumed: true })) as PlanReport;
  const stated = planModel(model, resolveCluster('a100x8'), opts({ optimizer: 'momentum', optimizerSource: '--optimizer' })) as PlanReport;
  // A caller that passes an optimizer without saying where from (an API user, a benchmark) gets exactly that one.
  const given = planModel(model, resolveCluster('a100x8'), opts({ optimizer: 'sgd' })) as PlanReport;
  assert.equal(given.optimizer, 'sgd');
  assert.equal(line(given), 'optimizer: sgd (plain SGD, no state per parameter)');
  assert.ok(assumed.feasible && stated.feasible);
  assert.equal(assumed.optimizer, 'adam');
  assert.match(line(assumed), /^optimizer: adam .*assumed \(a model with attention: AdamW/);
  assert.equal(stated.optimizer, 'momentum', 'a stated optimizer is never overridden');
  assert.equal(line(stated), 'optimizer: momentum (one momentum buffer per parameter), from --optimizer');
  // fp32 Adam keeps m and v (8 B per parameter) where momentum keeps one buffer (4 B).
  const params = model.totals.params;
  assert.equal(assumed.plan.setup!.memoryPerGpu.optimizer - stated.plan.setup!.memoryPerGpu.optimizer, params * 4);
});

test('a model without attention keeps momentum SGD, the torchvision recipes’ default, and says so', () => {
  const b = new ModelBuilder('mlp', [512]);
  b.linear('fc', 'x', 512);
  const r = planModel(b.build(), resolveCluster('a100x8'), opts({ optimizer: 'adam', optimizerAssumed: true })) as PlanReport;
  assert.ok(r.feasible);
  assert.equal(r.optimizer, 'momentum');
  assert.match(line(r), /assumed \(SGD with momentum, the default of torchvision's reference training recipes\)/);
});
