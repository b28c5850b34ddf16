/**
 * Indexing a symbolic tensor: `x[:, 0]` (ViT's class token), `x[..., :n]`,
 * `x[:, 1:]`. A slice or integer on one axis becomes a split node picking that
 * section; an integer index then drops the axis with a reshape. Anything else
 * (several indexed axes, tensors as indices, unknown bounds) is reported and
 * the tensor passes through unchanged: never a silent wrong shape.
 */
import type { PyNode } from './ast';
import type { Interp } from './interpreter';
import { recordOp } from './tensorOps';
import { isArray, type ArrayV } from './numericArrays';
import { toNumber, type Dims, type TensorV, type Value } from './values';

const isSlice = (v: Value): boolean => v.k === 'tuple' && v.items.length === 4 && v.items[0].k === 'str' && v.items[0].v === '__slice__';
const isFullSlice = (v: Value): boolean => isSlice(v) && (v as { items: Value[] }).items.slice(1).every((x) => x.k === "none");
const isEllipsis = (v: Value): boolean => v.k === 'lib' && v.path === 'Ellipsis';

/**
 * `table[index]` with a constant integer index (Swin's and MaxViT's relative position bias): a
 * parameter node of the gathered shape that still counts the table's elements once (keyed by it).
 */
function gatherParameter(interp: Interp, t: TensorV, index: ArrayV, node: PyNode): Value | undefined {
  const own = t.param?.shape;
  if (!own || own.some((d) => d === undefined) || index.values.dtype !== 'int') return undefined;
  const shape = own as number[];
  const gathered = [...index.shape, ...shape.slice(1)];
  const site = interp.site(node, 'getitem');
  const out = recordOp(interp, { base: 'getitem', type: 'Tensor.__getitem__', op: 'parameter', attrs: { shape, gathered }, inputs: [], site, shape: [1, ...gathered], weightKey: t.id });
  return out.k === 'tensor' ? { ...out, unbatched: true } : out;
}

export function indexTensor(interp: Interp, t: TensorV, key: Value, node: PyNode): Value {
  const keys = key.k === 'tuple' && !isSlice(key) ? key.items : [key];
  const shape = t.shape;
  const unsupported = (why: string, starved = false): Value => {
    if (starved && interp.graph) interp.graph.starved = true;
    interp.warn(node, `Tensor indexing \`${interp.text(node)}\` is not modelled (${why}); its shape is taken to be its input's`, 'tensor-index');
    return t;
  };
  if (t.param && isArray(key)) return gatherParameter(interp, t, key, node) ?? unsupported('a parameter indexed by an array of unknown size');
  if (!shape) return unsupported('the tensor rank is unknown', true);
  // Expand `...` into full slices so every key has its axis.
  const ellipsis = keys.findIndex(isEllipsis);
  const full: Value[] = ellipsis < 0 ? keys : [...keys.slice(0, ellipsis), ...Array(shape.length - keys.length + 1).fill({ k: 'tuple', items: [{ k: 'str', v: '__slice__' }, { k: 'none' }, { k: 'none' }, { k: 'none' }] }), ...keys.slice(ellipsis + 1)];
  const active = full.map((k, axis) => ({ k, axis })).filter(({ k }) => !isFullSlice(k));
  if (active.length === 0) return t;
  if (active.length > 1) return unsupported('more than one indexed axis');
  const { k, axis } = active[0];
  if (axis === 0) return unsupported('it indexes the batch axis');
  const size = shape[axis];
  // Starved only when knowing the size would have let it through (an integer or a slice).
  if (size === undefined) return unsupported(`axis ${axis} has an unknown size`, k.k === 'num' || k.k === 'bool' || isSlice(k));
  let start: number;
  let stop: number;
  const integer = k.k === 'num' || k.k === 'bool';
  if (integer) {
    const i = toNumber(k)!;
    start = i < 0 ? i + size : i;
    stop = start + 1;
  } else if (isSlice(k)) {
    const items = (k as { items: Value[] }).items;
    const step = toNumber(items[3]) ?? 1;
    if (step !== 1) return unsupported('a stepped slice');
    const norm = (v: Value, dflt: number): number | undefined => {
      if (v.k === 'none') return dflt;
      const n = toNumber(v);
      return n === undefined ? undefined : Math.max(0, Math.min(size, n < 0 ? n + size : n));
    };
    const a = norm(items[1], 0);
    const b = norm(items[2], size);
    if (a === undefined || b === undefined) return unsupported('unknown slice bounds', true);
    [start, stop] = [a, b];
  } else return unsupported('a non-integer index');
  if (start < 0 || stop > size || stop <= start) return unsupported('an empty or out-of-range selection');
  const sizes = [start, stop - start, size - stop].filter((s) => s > 0);
  const index = start > 0 ? 1 : 0;
  const site = interp.site(node, 'getitem');
  const picked: Dims = [...shape];
  picked[axis] = stop - start;
  let out = stop - start === size ? t : (recordOp(interp, { base: 'getitem', type: 'Tensor.__getitem__', op: 'split', attrs: { axis, sizes, index }, inputs: [t], site, shape: picked }) as TensorV);
  if (integer && out.k === 'tensor') {
    const dropped = picked.filter((_, i) => i !== axis);
    out = recordOp(interp, { base: 'getitem', type: 'Tensor.__getitem__', op: 'reshape', attrs: { shape: dropped.slice(1).map((d) => d ?? -1) }, inputs: [out], site, shape: dropped }) as TensorV;
  }
  return out;
}
