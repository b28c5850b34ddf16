/**
 * Library coverage users hit: nn.TransformerEncoderLayer / nn.TransformerEncoder,
 * their decoder twins and nn.Transformer (PyTorch module names and parameter counts), nn.Unflatten, F.linear, and
 * Keras subclassed models. Parameter counts are PyTorch's / Keras' own
 * (sum(p.numel() for p in model.parameters()), model.count_params()).
 */
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { analyzeModel } from '../../src/core/analyze';
import type { AnalyzedModel } from '../../src/core/ir';
import { analyzePythonModel, layerNamed } from './pythonModels';
import { initPythonFrontend, parsePythonSource } from '../../src/frontends/python';

before(() => initPythonFrontend());

const analyzed = (src: string, name: string, inputShape?: number[]): AnalyzedModel => analyzePythonModel('coverage.py', src, name, inputShape);

const byName = layerNamed;

test('nn.TransformerEncoderLayer(512, 8, 2048) has PyTorch module names and 3,152,384 params', () => {
  const m = analyzed('import torch.nn as nn\nlayer = nn.TransformerEncoderLayer(d_model=512, nhead=8, dim_feedforward=2048)\n', 'layer', [10, 512]);
  assert.equal(m.totals.params, 3_152_384);
  assert.deepEqual(
    m.layers.map((l) => l.name),
    ['self_attn', 'dropout1', 'add', 'norm1', 'linear1', 'relu', 'dropout', 'linear2', 'dropout2', 'add_1', 'norm2'],
  );
  assert.equal(byName(m, 'self_attn').workload.params, 4 * 512 * 512 + 4 * 512);
  assert.equal(byName(m, 'linear1').workload.params, 512 * 2048 + 2048);
  assert.deepEqual(byName(m, 'add_1').inputs, ['norm1', 'dropout2'], 'post-norm: the feed-forward residual starts at norm1');
  assert.deepEqual(m.layers[m.layers.length - 1].outputShape, [10, 512]);
});

test('nn.TransformerEncoder deep-copies its layer per index, pre-norm and gelu included', () => {
  const m = analyzed(
    `import torch.nn as nn
class Encoder(nn.Module):
    def __init__(self, vocab=1000, d=256, heads=4, n=3):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        layer = nn.TransformerEncoderLayer(d, heads, dim_feedforward=4 * d, batch_first=True, norm_first=True, activation="gelu")
        self.encoder = nn.TransformerEncoder(layer, num_layers=n, norm=nn.LayerNorm(d))
        self.head = nn.Linear(d, vocab)
    def forward(self, tokens):
        return self.head(self.encoder(self.embed(tokens)))
`,
    'Encoder',
  );
  // embed + 3 × (mha + linear1 + linear2 + 2 norms) + final norm + head, as PyTorch counts them.
  const perLayer = 4 * 256 * 256 + 4 * 256 + (256 * 1024 + 1024) + (1024 * 256 + 256) + 2 * 512;
  assert.equal(m.totals.params, 1000 * 256 + 3 * perLayer + 512 + 256 * 1000 + 1000);
  for (const i of [0, 1, 2]) assert.equal(byName(m, `encoder.layers.${i}.self_attn`).op, 'mha');
  assert.equal(byName(m, 'encoder.layers.2.gelu').attrs.fn, 'gelu');
  assert.deepEqual(byName(m, 'encoder.layers.0.self_attn').inputs, Array(3).fill('encoder.layers.0.norm1'), 'pre-norm: attention reads norm1');
  assert.deepEqual(byName(m, 'encoder.norm').inputs, ['encoder.layers.2.add_1']);
  assert.equal(new Set(m.layers.map((l) => l.id)).size, m.layers.length, 'copies are distinct layers');
});

