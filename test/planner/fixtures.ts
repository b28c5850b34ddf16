/**
 * Hand-built AnalyzedModel fixtures with realistic per-layer workloads
 * (FLOPs count a multiply-add as 2, fp32), used until the frontends land
 * and for shapes no example file covers (ResNet-50, transformer, huge MLP).
 */
import type { AnalyzedLayer, AnalyzedModel, LayerWorkload, OpKind, Shape } from '../../src/core/ir';
import { emptyWorkload, product, rangeAt } from '../../src/core/ir';
import { parseClusterSpec } from '../../src/planner/index';

const F = 4;

export class ModelBuilder {
  readonly layers: AnalyzedLayer[] = [];
  private line = 1;
  constructor(readonly name: string, readonly input: Shape) {}

  add(name: string, op: OpKind, inputs: string[], inputShapes: Shape[], outputShape: Shape, w: Partial<LayerWorkload>, attrs: Record<string, unknown> = {}): string {
    const workload = { ...emptyWorkload(), activationBytes: product(outputShape) * F, ...w };
    this.layers.push({ id: name, name, type: op, op, attrs: attrs as AnalyzedLayer['attrs'], inputs, range: rangeAt(this.line++, 1), inputShapes, outputShape, workload });
    return name;
  }

  shapeOf(id: string): Shape {
    return this.layers.find((l) => l.id === id)?.outputShape ?? this.input;
  }

  conv(name: string, from: string, out: number, k: number, stride = 1, pad = 0): string {
    const [c, h, w] = this.shapeOf(from);
    const ho = Math.floor((h + 2 * pad - k) / stride) + 1;
    const wo = Math.floor((w + 2 * pad - k) / stride) + 1;
    const weights = out * c * k * k;
    const flops = 2 * weights * ho * wo;
    return this.add(name, 'conv', [from], [[c, h, w]], [out, ho, wo], { params: weights + out, forwardFlops: flops, backwardFlops: 2 * flops, savedActivationBytes: c * h * w * F, weightGradBytes: (weights + out) * F }, { rank: 2, inChannels: c, outChannels: out, kernel: [k, k], stride: [stride, stride], groups: 1, bias: true });
  }

  linear(name: string, from: string, out: number): string {
    const s = this.shapeOf(from);
    const inF = s[s.length - 1];
    const rows = product(s) / inF;
    const params = inF * out + out;
    return this.add(name, 'linear', [from], [s], [...s.slice(0, -1), out], { params, forwardFlops: 2 * inF * out * rows, backwardFlops: 4 * inF * out * rows, savedActivationBytes: product(s) * F, weightGradBytes: params * F }, { inFeatures: inF, outFeatures: out, bias: true });
  }

  act(name: string, from: string, fn = 'relu'): string {
    const s = this.shapeOf(from);
    return this.add(name, 'activation', [from], [s], s, { forwardFlops: product(s), backwardFlops: product(s), savedActivationBytes: product(s) * F }, { fn });
  }

  pool(name: string, from: string, k: number, stride: number): string {
    const [c, h, w] = this.shapeOf(from);
    const ho = Math.floor((h - k) / stride) + 1;
    const wo = Math.floor((w - k) / stride) + 1;
    return this.add(name, 'pool', [from], [[c, h, w]], [c, ho, wo], { forwardFlops: c * ho * wo * k * k, backwardFlops: c * ho * wo * k * k, savedActivationBytes: c * h * w * F }, { rank: 2, mode: 'max', kernel: [k, k], stride: [stride, stride] });
  }

  bn(name: string, from: string): string {
    const s = this.shapeOf(from);
    return this.add(name, 'batchnorm', [from], [s], s, { params: 2 * s[0], nonTrainable: 2 * s[0], forwardFlops: 4 * product(s), backwardFlops: 6 * product(s), savedActivationBytes: product(s) * F, weightGradBytes: 2 * s[0] * F }, { numFeatures: s[0] });
  }

  ln(name: string, from: string): string {
    const s = this.shapeOf(from);
    const d = s[s.length - 1];
    return this.add(name, 'layernorm', [from], [s], s, { params: 2 * d, forwardFlops: 5 * product(s), backwardFlops: 8 * product(s), savedActivationBytes: product(s) * F, weightGradBytes: 2 * d * F }, {});
  }

  addOp(name: string, a: string, b: string): string {
    const s = this.shapeOf(a);
    return this.add(name, 'add', [a, b], [s, s], s, { forwardFlops: product(s), backwardFlops: product(s) });
  }

