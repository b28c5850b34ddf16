/**
 * The part of a model's cost tables that does not depend on the GPU count or
 * device group: its edges, which layers have producers, and which layers are
 * identical. Separate from tableBuilder.ts because it is built and cached per
 * model and batch, once for all the tables the searches build from it.
 */
import type { AnalyzedLayer, AnalyzedModel } from '../../core/ir';
import type { PlanEdge } from './tables';

function w0(layer: AnalyzedLayer): number[] {
  const w = layer.workload;
  return [w.params, w.nonTrainable, w.frozenParams ?? 0, w.quantized?.bytes ?? 0, w.forwardFlops, w.backwardFlops, w.activationBytes, w.savedActivationBytes, w.weightGradBytes];
}

/** Layers without a computable shape still take part, at zero cost (a diagnostic says why elsewhere). */
export function safeBytes(x: number | undefined): number {
  return Number.isFinite(x) && (x as number) > 0 ? (x as number) : 0;
}

/**
 * What a model's tables share for every GPU count and device group: the
 * edges, which layers have producers, and a key per layer that is equal for
 * identical layers (repeated blocks). Built once per model and batch instead
 * of once per count: the JSON keys were a third of the table-building time.
 */
interface ModelStatic {
  edges: PlanEdge[];
  inEdges: number[][];
  outEdges: number[][];
  hasProducer: boolean[];
  /** Identical layers share a key id; -1 never happens (every layer gets one). */
  layerKey: Int32Array;
  /** The edges with their bytes rescaled to a precision's activation size, by scale. */
  scaledEdges: Map<number, PlanEdge[]>;
}

const staticCache = new WeakMap<AnalyzedModel, Map<number, ModelStatic>>();

export function modelStatic(model: AnalyzedModel, batch: number): ModelStatic {
  let byBatch = staticCache.get(model);
  if (!byBatch) staticCache.set(model, (byBatch = new Map()));
  const hit = byBatch.get(batch);
  if (hit) return hit;
  const layers = model.layers;
  const index = new Map(layers.map((l, i) => [l.id, i]));
  const edges: PlanEdge[] = [];
  const inEdges: number[][] = layers.map(() => []);
  const outEdges: number[][] = layers.map(() => []);
  const hasProducer = layers.map(() => false);
  layers.forEach((layer, to) => {
    for (const id of new Set(layer.inputs)) {
      const from = index.get(id);
      if (from === undefined || from >= to) continue;
      hasProducer[to] = true;
      const e = edges.length;
      edges.push({ from, to, bytes: safeBytes(layers[from].workload.activationBytes) * batch });
      inEdges[to].push(e);
      outEdges[from].push(e);
    }
  });
  const keyIds = new Map<string, number>();
  const layerKey = new Int32Array(layers.length);
  layers.forEach((layer, li) => {
    const key = `${layer.op}|${JSON.stringify(layer.attrs)}|${JSON.stringify(layer.inputShapes)}|${JSON.stringify(layer.outputShape)}|${JSON.stringify(w0(layer))}|${layer.workload.backward ?? ''}|${hasProducer[li]}`;
    let id = keyIds.get(key);
    if (id === undefined) keyIds.set(key, (id = keyIds.size));
    layerKey[li] = id;
  });
  const made = { edges, inEdges, outEdges, hasProducer, layerKey, scaledEdges: new Map<number, PlanEdge[]>() };
  byBatch.set(batch, made);
  return made;
}
