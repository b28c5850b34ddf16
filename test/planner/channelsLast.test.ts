/** A conv's model-parallel split divides its output channels, whichever axis the layout puts them on. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { layerConfigs } from '../../src/planner/cost/configs';
import { splitSize } from '../../src/server/hover';
import { chainModel } from '../profiler/fixtures';

// 2×2 spatial, 64 output channels: H (2) is smaller than the 4-way split, C (64) is not.
const conv = { rank: 2, outChannels: 64, kernel: [1, 1], stride: [1, 1], padding: 'valid', dilation: [1, 1], groups: 1, bias: true };
const last = chainModel('cl', 'channels_last', [2, 2, 3], [['conv', 'conv', conv]]);
const first = chainModel('cf', 'channels_first', [3, 2, 2], [['conv', 'conv', conv]], 'pytorch');

test('channels_last conv: a 4-way output-channel split is offered (the channel axis is last, not the height)', () => {
  const cl = last.layers[0]!;
  assert.deepEqual(cl.outputShape, [2, 2, 64]);
  const configs = layerConfigs(cl, 4, 'hybrid', 'channels_last');
  assert.ok(configs.some((c) => c.k === 4 && c.split === 'out'), JSON.stringify(configs));
  assert.ok(configs.some((c) => c.k === 2 && c.split === 'out'));
});

test('the same conv in either layout gets the same configurations', () => {
  const a = layerConfigs(last.layers[0]!, 8, 'hybrid', 'channels_last');
  const b = layerConfigs(first.layers[0]!, 8, 'hybrid', 'channels_first');
  assert.deepEqual(a, b);
  assert.equal(a.filter((c) => c.split === 'out').length, 3, 'k = 2, 4, 8 all fit in 64 channels');
  // A convolution splits its output channels only: no input-feature (row-parallel) split, which is for linear layers.
  assert.deepEqual([...new Set(a.map((c) => c.split))].sort(), ['none', 'out']);
});

test('a channels_first conv whose channels are fewer than k gets no out split for that k', () => {
  const narrow = chainModel('n', 'channels_first', [3, 16, 16], [['conv', 'conv', { ...conv, outChannels: 2 }]], 'pytorch');
  const configs = layerConfigs(narrow.layers[0]!, 4, 'hybrid', 'channels_first');
  assert.ok(configs.some((c) => c.k === 2 && c.split === 'out'));
  assert.ok(!configs.some((c) => c.k === 4 && c.split === 'out'), 'only 2 channels: no 4-way channel split');
});

test('hover split size reads the channel axis of the layout when the conv does not name its channels', () => {
  const { outChannels: _drop, ...noChannels } = conv;
  const layer = { ...last.layers[0]!, attrs: noChannels };
  assert.equal(splitSize(layer, 'channels', 'channels_last'), 64);
  assert.equal(splitSize({ ...first.layers[0]!, attrs: noChannels }, 'channels', 'channels_first'), 64);
});

test('hover split size: a linear splits its output features, attention its heads', () => {
  const m = chainModel('fc', 'channels_first', [64], [['fc', 'linear', { outFeatures: 48, bias: true }, 'Linear']], 'pytorch');
  assert.equal(splitSize(m.layers[0]!, 'outputs'), 48);
  assert.equal(splitSize({ ...m.layers[0]!, attrs: { bias: true } }, 'outputs'), 48, 'from the output shape when attrs do not say');
  assert.equal(splitSize({ ...m.layers[0]!, attrs: { numHeads: 12 } }, 'heads'), 12);
});
