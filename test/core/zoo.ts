/** Reference models built by hand the way the PyTorch/Keras frontends would emit them. */
import type { ModelSpec } from '../../src/core/ir';
import { SpecBuilder } from './specBuilder';

/** torchvision.models.alexnet() */
export function alexnet(inputShape?: number[], withBatchNorm = false): ModelSpec {
  const b = new SpecBuilder('AlexNet');
  const convs: Array<[number, number, number, number, number]> = [
    [3, 64, 11, 4, 2],
    [64, 192, 5, 1, 2],
    [192, 384, 3, 1, 1],
    [384, 256, 3, 1, 1],
    [256, 256, 3, 1, 1],
  ];
  let i = 0;
  convs.forEach(([cin, cout, k, s, p], c) => {
    b.conv(`features.${i++}`, cin, cout, k, { s, p });
    if (withBatchNorm) b.bn(`features.${i++}`, cout);
    b.act(`features.${i++}`);
    if (c === 0 || c === 1 || c === 4) b.maxpool(`features.${i++}`, 3, 2);
  });
  b.add('avgpool', 'pool', { rank: 2, mode: 'avg', outputSize: [6, 6] }, { type: 'AdaptiveAvgPool2d' });
  b.add('flatten', 'flatten', { startDim: 1, endDim: -1 }, { type: 'torch.flatten' });
  b.add('classifier.0', 'dropout', { rate: 0.5 });
  b.linear('classifier.1', 9216, 4096);
  b.act('classifier.2');
  b.add('classifier.3', 'dropout', { rate: 0.5 });
  b.linear('classifier.4', 4096, 4096);
  b.act('classifier.5');
  b.linear('classifier.6', 4096, 1000);
  return b.build(inputShape);
}

const VGG16_CFG: Array<number | 'M'> = [64, 64, 'M', 128, 128, 'M', 256, 256, 256, 'M', 512, 512, 512, 'M', 512, 512, 512, 'M'];

/** torchvision.models.vgg16() (cfg D). */
export function vgg16(inputShape: number[] = [3, 224, 224]): ModelSpec {
  const b = new SpecBuilder('VGG16');
  let cin = 3;
  let i = 0;
  for (const v of VGG16_CFG) {
    if (v === 'M') b.maxpool(`features.${i++}`, 2, 2);
    else {
      b.conv(`features.${i++}`, cin, v, 3, { p: 1 });
      b.act(`features.${i++}`);
      cin = v;
    }
  }
  b.add('avgpool', 'pool', { rank: 2, mode: 'avg', outputSize: [7, 7] });
  b.add('flatten', 'flatten', { startDim: 1, endDim: -1 });
  b.linear('classifier.0', 25088, 4096);
  b.act('classifier.1');
  b.add('classifier.2', 'dropout', { rate: 0.5 });
  b.linear('classifier.3', 4096, 4096);
  b.act('classifier.4');
  b.add('classifier.5', 'dropout', { rate: 0.5 });
  b.linear('classifier.6', 4096, 1000);
  return b.build(inputShape);
}

/** keras.applications.VGG16(include_top=True): channels_last, 'same' padding, Flatten + Dense. */
export function kerasVgg16(): ModelSpec {
  const b = new SpecBuilder('vgg16', 'keras', { inputIds: ['input_1'] });
  let block = 1;
  let conv = 1;
  for (const v of VGG16_CFG) {
    if (v === 'M') {
      b.add(`block${block}_pool`, 'pool', { rank: 2, mode: 'max', kernel: [2, 2], stride: [2, 2], padding: 'valid' }, { type: 'MaxPooling2D' });
      block++;
      conv = 1;
    } else {
      // Keras Conv2D states only the filters: inChannels comes from the input.
      b.conv(`block${block}_conv${conv++}`, undefined, v, 3, { p: 'same' });
      b.act(`block${block}_conv${conv - 1}_relu`);
    }
  }
  b.add('flatten', 'flatten', { startDim: 1, endDim: -1 }, { type: 'Flatten' });
  b.linear('fc1', undefined, 4096);
  b.act('fc1_relu');
  b.linear('fc2', undefined, 4096);
  b.act('fc2_relu');
  b.linear('predictions', undefined, 1000);
  b.act('predictions_softmax', 'softmax');
  return b.build([224, 224, 3]);
}

/** torchvision.models.resnet50(): Bottleneck blocks [3, 4, 6, 3], expansion 4, stride on the 3×3 conv. */
export function resnet50(): ModelSpec {
  const b = new SpecBuilder('ResNet50');
  b.conv('conv1', 3, 64, 7, { s: 2, p: 3, bias: false });
  b.bn('bn1', 64);
  b.act('relu');
  b.maxpool('maxpool', 3, 2, { p: 1 });
  let inplanes = 64;
  const stages: Array<[number, number, number]> = [
    [64, 3, 1],
    [128, 4, 2],
    [256, 6, 2],
    [512, 3, 2],
  ];
  stages.forEach(([planes, blocks, stride], s) => {
    for (let i = 0; i < blocks; i++) {
      const p = `layer${s + 1}.${i}`;
      const blockIn = b.last;
      const st = i === 0 ? stride : 1;
      b.conv(`${p}.conv1`, inplanes, planes, 1, { bias: false });
      b.bn(`${p}.bn1`, planes);
      b.act(`${p}.relu`);
      b.conv(`${p}.conv2`, planes, planes, 3, { s: st, p: 1, bias: false });
      b.bn(`${p}.bn2`, planes);
      b.act(`${p}.relu`, 'relu', { id: `${p}.relu#2` });
      b.conv(`${p}.conv3`, planes, planes * 4, 1, { bias: false });
      const main = b.bn(`${p}.bn3`, planes * 4);
      let shortcut = blockIn;
      if (i === 0) {
        b.conv(`${p}.downsample.0`, inplanes, planes * 4, 1, { s: st, bias: false, inputs: [blockIn] });
        shortcut = b.bn(`${p}.downsample.1`, planes * 4);
      }
      b.add(`${p}.add`, 'add', {}, { inputs: [main, shortcut], type: '+' });
      b.act(`${p}.relu`, 'relu', { id: `${p}.relu#3` });
      inplanes = planes * 4;
    }
  });
  b.add('avgpool', 'pool', { rank: 2, mode: 'avg', outputSize: [1, 1] }, { type: 'AdaptiveAvgPool2d' });
  b.add('flatten', 'flatten', { startDim: 1, endDim: -1 });
  b.linear('fc', 2048, 1000);
  return b.build([3, 224, 224]);
}