test("nn.Transformer and nn.TransformerDecoderLayer: PyTorch's counts (44,140,544 for the defaults), names, and cross-attention over the encoder's memory", () => {
  // torch 1.13: sum(p.numel() for p in nn.Transformer().parameters()) == 44,140,544.
  const t = analyzed('import torch.nn as nn\nclass Seq2Seq(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.tf = nn.Transformer()\n    def forward(self, src):\n        return self.tf(src, src)\n', 'Seq2Seq', [10, 512]);
  assert.equal(t.totals.params, 44_140_544);
  assert.equal(t.completeness?.complete ?? true, true, JSON.stringify(t.completeness));
  assert.deepEqual(byName(t, 'tf.decoder.layers.0.multihead_attn').inputs.slice(1), ['tf.encoder.norm', 'tf.encoder.norm'], 'keys and values are the memory');
  assert.deepEqual(t.layers[t.layers.length - 1].name, 'tf.decoder.norm');
  // named_children() of TransformerDecoderLayer(256, 4, 1024): self_attn, multihead_attn, …, norm3, dropout3 (1,053,440 params).
  const d = analyzed('import torch.nn as nn\nimport torch\nclass Dec(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.layer = nn.TransformerDecoderLayer(256, 4, 1024, batch_first=True, norm_first=True)\n    def forward(self, x):\n        return self.layer(x, x)\n', 'Dec', [16, 256]);
  assert.equal(d.totals.params, 1_053_440);
  assert.deepEqual(byName(d, 'layer.multihead_attn').inputs[0], 'layer.norm2', 'pre-norm: cross-attention reads norm2');
  assert.ok(d.layers.some((l) => l.name === 'layer.norm3') && d.layers.some((l) => l.name === 'layer.dropout3'));
});

test('nn.Unflatten reshapes [batch, C·H·W] to [batch, C, H, W]', () => {
  const m = analyzed(
    `import torch.nn as nn
class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(64, 32 * 7 * 7)
        self.unflatten = nn.Unflatten(1, (32, 7, 7))
        self.up = nn.ConvTranspose2d(32, 16, 4, stride=2, padding=1)
    def forward(self, z):
        return self.up(self.unflatten(self.fc(z)))
`,
    'Decoder',
    [64],
  );
  assert.equal(byName(m, 'unflatten').op, 'reshape');
  assert.deepEqual(byName(m, 'unflatten').outputShape, [32, 7, 7]);
  assert.deepEqual(byName(m, 'up').outputShape, [16, 14, 14]);
  assert.equal(m.totals.params, 64 * 1568 + 1568 + 32 * 16 * 16 + 16);
});

test('F.linear: nn.Parameter weights count, tied weights count once, unknown weights are opaque with the reason', () => {
  const src = `import torch
import torch.nn as nn
import torch.nn.functional as F
class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(100, 16)
        self.w = nn.Parameter(torch.randn(32, 16))
        self.b = nn.Parameter(torch.zeros(32))
    def forward(self, idx):
        x = self.emb(idx)
        return F.linear(x, self.w, self.b), F.linear(x, self.emb.weight)
`;
  const m = analyzed(src, 'Head', [12]);
  assert.equal(m.totals.params, 100 * 16 + 32 * 16 + 32, 'as sum(p.numel() for p in Head().parameters())');
  assert.deepEqual(byName(m, 'linear').outputShape, [12, 32]);
  assert.equal(byName(m, 'linear_1').weightKey, 'emb');
  assert.deepEqual(byName(m, 'linear_1').outputShape, [12, 100]);
  const opaque = analyzed(src.replace('F.linear(x, self.emb.weight)', 'F.linear(x, torch.tanh(x))'), 'Head', [12]);
  const reason = String(byName(opaque, 'linear_1').attrs.reason);
  assert.equal(byName(opaque, 'linear_1').op, 'opaque');
  assert.match(reason, /^F\.linear: the weight is a tensor computed at run time/);
  assert.ok(opaque.diagnostics.some((d) => d.code === 'unknown-layer' && d.message.includes(reason)));
});

