/**
 * Ops hand-written MoE routers and contrastive or cosine heads use beyond elementwise math and plain reductions:
 * `F.normalize` (Swin V2's cosine attention, CLIP's embeddings, routers that normalise tokens before scoring),
 * `torch.topk` (choosing each token's experts) and `torch.cumsum` (an expert's capacity positions). Read as
 * pass-throughs they cost nothing, and a topk's k experts were taken to be every expert.
 *
 * `F.normalize(x, p, dim)` is what ATen runs for it (torch/nn/functional.py): a norm over `dim` kept as size 1, a
 * clamp of that norm at eps, and a division of x by it, three nodes. `topk` is a `reduce` that keeps k entries along
 * its dim and returns (values, indices); the indices are integers no op WAP models consumes.
 */
import type { Attrs, OpKind } from '../../core/ir';
import { perSample } from './elementwise';
import type { Interp } from './interpreter';
import { bindArgs } from './torchLayers';
import { UNKNOWN, toNumber, type CallSite, type Dims, type TensorV, type Value } from './values';

type Recorder = (op: OpKind, attrs: Attrs, shape?: Dims, inputs?: TensorV[]) => Value;

export const ROUTER_OPS: ReadonlySet<string> = new Set(['normalize', 'topk', 'cumsum']);

/** An integer dim (torch's, counting the batch; negative from the end), or undefined when the code's cannot be read. */
function dimOf(v: Value | undefined, fallback?: number): number | undefined {
  const d = v === undefined ? fallback : toNumber(v);
  return d !== undefined && Number.isInteger(d) ? d : undefined;
}

/**
 * `name` applied to activation x: the recorded nodes' result, x itself for work on a parameter alone (once per
 * step, left out as other parameter arithmetic is), or undefined when the call is none of these ops or its dim or k
 * cannot be read (the caller then says it is not modelled).
 */
export function routerOp(interp: Interp, name: string, x: TensorV, args: Value[], kwargs: Map<string, Value>, site: CallSite, rec: Recorder): Value | undefined {
  if (!ROUTER_OPS.has(name)) return undefined;
  if (!perSample(x)) return name === 'topk' ? undefined : x;
  if (name === 'cumsum') {
    // torch.cumsum has no default dim.
    const axis = dimOf(bindArgs(['input', 'dim'], args, kwargs).get('dim'));
    return axis === undefined ? undefined : rec('activation', { fn: 'cumsum', axis });
  }
  if (name === 'topk') {
    const a = bindArgs(['input', 'k', 'dim', 'largest', 'sorted'], args, kwargs);
    const k = toNumber(a.get('k') ?? UNKNOWN);
    const axis = dimOf(a.get('dim'), -1);
    if (axis === undefined || k === undefined || !Number.isInteger(k)) return undefined;
    // Shapes are inferred by the catalogue (core/catalogue/reduce.ts), which checks k against the dim.
    const values = rec('reduce', { fn: 'topk', axes: [axis], k, keepDims: true }, undefined);
    return { k: 'tuple', items: [values, UNKNOWN] };
  }
  const a = bindArgs(['input', 'p', 'dim', 'eps'], args, kwargs);
  const p = a.get('p') === undefined ? 2 : toNumber(a.get('p')!);
  // torch's default dim is 1.
  const axis = dimOf(a.get('dim'), 1);
  if (axis === undefined) return undefined;
  if (p !== 2) {
    // Said once here, more precisely than the caller's generic "not modelled"; the result is taken as the input.
    interp.warn(site.node, `${site.calleeText} with p=${String(p)} is not modelled (only the 2-norm is); its output is taken to be its input`, 'unknown-op', 'info');
    return x;
  }
  const norm = rec('reduce', { fn: 'norm', axes: [axis], keepDims: true }, undefined);
  if (norm.k !== 'tensor') return norm;
  const clamped = rec('activation', { fn: 'clamp', min: toNumber(a.get('eps') ?? UNKNOWN) ?? 1e-12 }, undefined, [norm]);
  if (clamped.k !== 'tensor') return clamped;
  return rec('mul', { operator: '/' }, x.shape, [x, clamped]);
}
