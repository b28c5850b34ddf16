/**
 * The wasm backend's missing conv gradient kernels (ours) must agree with the
 * cpu backend's reference kernels: relative error ≤ 1e-4.
 */
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import * as tf from '@tensorflow/tfjs-core';
import { loadBackend } from '../../src/profiler/tfjs/loadBackend';

type Pad = 'same' | 'valid' | [[number, number], [number, number], [number, number], [number, number]];
const pads: Array<[string, Pad]> = [
  ['same', 'same'],
  ['valid', 'valid'],
  ['explicit', [[0, 0], [1, 2], [2, 0], [0, 0]]],
];

function relErr(a: Float32Array, b: Float32Array): number {
  let num = 0;
  let den = 0;
  for (let i = 0; i < a.length; i++) {
    num += (a[i]! - b[i]!) ** 2;
    den += b[i]! ** 2;
  }
  return Math.sqrt(num / Math.max(den, 1e-30));
}

/** Runs f on a backend with the same seeded inputs and returns the flattened gradients. */
async function gradsOn(backend: string, f: () => tf.Tensor[]): Promise<Float32Array[]> {
  await tf.setBackend(backend);
  const out = tf.tidy(f);
  const data = out.map((t) => t.dataSync() as Float32Array);
  tf.dispose(out);
  return data;
}

before(async () => {
  await loadBackend('wasm');
});

for (const stride of [1, 2, 4]) {
  for (const [padName, pad] of pads) {
    test(`Conv2DBackpropFilter/Input on wasm match cpu: stride ${stride}, ${padName} padding`, async () => {
      const run = () => {
        const x = tf.randomNormal([2, 11, 13, 3], 0, 1, 'float32', 7) as tf.Tensor4D;
        const w = tf.randomNormal([3, 5, 3, 4], 0, 1, 'float32', 8) as tf.Tensor4D;
        const y = tf.conv2d(x, w, stride, pad);
        const dy = tf.randomNormal(y.shape, 0, 1, 'float32', 9);
        const g = tf.grads((xx: tf.Tensor, ww: tf.Tensor) => tf.conv2d(xx as tf.Tensor4D, ww as tf.Tensor4D, stride, pad));
        return g([x, w], dy);
      };
      const [dxCpu, dwCpu] = await gradsOn('cpu', run);
      const [dxWasm, dwWasm] = await gradsOn('wasm', run);
      assert.ok(relErr(dwWasm!, dwCpu!) <= 1e-4, `filter grad rel err ${relErr(dwWasm!, dwCpu!)}`);
      assert.ok(relErr(dxWasm!, dxCpu!) <= 1e-4, `input grad rel err ${relErr(dxWasm!, dxCpu!)}`);
      assert.ok(dwCpu!.some((v) => v !== 0), 'reference gradient is not trivially zero');
    });

    test(`depthwise conv gradients on wasm match cpu: stride ${stride}, ${padName} padding`, async () => {
      const run = () => {
        const x = tf.randomNormal([2, 10, 9, 3], 0, 1, 'float32', 3) as tf.Tensor4D;
        const w = tf.randomNormal([3, 3, 3, 2], 0, 1, 'float32', 4) as tf.Tensor4D;
        const y = tf.depthwiseConv2d(x, w, stride, pad);
        const dy = tf.randomNormal(y.shape, 0, 1, 'float32', 5);
        const g = tf.grads((xx: tf.Tensor, ww: tf.Tensor) => tf.depthwiseConv2d(xx as tf.Tensor4D, ww as tf.Tensor4D, stride, pad));
        return g([x, w], dy);
      };
      const [dxCpu, dwCpu] = await gradsOn('cpu', run);
      const [dxWasm, dwWasm] = await gradsOn('wasm', run);
      assert.ok(relErr(dwWasm!, dwCpu!) <= 1e-4, `depthwise filter grad rel err ${relErr(dwWasm!, dwCpu!)}`);
      assert.ok(relErr(dxWasm!, dxCpu!) <= 1e-4, `depthwise input grad rel err ${relErr(dxWasm!, dxCpu!)}`);
    });
  }
}
