/**
 * Basic indexing of numeric arrays (numericArrays.ts): integers, slices, None
 * and `...`, read (`rel[:, :, 0]`) and written in place (`rel[:, :, 0] += w - 1`,
 * Swin's relative position index). Anything else is undefined: the caller then
 * drops the array's values rather than keep stale ones.
 */
import { sliceIndices } from './access';
import { arrayBinary, broadcastShapes, isArray, makeArray, stridesOf, type ArrayV } from './numericArrays';
import { toNumber, type Value } from './values';

const isSlice = (v: Value): boolean => v.k === 'tuple' && v.items.length === 4 && v.items[0].k === 'str' && v.items[0].v === '__slice__';
const isEllipsis = (v: Value): boolean => v.k === 'lib' && v.path === 'Ellipsis';

/**
 * Basic indexing: per axis the source positions an index picks, and the result
 * shape (integers drop their axis, None adds one); undefined when not basic.
 */
function resolveIndex(shape: readonly number[], key: Value): { picks: number[][]; outShape: number[] } | undefined {
  const keys: Value[] = key.k === 'tuple' && !isSlice(key) ? key.items : [key];
  const consuming = keys.filter((k) => k.k !== 'none' && !isEllipsis(k)).length;
  if (consuming > shape.length) return undefined;
  const full: Value[] = [];
  for (const k of keys) {
    if (isEllipsis(k)) for (let i = 0; i < shape.length - consuming; i++) full.push({ k: 'tuple', items: [{ k: 'str', v: '__slice__' }, { k: 'none' }, { k: 'none' }, { k: 'none' }] });
    else full.push(k);
  }
  const picks: number[][] = [];
  const outShape: number[] = [];
  let axis = 0;
  for (const k of full) {
    if (k.k === 'none') {
      outShape.push(1);
      continue;
    }
    const n = shape[axis++];
    if (k.k === 'tuple' && isSlice(k)) {
      const idx = sliceIndices(k, n);
      picks.push(idx);
      outShape.push(idx.length);
    } else {
      const i = toNumber(k);
      if (i === undefined || k.k === 'bool') return undefined;
      const at = i < 0 ? i + n : i;
      if (at < 0 || at >= n) return undefined;
      picks.push([at]);
    }
  }
  for (; axis < shape.length; axis++) {
    picks.push(Array.from({ length: shape[axis] }, (_, i) => i));
    outShape.push(shape[axis]);
  }
  return { picks, outShape };
}

function flatPositions(shape: readonly number[], picks: number[][]): number[] {
  const st = stridesOf(shape);
  let out = [0];
  picks.forEach((p, d) => {
    const next: number[] = [];
    for (const base of out) for (const i of p) next.push(base + i * st[d]);
    out = next;
  });
  return out;
}

export function arrayGetItem(a: ArrayV, key: Value): Value | undefined {
  const r = resolveIndex(a.shape, key);
  if (!r) return undefined;
  const data = flatPositions(a.shape, r.picks).map((i) => a.values.data[i]);
  return makeArray(r.outShape, data, a.values.dtype, a.values.lib);
}

/** `a[key] = value` (and `a[key] += value` after its read): writes in place; false when not basic. */
export function arraySetItem(a: ArrayV, key: Value, value: Value): boolean {
  const r = resolveIndex(a.shape, key);
  const v = isArray(value) ? value : value.k === 'num' || value.k === 'bool' ? makeArray([], [toNumber(value)!], value.k === 'num' && value.float ? 'f64' : 'int', a.values.lib) : undefined;
  if (!r || !v) return false;
  const target = r.outShape;
  const shape = broadcastShapes(v.shape, target);
  if (!shape || shape.join() !== target.join()) return false;
  const positions = flatPositions(a.shape, r.picks);
  const spread = arrayBinary('+', makeArray(target, new Array(positions.length).fill(0), a.values.dtype, a.values.lib), v);
  if (!isArray(spread)) return false;
  const dtype = a.values.dtype;
  positions.forEach((p, i) => (a.values.data[p] = dtype === 'int' ? Math.trunc(spread.values.data[i]) : dtype === 'f32' ? Math.fround(spread.values.data[i]) : spread.values.data[i]));
  return true;
}
