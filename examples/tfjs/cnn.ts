/**
 * A small CIFAR-10 style CNN in TensorFlow.js (32×32×3 → 10 classes), the way
 * the TF.js tutorials build it: a tf.sequential stack grown with model.add.
 */
import * as tf from '@tensorflow/tfjs';

const IMAGE_SIZE = 32;
const CHANNELS = 3;
const NUM_CLASSES = 10;
const FILTERS = [32, 64, 128];

function convBlock(model: tf.Sequential, filters: number, first: boolean): void {
  model.add(
    tf.layers.conv2d({
      ...(first ? { inputShape: [IMAGE_SIZE, IMAGE_SIZE, CHANNELS] } : {}),
      filters,
      kernelSize: 3,
      padding: 'same',
      activation: 'relu',
      kernelInitializer: 'heNormal',
    }),
  );
  model.add(tf.layers.batchNormalization());
  model.add(tf.layers.conv2d({ filters, kernelSize: 3, padding: 'same', activation: 'relu' }));
  model.add(tf.layers.maxPooling2d({ poolSize: 2, strides: 2 }));
  model.add(tf.layers.dropout({ rate: 0.25 }));
}

export function createCifarCnn(): tf.Sequential {
  const model = tf.sequential();
  FILTERS.forEach((filters, i) => convBlock(model, filters, i === 0));
  model.add(tf.layers.flatten());
  model.add(tf.layers.dense({ units: 256, activation: 'relu' }));
  model.add(tf.layers.dropout({ rate: 0.5 }));
  model.add(tf.layers.dense({ units: NUM_CLASSES, activation: 'softmax', name: 'logits' }));
  return model;
}

export async function train(xs: tf.Tensor4D, ys: tf.Tensor2D): Promise<void> {
  const model = createCifarCnn();
  model.compile({ optimizer: tf.train.adam(1e-3), loss: 'categoricalCrossentropy', metrics: ['accuracy'] });
  await model.fit(xs, ys, { batchSize: 64, epochs: 10, validationSplit: 0.1 });
}
