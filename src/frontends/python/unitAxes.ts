/**
 * Size-1 axes of traced tensors: `x.unsqueeze(d)`, `x.squeeze(d)`, `x.squeeze()`,
 * and a parameter broadcast over the batch (`self.cls_token.expand(x.size(0), -1)`).
 * They used to pass the tensor through, which left every later shape one axis
 * off without a word; now each is a reshape node whose target the core works
 * out from its input (`unsqueeze` / `squeeze` attrs), so it holds even where the
 * frontend does not know the sizes yet. Axes are torch's: the IR keeps the batch
 * first, so a batch-less parameter's own axis d is IR axis d + 1.
 */
import { withProps } from '../../core/objects';
import type { Attrs } from '../../core/ir';
import { torchDims } from './batchFolding';
import type { Interp } from './interpreter';
import { recordOp } from './tensorOps';
import { bindArgs } from './torchLayers';
import { iterItems, toNumber, type CallSite, type Dims, type TensorV, type Value } from './values';

/** unsqueeze / squeeze / a parameter's expand over the batch on graph tensor x; undefined where another rule applies. */
export function unitAxisCall(interp: Interp, name: string, x: TensorV, args: Value[], kwargs: Map<string, Value>, site: CallSite): Value | undefined {
  if (name === 'expand') return expandOverBatch(x, args);
  if (name !== 'unsqueeze' && name !== 'squeeze') return undefined;
  // Windows folded into the batch: torch's axes are not the IR's, and only reshape/permute map them (batchFolding.ts).
  if (x.fold || x.front) {
    interp.warn(site.node, `${name} of a tensor whose windows are folded into the batch is taken as a pass-through; shapes after it may be wrong`, 'partial-eval');
    return x;
  }
  const dimV = bindArgs(['input', 'dim'], args, kwargs).get('dim');
  const dim = dimV === undefined || dimV.k === 'none' ? undefined : toNumber(dimV);
  if (dimV && dimV.k !== 'none' && dim === undefined) {
    interp.warn(site.node, `${name} of a dim we cannot compute is taken as a pass-through; shapes after it may be wrong`, 'partial-eval');
    return x;
  }
  // Rank as torch sees it: a batch-less parameter's placeholder 1 is not one of its axes.
  const irShape = x.shape;
  const rank = x.unbatched ? (irShape ? irShape.length - 1 : undefined) : torchDims(x)?.length;
  const offset = x.unbatched ? 1 : 0;
  const record = (attrs: Attrs, shape: Dims | undefined): Value => {
    const t = recordOp(interp, { base: name, type: /^(torch)\./.test(site.calleeText) ? site.calleeText : `Tensor.${name}`, op: 'reshape', attrs, inputs: [x], site, shape });
    return t.k === 'tensor' && x.unbatched ? withProps(t, { unbatched: true }) : t;
  };
  if (name === 'unsqueeze') {
    if (dim === undefined) return x;
    const axis = dim < 0 && rank !== undefined ? dim + rank + 1 : dim;
    // A negative dim of a parameter needs its rank to find its IR axis.
    if (axis < 0 && x.unbatched) return unread(interp, name, x, site);
    // unsqueeze(0) of a batched tensor would put a 1 before the batch (a parameter's is tensorOps' rule).
    if (axis === 0) return x;
    const shape = irShape && axis >= 0 ? [...irShape.slice(0, axis + offset), 1, ...irShape.slice(axis + offset)] : undefined;
    return record({ unsqueeze: axis < 0 ? axis : axis + offset }, shape);
  }
  if (dim === undefined) {
    // squeeze(): every per-sample axis of size 1 (the batch is never 1 to the IR).
    if (irShape && irShape.slice(1).every((d) => d !== undefined && d !== 1)) return x;
    const shape = irShape && irShape.slice(1).every((d) => d !== undefined) ? [irShape[0], ...irShape.slice(1).filter((d) => d !== 1)] : undefined;
    return record({ squeeze: 'all' }, shape);
  }
  const axis = dim < 0 && rank !== undefined ? dim + rank : dim;
  if (axis < 0 && x.unbatched) return unread(interp, name, x, site);
  // The batch axis: torch drops it only for a batch of one, which a training batch is not.
  if (axis === 0 && !x.unbatched) return x;
  const size = axis >= 0 ? irShape?.[axis + offset] : undefined;
  if (size !== undefined && size !== 1) return x;
  const shape = irShape && size === 1 ? irShape.filter((_, i) => i !== axis + offset) : undefined;
  return record({ squeeze: axis < 0 ? axis : axis + offset }, shape);
}

function unread(interp: Interp, name: string, x: TensorV, site: CallSite): Value {
  interp.warn(site.node, `${name} of a parameter whose rank is not known here is taken as a pass-through; shapes after it may be wrong`, 'partial-eval');
  return x;
}

/**
 * `param.expand(B, -1, …)` with one size more than the parameter has dims, the first the batch (`x.size(0)`, or a
 * size not known here): the parameter broadcast to every sample, which per sample is the parameter itself (as
 * `param.unsqueeze(0)` is). Any other expand keeps tensorOps' pass-through.
 */
function expandOverBatch(x: TensorV, args: Value[]): Value | undefined {
  if (!x.unbatched || !x.shape) return undefined;
  const sizes = args.length === 2 && (args[1].k === 'tuple' || args[1].k === 'list') ? iterItems(args[1])! : args.slice(1);
  const own = x.shape.slice(1);
  if (sizes.length !== own.length + 1) return undefined;
  const first = sizes[0];
  if (first.k !== 'batch' && first.k !== 'unknown') return undefined;
  const keeps = sizes.slice(1).every((s, i) => toNumber(s) === -1 || (toNumber(s) !== undefined && toNumber(s) === own[i]));
  return keeps ? withProps(x, { unbatched: false, param: undefined }) : undefined;
}
