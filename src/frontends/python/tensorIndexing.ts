/**
 * Indexing a symbolic tensor: `x[:, 0]` (ViT's class token), `x[..., :n]`,
 * `x[:, 1:]`. A slice or integer on one axis becomes a split node picking that
 * section; an integer index then drops the axis with a reshape. Anything else
 * (several indexed axes, tensors as indices, unknown bounds) is reported and
 * the tensor passes through unchanged: never a silent wrong shape.
 */
import type { PyNode } from './ast';
import type { Interp } from './interpreter';
import { isFrozenParameter, recordOp } from './tensorOps';
import { torchDims } from './batchFolding';
import { isArray, type ArrayV } from './numericArrays';
import { toNumber, type Dims, type TensorV, type Value } from './values';
import { withProps } from '../../core/objects';

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
  const out = recordOp(interp, { base: 'getitem', type: 'Tensor.__getitem__', op: 'parameter', attrs: { shape, gathered }, inputs: [], site, shape: [1, ...gathered], weightKey: t.id, frozen: isFrozenParameter(t.param) });
  return out.k === 'tensor' ? withProps(out, { unbatched: true }) : out;
}

const FULL: Value = { k: 'tuple', items: [{ k: 'str', v: '__slice__' }, { k: 'none' }, { k: 'none' }, { k: 'none' }] };

export function indexTensor(interp: Interp, t: TensorV, key: Value, node: PyNode): Value {
  // transformers' causal LMs shift their labels (`labels[..., 1:]`): still labels.
  if (t.labels) return t;
  const keys = key.k === 'tuple' && !isSlice(key) ? key.items : [key];
  const shape = t.shape;
  const unsupported = (why: string, starved = false): Value => {
    if (starved && interp.graph) interp.graph.starved = true;
    interp.warn(node, `Tensor indexing \`${interp.text(node)}\` is not modelled (${why}); its shape is taken to be its input's`, 'tensor-index');
    return t;
  };
  if (t.param && isArray(key)) return gatherParameter(interp, t, key, node) ?? unsupported('a parameter indexed by an array of unknown size');
  if (t.unbatched && isArray(key) && key.values.dtype === 'int' && shape) {
    // Rows of a batch-less tensor picked by a constant index (Swin V2's bias table from its MLP).
    const out = recordOp(interp, { base: 'getitem', type: 'Tensor.__getitem__', op: 'gather', attrs: { indexShape: key.shape }, inputs: [t], site: interp.site(node, 'getitem'), shape: [1, ...key.shape, ...shape.slice(2)] });
    return out.k === 'tensor' ? withProps(out, { unbatched: true }) : out;
  }
  if (!shape) return unsupported('the tensor rank is unknown', true);
  const rank = torchDims(t)!.length;
  // Expand `...` into full slices so every key has its axis.
  const ellipsis = keys.findIndex(isEllipsis);
  let full: Value[] = ellipsis < 0 ? keys : [...keys.slice(0, ellipsis), ...Array(rank - keys.length + 1).fill(FULL), ...keys.slice(ellipsis + 1)];
  while (full.length < rank) full.push(FULL);
  // Torch axes onto IR axes: a folded dim 0 is (batch, windows); a `front` tensor has its torch axis 0 after them.
  const off = t.fold ? 1 : 0;
  if (t.front) {
    if (!isFullSlice(full[1])) return unsupported('it indexes the batch axis');
    full = [FULL, ...(t.fold ? [FULL] : []), full[0], ...full.slice(2)];
  } else if (t.fold) {
    if (!isFullSlice(full[0])) return unsupported('it indexes the batch axis');
    full = [FULL, FULL, ...full.slice(1)];
  }
  const active = full.map((k, axis) => ({ k, axis })).filter(({ k, axis }) => !coversAxis(k, shape[axis]));
  if (active.length === 0) return t;
  if (active.some(({ axis }) => axis === 0)) return unsupported('it indexes the batch axis');
  // One axis at a time, last first: dropping an axis never moves the ones still to do.
  let out: TensorV = t;
  for (const { k, axis } of active.reverse()) {
    const next = selectAxis(interp, out, axis, k, node);
    if (typeof next === 'string') return unsupported(next, next.startsWith('axis') && (k.k === 'num' || k.k === 'bool' || isSlice(k)));
    out = next;
  }
  const droppedFront = t.front && active.some(({ k, axis }) => axis === 1 + off && (k.k === 'num' || k.k === 'bool'));
  return withProps(out, { fold: t.fold, front: t.front && !droppedFront ? true : undefined });
}