  flatten(name: string, from: string): string {
    const s = this.shapeOf(from);
    return this.add(name, 'flatten', [from], [s], [product(s)], {}, { startDim: 1, endDim: -1 });
  }

  dropout(name: string, from: string): string {
    const s = this.shapeOf(from);
    return this.add(name, 'dropout', [from], [s], s, { forwardFlops: product(s), backwardFlops: product(s), savedActivationBytes: product(s) }, { rate: 0.5 });
  }

  /** Called with need_weights=False, as nn.TransformerEncoderLayer and torchvision's ViT call it: scaled_dot_product_attention. */
  mha(name: string, from: string, heads: number): string {
    const s = this.shapeOf(from);
    const [t, d] = s;
    const params = 4 * d * d + 4 * d;
    const flops = 2 * 4 * d * d * t + 2 * 2 * t * t * d;
    return this.add(name, 'mha', [from], [s], s, { params, forwardFlops: flops, backwardFlops: 2 * flops, savedActivationBytes: (4 * t * d + heads * t * t) * F, weightGradBytes: params * F }, { embedDim: d, numHeads: heads, bias: true, needWeights: false });
  }

  build(): AnalyzedModel {
    const totals = { params: 0, nonTrainable: 0, forwardFlops: 0, backwardFlops: 0, activationBytes: 0 };
    for (const l of this.layers) {
      totals.params += l.workload.params;
      totals.nonTrainable += l.workload.nonTrainable;
      totals.forwardFlops += l.workload.forwardFlops;
      totals.backwardFlops += l.workload.backwardFlops;
      totals.activationBytes += l.workload.activationBytes;
    }
    return {
      name: this.name,
      framework: 'pytorch',
      range: rangeAt(1, 1),
      layout: 'channels_first',
      input: this.input,
      inputs: [{ id: 'x', shape: this.input }],
      inputAssumed: false,
      layers: this.layers,
      outputs: [this.layers[this.layers.length - 1].id],
      totals,
      dtypeBytes: F,
      diagnostics: [],
    };
  }
}

export function alexnet(): AnalyzedModel {
  const b = new ModelBuilder('alexnet', [3, 224, 224]);
  let x = b.conv('features.0', 'x', 64, 11, 4, 2);
  x = b.act('features.1', x);
  x = b.pool('features.2', x, 3, 2);
  x = b.conv('features.3', x, 192, 5, 1, 2);
  x = b.act('features.4', x);
  x = b.pool('features.5', x, 3, 2);
  x = b.conv('features.6', x, 384, 3, 1, 1);
  x = b.act('features.7', x);
  x = b.conv('features.8', x, 256, 3, 1, 1);
  x = b.act('features.9', x);
  x = b.conv('features.10', x, 256, 3, 1, 1);
  x = b.act('features.11', x);
  x = b.pool('features.12', x, 3, 2);
  x = b.flatten('flatten', x);
  x = b.dropout('classifier.0', x);
  x = b.linear('classifier.1', x, 4096);
  x = b.act('classifier.2', x);
  x = b.dropout('classifier.3', x);
  x = b.linear('classifier.4', x, 4096);
  x = b.act('classifier.5', x);
  b.linear('classifier.6', x, 1000);
  return b.build();
}

export function vgg16(): AnalyzedModel {
  const b = new ModelBuilder('vgg16', [3, 224, 224]);
  let x = 'x';
  let i = 0;
  for (const v of [64, 64, 'M', 128, 128, 'M', 256, 256, 256, 'M', 512, 512, 512, 'M', 512, 512, 512, 'M'] as const) {
    if (v === 'M') x = b.pool(`features.${i++}`, x, 2, 2);
    else {
      x = b.conv(`features.${i++}`, x, v, 3, 1, 1);
      x = b.act(`features.${i++}`, x);
    }
  }
  x = b.flatten('flatten', x);
  x = b.linear('classifier.0', x, 4096);
  x = b.act('classifier.1', x);
  x = b.dropout('classifier.2', x);
  x = b.linear('classifier.3', x, 4096);
  x = b.act('classifier.4', x);
  x = b.dropout('classifier.5', x);
  b.linear('classifier.6', x, 1000);
  return b.build();
}

