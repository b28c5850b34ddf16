/**
 * The Python frontend on the real example files: model lists, module paths,
 * attrs, and (through the core's analyzeModel) exact parameter counts and FLOPs.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { analyzeModel } from '../../src/core/analyze';
import type { AnalyzedModel, FrontendResult, ModelSpec } from '../../src/core/ir';
import { initPythonFrontend, parsePythonSource } from '../../src/frontends/python';

const root = join(__dirname, '..', '..');
const cache = new Map<string, FrontendResult>();

function read(rel: string): FrontendResult {
  let r = cache.get(rel);
  if (!r) {
    r = parsePythonSource(rel, readFileSync(join(root, rel), 'utf8'));
    cache.set(rel, r);
  }
  return r;
}

function model(rel: string, name: string): ModelSpec {
  const m = read(rel).models.find((x) => x.name === name);
  assert.ok(m, `${rel} should report ${name}; got ${read(rel).models.map((x) => x.name).join(', ')}`);
  return m;
}

function analyzed(rel: string, name: string): AnalyzedModel {
  return analyzeModel(model(rel, name));
}

function layer(spec: ModelSpec, id: string) {
  const l = spec.layers.find((x) => x.id === id);
  assert.ok(l, `${spec.name} has no layer ${id}`);
  return l;
}

function near(actual: number, expected: number, tolerance: number, what: string): void {
  assert.ok(Math.abs(actual - expected) <= expected * tolerance, `${what}: ${actual} not within ${tolerance * 100}% of ${expected}`);
}

before(() => initPythonFrontend());

test('model lists per file: factories and instances, not helpers or parts', () => {
  assert.deepEqual(read('examples/pytorch/alexnet.py').models.map((m) => m.name), ['alexnet']);
  assert.deepEqual(read('examples/pytorch/vgg.py').models.map((m) => m.name), ['vgg11', 'vgg16', 'vgg16_bn', 'vgg19']);
  assert.deepEqual(read('examples/pytorch/resnet.py').models.map((m) => m.name), ['resnet18', 'resnet34', 'resnet50', 'resnet101', 'resnet152']);
  assert.deepEqual(read('examples/pytorch/gpt.py').models.map((m) => m.name), ['model']);
  assert.deepEqual(read('examples/keras/vgg16.py').models.map((m) => m.name), ['VGG16', 'small_cnn']);
  assert.deepEqual(read('examples/keras/resnet50.py').models.map((m) => m.name), ['ResNet50']);
  assert.equal(read('examples/pytorch/vgg.py').framework, 'pytorch');
  assert.equal(read('examples/keras/resnet50.py').framework, 'keras');
  for (const f of ['examples/pytorch/alexnet.py', 'examples/pytorch/vgg.py', 'examples/pytorch/resnet.py', 'examples/pytorch/gpt.py', 'examples/keras/vgg16.py', 'examples/keras/resnet50.py']) {
    assert.deepEqual(read(f).diagnostics, [], `${f} reads without file diagnostics`);
  }
});

test('AlexNet: torchvision names, attrs, ranges, exact params and FLOPs', () => {
  const spec = model('examples/pytorch/alexnet.py', 'alexnet');
  const conv = layer(spec, 'features.0');
  assert.equal(conv.type, 'Conv2d');
  assert.deepEqual(conv.attrs, { rank: 2, inChannels: 3, outChannels: 64, kernel: [11, 11], stride: [4, 4], padding: [[2, 2], [2, 2]], dilation: [1, 1], groups: 1, bias: true });
  assert.deepEqual(conv.inputs, ['x']);
  assert.equal(conv.range.line, 18, 'range is the constructor call');
  assert.equal(conv.callRange?.line, 44, 'callRange is self.features(x) in forward');
  assert.deepEqual(layer(spec, 'flatten').attrs, { startDim: 1, endDim: -1 });
  assert.deepEqual(layer(spec, 'classifier.6').attrs, { inFeatures: 4096, outFeatures: 1000, bias: true });
  assert.deepEqual(spec.outputs, ['classifier.6']);
  assert.equal(spec.range.line, 51);
  const m = analyzeModel(spec);
  assert.equal(m.totals.params, 61_100_840);
  near(m.totals.forwardFlops, 2 * 0.71e9, 0.05, 'AlexNet forward FLOPs');
  assert.deepEqual(m.layers.find((l) => l.id === 'features.12')?.outputShape, [256, 6, 6]);
  assert.deepEqual(m.layers[m.layers.length - 1].outputShape, [1000]);
});

test('VGG-16 from cfgs + make_layers: exact params and FLOPs', () => {
  const spec = model('examples/pytorch/vgg.py', 'vgg16');
  assert.equal(spec.layers.filter((l) => l.op === 'conv').length, 13);
  assert.deepEqual(layer(spec, 'features.2').attrs.outChannels, 64);
  assert.equal(layer(spec, 'classifier.4').type, 'ReLU');
  assert.equal(layer(spec, 'features.0').range.line, 59, 'conv constructed inside make_layers');
  const m = analyzeModel(spec);
  assert.equal(m.totals.params, 138_357_544);
  near(m.totals.forwardFlops, 2 * 15.47e9, 0.05, 'VGG-16 forward FLOPs');
  assert.equal(analyzed('examples/pytorch/vgg.py', 'vgg16_bn').layers.filter((l) => l.op === 'batchnorm').length, 13);
  assert.equal(analyzed('examples/pytorch/vgg.py', 'vgg11').layers.filter((l) => l.op === 'conv').length, 8);
  assert.equal(analyzed('examples/pytorch/vgg.py', 'vgg19').layers.filter((l) => l.op === 'conv').length, 16);
});

test('ResNet-50: Bottleneck.expansion, _make_layer, residual adds, exact params', () => {
  const spec = model('examples/pytorch/resnet.py', 'resnet50');
  assert.deepEqual(layer(spec, 'layer1.0.conv1').attrs.kernel, [1, 1]);
  assert.deepEqual(layer(spec, 'layer4.2.bn3').attrs, { numFeatures: 2048, scale: true, center: true, trackRunningStats: true, axis: 1 });
  assert.deepEqual(layer(spec, 'layer2.0.downsample.0').attrs.stride, [2, 2]);
  const add = layer(spec, 'layer1.0.add');
  assert.equal(add.op, 'add');
  assert.deepEqual(add.inputs, ['layer1.0.bn3', 'layer1.0.downsample.1']);
  assert.deepEqual(layer(spec, 'layer1.0.relu#2').inputs, ['layer1.0.bn2'], 'a module called twice gets name#2');
  assert.equal(layer(spec, 'layer1.0.relu#2').weightKey, 'layer1.0.relu');
  const m = analyzeModel(spec);
  assert.equal(m.totals.params, 25_557_032);
  near(m.totals.forwardFlops, 2 * 4.09e9, 0.05, 'ResNet-50 forward FLOPs');
  assert.deepEqual(m.layers.find((l) => l.id === 'layer4.2.relu#3')?.outputShape, [2048, 7, 7]);
  assert.equal(analyzed('examples/pytorch/resnet.py', 'resnet18').totals.params, 11_689_512);
});

test('GPT (nanoGPT style): module paths, attention ops, tied lm_head counted once', () => {
  const spec = model('examples/pytorch/gpt.py', 'model');
  // The loss's `logits.view(-1, V)` folds the positions into the batch, so forward is read for the length it assumes.
  assert.deepEqual(spec.inputs, [{ id: 'idx', dtype: 'int', shape: [1024], assumed: 'a sequence of 1024 token ids, as many as transformer.wpe holds', maxLength: { tokens: 1024, what: 'transformer.wpe holds' } }]);
  assert.deepEqual(layer(spec, 'transformer.h.3.attn.c_attn').attrs, { inFeatures: 768, outFeatures: 2304, bias: true });
  assert.equal(spec.layers.filter((l) => l.op === 'sdpa').length, 12);
  assert.deepEqual(layer(spec, 'transformer.h.0.attn.scaled_dot_product_attention').attrs, { causal: true });
  assert.deepEqual(layer(spec, 'transformer.h.0.attn.reshape').attrs, { shape: [1024, 12, 64] });
  assert.equal(layer(spec, 'transformer.wte').weightKey, layer(spec, 'lm_head').weightKey, 'tied weights share a key');
  const m = analyzeModel(spec);
  // 124M GPT-2 with vocab padded to 50304; wte/lm_head shared.
  assert.equal(m.totals.params, 124_475_904);
  assert.deepEqual(layer(spec, 'lm_head').inputs, ['transformer.ln_f']);
  assert.deepEqual(m.layers.find((l) => l.name === 'lm_head')?.outputShape, [1024, 50304]);
  // Read with `targets` given (python-labels.test.ts): the step ends in the loss.
  assert.deepEqual(m.layers[m.layers.length - 1].outputShape, []);
});

test('Keras VGG16 (functional, explicit names) and a Sequential with automatic names', () => {
  const spec = model('examples/keras/vgg16.py', 'VGG16');
  assert.equal(spec.framework, 'keras');
  assert.equal(spec.layout, 'channels_last');
  assert.deepEqual(spec.inputs, [{ id: 'input_layer', shape: [224, 224, 3] }]);
  const conv = layer(spec, 'block1_conv1');
  assert.equal(conv.attrs.activation, 'relu', 'activation= stays on its layer');
  assert.equal(conv.attrs.padding, 'same');
  assert.equal(spec.layers.filter((l) => l.op === 'activation').length, 0);
  const m = analyzeModel(spec);
  assert.equal(m.totals.params, 138_357_544);
  near(m.totals.forwardFlops, 2 * 15.47e9, 0.05, 'Keras VGG16 forward FLOPs');
  const small = model('examples/keras/vgg16.py', 'small_cnn');
  assert.deepEqual(small.layers.map((l) => l.name).slice(0, 3), ['conv2d', 'conv2d_1', 'max_pooling2d']);
  assert.deepEqual(layer(small, 'dense_1').attrs, { outFeatures: 10, bias: true });
  assert.equal(layer(small, 'activation').op, 'activation', 'Activation() is its own node');
  assert.deepEqual(analyzeModel(small).layers.at(-1)?.outputShape, [10]);
});

test('Keras ResNet50 with stack/block helpers called in loops', () => {
  const spec = model('examples/keras/resnet50.py', 'ResNet50');
  assert.deepEqual(layer(spec, 'conv2_block1_add').inputs, ['conv2_block1_0_bn', 'conv2_block1_3_bn']);
  assert.ok(spec.layers.some((l) => l.id === 'conv5_block3_out'));
  assert.equal(layer(spec, 'conv1_bn').attrs.axis, 3);
  const m = analyzeModel(spec);
  assert.equal(m.totals.params, 25_583_592, 'Keras counts 25,636,712 incl. 53,120 non-trainable BN stats');
  assert.equal(m.totals.params + m.totals.nonTrainable, 25_636_712);
  near(m.totals.forwardFlops, 2 * 3.9e9, 0.05, 'Keras ResNet50 forward FLOPs');
});

test('nn.MultiheadAttention records whether its call returns the weights: only need_weights=False runs scaled_dot_product_attention', () => {
  const src = [
    'import torch.nn as nn',
    'class Blocks(nn.Module):',
    '    def __init__(self):',
    '        super().__init__()',
    '        self.fast = nn.MultiheadAttention(64, 4, batch_first=True)',
    '        self.weighted = nn.MultiheadAttention(64, 4, batch_first=True)',
    '        self.positional = nn.MultiheadAttention(64, 4, batch_first=True)',
    '    def forward(self, x):',
    '        x = self.fast(x, x, x, need_weights=False)[0]',
    '        x = self.weighted(x, x, x)[0]',
    '        return self.positional(x, x, x, None, False)[0]',
    '',
  ].join('\n');
  const spec = parsePythonSource('blocks.py', src).models.find((m) => m.name === 'Blocks')!;
  assert.ok(spec);
  const weights = (id: string) => (layer(spec, id).attrs as Record<string, unknown>).needWeights;
  assert.equal(weights('fast'), false);
  assert.equal(weights('weighted'), true, 'the default returns the weights');
  assert.equal(weights('positional'), false, 'need_weights is forward’s fifth argument');
});