test('Keras subclassed model: attributes are layers named as Keras names them, call() gives the dataflow', () => {
  const src = `import keras
from keras import layers

class Block(layers.Layer):
    def __init__(self, units):
        super().__init__()
        self.dense = layers.Dense(units, activation="relu")
        self.norm = layers.LayerNormalization()
    def call(self, x):
        return self.norm(self.dense(x))

class MLP(keras.Model):
    def __init__(self, hidden=128, classes=10):
        super().__init__()
        self.block = Block(hidden)
        self.drop = layers.Dropout(0.2)
        self.out = layers.Dense(classes, name="logits")
    def call(self, inputs, training=False):
        x = self.block(inputs)
        x = self.drop(x, training=training)
        return self.out(x)

model = MLP()
model.build((None, 784))
`;
  const r = parsePythonSource('keras_sub.py', src);
  assert.equal(r.framework, 'keras');
  assert.deepEqual(r.models.map((x) => x.name), ['model'], 'the class is a part of the instance, Block is a layer');
  const m = analyzeModel(r.models[0]);
  assert.equal(m.inputAssumed, false);
  assert.deepEqual(m.input, [784]);
  assert.deepEqual(m.layers.map((l) => l.name), ['dense', 'layer_normalization', 'dropout', 'logits']);
  assert.deepEqual(byName(m, 'logits').inputs, ['dropout']);
  // model.count_params(): 784·128+128, LayerNorm 2·128, 128·10+10.
  assert.equal(m.totals.params, 784 * 128 + 128 + 256 + 1290);
});

test('Keras subclassed model built by calling it on keras.Input', () => {
  const m = analyzed(
    `import tensorflow as tf
class Tiny(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.conv = tf.keras.layers.Conv2D(8, 3, padding="same")
        self.pool = tf.keras.layers.GlobalAveragePooling2D()
        self.fc = tf.keras.layers.Dense(5)
    def call(self, images):
        return self.fc(self.pool(self.conv(images)))
net = Tiny()
net(tf.keras.Input(shape=(32, 32, 3)))
`,
    'net',
  );
  assert.deepEqual(m.input, [32, 32, 3]);
  assert.equal(m.inputs[0].id, 'images');
  assert.equal(m.totals.params, 3 * 3 * 3 * 8 + 8 + 8 * 5 + 5);
});

test('nn.RMSNorm (torch ≥ 2.4) and F.rms_norm are RMS norms with a weight only, as torch counts them', () => {
  const m = analyzed(
    `import torch
import torch.nn as nn
import torch.nn.functional as F
class Net(nn.Module):
    def __init__(self, d=64):
        super().__init__()
        self.norm = nn.RMSNorm(d, eps=1e-5)
        self.bare = nn.RMSNorm([d], elementwise_affine=False)
        self.scale = nn.Parameter(torch.ones(d))
        self.proj = nn.Linear(d, d, bias=False)
    def forward(self, x):
        h = self.bare(self.norm(x))
        return self.proj(F.rms_norm(h, (64,), self.scale))
`,
    'Net',
    [10, 64],
  );
  // norm.weight 64 + scale 64 + proj 64·64; the affine-free norm holds nothing.
  assert.equal(m.totals.params, 64 + 64 + 64 * 64);
  for (const name of ['norm', 'bare']) {
    const l = byName(m, name);
    assert.equal(l.op, 'layernorm', name);
    assert.equal(l.attrs.rms, true, name);
    assert.equal(l.attrs.center, false, name);
    // torch's own module: no eager-fp32 mark (that is transformers' Python RMSNorm).
    assert.equal(l.attrs.eagerFp32, undefined, name);
  }
  assert.equal(byName(m, 'norm').workload.params, 64);
  assert.equal(byName(m, 'bare').workload.params, 0);
  const functional = m.layers.find((l) => l.type.endsWith('rms_norm'));
  assert.ok(functional, m.layers.map((l) => `${l.name}:${l.type}`).join(', '));
  assert.deepEqual([functional.op, functional.attrs.rms, functional.attrs.center, functional.attrs.scale], ['layernorm', true, false, true]);
  assert.deepEqual(functional.outputShape, [10, 64]);
  assert.deepEqual(m.layers.filter((l) => l.op === 'opaque').map((l) => l.name), []);
});
