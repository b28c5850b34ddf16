/**
 * Builds one IR layer as a tfjs function with freshly initialised parameters:
 * picks the builder for the layer's op and fuses a recorded activation after it.
 * The builders themselves live beside this file (imageLayers, denseLayers,
 * pointwise), the layout rules in layerLayout, and the shared contract in builtLayer.
 * A layer we cannot build throws `Unsupported` with the reason.
 */
import type * as tfc from '@tensorflow/tfjs-core';
import type { Tensor } from '@tensorflow/tfjs-core';
import type { TrialSpec } from './messages';
// The namespace the worker loaded (bundled core, or the native package's own): see tfRuntime.
import { tf } from './tfRuntime';
import { ACTIVATIONS, REDUCERS, elementwise, num, withConstant } from './pointwise';
import { Unsupported, axisOf, nextSeed, nums, param, type BuiltLayer } from './builtLayer';
import { nativeInputShapes } from './layerLayout';
import { conv, pool, separable } from './imageLayers';
import { attention, batchnorm, groupnorm, linear, normalize, sdpaCore } from './denseLayers';

/** Keras/TF.js layers record their own `activation: 'relu'` in attrs: it runs fused after the op. */
export function buildLayer(spec: TrialSpec, batch: number): BuiltLayer {
  const layer = buildBare(spec, batch);
  const act = (spec.attrs as Record<string, unknown>).activation;
  if (spec.op === 'activation' || typeof act !== 'string' || act === 'linear') return layer;
  const fn = ACTIVATIONS[act];
  if (!fn) throw new Unsupported(`fused activation '${act}' is not built by the tfjs worker`);
  return { params: layer.params, apply: (xs) => { const y = layer.apply(xs); return fn(y, y.rank - 1); } };
}

