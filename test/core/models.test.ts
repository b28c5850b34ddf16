import assert from 'node:assert/strict';
import { test } from 'node:test';
import { analyzeModel } from '../../src/core/analyze';
import type { AnalyzedModel } from '../../src/core/ir';
import { alexnet, kerasVgg16, resnet50, vgg16 } from './zoo';

function shapeOf(m: AnalyzedModel, id: string) {
  const layer = m.layers.find((l) => l.id === id);
  assert.ok(layer, `layer ${id} exists`);
  return layer.outputShape;
}

function assertWithin(actual: number, expected: number, tolerance: number, what: string) {
  const rel = Math.abs(actual - expected) / expected;
  assert.ok(rel <= tolerance, `${what}: ${actual.toExponential(4)} is ${(rel * 100).toFixed(2)}% from ${expected.toExponential(4)}`);
}

function assertClean(m: AnalyzedModel) {
  assert.deepEqual(m.diagnostics.filter((d) => d.severity !== 'info'), []);
  for (const l of m.layers) assert.ok(l.outputShape, `${l.id} has a shape`);
}

test('torchvision AlexNet: 61,100,840 params, ~0.71 GMACs, per-layer shapes', () => {
  const m = analyzeModel(alexnet([3, 224, 224]));
  assertClean(m);
  assert.equal(m.totals.params, 61_100_840);
  assert.equal(m.totals.nonTrainable, 0);
  assertWithin(m.totals.forwardFlops, 2 * 0.71e9, 0.05, 'AlexNet forward FLOPs');
  const expected: Record<string, number[]> = {
    'features.0': [64, 55, 55],
    'features.2': [64, 27, 27],
    'features.3': [192, 27, 27],
    'features.5': [192, 13, 13],
    'features.6': [384, 13, 13],
    'features.8': [256, 13, 13],
    'features.10': [256, 13, 13],
    'features.12': [256, 6, 6],
    avgpool: [256, 6, 6],
    flatten: [9216],
    'classifier.1': [4096],
    'classifier.6': [1000],
  };
  for (const [id, shape] of Object.entries(expected)) assert.deepEqual(shapeOf(m, id), shape, id);
  const conv0 = m.layers.find((l) => l.id === 'features.0')!;
  assert.equal(conv0.workload.params, 64 * 3 * 11 * 11 + 64);
  // 2 · out_elems · Cin · k² + bias adds.
  assert.equal(conv0.workload.forwardFlops, 2 * 64 * 55 * 55 * 3 * 121 + 64 * 55 * 55);
  assert.equal(conv0.workload.backwardFlops, 2 * conv0.workload.forwardFlops);
  assert.equal(conv0.workload.activationBytes, 64 * 55 * 55 * 4);
  assert.equal(conv0.workload.savedActivationBytes, 3 * 224 * 224 * 4);
  assert.equal(conv0.workload.weightGradBytes, conv0.workload.params * 4);
  assert.equal(m.inputAssumed, false);
  assert.deepEqual(m.input, [3, 224, 224]);
});

test('AlexNet with BatchNorm: running stats are non-trainable', () => {
  const m = analyzeModel(alexnet([3, 224, 224], true));
  assertClean(m);
  const bnChannels = 64 + 192 + 384 + 256 + 256;
  assert.equal(m.totals.params, 61_100_840 + 2 * bnChannels);
  assert.equal(m.totals.nonTrainable, 2 * bnChannels);
});

test('AlexNet on a smaller input: the adaptive pool upsamples to 6×6, params unchanged', () => {
  const m = analyzeModel(alexnet([3, 64, 64]));
  assertClean(m);
  assert.deepEqual(shapeOf(m, 'features.12'), [256, 1, 1]);
  assert.deepEqual(shapeOf(m, 'avgpool'), [256, 6, 6]);
  assert.equal(m.totals.params, 61_100_840);
});

test('torchvision VGG-16: 138,357,544 params, ~15.47 GMACs', () => {
  const m = analyzeModel(vgg16());
  assertClean(m);
  assert.equal(m.totals.params, 138_357_544);
  assertWithin(m.totals.forwardFlops, 2 * 15.47e9, 0.05, 'VGG-16 forward FLOPs');
  assert.deepEqual(shapeOf(m, 'features.30'), [512, 7, 7]);
});

test('torchvision ResNet-50: 25,557,032 params, ~4.09 GMACs, 53 BN layers of running stats', () => {
  const m = analyzeModel(resnet50());
  assertClean(m);
  assert.equal(m.totals.params, 25_557_032);
  assertWithin(m.totals.forwardFlops, 2 * 4.09e9, 0.05, 'ResNet-50 forward FLOPs');
  assert.deepEqual(shapeOf(m, 'maxpool'), [64, 56, 56]);
  assert.deepEqual(shapeOf(m, 'layer1.0.add'), [256, 56, 56]);
  assert.deepEqual(shapeOf(m, 'layer2.0.conv2'), [128, 28, 28]);
  assert.deepEqual(shapeOf(m, 'layer4.2.relu#3'), [2048, 7, 7]);
  assert.deepEqual(shapeOf(m, 'fc'), [1000]);
  // Running mean/var of every BN: the non-trainable count torchvision reports via buffers.
  const bnParams = m.layers.filter((l) => l.op === 'batchnorm').reduce((a, l) => a + l.workload.params, 0);
  assert.equal(m.totals.nonTrainable, bnParams);
  // The relu reused in a block (`relu`, `relu#2`, `relu#3`) has no weights to tie.
  assert.ok(m.layers.every((l) => l.weightOwner === undefined));
});

test('Keras VGG16 (channels_last, same padding, Dense): 138,357,544 params', () => {
  const m = analyzeModel(kerasVgg16());
  assertClean(m);
  assert.equal(m.totals.params, 138_357_544);
  assert.deepEqual(shapeOf(m, 'block1_conv1'), [224, 224, 64]);
  assert.deepEqual(shapeOf(m, 'block5_pool'), [7, 7, 512]);
  assert.deepEqual(shapeOf(m, 'flatten'), [25088]);
  assertWithin(m.totals.forwardFlops, 2 * 15.47e9, 0.05, 'Keras VGG16 forward FLOPs');
});
