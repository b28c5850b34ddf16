/**
 * The OWT baseline ("one weird trick", Krizhevsky 2014): data-parallel layers up to the first fully-connected one,
 * model-parallel after it. A fully-connected layer with fewer outputs than GPUs (a 4-class head on 8) cannot give
 * each GPU a slice of its outputs: it splits its inputs, or is replicated when those are too few as well.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { owtConfigs } from '../../src/planner/evaluate';
import { planModel, resolveCluster } from '../../src/planner/index';
import { ModelBuilder } from './fixtures';

function headed(classes: number, width = 512) {
  const b = new ModelBuilder(`mlp-${classes}`, [width]);
  b.linear('head', b.act('act', b.linear('fc', 'x', width)), classes);
  return b.build();
}

test('OWT splits a layer’s outputs only where there are at least as many as GPUs, else its inputs, else replicates it', () => {
  const model = headed(4);
  const configs = owtConfigs(model, 8);
  const of = (id: string) => configs(model.layers.find((l) => l.id === id)!);
  assert.deepEqual(of('fc'), [{ d: 1, k: 8, split: 'out' }]);
  assert.deepEqual(of('head'), [{ d: 1, k: 8, split: 'in' }], '4 outputs on 8 GPUs: its 512 inputs are split');
  const narrow = headed(4, 6);
  assert.deepEqual(owtConfigs(narrow, 8)(narrow.layers.find((l) => l.id === 'head')!), [{ d: 1, k: 8, split: 'rep' }], '6 inputs and 4 outputs on 8 GPUs: replicated');
});

test('the OWT baseline of a 4-class head on 8 GPUs plans and reports a step time', () => {
  const plan = planModel(headed(4), resolveCluster('a100x8', {}), { batch: 128, objective: 'throughput', strategies: 'hybrid', optimizer: 'adam', gpus: 8 });
  assert.ok(plan.feasible);
  if (!plan.feasible) return;
  assert.ok(plan.baselines.owt.feasible && plan.baselines.owt.stepTimeMs > 0, JSON.stringify(plan.baselines.owt));
});
