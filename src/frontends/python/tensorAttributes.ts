/**
 * Attributes of traced PyTorch tensors (`x.shape`, `x.dtype`, `x.view(…)`)
 * and the outputs of `x.split(…)` / `x.chunk(…)`. Separate from the module
 * runtime (torchRuntime.ts): these read tensor values, not modules.
 */
import { arrayMethod } from './arrayOps';
import { sizeValues } from './batchFolding';
import { dtypeAttr } from './casts';
import type { Interp } from './interpreter';
import { isArray } from './numericArrays';
import { rankValue } from './specialise';
import { recordOp, tensorMethod } from './tensorOps';
import { UNKNOWN, int, keyOf, native, type SplitV, type TensorV, type Value } from './values';

export function tensorAttr(interp: Interp, t: TensorV, name: string): Value {
  if (isArray(t)) {
    if (name === 'shape') return { k: 'tuple', items: t.shape.map(int) };
    if (name === 'ndim') return int(t.shape.length);
    // A method whose values are not modelled: Unknown, never the array unchanged.
    return native(name, (args, kwargs) => arrayMethod(t, name, args, kwargs) ?? { k: 'unknown', why: `Tensor.${name} on a constant array is not modelled` });
  }
  // A parameter's shape is its own (no batch): F.layer_norm(x, self.weight.shape, …) in nanoGPT.
  if (t.param && name === 'shape') return t.param.shape ? { k: 'tuple', items: t.param.shape.map((d) => (d === undefined ? UNKNOWN : int(d))) } : UNKNOWN;
  if (name === 'shape' && interp.graph?.concrete && t.id) {
    const sizes = sizeValues(t);
    return sizes ? { k: 'tuple', items: sizes } : UNKNOWN;
  }
  if (name === 'shape') return t.shape ? { k: 'tuple', items: t.shape.map((d) => (d === undefined ? UNKNOWN : int(d))) } : UNKNOWN;
  if (name === 'T' || name === 'mT') return t;
  if (name === 'dtype') return dtypeAttr(t);
  if (name === 'device') return UNKNOWN;
  if (name === 'ndim') return rankValue(interp.graph, t);
  return native(name, (args, kwargs, site) => tensorMethod(interp, t, name, args, kwargs, site));
}

/** One output of `x.split(…)` / `x.chunk(…)`: a split node per output. */
export function splitPart(interp: Interp, s: SplitV, index: number | undefined, count?: number): Value {
  if (index === undefined) return UNKNOWN;
  const chunks = s.chunks ?? count;
  const attrs: Record<string, number | number[]> = { axis: s.axis, index };
  if (s.sections) attrs.sizes = s.sections;
  else if (s.chunks !== undefined) attrs.chunks = s.chunks;
  else if (s.size !== undefined && chunks !== undefined) attrs.sizes = Array(chunks).fill(s.size);
  else if (chunks !== undefined) attrs.chunks = chunks;
  let shape = s.src.shape ? [...s.src.shape] : undefined;
  if (shape) {
    const ax = s.axis < 0 ? s.axis + shape.length : s.axis;
    const d = shape[ax];
    shape[ax] = s.sections?.[index] ?? s.size ?? (d !== undefined && chunks ? Math.ceil(d / chunks) : undefined);
  }
  const type = /^(torch|F)\./.test(s.site.calleeText) ? s.site.calleeText : `Tensor.${s.chunks !== undefined && !s.sections ? 'chunk' : 'split'}`;
  return recordOp(interp, { base: 'split', type, op: 'split', attrs, inputs: [s.src], site: s.site, shape, dedupeKey: keyOf(s) + ':' + index });
}
