/**
 * What every tfjs layer builder returns and shares: the `BuiltLayer` contract,
 * the `Unsupported` error, attr readers and seeded random weights. It sits apart
 * from the dispatcher (layerBuilder) so the files of builders can import it
 * without importing the dispatcher back, which would be an import cycle.
 */
import type * as tfc from '@tensorflow/tfjs-core';
import type { Tensor } from '@tensorflow/tfjs-core';
// The namespace the worker loaded (bundled core, or the native package's own): see tfRuntime.
import { tf } from './tfRuntime';
import { num } from './pointwise';

export class Unsupported extends Error {
  override name = 'Unsupported';
}

export interface BuiltLayer {
  params: tfc.Variable[];
  /** Inputs already in the builder's layout (see layerLayout's `nativeInputShapes`). */
  apply(xs: Tensor[]): Tensor;
}

export const nums = (v: unknown, rank: number, d: number): number[] =>
  Array.isArray(v) ? v.map((x) => num(x, d)) : Array.from({ length: rank }, () => num(v, d));
export const axisOf = (axis: number, rank: number): number => (axis < 0 ? axis + rank : axis);

// Weights (`param`) and trial inputs (layerBuilder's randomInputs) draw from this one
// counter, so every random tensor the worker makes has a seed of its own.
let seed = 1;
export const nextSeed = (): number => seed++;
export const param = (shape: number[], scale = 0.05): tfc.Variable => tf.variable(tf.randomNormal(shape, 0, scale, 'float32', nextSeed()));
