import assert from 'node:assert/strict';
import { test } from 'node:test';
import { analyzeModel } from '../../src/core/analyze';
import type { LayerSpec, ModelSpec } from '../../src/core/ir';
import { layerSignature } from '../../src/core/signature';
import { SpecBuilder } from './specBuilder';
import { alexnet, kerasVgg16 } from './zoo';

test('tied weights: a decoder tied to the embedding counts its params once', () => {
  const b = new SpecBuilder('TinyLM', 'pytorch', { inputDtype: 'int' });
  b.add('wte', 'embedding', { numEmbeddings: 1000, embeddingDim: 64 }, { weightKey: 'wte.weight' });
  b.add('ln_f', 'layernorm', { scale: true, center: true });
  b.linear('lm_head', 64, 1000, false, { weightKey: 'wte.weight' });
  const m = analyzeModel(b.build([128]));
  const head = m.layers.find((l) => l.id === 'lm_head')!;
  assert.deepEqual(head.outputShape, [128, 1000]);
  assert.equal(head.workload.params, 0);
  assert.equal(head.workload.weightGradBytes, 0);
  assert.equal(head.weightOwner, 'wte');
  assert.ok(head.workload.forwardFlops > 0, 'the tied layer still does its work');
  assert.equal(m.totals.params, 64_000 + 128);
});

test('a module called twice (fc, fc#2) counts its weights once', () => {
  const b = new SpecBuilder('Twice');
  b.linear('fc', 32, 32);
  b.act('act');
  b.linear('fc', 32, 32, true, { id: 'fc#2' });
  const m = analyzeModel(b.build([32]));
  const [first, , second] = m.layers;
  assert.equal(first.workload.params, 32 * 32 + 32);
  assert.equal(second.workload.params, 0);
  assert.equal(second.weightOwner, 'fc');
  assert.equal(m.totals.params, 32 * 32 + 32);
  assert.equal(m.totals.forwardFlops, first.workload.forwardFlops * 2 + 32);
});

test('an opaque layer gives one warning at its range and undefined shapes downstream, without throwing; downstream weights still count', () => {
  const b = new SpecBuilder('Custom');
  b.conv('stem', 3, 16, 3, { p: 1 });
  const mystery = b.add('block', 'opaque', { reason: 'MyBlock is defined in another file' }, { type: 'MyBlock' });
  b.act('relu');
  b.add('flatten', 'flatten', { startDim: 1, endDim: -1 });
  b.linear('head', 1024, 10);
  const side = b.add('side', 'pool', { rank: 2, mode: 'avg', global: true }, { inputs: ['stem'] });
  const m = analyzeModel(b.build([3, 32, 32]));
  const warnings = m.diagnostics.filter((d) => d.severity === 'warning');
  assert.equal(warnings.length, 1);
  assert.equal(warnings[0].code, 'unknown-layer');
  assert.match(warnings[0].message, /MyBlock is defined in another file/);
  const block = m.layers.find((l) => l.id === mystery)!;
  assert.equal(warnings[0].line, block.range.line);
  for (const id of ['block', 'relu', 'flatten', 'head']) assert.equal(m.layers.find((l) => l.id === id)!.outputShape, undefined, id);
  assert.deepEqual(m.layers.find((l) => l.id === side)!.outputShape, [16]);
  // The opaque block adds nothing; the head after it has no known input, but its Linear(1024, 10) weights are its own.
  assert.equal(m.layers.find((l) => l.id === 'head')!.workload.params, 1024 * 10 + 10);
  assert.equal(m.layers.find((l) => l.id === 'head')!.workload.forwardFlops, 0, 'what it computes needs its input');
  assert.equal(m.totals.params, 16 * 27 + 16 + 1024 * 10 + 10);
});

test('unknown producers, shape errors and malformed specs become diagnostics', () => {
  const b = new SpecBuilder('Broken');
  b.linear('fc', 100, 10);
  b.act('relu', 'relu', { inputs: ['nowhere'] });
  const m = analyzeModel(b.build([3, 224, 224]));
  const codes = m.diagnostics.map((d) => d.code).sort();
  assert.deepEqual(codes, ['shape-error', 'unknown-layer']);
  assert.match(m.diagnostics.find((d) => d.code === 'shape-error')!.message, /fc \(Linear\): linear expects 100 input features.*\[3, 224, 224\]/);
  assert.match(m.diagnostics.find((d) => d.code === 'unknown-layer')!.message, /'nowhere' is not a layer or model input/);

  const spec = b.build([3, 224, 224]);
  const junk = { ...spec, layers: [{ id: 'x1', name: 'x1', type: '?', op: 'conv', attrs: null, inputs: null, range: spec.range } as unknown as LayerSpec] } as ModelSpec;
  const analyzed = analyzeModel(junk);
  assert.equal(analyzed.layers[0].outputShape, undefined);
  assert.equal(analyzed.diagnostics.filter((d) => d.severity === 'warning').length, 1);
});