function buildBare(spec: TrialSpec, batch: number): BuiltLayer {
  const shapes = nativeInputShapes(spec);
  const s0 = shapes[0] ?? [];
  const a = spec.attrs as Record<string, unknown>;
  const rank = s0.length + 1;
  switch (spec.op) {
    case 'input':
    case 'identity':
      return { params: [], apply: ([x]) => tf.clone(x!) };
    case 'conv':
      return conv(spec, s0);
    case 'separable_conv':
      return separable(spec, s0);
    case 'linear':
      return linear(spec, s0);
    case 'embedding': {
      const table = param([num(a.numEmbeddings, 1), num(a.embeddingDim, 1)]);
      return { params: [table], apply: ([ids]) => tf.gather(table, ids!) };
    }
    case 'batchnorm':
      return batchnorm(spec, s0);
    case 'layernorm': {
      const trailing = Array.isArray(a.normalizedShape) ? a.normalizedShape.length : 1;
      const axes = Array.from({ length: trailing }, (_, i) => rank - trailing + i);
      return normalize(axes, s0.slice(s0.length - trailing), a.scale !== false || a.center !== false);
    }
    case 'groupnorm':
      return groupnorm(spec, s0);
    case 'pool':
      return pool(spec, s0);
    case 'flatten':
    case 'reshape': {
      const out = spec.outputShape ?? [s0.reduce((p, d) => p * d, 1)];
      return { params: [], apply: ([x]) => tf.reshape(x!, [batch, ...out]) };
    }
    case 'permute': {
      const dims = (a.dims as number[]).map((d) => axisOf(d, rank));
      return { params: [], apply: ([x]) => tf.transpose(x!, dims) };
    }
    case 'zeropad': {
      const p = a.padding as Array<[number, number]>;
      return { params: [], apply: ([x]) => tf.pad(x!, [[0, 0], ...p, ...Array.from({ length: rank - 1 - p.length }, () => [0, 0] as [number, number])]) };
    }
    case 'upsample': {
      if (s0.length !== 3) throw new Unsupported('only 2-D upsampling is built by the tfjs worker');
      const scale = nums(a.scale, 2, 2);
      const size = (Array.isArray(a.size) ? a.size : [s0[0]! * scale[0]!, s0[1]! * scale[1]!]) as [number, number];
      const bilinear = typeof a.mode === 'string' && a.mode.includes('linear');
      return { params: [], apply: ([x]) => (bilinear ? tf.image.resizeBilinear(x as tfc.Tensor4D, size) : tf.image.resizeNearestNeighbor(x as tfc.Tensor4D, size)) };
    }
    case 'dropout': {
      const rate = num(a.rate, 0.5);
      return { params: [], apply: ([x]) => (rate > 0 && rate < 1 ? tf.dropout(x!, rate) : tf.clone(x!)) };
    }
    case 'activation': {
      // tfjs holds one float type: a conversion between two has nothing to run here, and is priced from its bytes.
      if (a.fn === 'cast') throw new Unsupported('a dtype cast is not built by the tfjs worker (tfjs has one float type); it is priced from the bytes it converts');
      const math = elementwise(String(a.fn), a);
      if (math) return { params: [], apply: ([x]) => math(x!) };
      const fn = ACTIVATIONS[String(a.fn)];
      if (!fn) throw new Unsupported(`activation '${String(a.fn)}' is not built by the tfjs worker`);
      const axis = axisOf(num(a.axis, -1), rank);
      return { params: [], apply: ([x]) => fn(x!, axis) };
    }
    case 'add':
    case 'mul':
      if (shapes.length === 1) return withConstant(a);
      if (spec.op === 'mul') return { params: [], apply: (xs) => xs.reduce((p, x) => tf.mul(p, x)) };
      return { params: [], apply: (xs) => xs.reduce((p, x) => tf.add(p, x)) };
    case 'concat':
      return { params: [], apply: (xs) => tf.concat(xs, axisOf(num(a.axis, -1), rank)) };
    case 'split': {
      const axis = axisOf(num(a.axis, -1), rank);
      const sizes = Array.isArray(a.sizes) ? (a.sizes as number[]) : num(a.chunks, 1);
      const index = num(a.index, 0);
      return { params: [], apply: ([x]) => tf.split(x!, sizes, axis)[index]! };
    }
    case 'matmul':
      return { params: [], apply: ([x, y]) => tf.matMul(x!, y!, false, !!a.transposeB) };
    case 'reduce': {
      if (a.fn === 'topk') {
        // tf.topk selects along the last axis only.
        if (axisOf(Array.isArray(a.axes) ? (a.axes as number[])[0]! : -1, rank) !== rank - 1) throw new Unsupported('topk along an axis other than the last is not built by the tfjs worker');
        return { params: [], apply: ([x]) => tf.topk(x!, num(a.k, 1)).values };
      }
      const reducer = REDUCERS[String(a.fn)];
      if (!reducer) throw new Unsupported(`reduction '${String(a.fn)}' is not built by the tfjs worker`);
      const axes = (Array.isArray(a.axes) ? (a.axes as number[]) : []).map((ax) => axisOf(ax, rank));
      return { params: [], apply: ([x]) => reducer(x!, axes, !!a.keepDims) };
    }
    case 'mha':
      return attention(spec, s0);
    case 'sdpa':
      return { params: [], apply: ([q, k, v]) => sdpaCore(q!, k ?? q!, v ?? k ?? q!, !!a.causal) };
    case 'rnn':
      throw new Unsupported('recurrent layers are not built by the tfjs worker yet');
    case 'opaque':
      throw new Unsupported(`opaque layer${typeof a.reason === 'string' ? `: ${a.reason}` : ''}`);
    default:
      throw new Unsupported(`op '${String(spec.op)}' is not built by the tfjs worker`);
  }
}

/** Random (not zero) inputs with batch prepended; token ids for int inputs. */
export function randomInputs(spec: TrialSpec, batch: number, vocab?: number): Tensor[] {
  return nativeInputShapes(spec).map((s, i) =>
    spec.inputDtypes?.[i] === 'int' || spec.op === 'embedding'
      ? tf.randomUniform([batch, ...s], 0, vocab ?? num((spec.attrs as Record<string, unknown>).numEmbeddings, 2), 'int32', nextSeed())
      : tf.randomNormal([batch, ...s], 0, 1, 'float32', nextSeed()),
  );
}
