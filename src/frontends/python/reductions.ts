/**
 * Reductions written in forward: `x.mean(dim=1)` (a ViT's pool over tokens),
 * `x.sum(-1)`, `x.amax(1)`, `torch.max(x, 1)`. Each becomes a `reduce` node, so
 * the layers after it see the reduced shape: read as a no-op, a classifier head
 * after a token mean would be costed once per token.
 */
import type { Attrs, OpKind } from '../../core/ir';
import type { ReduceFn } from '../../core/ops';
import type { Interp } from './interpreter';
import { bindArgs } from './torchLayers';
import { UNKNOWN, iterItems, toNumber, truthy, type CallSite, type Dims, type TensorV, type Value } from './values';

type Record = (op: OpKind, attrs: Attrs, shape?: Dims) => Value;

const REDUCERS: Readonly<{ [name: string]: ReduceFn }> = { mean: 'mean', sum: 'sum', amax: 'amax', amin: 'amin', max: 'amax', min: 'amin', norm: 'norm', vector_norm: 'norm' };

export const isReduction = (name: string): boolean => Object.prototype.hasOwnProperty.call(REDUCERS, name);

/** The reduced tensor (a `(values, indices)` pair for max and min over a dim), or x itself where nothing is reduced. */
export function reduction(interp: Interp, name: string, x: TensorV, args: Value[], kwargs: Map<string, Value>, site: CallSite, record: Record): Value {
  // `x.norm(p, dim, keepdim)` and `torch.linalg.vector_norm(x, ord, dim, keepdim)` take the order first; it is priced as the 2-norm.
  const a = bindArgs(REDUCERS[name] === 'norm' ? ['input', name === 'norm' ? 'p' : 'ord', 'dim', 'keepdim'] : ['input', 'dim', 'keepdim'], args, kwargs);
  const dim = a.get('dim');
  // torch.max(x, y) and x.max(y) are elementwise: shape-preserving.
  if (dim?.k === 'tensor') return x;
  if (!dim || dim.k === 'none') {
    interp.warn(site.node, `${site.calleeText}() without a dim reduces every axis, the batch's too: it is not in the graph, and the layers after it keep the input's shape`, 'partial-eval');
    return x;
  }
  const items = iterItems(dim) ?? [dim];
  const axes = items.map(toNumber);
  if (axes.some((d) => d === undefined)) {
    interp.warn(site.node, `${site.calleeText}() over a dim the evaluator could not compute: it is not in the graph, and the layers after it keep the input's shape`, 'partial-eval');
    return x;
  }
  // A parameter's own dims have no batch in front: torch's dim 0 is the IR's axis 1.
  if (x.unbatched) for (let i = 0; i < axes.length; i++) if (axes[i]! >= 0) axes[i] = axes[i]! + 1;
  const keepDims = truthy(a.get('keepdim') ?? { k: 'bool', v: false }) === true;
  const rank = x.shape?.length;
  const norm = (d: number) => (rank !== undefined && d < 0 ? d + rank : d);
  const reduced = new Set((axes as number[]).map(norm));
  const shape = x.shape && rank !== undefined ? (keepDims ? x.shape.map((d, i) => (reduced.has(i) ? 1 : d)) : x.shape.filter((_, i) => !reduced.has(i))) : undefined;
  const fn = REDUCERS[name]!;
  const out = record('reduce', { fn, axes: axes as number[], keepDims }, shape);
  // max and min over a dim return (values, indices); the indices are integers no layer WAP models consumes.
  return name === 'max' || name === 'min' ? { k: 'tuple', items: [out, UNKNOWN] } : out;
}