/** ResNet-50: bottleneck blocks [3, 4, 6, 3] with residual adds (a series-parallel DAG). */
export function resnet50(blocks = [3, 4, 6, 3]): AnalyzedModel {
  const b = new ModelBuilder('resnet50', [3, 224, 224]);
  let x = b.act('relu', b.bn('bn1', b.conv('conv1', 'x', 64, 7, 2, 3)));
  x = b.pool('maxpool', x, 3, 2);
  let inC = 64;
  blocks.forEach((count, stage) => {
    const width = 64 * 2 ** stage;
    for (let j = 0; j < count; j++) {
      const p = `layer${stage + 1}.${j}`;
      const stride = j === 0 && stage > 0 ? 2 : 1;
      let y = b.act(`${p}.relu1`, b.bn(`${p}.bn1`, b.conv(`${p}.conv1`, x, width, 1)));
      y = b.act(`${p}.relu2`, b.bn(`${p}.bn2`, b.conv(`${p}.conv2`, y, width, 3, stride, 1)));
      y = b.bn(`${p}.bn3`, b.conv(`${p}.conv3`, y, width * 4, 1));
      const skip = j === 0 ? b.bn(`${p}.downsample.1`, b.conv(`${p}.downsample.0`, x, width * 4, 1, stride)) : x;
      x = b.act(`${p}.relu3`, b.addOp(`${p}.add`, y, skip));
      inC = width * 4;
    }
  });
  void inC;
  const [c, h] = b.shapeOf(x);
  x = b.add('avgpool', 'pool', [x], [b.shapeOf(x)], [c], { forwardFlops: c * h * h, backwardFlops: c * h * h }, { rank: 2, mode: 'avg', global: true });
  b.linear('fc', x, 1000);
  return b.build();
}

/** A GPT-like stack: pre-LN blocks of attention and a 4× MLP with residual adds, on [T, D] tokens. */
export function transformer(blocks = 4, t = 512, d = 1024, heads = 16): AnalyzedModel {
  const b = new ModelBuilder('transformer', [t, d]);
  let x = 'x';
  for (let i = 0; i < blocks; i++) {
    const p = `h.${i}`;
    const a = b.mha(`${p}.attn`, b.ln(`${p}.ln_1`, x), heads);
    x = b.addOp(`${p}.add_1`, x === 'x' ? a : x, a);
    const m = b.linear(`${p}.mlp.c_proj`, b.act(`${p}.mlp.act`, b.linear(`${p}.mlp.c_fc`, b.ln(`${p}.ln_2`, x), 4 * d), 'gelu'), d);
    x = b.addOp(`${p}.add_2`, x, m);
  }
  b.linear('lm_head', b.ln('ln_f', x), 8192);
  return b.build();
}

/** fc1 (1024 → 4096), ReLU, fc2 (4096 → 1024): the cost tables' hand-checked layers. */
export function twoLayerMlp(): AnalyzedModel {
  const m = new ModelBuilder('mlp', [1024]);
  const a = m.linear('fc1', 'input', 4096);
  const r = m.act('relu', a);
  m.linear('fc2', r, 1024);
  return m.build();
}

/** An MLP too large for one 12 GB GPU with Adam (≈ 4.3 GB per layer of weights, grads and moments). */
export function hugeMlp(layers = 6, width = 16384): AnalyzedModel {
  const b = new ModelBuilder('huge-mlp', [width]);
  let x = 'x';
  for (let i = 0; i < layers; i++) x = b.act(`act${i}`, b.linear(`fc${i}`, x, width));
  return b.build();
}

/** A synthetic chain of `n` linear+activation pairs for the search benchmark. */
export function syntheticChain(n: number, width = 1024): AnalyzedModel {
  const b = new ModelBuilder(`chain-${n}`, [width]);
  let x = 'x';
  for (let i = 0; i < n; i++) x = i % 2 === 0 ? b.linear(`l${i}`, x, width) : b.act(`a${i}`, x);
  return b.build();
}

/** Two DGX H100 nodes joined by 100 Gb/s Ethernet (12.5 GB/s per GPU): inter-node bandwidth is scarce. */
export const twoNodesEthernet = parseClusterSpec(
  {
    name: '2x8 H100 over 100GbE',
    nodes: 2,
    gpusPerNode: 8,
    gpu: { name: 'H100-SXM5-80GB', tflops: 67, memoryGB: 80, memoryBandwidthGBs: 3350, powerW: 700, idlePowerW: 70 },
    intraNode: { bandwidthGBs: 450, latencyUs: 3, name: 'nvlink' },
    interNode: { bandwidthGBs: 12.5, latencyUs: 10, name: 'eth' },
  },
  'test',
);
