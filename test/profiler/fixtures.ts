/**
 * Hand-written ModelSpecs for the profiler's tests and bench, analysed by the
 * core (shape inference + workload). They mirror examples/tfjs/cnn.ts and
 * VGG-16, so the profiler can be exercised without depending on a frontend.
 */
import { analyzeModel } from '../../src/core/analyze';
import type { AnalyzedLayer, AnalyzedModel, Attrs, Layout, ModelSpec, OpKind } from '../../src/core/ir';
import { rangeAt } from '../../src/core/ir';
import { toTrialSpec } from '../../src/profiler/trialSpecs';

type L = [name: string, op: OpKind, attrs: Attrs, type?: string];

export function chainModel(name: string, layout: Layout, input: number[], layers: L[], framework: ModelSpec['framework'] = 'tfjs'): AnalyzedModel {
  let prev = 'input';
  const spec: ModelSpec = {
    name,
    framework,
    range: rangeAt(1, 1),
    layout,
    inputs: [{ id: 'input', shape: input }],
    layers: layers.map(([n, op, attrs, type], i) => {
      const l = { id: n, name: n, type: type ?? op, op, attrs, inputs: [prev], range: rangeAt(i + 2, 1) };
      prev = n;
      return l;
    }),
    outputs: [prev],
    diagnostics: [],
  };
  return analyzeModel(spec, {});
}

const conv = (out: number, k = 3, stride = 1, padding: Attrs['padding'] = 'same'): Attrs => ({
  rank: 2, outChannels: out, kernel: [k, k], stride: [stride, stride], padding, dilation: [1, 1], groups: 1, bias: true,
});
const relu: Attrs = { fn: 'relu' };
const maxPool: Attrs = { rank: 2, mode: 'max', kernel: [2, 2], stride: [2, 2], padding: 'valid' };
const bn: Attrs = { scale: true, center: true, trackRunningStats: true };

/** examples/tfjs/cnn.ts (createCifarCnn), channels_last, at `hw`×`hw`×3. */
export function cifarCnn(hw = 32): AnalyzedModel {
  const layers: L[] = [];
  [32, 64, 128].forEach((f, b) => {
    layers.push([`conv${b}a`, 'conv', conv(f)], [`relu${b}a`, 'activation', relu], [`bn${b}`, 'batchnorm', bn]);
    layers.push([`conv${b}b`, 'conv', conv(f)], [`relu${b}b`, 'activation', relu], [`pool${b}`, 'pool', maxPool], [`drop${b}`, 'dropout', { rate: 0.25 }]);
  });
  layers.push(['flatten', 'flatten', { startDim: 1, endDim: -1 }], ['dense', 'linear', { outFeatures: 256, bias: true }], ['relu_d', 'activation', relu]);
  layers.push(['drop_d', 'dropout', { rate: 0.5 }], ['logits', 'linear', { outFeatures: 10, bias: true }], ['softmax', 'activation', { fn: 'softmax', axis: -1 }]);
  return chainModel('cifarCnn', 'channels_last', [hw, hw, 3], layers);
}

/** torchvision-style VGG-16 (channels_first), at `hw`×`hw` input with a 512·(hw/32)² classifier input. */
export function vgg16(hw = 32, classes = 10): AnalyzedModel {
  const cfg = [64, 64, 'M', 128, 128, 'M', 256, 256, 256, 'M', 512, 512, 512, 'M', 512, 512, 512, 'M'] as const;
  const layers: L[] = [];
  let i = 0;
  for (const c of cfg) {
    if (c === 'M') layers.push([`features.${i++}`, 'pool', maxPool, 'MaxPool2d']);
    else layers.push([`features.${i++}`, 'conv', conv(c, 3, 1, [[1, 1], [1, 1]]), 'Conv2d'], [`features.${i++}`, 'activation', relu, 'ReLU']);
  }
  layers.push(['flatten', 'flatten', { startDim: 1, endDim: -1 }]);
  layers.push(['classifier.0', 'linear', { outFeatures: 512, bias: true }], ['classifier.1', 'activation', relu], ['classifier.2', 'linear', { outFeatures: classes, bias: true }]);
  return chainModel('VGG16', 'channels_first', [3, hw, hw], layers, 'pytorch');
}

/** A tiny model for fast process-level tests. */
export function tinyCnn(): AnalyzedModel {
  return chainModel('tiny', 'channels_last', [8, 8, 3], [
    ['conv1', 'conv', conv(4)],
    ['relu1', 'activation', relu],
    ['pool1', 'pool', maxPool],
    ['flatten', 'flatten', { startDim: 1, endDim: -1 }],
    ['fc', 'linear', { outFeatures: 5, bias: true }],
  ]);
}

/**
 * The worker attrs of `k.transpose(-2, -1)` read before its rank was known (attrs `swap`), on a [2, 3] input:
 * what toTrialSpec sends the workers for it.
 */
export function transposeSwapAttrs(): Record<string, unknown> {
  const layer = { id: 't', name: 't', type: 'Tensor.transpose', op: 'permute', attrs: { swap: [-2, -1] }, inputs: ['x'], inputShapes: [[2, 3]], outputShape: [3, 2] } as unknown as AnalyzedLayer;
  const model = { inputs: [{ id: 'x', shape: [2, 3], dtype: 'float' }], layout: 'channels_first' } as unknown as AnalyzedModel;
  return toTrialSpec(layer, model).attrs as Record<string, unknown>;
}