test('assumed input: per-framework defaults, an info diagnostic, and the override order', () => {
  const torch = analyzeModel(alexnet());
  assert.equal(torch.inputAssumed, true);
  assert.deepEqual(torch.input, [3, 224, 224]);
  assert.equal(torch.totals.params, 61_100_840);
  const info = torch.diagnostics.find((d) => d.code === 'assumed-input')!;
  assert.equal(info.severity, 'info');
  assert.equal(info.line, torch.range.line);
  assert.match(info.message, /assumed \[3, 224, 224\].*--input 3,224,224/);

  const keras = analyzeModel({ ...kerasVgg16(), inputs: [{ id: 'input_1' }] });
  assert.deepEqual(keras.input, [224, 224, 3]);
  assert.equal(keras.inputAssumed, true);

  const lm = new SpecBuilder('LM');
  lm.add('emb', 'embedding', { numEmbeddings: 100, embeddingDim: 8 });
  const lmModel = analyzeModel(lm.build());
  assert.deepEqual(lmModel.inputs[0], { id: 'x', shape: [1024], dtype: 'int' });
  assert.deepEqual(lmModel.layers[0].outputShape, [1024, 8]);

  const mlp = new SpecBuilder('MLP');
  mlp.add('flatten', 'flatten', { startDim: 1, endDim: -1 });
  mlp.linear('fc1', 784, 128);
  assert.deepEqual(analyzeModel(mlp.build()).input, [784]);

  // options.inputShape beats the spec, which beats the default.
  const stated = analyzeModel(alexnet([3, 256, 256]), { inputShape: [3, 227, 227] });
  assert.deepEqual(stated.input, [3, 227, 227]);
  assert.equal(stated.inputAssumed, false);
  assert.equal(stated.diagnostics.length, 0);
  assert.deepEqual(analyzeModel(alexnet([3, 256, 256])).input, [3, 256, 256]);
  const bad = analyzeModel(alexnet([3, 256, 256]), { inputShape: [3, -1] });
  assert.deepEqual(bad.input, [3, 256, 256]);
  assert.equal(bad.diagnostics[0].code, 'bad-input-shape');
});

test('dtypeBytes scales activation and gradient bytes, not FLOPs', () => {
  const fp32 = analyzeModel(alexnet([3, 224, 224]));
  const fp16 = analyzeModel(alexnet([3, 224, 224]), { dtypeBytes: 2 });
  assert.equal(fp16.dtypeBytes, 2);
  assert.equal(fp16.totals.activationBytes * 2, fp32.totals.activationBytes);
  assert.equal(fp16.totals.forwardFlops, fp32.totals.forwardFlops);
  assert.equal(fp16.layers[0].workload.weightGradBytes, fp16.layers[0].workload.params * 2);
});

test('layerSignature: stable across attr order and names, sensitive to shapes, batch and dtype', () => {
  const m = analyzeModel(alexnet([3, 224, 224]));
  const conv = m.layers.find((l) => l.id === 'features.3')!;
  const sig = layerSignature(conv, 32);
  const reordered = { ...conv, name: 'other', id: 'other', attrs: Object.fromEntries(Object.entries(conv.attrs).reverse()) };
  assert.equal(layerSignature(reordered, 32), sig);
  assert.match(sig, /^conv\|\{"bias":true,"dilation":\[1,1\],.*\|in=64x27x27\|b=32\|dt=4$/);
  assert.notEqual(layerSignature(conv, 64), sig);
  assert.notEqual(layerSignature(conv, 32, 2), sig);
  assert.notEqual(layerSignature({ ...conv, inputShapes: [[64, 28, 28]] }, 32), sig);
  // Identical layers at different places in a model share a signature (and so a profile measurement).
  const [fc1, fc2] = ['classifier.4', 'classifier.4'].map((id) => m.layers.find((l) => l.id === id)!);
  assert.equal(layerSignature(fc1, 8), layerSignature({ ...fc2, attrs: { outFeatures: 4096, bias: true, inFeatures: 4096 } }, 8));
});
