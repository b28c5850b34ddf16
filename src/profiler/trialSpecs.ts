/** AnalyzedModel → the plain layer specs workers build, and the analytical fallback for failed trials. */
import { reduceAxesOf } from '../core/catalogue/reduce';
import { permutationOf } from '../core/catalogue/shaping';
import type { AnalyzedLayer, AnalyzedModel } from '../core/ir';
import type { ModelInputSpec, TrialSpec } from './worker/messages';

export function toTrialSpec(layer: AnalyzedLayer, model: AnalyzedModel): TrialSpec {
  const modelInputs = new Map(model.inputs.map((i) => [i.id, i]));
  return {
    id: layer.id,
    name: layer.name,
    op: layer.op,
    attrs: workerAttrs(layer),
    inputShapes: (layer.inputShapes ?? []).map((s) => [...s]),
    outputShape: layer.outputShape ? [...layer.outputShape] : undefined,
    inputs: [...layer.inputs],
    layout: model.layout,
    inputDtypes: layer.inputs.map((id) => (modelInputs.get(id)?.dtype === 'int' ? 'int' : 'float')),
    needsInputGrad: layer.op !== 'input' && layer.inputs.some((id) => !modelInputs.has(id)),
  };
}

/**
 * Attrs the frontend wrote before it knew a rank, resolved by the core's own rules against the inferred input, so
 * the workers build explicit dims and axes only: a transpose's `swap` pair as its permutation, a reduce over the
 * whole sample (`allAxes`) as its axes.
 */
function workerAttrs(layer: AnalyzedLayer): AnalyzedLayer['attrs'] {
  const input = layer.inputShapes?.[0];
  if (layer.op === 'reduce' && layer.attrs.allAxes === true && input) {
    const { allAxes: _all, ...rest } = layer.attrs as Record<string, unknown>;
    return { ...rest, axes: reduceAxesOf(layer.attrs, input.length) } as AnalyzedLayer['attrs'];
  }
  if (layer.op !== 'permute' || layer.attrs.swap === undefined || !input) return layer.attrs;
  const { swap: _swap, ...rest } = layer.attrs as Record<string, unknown>;
  try {
    return { ...rest, dims: permutationOf(layer.attrs, input.length + 1) } as AnalyzedLayer['attrs'];
  } catch {
    // Shape inference refused the same pair: the layer has no output shape and is never trialled.
    return layer.attrs;
  }
}

export function modelInputSpecs(model: AnalyzedModel): ModelInputSpec[] {
  return model.inputs.map((i) => ({ id: i.id, shape: [...i.shape], dtype: i.dtype === 'int' ? 'int' : 'float' }));
}

/** Why a layer cannot be trialled at all, before any worker is asked. */
export function untrialable(layer: AnalyzedLayer): string | undefined {
  if (!layer.outputShape) return 'shape inference failed for this layer';
  if (layer.inputShapes?.some((s) => s.some((d) => !Number.isFinite(d) || d <= 0))) return 'input shape is not fully known';
  return undefined;
}

/**
 * Analytical estimate for a layer whose trial failed: its FLOPs at the rate the
 * measured layers of this run achieved (ms per FLOP), else at a nominal rate.
 */
export function analyticalEstimate(
  layer: AnalyzedLayer,
  batch: number,
  msPerFlop: number | undefined,
): { forwardMs: number; backwardMs: number } {
  const rate = msPerFlop ?? 1 / 20e6; // 20 GFLOP/s, a modest CPU
  return { forwardMs: layer.workload.forwardFlops * batch * rate, backwardMs: layer.workload.backwardFlops * batch * rate };
}
