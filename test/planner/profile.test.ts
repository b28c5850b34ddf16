import { test } from 'node:test';
import assert from 'node:assert/strict';
import { layerSignature } from '../../src/core/signature';
import type { ProfileFile } from '../../src/protocol/profile';
import { planModel, resolveCluster } from '../../src/planner/index';
import { alexnet } from './fixtures';

test('profile costs: matched by name then by signature, scaled with batch, source said per layer', () => {
  const model = alexnet();
  const conv = model.layers.find((l) => l.name === 'features.3')!;
  const fc = model.layers.find((l) => l.name === 'classifier.4')!;
  const profile: ProfileFile = {
    format: 'wap-profile', version: 1, createdAt: '2024-01-01T00:00:00Z', model: 'alexnet', dtype: 'float32',
    devices: [{ index: 0, name: 'TITAN Xp', backend: 'torch', version: 'test' }],
    layers: [
      { layer: 'features.3', signature: 'x', device: 0, batch: 32, forwardMs: 8, backwardMs: 16, forwardSpread: 0.01, backwardSpread: 0.01, repetitions: 10, status: 'measured' },
      { layer: 'features.3', signature: 'x', device: 0, batch: 64, forwardMs: 15, backwardMs: 30, forwardSpread: 0.01, backwardSpread: 0.01, repetitions: 10, status: 'measured' },
      { layer: 'renamed', signature: layerSignature(fc, 16), device: 0, batch: 16, forwardMs: 1, backwardMs: 2, forwardSpread: 0, backwardSpread: 0, repetitions: 10, status: 'measured' },
      { layer: 'features.0', signature: 'y', device: 0, batch: 16, forwardMs: 99, backwardMs: 99, forwardSpread: 0, backwardSpread: 0, repetitions: 1, status: 'fallback', error: 'oom' },
    ],
    links: [], warnings: [],
  };
  const out = planModel(model, resolveCluster('pcie4', {}), { batch: 128, objective: 'throughput', strategies: 'dp', optimizer: 'sgd', gpus: 1 }, { profile });
  assert.ok(out.feasible);
  const byName = (n: string) => out.plan.layers.find((l) => l.name === n)!;
  // Two batches: fitted a + b·batch = 1 + 7/32·batch → 29 ms at 128.
  assert.equal(byName('features.3').costSource.kind, 'measured');
  assert.ok(Math.abs(byName('features.3').forwardMs - 29) < 1e-9);
  assert.equal(byName('features.3').costSource.measuredBatch, undefined);
  // One batch, matched by signature: proportional, 8 ms at 128.
  assert.equal(byName('classifier.4').costSource.kind, 'measured');
  assert.equal(byName('classifier.4').costSource.measuredBatch, 16);
  assert.ok(Math.abs(byName('classifier.4').forwardMs - 8) < 1e-9);
  // A failed trial falls back to the analytical estimate.
  assert.equal(byName('features.0').costSource.kind, 'analytical');
  assert.deepEqual(out.costSources, { analytical: model.layers.length - 2, measured: 2 });
  void conv;
});
