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

test('profile fit: least squares a + b·batch, clamped at 0; one device’s measurements; header checks', async () => {
  const { ProfileCosts, profileProblem } = await import('../../src/planner/cost/profileCosts');
  const fc = alexnet().layers.find((l) => l.name === 'classifier.4')!;
  const m = (batch: number, forwardMs: number, backwardMs: number, device = 0, status: 'measured' | 'fallback' = 'measured') =>
    ({ layer: 'classifier.4', signature: 's', device, batch, forwardMs, backwardMs, forwardSpread: 0, backwardSpread: 0, repetitions: 5, status });
  const costs = (layers: ReturnType<typeof m>[]) => new ProfileCosts({
    format: 'wap-profile', version: 1, createdAt: '', model: 'a', dtype: 'float32',
    devices: [{ index: 0, name: 'A', backend: 'torch', version: 't' }, { index: 1, name: 'B', backend: 'wasm', version: 't' }],
    layers, links: [], warnings: [],
  }).lookup(fc, 4);
  // Points (1, 2), (2, 3), (3, 7): mean (2, 4); slope Σ(x−x̄)(y−ȳ)/Σ(x−x̄)² = (2 + 0 + 3)/2 = 2.5; intercept 4 − 5 = −1 → clamped to 0.
  const three = costs([m(1, 2, 4), m(2, 3, 6), m(3, 7, 14)])!;
  assert.ok(Math.abs(three.at(10).forwardMs - 25) < 1e-9, String(three.at(10).forwardMs));
  // (2, 5), (4, 6): slope 0.5, intercept 4.
  const two = costs([m(2, 5, 10), m(4, 6, 12)])!;
  assert.ok(Math.abs(two.at(8).forwardMs - 8) < 1e-9);
  assert.ok(Math.abs(two.at(8).backwardMs - 16) < 1e-9);
  assert.deepEqual(two.source, { kind: 'measured', backend: 'torch', device: 'A' });
  // Two measurements at one batch are one point, their mean, scaled in proportion like any single batch.
  const twice = costs([m(8, 4, 8), m(8, 6, 12)])!;
  assert.equal(twice.at(8).forwardMs, 5);
  assert.equal(twice.at(16).forwardMs, 10);
  // Slower at larger batch never fits a negative slope: a flat line at the mean.
  const down = costs([m(2, 6, 6), m(4, 4, 4)])!;
  assert.equal(down.at(100).forwardMs, 5);
  // The first device listed is the one used; the other device's numbers do not mix in.
  const mixed = costs([m(8, 4, 8, 1), m(8, 400, 800, 0)])!;
  assert.equal(mixed.at(16).forwardMs, 8);
  assert.deepEqual(mixed.source, { kind: 'measured', backend: 'wasm', device: 'B', measuredBatch: 8 });
  // Fallbacks and impossible numbers are not measurements.
  assert.equal(costs([m(8, 4, 8, 0, 'fallback')]), undefined);
  assert.equal(costs([m(0, 4, 8)]), undefined);
  assert.equal(costs([m(8, -1, 8)]), undefined);
  assert.ok(costs([m(8, 0, 0)]));
  assert.equal(profileProblem(null), 'profile is not a JSON object');
  assert.equal(profileProblem({ format: 'x' }), "profile.format must be 'wap-profile'");
  assert.equal(profileProblem({ format: 'wap-profile', version: 2 }), 'profile.version 2 is newer than this planner reads (1)');
  assert.equal(profileProblem({ format: 'wap-profile', version: 1, layers: {} }), 'profile.layers must be an array');
  assert.equal(profileProblem({ format: 'wap-profile', version: 1, layers: [], devices: 1 }), 'profile.devices must be an array');
  assert.equal(profileProblem({ format: 'wap-profile', version: 1, layers: [], devices: [] }), undefined);
});

test('a measured trial (timed trained, unquantized) is scaled for a frozen layer by the share of its backward the analysis keeps, and pays the dequantization of a quantized weight', async () => {
  const { SpecBuilder } = await import('../core/specBuilder');
  const { analyzeModel } = await import('../../src/core/analyze');
  const b = new SpecBuilder('Adapters');
  b.linear('proj', 64, 256);
  b.add('attention', 'mha', { embedDim: 256, numHeads: 4 });
  b.linear('base', 256, 256);
  b.linear('head', 256, 10);
  for (const l of b.layers) {
    if (l.name === 'attention') l.frozen = true;
    if (l.name === 'base') Object.assign(l, { frozen: true, quantizedWeights: { format: 'nf4' } });
  }
  const model = analyzeModel(b.build([32, 64]));
  const attention = model.layers.find((l) => l.name === 'attention')!;
  const base = model.layers.find((l) => l.name === 'base')!;
  assert.equal(attention.workload.backward, 'input-gradient');
  assert.ok(base.workload.quantized, 'the frozen Linear is held in NF4');
  const measure = (layer: typeof attention) => ({ layer: layer.name, signature: layerSignature(layer, 16), device: 0, batch: 16, forwardMs: 10, backwardMs: 20, forwardSpread: 0, backwardSpread: 0, repetitions: 5, status: 'measured' as const });
  const profile: ProfileFile = {
    format: 'wap-profile', version: 1, createdAt: '2024-01-01T00:00:00Z', model: 'Adapters', dtype: 'float32',
    devices: [{ index: 0, name: 'A100', backend: 'torch', version: 'test' }], layers: [measure(attention), measure(base)], links: [], warnings: [],
  };
  const out = planModel(model, resolveCluster('a100x8', {}), { batch: 16, objective: 'throughput', strategies: 'dp', optimizer: 'adam', gpus: 1, precision: 'fp32' }, { profile });
  assert.ok(out.feasible, out.feasible ? '' : out.reason);
  const planned = (n: string) => out.plan.layers.find((l) => l.name === n)!;
  // The attention keeps its backward less the four projections' weight gradients (2·32·256·256 each, plus bias sums).
  const projections = 4 * (2 * 32 * 256 * 256 + 32 * 256);
  const share = (2 * attention.workload.forwardFlops - projections) / (2 * attention.workload.forwardFlops);
  assert.equal(planned('attention').costSource.kind, 'measured');
  assert.ok(Math.abs(planned('attention').backwardMs - 20 * share) < 1e-9, `${planned('attention').backwardMs} vs ${20 * share}`);
  // The quantized Linear: half the trained backward (input gradient), plus a dequantization in each pass.
  assert.ok(planned('base').forwardMs > 10 && planned('base').forwardMs < 10.1, `${planned('base').forwardMs}`);
  assert.ok(Math.abs(planned('base').backwardMs - 10 - (planned('base').forwardMs - 10)) < 1e-9, `${planned('base').backwardMs}`);
});
