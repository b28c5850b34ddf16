import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseScriptSource } from '../../src/frontends/typescript';
import { analyzeModel } from '../../src/core/analyze';
import type { FrontendResult, ModelSpec } from '../../src/core/ir';

const root = join(__dirname, '..', '..');
const read = (p: string) => readFileSync(join(root, p), 'utf8');

function only(r: FrontendResult): ModelSpec {
  assert.equal(r.models.length, 1, `expected one model, got ${r.models.map((m) => m.name).join(', ')}`);
  return r.models[0];
}

/** 1-based line of the n-th occurrence of `needle` in `text`. */
function lineOf(text: string, needle: string, nth = 1): number {
  let at = -1;
  for (let i = 0; i < nth; i++) at = text.indexOf(needle, at + 1);
  assert.ok(at >= 0, `'${needle}' not found`);
  return text.slice(0, at).split('\n').length;
}

test('examples/tfjs/cnn.ts: sequential CNN with TF.js automatic names, attrs and lines', () => {
  const text = read('examples/tfjs/cnn.ts');
  const r = parseScriptSource('cnn.ts', text);
  assert.equal(r.framework, 'tfjs');
  assert.deepEqual(r.diagnostics, []);
  const m = only(r);
  assert.equal(m.name, 'createCifarCnn');
  assert.equal(m.layout, 'channels_last');
  assert.deepEqual(m.inputs, [{ id: 'conv2d_Conv2D1_input', shape: [32, 32, 3] }]);
  assert.equal(m.layers.length, 19);
  assert.deepEqual(
    m.layers.slice(0, 6).map((l) => l.name),
    ['conv2d_Conv2D1', 'batch_normalization_BatchNormalization1', 'conv2d_Conv2D2', 'max_pooling2d_MaxPooling2D1', 'dropout_Dropout1', 'conv2d_Conv2D3'],
  );
  assert.equal(m.layers[18].name, 'logits');
  assert.deepEqual(m.outputs, ['logits']);
  const conv = m.layers[0];
  assert.equal(conv.op, 'conv');
  assert.equal(conv.type, 'conv2d');
  assert.deepEqual(conv.inputs, ['conv2d_Conv2D1_input']);
  assert.deepEqual({ ...conv.attrs }, { rank: 2, kernel: [3, 3], stride: [1, 1], padding: 'same', dilation: [1, 1], groups: 1, bias: true, outChannels: 32, activation: 'relu' });
  assert.deepEqual(m.layers.filter((l) => l.op === 'conv').map((l) => l.attrs.outChannels), [32, 32, 64, 64, 128, 128]);
  assert.equal(conv.range.line, lineOf(text, 'tf.layers.conv2d({\n'));
  assert.equal(m.layers[18].range.line, lineOf(text, "name: 'logits'"));
  assert.equal(m.range.line, lineOf(text, 'tf.sequential()'));
  // Hand count: convs 287,008 + BN γ/β 448 + dense 524,544 + 2,570.
  const analyzed = analyzeModel(m, {});
  assert.equal(analyzed.totals.params, 814_570);
  assert.equal(analyzed.totals.nonTrainable, 448);
  assert.deepEqual(analyzed.layers.at(-1)!.outputShape, [10]);
});

test('examples/tfjs/functional.ts: tf.input / apply chains / residual add / tf.model', () => {
  const text = read('examples/tfjs/functional.ts');
  const m = only(parseScriptSource('functional.ts', text));
  assert.equal(m.name, 'buildResNet');
  assert.deepEqual(m.inputs, [{ id: 'image', shape: [32, 32, 3] }]);
  const adds = m.layers.filter((l) => l.op === 'add');
  assert.equal(adds.length, 2);
  assert.deepEqual(adds[0].inputs, ['batch_normalization_BatchNormalization2', 'stem']);
  assert.deepEqual(adds[1].inputs, ['batch_normalization_BatchNormalization4', 'activation_Activation2']);
  assert.deepEqual(m.outputs, ['dense_Dense1']);
  assert.equal(m.layers[0].name, 'stem');
  assert.equal(m.layers[0].attrs.bias, true);
  assert.equal(m.layers[1].attrs.bias, false);
  // Layers made inside the helper point at the helper's lines.
  assert.equal(m.layers[1].range.line, lineOf(text, 'let y = tf.layers.conv2d'));
  const ids = new Set<string>(m.inputs.map((i) => i.id));
  for (const l of m.layers) {
    for (const p of l.inputs) assert.ok(ids.has(p), `${l.id} reads ${p} before it exists`);
    ids.add(l.id);
  }
  const analyzed = analyzeModel(m, {});
  assert.deepEqual(analyzed.diagnostics, []);
  assert.deepEqual(analyzed.layers.find((l) => l.op === 'pool')!.outputShape, [32]);
});

