/**
 * A traced tensor cut into pieces along one axis, beyond split/chunk
 * (tensorOps.ts): `x.unbind(dim)` (`q, k, v = qkv.unbind(2)`), which is
 * `x[:, …, i]` for every i, and `torch.tensor_split(x, indices, dim)`, whose
 * pieces end at the given indices (or are n near-equal sections). Both need
 * the axis's size; a first reading that does not know it is read again with
 * the input known (specialise.ts), and says so rather than guess.
 */
import { torchDims } from './batchFolding';
import type { Interp } from './interpreter';
import { indexTensor } from './tensorIndexing';
import { bindArgs } from './torchLayers';
import { UNKNOWN, int, iterItems, toNumber, type CallSite, type TensorV, type Value } from './values';

const FULL_SLICE: Value = { k: 'tuple', items: [{ k: 'str', v: '__slice__' }, { k: 'none' }, { k: 'none' }, { k: 'none' }] };

/** The torch axis `dim` of x normalised, and its size; a string says why it is not known. */
function axisOf(x: TensorV, dimV: Value | undefined): { axis: number; size: number } | string {
  const dims = torchDims(x);
  const dim = dimV === undefined || dimV.k === 'none' ? 0 : toNumber(dimV);
  if (dim === undefined) return 'the dim is not known';
  if (!dims) return "the tensor's rank is not known";
  const axis = dim < 0 ? dim + dims.length : dim;
  if (axis === 0) return 'it cuts the batch axis';
  const size = dims[axis];
  return size === undefined ? `axis ${axis} has an unknown size` : { axis, size };
}

function notRead(interp: Interp, what: string, why: string, site: CallSite): Value {
  if (interp.graph && !interp.graph.concrete) interp.graph.starved = true;
  interp.warn(site.node, `${what} is not modelled (${why}); what it returns is unknown`, 'partial-eval');
  return UNKNOWN;
}

/** `x.unbind(dim)`: a tuple of x[…, i, …], each without that axis. */
export function unbind(interp: Interp, x: TensorV, args: Value[], kwargs: Map<string, Value>, site: CallSite): Value {
  const found = axisOf(x, bindArgs(['input', 'dim'], args, kwargs).get('dim'));
  if (typeof found === 'string') return notRead(interp, `\`${interp.text(site.node)}\``, found, site);
  const items: Value[] = [];
  for (let i = 0; i < found.size; i++) {
    const key: Value = { k: 'tuple', items: [...Array<Value>(found.axis).fill(FULL_SLICE), int(i)] };
    items.push(indexTensor(interp, x, key, site.node));
  }
  return { k: 'tuple', items };
}

/**
 * `torch.tensor_split(x, indices_or_sections, dim)`: with a list of indices, the pieces between them (clamped to
 * the axis, as torch does); with n sections, n pieces where the first size % n are one longer. Returned as a split
 * (tuple unpacking and iteration record one node per piece).
 */
export function tensorSplit(interp: Interp, x: TensorV, args: Value[], kwargs: Map<string, Value>, site: CallSite): Value {
  const a = bindArgs(['input', 'indices_or_sections', 'dim'], args, kwargs);
  const found = axisOf(x, a.get('dim'));
  const cut = a.get('indices_or_sections') ?? a.get('indices') ?? a.get('sections');
  if (typeof found === 'string') return notRead(interp, `\`${interp.text(site.node)}\``, found, site);
  // A split node's axis is the IR's: with windows folded into the batch, torch's axes are not (batchFolding.ts).
  if (x.fold || x.front) return notRead(interp, `\`${interp.text(site.node)}\``, 'its windows are folded into the batch', site);
  const indices = cut ? iterItems(cut)?.map(toNumber) : undefined;
  let sections: number[];
  if (indices) {
    if (indices.some((i) => i === undefined)) return notRead(interp, `\`${interp.text(site.node)}\``, 'an index is not known', site);
    const bounds = [0, ...(indices as number[]).map((i) => Math.max(0, Math.min(found.size, i < 0 ? i + found.size : i))), found.size];
    sections = bounds.slice(1).map((b, i) => Math.max(0, b - bounds[i]!));
  } else {
    const n = cut ? toNumber(cut) : undefined;
    if (n === undefined || n < 1) return notRead(interp, `\`${interp.text(site.node)}\``, 'the number of sections is not known', site);
    sections = Array.from({ length: n }, (_, i) => Math.floor(found.size / n) + (i < found.size % n ? 1 : 0));
  }
  if (sections.some((s) => s === 0)) return notRead(interp, `\`${interp.text(site.node)}\``, 'an empty piece', site);
  return { k: 'splitres', src: x, axis: found.axis, sections, chunks: sections.length, site };
}
