/**
 * Reshapes and permutes of traced tensors (`x.view(B, T, H, D)`,
 * `x.transpose(1, 2)`): the IR keeps the batch as axis 0 and records the
 * per-sample sizes, so each torch call is mapped onto that, including
 * windows folded into the batch (batchFolding.ts), parameters' own dims
 * (`unbatched`) and `logits.view(-1, V)` before a loss.
 */
import type { Attrs, OpKind } from '../../core/ir';
import { withProps } from '../../core/objects';
import { foldedPermute, foldedReshape } from './batchFolding';
import type { Interp } from './interpreter';
import { recordOp } from './tensorOps';
import { UNKNOWN, toNumber, type CallSite, type Dims, type TensorV, type Value } from './values';

export const permuteOf = (interp: Interp, x: TensorV, dims: number[], site: CallSite): Value => permute(interp, x, dims, site);

function unknownReshape(interp: Interp, x: TensorV, site: CallSite): Value {
  interp.warn(site.node, 'reshape of a parameter by sizes we cannot compute; its shape is unknown', 'partial-eval');
  return recordOp(interp, { base: 'reshape', type: 'Tensor.view', op: 'opaque', attrs: { reason: 'a reshape by sizes the evaluator could not compute' }, inputs: [x], site });
}

export function reshape(interp: Interp, x: TensorV, dims: Value[], site: CallSite): Value {
  const nums = dims.map((d) => toNumber(d));
  const type = 'Tensor.' + (site.calleeText.split('.').pop() ?? 'view');
  const shaping = (op: 'reshape' | 'permute', attrs: Attrs, shape: Dims | undefined): Value => recordOp(interp, { base: op, type, op, attrs, inputs: [x], site, shape });
  if (x.batchOne && nums.every((d) => d !== undefined) && nums.filter((d) => d === -1).length <= 1) {
    // Its batch is a literal 1: every size is a real dim, and the result has no batch.
    const t = recordOp(interp, { base: 'reshape', type, op: 'reshape', attrs: { shape: nums as number[] }, inputs: [x], site, shape: undefined });
    return t.k === 'tensor' ? withProps(t, { unbatched: true, batchOne: undefined }) : t;
  }
  // `logits.view(-1, V)` before a loss keeps the trailing axes and folds the leading ones into the batch. With every
  // per-sample size known the fold is known now; otherwise only a reading for a known input can tell (specialise.ts).
  // `tgt.view(-1)` flattens the whole batch: a fold of every per-sample axis, which an unknown rank leaves unknown.
  const flattensAll = nums.length === 1 && nums[0] === -1 && !x.shape;
  if (!interp.graph?.concrete && !x.fold && nums[0] === -1 && (flattensAll || keepsTrailingAxes(x, nums.slice(1)))) {
    const knownFold = x.shape?.slice(1).every((d) => d !== undefined) ? foldedReshape(x, dims, shaping) : undefined;
    if (knownFold && knownFold.k !== 'unknown') return knownFold;
    if (!knownFold && interp.graph) {
      interp.graph.starved = true;
      interp.warn(site.node, `\`${type.slice('Tensor'.length)}(${nums.join(', ')})\` may fold positions into the batch; its shape is known only for a given input size`, 'partial-eval');
    }
  }
  const folded = interp.graph?.concrete ? foldedReshape(x, dims, shaping) : undefined;
  if (folded?.k === 'unknown' || (!folded && x.fold)) {
    interp.warn(site.node, 'reshape of a tensor whose windows are folded into the batch, by sizes we cannot map; shape inference may fail here', 'partial-eval');
    return x;
  }
  if (folded) return folded;
  if (x.unbatched) {
    // A parameter's own dims: every size is a real dim (none is the batch).
    if (nums.some((d) => d === undefined) || nums.filter((d) => d === -1).length > 1) return unknownReshape(interp, x, site);
    const t = recordOp(interp, { base: 'reshape', type: 'Tensor.' + (site.calleeText.split('.').pop() ?? 'view'), op: 'reshape', attrs: { shape: nums as number[] }, inputs: [x], site, shape: undefined });
    return t.k === 'tensor' ? withProps(t, { unbatched: true }) : t;
  }
  if (nums.length === 2 && nums[1] === -1) {
    return recordOp(interp, { base: 'flatten', type: site.calleeText.split('.').pop() === 'reshape' ? 'Tensor.reshape' : 'Tensor.view', op: 'flatten', attrs: { startDim: 1, endDim: -1 }, inputs: [x], site, shape: [x.shape?.[0], undefined] });
  }
  // The first dim is the batch (x.size(0), B, -1): the IR's reshape shape excludes it.
  const rest = nums.slice(1);
  let unknowns = 0;
  const shape = rest.map((d) => {
    if (d === undefined || d === -1) {
      unknowns++;
      return -1;
    }
    return d;
  });
  if (unknowns > 1 && interp.graph) interp.graph.starved = true;
  if (unknowns > 1) interp.warn(site.node, 'reshape with more than one dimension we cannot compute; shape inference may fail here', 'partial-eval');
  return recordOp(interp, { base: 'reshape', type: 'Tensor.' + (site.calleeText.split('.').pop() ?? 'view'), op: 'reshape', attrs: { shape }, inputs: [x], site, shape: [x.shape?.[0], ...rest] });
}

/** Sizes that are `x`'s last axes (none for `view(-1)`), with at least one per-sample axis before them to fold into the batch. */
function keepsTrailingAxes(x: TensorV, rest: Array<number | undefined>): boolean {
  if (!x.shape || x.shape.length - 1 <= rest.length) return false;
  const tail = x.shape.slice(x.shape.length - rest.length);
  return rest.every((d, i) => d !== undefined && d > 0 && d === tail[i]);
}

export function permute(interp: Interp, x: TensorV, dims: Array<number | undefined>, site: CallSite): Value {
  if (dims.some((d) => d === undefined)) return x;
  const moved = interp.graph?.concrete && !x.unbatched && !x.fold && dims[0] !== 0 && dims[1] === 0 && dims.length > 2;
  if (x.fold || x.front || moved) {
    const type = site.calleeText.endsWith('transpose') ? 'Tensor.transpose' : 'Tensor.permute';
    const out = x.front ? UNKNOWN : foldedPermute(x, dims as number[], (op, attrs, shape) => recordOp(interp, { base: op, type, op, attrs, inputs: [x], site, shape }));
    if (!out || out.k === 'unknown') {
      interp.warn(site.node, 'permute that moves windows folded into the batch in a way WAP does not model; shape inference may fail here', 'partial-eval');
      return x;
    }
    return out;
  }
  if (x.unbatched) {
    const rank = dims.length;
    const moved = [0, ...(dims as number[]).map((d) => (d < 0 ? d + rank : d) + 1)];
    const t = recordOp(interp, { base: 'permute', type: site.calleeText.endsWith('transpose') ? 'Tensor.transpose' : 'Tensor.permute', op: 'permute', attrs: { dims: moved }, inputs: [x], site, shape: undefined });
    return t.k === 'tensor' ? withProps(t, { unbatched: true }) : t;
  }
  const rank = dims.length;
  const norm = (dims as number[]).map((d) => (d < 0 ? d + rank : d));
  const shape = x.shape && x.shape.length === rank ? norm.map((d) => x.shape![d]) : undefined;
  return recordOp(interp, { base: 'permute', type: site.calleeText.endsWith('transpose') ? 'Tensor.transpose' : 'Tensor.permute', op: 'permute', attrs: { dims: norm }, inputs: [x], site, shape });
}
