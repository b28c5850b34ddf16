/**
 * An RMSNorm written as eager PyTorch ops, read as the one RMS-norm layer it is.
 * torchtitan's and Meta's Llama `RMSNorm._norm` (`x * torch.rsqrt(x.pow(2).mean(-1,
 * keepdim=True) + eps)` on `x.float()`, then `* self.weight`), transformers'
 * LlamaRMSNorm (`hidden_states.to(torch.float32)` … `self.weight * …`), lit-gpt's
 * `torch.mean(x * x, …)`, Gemma's `* (1.0 + self.weight)`: one op at a time these
 * read as pass-throughs and two multiplies, so the norm was priced as two cheap
 * elementwise ops instead of the eight kernels it launches (planner/cost/eagerNorm.ts).
 *
 * Each step is recorded as the op it is and tags the tensor it returns (`TensorV.rms`,
 * which lists the step nodes so far): x² → mean over the last axis → (+ eps) → rsqrt,
 * then `x * rstd` takes the step nodes back out and records the norm, marked
 * `eagerFp32` as the Hugging Face graphs mark transformers' RMSNorms; a following
 * multiply by a 1-D parameter of the normalized size becomes its weight. Any other op
 * on a tagged tensor drops the tag, so an unfinished pattern keeps every op it wrote.
 */
import type { PyNode } from './ast';
import { withProps } from '../../core/objects';
import type { Interp } from './interpreter';
import { bindArgs } from './torchLayers';
import { toNumber, truthy, type TensorV, type Value } from './values';

export type RmsStep =
  /** `layers`: the nodes recorded for the steps so far, removed when the norm is recognized. */
  | { step: 'square' | 'meanSquare' | 'rstd' | 'rms'; of: string; fp32: boolean; layers: string[] }
  /** `scope`: the module whose forward recorded it; only a weight multiplied in there is its own. */
  | { step: 'norm'; layer: string; scaled: boolean; scope: string };

/** A tensor a pattern may start from or end on: untagged, or a norm's output (the next norm's input). */
const plain = (t: TensorV): boolean => !t.rms || t.rms.step === 'norm';

const scopeOf = (interp: Interp): string => interp.graph?.scope.at(-1) ?? '';

type Recorder = (x: TensorV) => Value;
/** Records the call as written: the op it is, untagged. */
type AsWritten = () => Value | undefined;

/** Ops that hand a tensor on unchanged in value: a tag survives them. */
const KEEPS_TAG = new Set(['contiguous', 'clone', 'detach', 'to', 'type']);

const tagged = (x: TensorV, rms: RmsStep | undefined): TensorV => withProps(x, { rms });
const isFp32Copy = (x: TensorV): boolean => x.dtype === 'fp32';

/**
 * A tensor method or torch function on a graph tensor, as far as the pattern goes: its recorded op, tagged as the
 * next step, or undefined when this call is not a step (the caller then records it as written, with `untag`).
 */
export function rmsUnaryStep(name: string, x: TensorV, args: Value[], kwargs: Map<string, Value>, asWritten: AsWritten): Value | undefined {
  // Casts are read before (casts.ts); a `.to(device)` is never inside a norm, and keeps the step.
  if (name === 'to' || name === 'type') return x;
  const rms = x.rms;
  if (plain(x) && ((name === 'pow' && toNumber(args[1] ?? kwargs.get('exponent')) === 2) || name === 'square')) {
    return nextStep(asWritten(), { step: 'square', of: x.id, fp32: isFp32Copy(x), layers: [] }, x);
  }
  if (rms?.step === 'square' && name === 'mean') {
    const a = bindArgs(['input', 'dim', 'keepdim'], args, kwargs);
    const dim = toNumber(a.get('dim'));
    const rank = x.shape?.length;
    const lastAxis = dim === -1 || (rank !== undefined && dim === rank - 1);
    if (lastAxis && truthy(a.get('keepdim') ?? { k: 'bool', v: false }) === true) return nextStep(asWritten(), { ...rms, step: 'meanSquare' }, x);
  }
  if (rms?.step === 'meanSquare' && (name === 'rsqrt' || name === 'sqrt')) return nextStep(asWritten(), { ...rms, step: name === 'rsqrt' ? 'rstd' : 'rms' }, x);
  return undefined;
}

/**
 * The step's recorded op, tagged with the step and its own node added to the chain's. An op that recorded nothing
 * (arithmetic on a parameter alone hands the parameter back) adds no node: the norm must never take out its input.
 */
function nextStep(out: Value | undefined, step: Extract<RmsStep, { of: string }>, from: TensorV): Value | undefined {
  if (out?.k !== 'tensor' || !out.id) return out;
  return tagged(out, { ...step, layers: out.id === from.id ? step.layers : [...step.layers, out.id] });
}

/** The tensor an op that is no step returns: its tag dropped, unless the op keeps values as they are. */
export function untag(name: string, x: TensorV): TensorV {
  return x.rms && !KEEPS_TAG.has(name) ? tagged(x, undefined) : x;
}

