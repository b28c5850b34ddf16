/**
 * A model the run compiles (`model = torch.compile(model)`, nanoGPT's and nanochat's default) keeps fewer activations
 * than the eager graph WAP prices: every plan of it says its activation memory is an upper bound. A model that is
 * not compiled says nothing of the kind.
 */
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { analyzeSource, initFrontends } from '../../src/frontends/index';
import { planModel, resolveCluster } from '../../src/planner/index';

before(async () => {
  await initFrontends();
});

const script = (compile: boolean) => `import torch
import torch.nn as nn

model = nn.Sequential(nn.Linear(512, 2048), nn.GELU(), nn.Linear(2048, 512))
${compile ? 'model = torch.compile(model)\n' : ''}optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
`;

test('torch.compile(model) is said on the model and repeated by its plan', async () => {
  const r = await analyzeSource('train.py', script(true), {});
  const model = r.models[0]!;
  assert.equal(model.totals.params, 512 * 2048 + 2048 + 2048 * 512 + 512, 'the compiled model is the model itself');
  const note = model.diagnostics.find((d) => d.code === 'compiled-model');
  assert.match(note?.message ?? '', /^The model is compiled \(torch\.compile at train\.py:5\): Inductor fuses .* upper bounds$/);
  const plan = planModel(model, resolveCluster('a100x8', {}), { batch: 64, objective: 'throughput', strategies: 'dp', optimizer: 'adam' });
  assert.ok(plan.diagnostics.some((d) => d.message === note!.message), JSON.stringify(plan.diagnostics.map((d) => d.message)));
});

test('an eager model says nothing of compilation', async () => {
  const r = await analyzeSource('train.py', script(false), {});
  assert.ok(!r.models[0]!.diagnostics.some((d) => d.code === 'compiled-model'));
});
