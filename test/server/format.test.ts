/** The strategy sentence hovers show, for the layouts the planner produces. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { describeLayerStrategy } from '../../src/server/format';
import type { LayerPlan } from '../../src/protocol/plan';

function layer(overrides: Partial<LayerPlan>): LayerPlan {
  return {
    name: 'h.3.mlp.c_fc', line: 40, type: 'Linear', strategy: 'data', dataDegree: 1, modelDegree: 1, devices: [0], stage: 0,
    forwardMs: 1, backwardMs: 2, allreduceBytes: 0, allreduceMs: 0, transferMs: 0, memoryBytesPerGpu: 0, params: 0,
    activationBytes: 0, costSource: { kind: 'analytical' }, reason: '', ...overrides,
  };
}

test('a model-parallel layer names its split and devices', () => {
  const text = describeLayerStrategy(layer({ strategy: 'model', modelDegree: 2, devices: [2, 3], splitDim: 'outputs' }), 4096);
  assert.equal(text, 'model parallel ×2 (split 4096 outputs) on GPU 2, 3');
});

test('a pipeline layer split inside its stage says both the stage and the tensor-parallel degree', () => {
  const text = describeLayerStrategy(
    layer({ strategy: 'pipeline', stage: 1, dataDegree: 2, modelDegree: 4, devices: [8, 9, 10, 11, 12, 13, 14, 15], splitDim: 'heads' }),
  );
  assert.match(text, /^pipeline stage 1, data parallel ×2, model parallel ×4 \(split heads\) on GPU 8–15$/);
});
