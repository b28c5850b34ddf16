/**
 * A layer's workload identity: op + attrs + input shapes + batch + dtype. Two
 * layers with equal signatures run the same kernels, so the profiler caches
 * measurements under it and the planner looks them up by it. Names, ids and
 * source ranges are deliberately left out.
 */
import type { AnalyzedLayer, AttrValue } from './ir';

/** JSON with object keys sorted at every depth, so attrs written in any order give one string. */
export function stableStringify(value: AttrValue | undefined): string {
  if (value === undefined) return 'null';
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map((v) => stableStringify(v)).join(',')}]`;
  const obj = value as { readonly [key: string]: AttrValue };
  const keys = Object.keys(obj)
    .filter((k) => obj[k] !== undefined)
    .sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${stableStringify(obj[k])}`).join(',')}}`;
}

export function layerSignature(layer: AnalyzedLayer, batch: number, dtypeBytes = 4): string {
  const shapes = (layer.inputShapes ?? []).map((s) => s.join('x')).join(',');
  // A layer a cast pinned runs at its own dtype, not the one the profile was asked for.
  const pinned = layer.activationDtype ? `|pin=${layer.activationDtype}` : '';
  return `${layer.op}|${stableStringify(layer.attrs ?? {})}|in=${shapes}|b=${batch}|dt=${dtypeBytes}${pinned}`;
}
