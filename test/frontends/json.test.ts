import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseTopologyJson } from '../../src/frontends/json';
import { analyzeModel } from '../../src/core/analyze';

const root = join(__dirname, '..', '..');

const keras3Tensor = (layer: string, shape: Array<number | null>) => ({
  class_name: '__keras_tensor__',
  config: { shape, dtype: 'float32', keras_history: [layer, 0, 0] },
});

/** Keras 3 `model.to_json()` of a functional MLP with a residual add and one layer used twice. */
const keras3Functional = {
  module: 'keras.src.models.functional',
  class_name: 'Functional',
  config: {
    name: 'residual_mlp',
    trainable: true,
    layers: [
      { module: 'keras.layers', class_name: 'InputLayer', config: { batch_shape: [null, 64], dtype: 'float32', sparse: false, name: 'features' }, registered_name: null, name: 'features', inbound_nodes: [] },
      {
        module: 'keras.layers',
        class_name: 'Dense',
        config: { name: 'shared', units: 64, activation: 'relu', use_bias: true },
        registered_name: null,
        name: 'shared',
        inbound_nodes: [
          { args: [keras3Tensor('features', [null, 64])], kwargs: {} },
          { args: [keras3Tensor('shared', [null, 64])], kwargs: {} },
        ],
      },
      {
        module: 'keras.layers',
        class_name: 'Add',
        config: { name: 'add' },
        registered_name: null,
        name: 'add',
        inbound_nodes: [{ args: [[{ ...keras3Tensor('shared', [null, 64]), config: { shape: [null, 64], dtype: 'float32', keras_history: ['shared', 1, 0] } }, keras3Tensor('features', [null, 64])]], kwargs: {} }],
      },
      { module: 'keras.layers', class_name: 'Dense', config: { name: 'head', units: 3, activation: 'softmax', use_bias: true }, registered_name: null, name: 'head', inbound_nodes: [{ args: [keras3Tensor('add', [null, 64])], kwargs: {} }] },
    ],
    input_layers: [['features', 0, 0]],
    output_layers: ['head', 0, 0],
  },
};

/** Keras 2 `to_json()` of a functional two-branch CNN (nested-list inbound_nodes), wrapped as a TF.js model.json. */
const tfjsModelJson = {
  format: 'layers-model',
  generatedBy: 'keras v2.13.1',
  convertedBy: 'TensorFlow.js Converter v4.22.0',
  modelTopology: {
    keras_version: '2.13.1',
    backend: 'tensorflow',
    model_config: {
      class_name: 'Functional',
      config: {
        name: 'two_branch',
        layers: [
          { class_name: 'InputLayer', config: { batch_input_shape: [null, 32, 32, 3], dtype: 'float32', name: 'input_1' }, name: 'input_1', inbound_nodes: [] },
          { class_name: 'Conv2D', config: { name: 'left', filters: 8, kernel_size: [3, 3], strides: [1, 1], padding: 'same', use_bias: true }, name: 'left', inbound_nodes: [[['input_1', 0, 0, {}]]] },
          { class_name: 'DepthwiseConv2D', config: { name: 'right', kernel_size: [3, 3], strides: [1, 1], padding: 'same', depth_multiplier: 2, use_bias: false }, name: 'right', inbound_nodes: [[['input_1', 0, 0, {}]]] },
          { class_name: 'Concatenate', config: { name: 'concat', axis: -1 }, name: 'concat', inbound_nodes: [[['left', 0, 0, {}], ['right', 0, 0, {}]]] },
          { class_name: 'GlobalAveragePooling2D', config: { name: 'gap', data_format: 'channels_last' }, name: 'gap', inbound_nodes: [[['concat', 0, 0, {}]]] },
          { class_name: 'MyCustomHead', config: { name: 'custom' }, name: 'custom', inbound_nodes: [[['gap', 0, 0, {}]]] },
        ],
        input_layers: [['input_1', 0, 0]],
        output_layers: [['custom', 0, 0]],
      },
    },
  },
  weightsManifest: [{ paths: ['group1-shard1of1.bin'], weights: [] }],
};

test('examples/keras-json/model.json (Keras 2 Sequential): layers, attrs, lines and Keras param count', () => {
  const text = readFileSync(join(root, 'examples/keras-json/model.json'), 'utf8');
  const r = parseTopologyJson('model.json', text);
  assert.equal(r.framework, 'keras-json');
  assert.deepEqual(r.diagnostics, []);
  assert.equal(r.models.length, 1);
  const m = r.models[0];
  assert.equal(m.name, 'mnist_cnn');
  assert.deepEqual(m.inputs, [{ id: 'conv2d_input', shape: [28, 28, 1] }]);
  assert.deepEqual(m.layers.map((l) => l.id), ['conv2d', 'conv2d_1', 'max_pooling2d', 'dropout', 'flatten', 'dense', 'dropout_1', 'dense_1']);
  assert.deepEqual(m.layers.map((l) => l.type).slice(0, 3), ['Conv2D', 'Conv2D', 'MaxPooling2D']);
  assert.deepEqual(m.layers[1].inputs, ['conv2d']);
  assert.equal(m.layers[1].attrs.outChannels, 64);
  assert.deepEqual(m.layers[2].attrs.kernel, [2, 2]);
  const lines = text.split('\n');
  for (const l of m.layers) {
    assert.equal(lines[l.range.line - 1].trim(), '{', `${l.id} should point at its object`);
    assert.match(lines[l.range.line], new RegExp(`"class_name": "${l.type}"`));
  }
  // Keras' own summary of this model: 1,199,882 params.
  assert.equal(analyzeModel(m, {}).totals.params, 1_199_882);
});