/** A slice that keeps the whole axis (`:`, `:H` with H its size): nothing to record. */
function coversAxis(k: Value, size: number | undefined): boolean {
  if (isFullSlice(k)) return true;
  if (!isSlice(k) || size === undefined) return false;
  const [, a, b, step] = (k as { items: Value[] }).items;
  const start = a.k === 'none' ? 0 : toNumber(a);
  const stop = b.k === 'none' ? size : toNumber(b);
  return (step.k === 'none' || toNumber(step) === 1) && start === 0 && stop !== undefined && stop >= size;
}

/** One axis picked by an integer or a slice; a string says why it could not be. */
function selectAxis(interp: Interp, t: TensorV, axis: number, k: Value, node: PyNode): TensorV | string {
  const shape = t.shape!;
  const size = shape[axis];
  if (size === undefined) return `axis ${axis} has an unknown size`;
  const site = interp.site(node, 'getitem');
  const integer = k.k === 'num' || k.k === 'bool';
  let start: number;
  let stop: number;
  if (integer) {
    const i = toNumber(k)!;
    start = i < 0 ? i + size : i;
    stop = start + 1;
  } else if (isSlice(k)) {
    const items = (k as { items: Value[] }).items;
    const step = items[3].k === 'none' ? 1 : toNumber(items[3]);
    if (step === undefined || step < 1) return 'a slice with an unknown or negative step';
    const norm = (v: Value, dflt: number): number | undefined => {
      if (v.k === 'none') return dflt;
      const n = toNumber(v);
      return n === undefined ? undefined : Math.max(0, Math.min(size, n < 0 ? n + size : n));
    };
    const a = norm(items[1], 0);
    const b = norm(items[2], size);
    if (a === undefined || b === undefined) return 'unknown slice bounds';
    if (step > 1) return strided(interp, t, axis, a, b, step, site);
    [start, stop] = [a, b];
  } else return 'a non-integer index';
  if (start < 0 || stop > size || stop <= start) return 'an empty or out-of-range selection';
  return pick(interp, t, axis, start, stop, integer, site);
}

/** Elements start, start+1, … stop-1 of one axis (a split node); an integer index then drops the axis. */
function pick(interp: Interp, t: TensorV, axis: number, start: number, stop: number, drop: boolean, site: ReturnType<Interp['site']>): TensorV {
  const shape = t.shape!;
  const size = shape[axis]!;
  const sizes = [start, stop - start, size - stop].filter((s) => s > 0);
  const picked: Dims = [...shape];
  picked[axis] = stop - start;
  let out = stop - start === size ? t : (recordOp(interp, { base: 'getitem', type: 'Tensor.__getitem__', op: 'split', attrs: { axis, sizes, index: start > 0 ? 1 : 0 }, inputs: [t], site, shape: picked }) as TensorV);
  if (drop && out.k === 'tensor') {
    const dropped = picked.filter((_, i) => i !== axis);
    out = recordOp(interp, { base: 'getitem', type: 'Tensor.__getitem__', op: 'reshape', attrs: { shape: dropped.slice(1).map((d) => d ?? -1) }, inputs: [out], site, shape: dropped }) as TensorV;
  }
  return out;
}

/** `x[..., 0::2, :]` (Swin's patch merging): the axis reshaped to (n / step, step), then the offset picked on the second. */
function strided(interp: Interp, t: TensorV, axis: number, start: number, stop: number, step: number, site: ReturnType<Interp['site']>): TensorV | string {
  const shape = t.shape!;
  const size = shape[axis]!;
  if (size % step !== 0 || start >= step || stop < size - (step - 1 - start) || shape.slice(1).some((d) => d === undefined)) return 'a stepped slice that is not every step-th element of the whole axis';
  const split: Dims = [...shape.slice(0, axis), size / step, step, ...shape.slice(axis + 1)];
  const r = recordOp(interp, { base: 'getitem', type: 'Tensor.__getitem__', op: 'reshape', attrs: { shape: (split.slice(1) as number[]) }, inputs: [t], site, shape: split });
  if (r.k !== 'tensor') return 'no graph to record in';
  return pick(interp, r, axis + 1, start, start + 1, true, site);
}