/**
 * A binary operator with a tagged operand: the next step, the recorded norm, or the norm with its weight; undefined
 * when the operator is no step (`recordNorm` records the norm layer of its input, `asWritten` the operator itself).
 */
export function rmsBinaryStep(interp: Interp, op: string, a: Value, b: Value, node: PyNode, recordNorm: Recorder, asWritten: AsWritten): Value | undefined {
  if (op !== '**' && !(a.k === 'tensor' && a.rms) && !(b.k === 'tensor' && b.rms)) return undefined;
  const ta = a.k === 'tensor' && a.id ? a : undefined;
  const tb = b.k === 'tensor' && b.id ? b : undefined;
  if (!ta && !tb) return undefined;
  if (!ta || !tb) {
    const t = (ta ?? tb)!;
    if (op === '**' && ta && plain(ta) && toNumber(b) === 2) return nextStep(asWritten(), { step: 'square', of: ta.id, fp32: isFp32Copy(ta), layers: [] }, ta);
    if (op === '+' && t.rms?.step === 'meanSquare') return nextStep(asWritten(), t.rms, t); // + eps
    if (op === '/' && tb?.rms?.step === 'rms') return nextStep(asWritten(), { ...tb.rms, step: 'rstd' }, tb); // 1 / sqrt(…)
    return undefined;
  }
  for (const [s, v] of [[ta, tb], [tb, ta]] as const) {
    const r = s.rms;
    if (op === '*' && r?.step === 'rstd' && v.id === r.of && plain(v)) return normOf(interp, v, r, recordNorm, node);
    if (op === '/' && s === tb && r?.step === 'rms' && v.id === r.of && plain(v)) return normOf(interp, v, r, recordNorm, node);
    if (op === '*' && r?.step === 'norm' && !r.scaled && r.scope === scopeOf(interp) && v.param && foldWeight(interp, r.layer, v)) return tagged(s, { ...r, scaled: true });
  }
  return undefined;
}

/** `x * x` was recorded as a multiply: tagged as the square of x, it is taken back out if the norm takes it in. */
export function squareOfSelf(product: Value, x: TensorV, y: TensorV): Value {
  if (product.k !== 'tensor' || x.id !== y.id || !plain(x) || !plain(y)) return product;
  return tagged(product, { step: 'square', of: x.id, fp32: isFp32Copy(x), layers: [product.id] });
}

function normOf(interp: Interp, x: TensorV, r: Extract<RmsStep, { of: string }>, recordNorm: Recorder, node: PyNode): Value {
  const g = interp.graph;
  // The norm's own upcast (`x.float()` made for it) is in the eager norm's price (planner/cost/eagerNorm.ts): its
  // cast node goes with the steps, and the norm reads the tensor it converted.
  const upcastFrom = isFp32Copy(x) ? x.castOf : undefined;
  // The steps' own nodes go when nothing outside the chain reads them: the norm replaces them.
  const chain = new Set(upcastFrom ? [...r.layers, x.id] : r.layers);
  let replaced = false;
  if (g && !g.layers.some((l) => !chain.has(l.id) && l.inputs.some((i) => chain.has(i)))) {
    for (let i = g.layers.length - 1; i >= 0; i--) if (chain.has(g.layers[i]!.id)) g.layers.splice(i, 1);
    replaced = true;
  }
  const out = recordNorm(replaced && upcastFrom ? upcastFrom : x);
  if (out.k !== 'tensor') return out;
  if (!r.fp32 && !isFp32Copy(x)) {
    interp.warn(
      node,
      'RMSNorm written as eager ops without an fp32 upcast: priced as the upcast form (transformers\' LlamaRMSNorm). Under autocast, pow and rsqrt run in fp32 all the same (PyTorch autocast op reference); with weights cast to bf16 and no autocast it moves fewer bytes than priced',
      'eager-norm',
      'info',
    );
  }
  return tagged(out, { step: 'norm', layer: out.id, scaled: false, scope: scopeOf(interp) });
}

/** Makes a 1-D parameter of the normalized size the norm's weight; false when it is some other tensor. */
function foldWeight(interp: Interp, layerId: string, w: TensorV): boolean {
  const g = interp.graph;
  const layer = g?.layers.find((l) => l.id === layerId);
  const shape = w.param?.shape;
  const size = shape?.length === 1 ? shape[0] : undefined;
  const normalized = g?.shapes.get(layerId)?.at(-1);
  if (!layer || size === undefined || (normalized !== undefined && normalized !== size)) return false;
  layer.attrs = { ...layer.attrs, scale: true, normalizedShape: [size] };
  if (w.param?.owner.frozen) layer.frozen = true;
  // A norm module called twice shares one weight, as F.layer_norm's are keyed (tensorOps.ts).
  const scope = scopeOf(interp);
  if (scope) layer.weightKey = scope;
  return true;
}

/** The type the recorded norm shows (hover, tables): what the code wrote, not a module it named. */
export const EAGER_RMS_TYPE = 'RMSNorm (eager ops)';
