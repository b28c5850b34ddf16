/**
 * Frozen parameters in the analysis (core/frozenParameters.ts). The saved-byte
 * expectations are what torch 1.13 keeps, measured with
 * torch.autograd.graph.saved_tensors_hooks on the same modules at batch 8:
 * - a frozen Linear(256, 256) → ReLU → Linear(256, 256) backbone saves 0 bytes,
 *   and a trainable Linear(256, 10) after it saves its input (8,192 bytes);
 * - a frozen Linear(256, 512) whose input requires grad saves its weight only
 *   (524,288 bytes, a parameter, not an activation), not its input;
 * - a frozen Conv2d(16, 32, 3) saves its input (204,800 bytes) as a trained one does.
 * test/frontends/python-frozen.test.ts checks the same against torch for real.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { analyzeModel } from '../../src/core/analyze';
import { SpecBuilder } from './specBuilder';

const freeze = (b: SpecBuilder, ...names: string[]): void => {
  for (const l of b.layers) if (names.includes(l.name)) l.frozen = true;
};

test('a frozen backbone under a trainable head: no backward and nothing saved before the head; its weights stay, without gradients', () => {
  const b = new SpecBuilder('FineTune');
  b.linear('backbone.0', 256, 256);
  b.act('backbone.1');
  b.linear('backbone.2', 256, 256);
  b.linear('head', 256, 10);
  freeze(b, 'backbone.0', 'backbone.2');
  const m = analyzeModel(b.build([256]));
  const [l0, relu, l2, head] = m.layers;
  for (const l of [l0, relu, l2]) {
    assert.equal(l.workload.backwardFlops, 0, l.name);
    assert.equal(l.workload.savedActivationBytes, 0, l.name);
    assert.equal(l.workload.weightGradBytes, 0, l.name);
  }
  assert.equal(l0.workload.params, 0);
  assert.equal(l0.workload.frozenParams, 256 * 256 + 256);
  assert.equal(head.workload.savedActivationBytes, 256 * 4, 'torch: 8,192 bytes at batch 8');
  assert.equal(head.workload.backwardFlops, 2 * head.workload.forwardFlops);
  assert.equal(m.totals.params, 256 * 10 + 10);
  assert.equal(m.totals.frozenParams, 2 * (256 * 256 + 256));
  assert.equal(m.totals.backwardFlops, head.workload.backwardFlops);
});

test('a frozen layer between trainable ones passes the gradient on: input gradient only, and a frozen Linear keeps no input', () => {
  const b = new SpecBuilder('Sandwich');
  b.linear('stem', 64, 256);
  b.linear('middle', 256, 512);
  b.act('act');
  b.linear('head', 512, 10);
  freeze(b, 'middle');
  const m = analyzeModel(b.build([64]));
  const middle = m.layers.find((l) => l.name === 'middle')!;
  assert.equal(middle.workload.backwardFlops, middle.workload.forwardFlops, 'dgrad only: half the trained 2× forward');
  assert.equal(middle.workload.savedActivationBytes, 0, 'torch keeps the frozen Linear weight, not its input');
  assert.ok(m.layers.find((l) => l.name === 'act')!.workload.backwardFlops > 0, 'downstream of a trainable stem, the ReLU still back-propagates');
  assert.equal(m.totals.params, 64 * 256 + 256 + 512 * 10 + 10);
});

test('a frozen convolution downstream of a trainable one keeps its input, as torch 1.13 does; a frozen embedding freezes the head tied to it', () => {
  const b = new SpecBuilder('Convs');
  b.conv('c1', 3, 16, 3, { p: 1 });
  b.conv('c2', 16, 32, 3);
  freeze(b, 'c2');
  const m = analyzeModel(b.build([3, 22, 22]));
  const c2 = m.layers.find((l) => l.name === 'c2')!;
  assert.equal(c2.workload.savedActivationBytes, 16 * 22 * 22 * 4);
  assert.equal(c2.workload.backwardFlops, c2.workload.forwardFlops);

  const lm = new SpecBuilder('TinyLM', 'pytorch', { inputDtype: 'int' });
  lm.add('wte', 'embedding', { numEmbeddings: 1000, embeddingDim: 64 }, { weightKey: 'wte.weight' });
  lm.add('ln_f', 'layernorm', { scale: true, center: true });
  lm.linear('lm_head', 64, 1000, false, { weightKey: 'wte.weight' });
  freeze(lm, 'wte');
  const tied = analyzeModel(lm.build([128]));
  const head = tied.layers.find((l) => l.name === 'lm_head')!;
  assert.equal(tied.totals.params, 128, 'only the final norm trains');
  assert.equal(tied.totals.frozenParams, 64_000);
  assert.equal(head.workload.backwardFlops, head.workload.forwardFlops, 'tied to a frozen embedding: input gradient only');
});

test('nothing frozen: the workloads are what they were', () => {
  const build = () => {
    const b = new SpecBuilder('Plain');
    b.linear('a', 32, 32);
    b.linear('b', 32, 4);
    return b;
  };
  const m = analyzeModel(build().build([32]));
  assert.equal(m.totals.frozenParams, undefined);
  assert.equal(m.layers[0].workload.backwardFlops, 2 * m.layers[0].workload.forwardFlops);
  assert.equal(m.layers[0].workload.savedActivationBytes, 32 * 4);
});

test('a frozen LSTM between trainable layers skips its weight gradients (W_ih, W_hh and biases) and keeps what its input gradient needs', () => {
  const build = (frozen: boolean) => {
    const b = new SpecBuilder('Tagger');
    b.linear('proj', 32, 64);
    b.add('lstm', 'rnn', { cell: 'lstm', inputSize: 64, hiddenSize: 128 });
    b.linear('head', 128, 10);
    if (frozen) freeze(b, 'lstm');
    return analyzeModel(b.build([50, 32])).layers.find((l) => l.name === 'lstm')!.workload;
  };
  const trained = build(false);
  const frozen = build(true);
  // 50 steps × 4 gates × 128 hidden × (64 input + 128 recurrent), a GEMM pair each, plus the two bias vectors' sums.
  const weightGradients = 50 * (2 * 4 * 128 * (64 + 128) + 2 * 4 * 128);
  assert.equal(frozen.backward, 'input-gradient');
  assert.equal(frozen.backwardFlops, trained.backwardFlops - weightGradients);
  assert.equal(frozen.savedActivationBytes, trained.savedActivationBytes, 'the gates and states the input gradient needs stay');
  assert.equal(frozen.frozenParams, trained.params);
});
