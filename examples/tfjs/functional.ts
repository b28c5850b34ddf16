/**
 * A small residual network with the TF.js functional API: tf.input, layer
 * .apply chains, a residual tf.layers.add and tf.model({inputs, outputs}).
 */
import * as tf from '@tensorflow/tfjs';

function residualBlock(x: tf.SymbolicTensor, filters: number): tf.SymbolicTensor {
  const shortcut = x;
  let y = tf.layers.conv2d({ filters, kernelSize: 3, padding: 'same', useBias: false }).apply(x) as tf.SymbolicTensor;
  y = tf.layers.batchNormalization().apply(y) as tf.SymbolicTensor;
  y = tf.layers.activation({ activation: 'relu' }).apply(y) as tf.SymbolicTensor;
  y = tf.layers.conv2d({ filters, kernelSize: 3, padding: 'same', useBias: false }).apply(y) as tf.SymbolicTensor;
  y = tf.layers.batchNormalization().apply(y) as tf.SymbolicTensor;
  const sum = tf.layers.add().apply([y, shortcut]) as tf.SymbolicTensor;
  return tf.layers.activation({ activation: 'relu' }).apply(sum) as tf.SymbolicTensor;
}

export function buildResNet(): tf.LayersModel {
  const input = tf.input({ shape: [32, 32, 3], name: 'image' });
  let x = tf.layers.conv2d({ filters: 32, kernelSize: 3, padding: 'same', activation: 'relu', name: 'stem' }).apply(input) as tf.SymbolicTensor;
  for (let i = 0; i < 2; i++) x = residualBlock(x, 32);
  x = tf.layers.globalAveragePooling2d({}).apply(x) as tf.SymbolicTensor;
  const output = tf.layers.dense({ units: 10, activation: 'softmax' }).apply(x) as tf.SymbolicTensor;
  return tf.model({ inputs: input, outputs: output });
}