test('automatic names count per class across the file, as TF.js getUid does; explicit names win', () => {
  const src = `
import * as tf from '@tensorflow/tfjs';
const a = tf.sequential({ layers: [tf.layers.dense({ units: 4, inputShape: [8] }), tf.layers.dense({ units: 2 })] });
const b = tf.sequential({ layers: [tf.layers.dense({ units: 3, inputShape: [5], name: 'first' }), tf.layers.dense({ units: 1 }), tf.layers.layerNormalization()] });
const x = tf.input({ shape: [7] });
const y = tf.layers.simpleRNN({ units: 2 });
const m = tf.model({ inputs: x, outputs: tf.layers.dense({ units: 2 }).apply(x) });
`;
  const r = parseScriptSource('names.ts', src);
  assert.deepEqual(r.models.map((m) => m.name), ['a', 'b', 'm']);
  assert.deepEqual(r.models[0].layers.map((l) => l.name), ['dense_Dense1', 'dense_Dense2']);
  assert.deepEqual(r.models[1].layers.map((l) => l.name), ['first', 'dense_Dense3', 'layer_normalization_LayerNormalization1']);
  assert.equal(r.models[1].inputs[0].id, 'first_input');
  assert.deepEqual(r.models[2].inputs, [{ id: 'input1', shape: [7] }]);
  // simpleRNN consumed 'SimpleRNN1' even though it was never used.
  assert.deepEqual(r.models[2].layers.map((l) => l.name), ['dense_Dense4']);
});

test('named imports, CommonJS require, loops, map, Math and template names are followed', () => {
  const src = `
const { sequential, layers } = require('@tensorflow/tfjs-node');
const widths = [64, 128].map((w) => w * 2);
function build(depth) {
  const model = sequential();
  model.add(layers.dense({ units: widths[0], inputShape: [Math.floor(100 / 3)] }));
  for (let i = 0; i < depth; i++) model.add(layers.dense({ units: widths[1], name: \`hidden_\${i}\` }));
  return model;
}
const net = build(3);
`;
  const m = only(parseScriptSource('net.js', src));
  assert.equal(m.name, 'build');
  assert.deepEqual(m.inputs[0].shape, [33]);
  assert.deepEqual(m.layers.map((l) => [l.name, l.attrs.outFeatures]), [['dense_Dense1', 128], ['hidden_0', 256], ['hidden_1', 256], ['hidden_2', 256]]);
});

test('ES named imports and an uncalled exported factory with an unknown argument', () => {
  const src = `
import { sequential, layers } from '@tensorflow/tfjs';
export function createModel(numClasses: number) {
  return sequential({ layers: [layers.embedding({ inputDim: 1000, outputDim: 16, inputLength: 20 }), layers.bidirectional({ layer: layers.lstm({ units: 8 }) }), layers.dense({ units: numClasses })] });
}
`;
  const m = only(parseScriptSource('text.ts', src));
  assert.equal(m.name, 'createModel');
  assert.deepEqual(m.inputs[0], { id: 'embedding_Embedding1_input', shape: [20], dtype: 'int' });
  assert.deepEqual(m.layers.map((l) => l.op), ['embedding', 'rnn', 'linear']);
  assert.deepEqual({ ...m.layers[1].attrs }, { cell: 'lstm', hiddenSize: 8, numLayers: 1, bidirectional: true, bias: true, returnSequences: false });
  // numClasses is unknown: units stay unset and the analysis says so at that layer, instead of guessing.
  assert.equal(m.layers[2].attrs.outFeatures, undefined);
  const problems = analyzeModel(m, {}).diagnostics.filter((d) => d.severity !== 'info');
  assert.equal(problems.length, 1);
  assert.equal(problems[0].line, m.layers[2].range.line);
  assert.match(problems[0].message, /outFeatures/);
});