test('Keras 3 Functional: dict args, a shared layer used twice, flat output_layers', () => {
  const r = parseTopologyJson('k3.json', JSON.stringify(keras3Functional, null, 1));
  assert.deepEqual(r.diagnostics, []);
  const m = r.models[0];
  assert.equal(m.name, 'residual_mlp');
  assert.deepEqual(m.inputs, [{ id: 'features', shape: [64] }]);
  assert.deepEqual(m.layers.map((l) => [l.id, l.inputs, l.weightKey]), [
    ['shared', ['features'], 'shared'],
    ['shared#2', ['shared'], 'shared'],
    ['add', ['shared#2', 'features'], undefined],
    ['head', ['add'], undefined],
  ]);
  assert.deepEqual(m.outputs, ['head']);
  const a = analyzeModel(m, {});
  assert.equal(a.totals.params, 64 * 64 + 64 + 64 * 3 + 3);
});

test('TF.js model.json with model_config: Keras 2 nested inbound nodes, concat, depthwise, unknown class', () => {
  const r = parseTopologyJson('model.json', JSON.stringify(tfjsModelJson, null, 2));
  const m = r.models[0];
  assert.equal(m.name, 'two_branch');
  assert.deepEqual(m.inputs, [{ id: 'input_1', shape: [32, 32, 3] }]);
  assert.deepEqual(m.layers.map((l) => [l.id, l.op, l.inputs]), [
    ['left', 'conv', ['input_1']],
    ['right', 'conv', ['input_1']],
    ['concat', 'concat', ['left', 'right']],
    ['gap', 'pool', ['concat']],
    ['custom', 'opaque', ['gap']],
  ]);
  assert.equal(m.layers[1].attrs.depthwise, true);
  assert.equal(m.layers[1].attrs.depthMultiplier, 2);
  assert.deepEqual(m.diagnostics, []);
  assert.equal(m.layers[4].attrs.reason, "unknown Keras layer class 'MyCustomHead'");
  const a = analyzeModel(m, {});
  const unknown = a.diagnostics.filter((d) => d.code === 'unknown-layer');
  assert.equal(unknown.length, 1);
  assert.match(unknown[0].message, /MyCustomHead/);
  assert.equal(unknown[0].line, m.layers[4].range.line);
  assert.deepEqual(a.layers.find((l) => l.id === 'concat')!.outputShape, [32, 32, 14]);
});

test('Keras 3 Sequential without an InputLayer takes build_input_shape', () => {
  const k3 = { class_name: 'Sequential', config: { name: 'seq', layers: [{ class_name: 'Dense', config: { name: 'd', units: 5 } }], build_input_shape: [null, 12] } };
  const m = parseTopologyJson('s.json', JSON.stringify(k3)).models[0];
  assert.deepEqual(m.inputs, [{ id: 'd_input', shape: [12] }]);
});

test('JSON that is not a model topology gives nothing at all', () => {
  for (const text of ['{"name": "pkg", "version": "1.0.0", "dependencies": {}}', '[1, 2, 3]', '{"name": "x", "config": {"layers": 3}}', '', '{"a": ']) {
    assert.deepEqual(parseTopologyJson('x.json', text), { framework: 'keras-json', models: [], diagnostics: [] }, text);
  }
});

test('malformed topology JSON gives one error with its line and column', () => {
  const text = '{\n  "class_name": "Sequential",\n  "config": {\n    "layers": [\n      {"class_name": "Dense" "config": {}}\n    ]\n  }\n}\n';
  const r = parseTopologyJson('bad.json', text);
  assert.equal(r.models.length, 0);
  assert.equal(r.diagnostics.length, 1);
  const d = r.diagnostics[0];
  assert.equal(d.severity, 'error');
  assert.equal(d.line, 5);
  assert.equal(d.column, text.split('\n')[4].indexOf('"config"') + 1);
  assert.match(d.message, /CommaExpected/);
});

test('a layer saved with trainable: false (a frozen Keras backbone) keeps its weights and trains nothing', () => {
  const layers = [
    { class_name: 'Dense', config: { name: 'backbone', units: 64, trainable: false } },
    { class_name: 'Dense', config: { name: 'head', units: 3, trainable: true } },
  ];
  const k3 = { class_name: 'Sequential', config: { name: 'seq', layers, build_input_shape: [null, 12] } };
  const spec = parseTopologyJson('frozen.json', JSON.stringify(k3)).models[0];
  assert.deepEqual(spec.layers.map((l) => l.frozen ?? false), [true, false]);
  const m = analyzeModel(spec);
  assert.equal(m.totals.params, 64 * 3 + 3);
  assert.equal(m.totals.frozenParams, 12 * 64 + 64);
  assert.equal(m.layers[0].workload.backwardFlops, 0, 'nothing upstream of the frozen Dense trains');
});