test('unknown layers become opaque with a reason; analysis reports them as unknown-layer at their line', () => {
  const src = `import * as tf from '@tensorflow/tfjs';
class MyLayer extends tf.layers.Layer {}
const model = tf.sequential();
model.add(tf.layers.dense({ units: 4, inputShape: [4] }));
model.add(tf.layers.fancyNewLayer({ size: 3 }));
model.add(new MyLayer({}));
`;
  const m = only(parseScriptSource('u.ts', src));
  assert.deepEqual(m.layers.map((l) => l.op), ['linear', 'opaque', 'opaque']);
  assert.deepEqual(m.layers.map((l) => l.type), ['dense', 'fancyNewLayer', 'MyLayer']);
  assert.equal(m.layers[1].attrs.reason, "unknown TF.js layer 'tf.layers.fancyNewLayer'");
  assert.match(String(m.layers[2].attrs.reason), /could not evaluate this layer \(new MyLayer\)/);
  assert.deepEqual(m.layers.slice(1).map((l) => [l.range.line, l.inputs]), [[5, ['dense_Dense1']], [6, ['fancy_new_layer_FancyNewLayer1']]]);
  const warnings = analyzeModel(m, {}).diagnostics.filter((d) => d.code === 'unknown-layer');
  assert.deepEqual(warnings.map((d) => [d.severity, d.line, d.column]), [['warning', 5, 11]]);
  assert.match(warnings[0].message, /tf\.layers\.fancyNewLayer/);
});

test('a layer applied twice shares weights: name, name#2 and one weightKey', () => {
  const src = `
const inp = tf.input({ shape: [16], name: 'tokens' });
const shared = tf.layers.dense({ units: 16, name: 'proj' });
const h = shared.apply(shared.apply(inp));
const model = tf.model({ inputs: inp, outputs: h });
`;
  const m = only(parseScriptSource('s.ts', src));
  assert.deepEqual(m.layers.map((l) => [l.id, l.name, l.weightKey, l.inputs]), [
    ['proj', 'proj', 'proj', ['tokens']],
    ['proj#2', 'proj', 'proj', ['proj']],
  ]);
  const analyzed = analyzeModel(m, {});
  assert.equal(analyzed.totals.params, 16 * 16 + 16);
});

test('syntax errors give 1-based error diagnostics and keep the partial graph', () => {
  const src = `const model = tf.sequential();
model.add(tf.layers.dense({ units: 8, inputShape: [4] }));
model.add(tf.layers.dense({ units: 2 ]));
`;
  const r = parseScriptSource('broken.ts', src);
  const errors = r.diagnostics.filter((d) => d.severity === 'error');
  assert.ok(errors.length >= 1);
  assert.equal(errors[0].code, 'parse-error');
  assert.equal(errors[0].line, 3);
  assert.equal(errors[0].column, src.split('\n')[2].indexOf(']') + 1);
  assert.equal(r.models[0].layers[0].name, 'dense_Dense1');
});

test('user code is never executed and runaway loops stop at the budget', () => {
  const dir = mkdtempSync(join(tmpdir(), 'wap-script-'));
  const sentinel = join(dir, 'ran');
  const src = `
require('fs').writeFileSync(${JSON.stringify(sentinel)}, 'x');
process.exit(3);
while (true) {}
const model = tf.sequential({ layers: [tf.layers.dense({ units: 1, inputShape: [2] })] });
`;
  const started = Date.now();
  const r = parseScriptSource('evil.js', src);
  assert.ok(Date.now() - started < 5000);
  assert.equal(existsSync(sentinel), false);
  assert.equal(r.models.length, 1);
});

test('a file without TF.js models yields no models and no diagnostics', () => {
  const r = parseScriptSource('util.ts', 'export function add(a: number, b: number) { return a + b; }\nconst model = { layers: [] };\n');
  assert.deepEqual(r, { framework: 'tfjs', models: [], diagnostics: [] });
});

test('class-based code: this.model = tf.sequential() in one method, layers added in another', () => {
  const src = `
import * as tf from '@tensorflow/tfjs';
export class Classifier {
  private model: tf.Sequential;
  constructor(private readonly classes = 5) {}
  build(): tf.Sequential {
    this.model = tf.sequential();
    this.addLayers(64);
    return this.model;
  }
  private addLayers(width: number) {
    this.model.add(tf.layers.dense({ units: width, inputShape: [20], activation: 'relu' }));
    this.model.add(tf.layers.dense({ units: 3 }));
  }
}
`;
  const m = only(parseScriptSource('cls.ts', src));
  assert.equal(m.name, 'build');
  assert.deepEqual(m.layers.map((l) => [l.name, l.attrs.outFeatures]), [['dense_Dense1', 64], ['dense_Dense2', 3]]);
  assert.deepEqual(m.inputs[0].shape, [20]);
});

test('pathological input (deep nesting, endless recursion) returns a result instead of throwing', () => {
  const program = (depth: number) =>
    `const x = ${'['.repeat(depth)}1${']'.repeat(depth)};\nfunction f(n) { return f(n + 1); }\nf(0);\n` +
    'const model = tf.sequential({ layers: [tf.layers.dense({ units: 1, inputShape: [1] })] });\n';
  // Recursion stops at the call-depth budget and evaluation goes on to the model.
  const ok = parseScriptSource('deep.ts', program(200));
  assert.equal(ok.models.length, 1);
  assert.deepEqual(ok.diagnostics, []);
  // Nesting deep enough to exhaust the stack becomes one error diagnostic.
  const tooDeep = parseScriptSource('deeper.ts', program(20_000));
  assert.equal(tooDeep.framework, 'tfjs');
  assert.ok(tooDeep.diagnostics.some((d) => d.severity === 'error' && d.line >= 1 && d.column >= 1));
});

test('layer zoo: padding, strides, depthwise, separable, upsampling, transposed, causal conv1d and RNNs get the right shapes', () => {
  const src = `
const model = tf.sequential();
model.add(tf.layers.zeroPadding2d({ padding: 1, inputShape: [16, 16, 3] }));
model.add(tf.layers.conv2d({ filters: 8, kernelSize: 3, strides: 2 }));
model.add(tf.layers.depthwiseConv2d({ kernelSize: 3, depthMultiplier: 2, padding: 'same' }));
model.add(tf.layers.separableConv2d({ filters: 12, kernelSize: 3, padding: 'same' }));
model.add(tf.layers.upSampling2d({ size: [2, 2] }));
model.add(tf.layers.conv2dTranspose({ filters: 4, kernelSize: 3, strides: 2, padding: 'same' }));
model.add(tf.layers.averagePooling2d({ poolSize: 4 }));
model.add(tf.layers.reshape({ targetShape: [64, 4] }));
model.add(tf.layers.conv1d({ filters: 6, kernelSize: 5, padding: 'causal', dilationRate: 2 }));
model.add(tf.layers.gru({ units: 7, returnSequences: true }));
model.add(tf.layers.lstm({ units: 5 }));
model.add(tf.layers.dense({ units: 2 }));
`;
  const a = analyzeModel(only(parseScriptSource('zoo.ts', src)), {});
  assert.deepEqual(a.diagnostics, []);
  assert.deepEqual(
    a.layers.map((l) => l.outputShape),
    [[18, 18, 3], [8, 8, 8], [8, 8, 16], [8, 8, 12], [16, 16, 12], [32, 32, 4], [8, 8, 4], [64, 4], [64, 6], [64, 7], [5], [2]],
  );
  // Depthwise 3×3 on 8 channels × 2 plus 16 biases.
  assert.equal(a.layers[2].workload.params, 3 * 3 * 8 * 2 + 16);
});
