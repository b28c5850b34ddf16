/**
 * Casts written in forward: `x.float()`, `x.to(torch.float32)`, `x.half()`, `x.bfloat16()`, `x.type_as(y)`,
 * `x.to(y)`, `x.to(input_dtype)`. Meta's Llama attention runs `F.softmax(scores.float(), dim=-1).type_as(xq)`:
 * under bf16 training (torchtitan, FSDP mixed precision, Megatron: no autocast) that is an upcast kernel over the
 * [B, H, T, T] scores, a softmax at 4 bytes per element, and a downcast. Read as pass-throughs they cost nothing
 * and the softmax was priced at 2 bytes.
 *
 * A cast is one `activation` node (fn 'cast', attrs `from`/`to`, absent = the plan's precision), and the tensor it
 * returns carries its dtype: the ops computed on it are pinned to that dtype (LayerSpec.activationDtype), whatever
 * the plan's precision. A cast to the dtype the tensor already has records nothing: ATen's `to` returns its input
 * then (TensorConversions.cpp, `to_impl`), so `.float()` in an fp32 plan is priced at zero by the planner too.
 */
import type { Attrs, OpKind, PinnedDtype } from '../../core/ir';
import { withProps } from '../../core/objects';
import type { Interp } from './interpreter';
import type { PyNode } from './ast';
import { perSample } from './elementwise';
import { bindArgs } from './torchLayers';
import type { TensorV, Value } from './values';

/** What a cast converts to: a pinned dtype, or back to the activations' (the plan's) precision. */
export type CastTarget = PinnedDtype | 'activations';

const BY_METHOD: Readonly<Record<string, PinnedDtype | 'fp64'>> = { float: 'fp32', half: 'fp16', bfloat16: 'bf16', double: 'fp64' };
const BY_TORCH_NAME: Readonly<Record<string, PinnedDtype | 'fp64'>> = {
  float32: 'fp32', float: 'fp32', float16: 'fp16', half: 'fp16', bfloat16: 'bf16', float64: 'fp64', double: 'fp64',
};
const TORCH_NAME: Readonly<Record<PinnedDtype, string>> = { fp32: 'float32', fp16: 'float16', bf16: 'bfloat16' };

/** Tensor methods that may convert the element type. */
export const CAST_METHODS = new Set(['float', 'half', 'bfloat16', 'double', 'to', 'type', 'type_as']);

/** `torch.float32` or `'float32'` → its dtype; undefined when the value names no float dtype. */
export function namedDtype(v: Value | undefined): PinnedDtype | 'fp64' | undefined {
  const name = v?.k === 'lib' ? /^torch\.(\w+)$/.exec(v.path)?.[1] : v?.k === 'str' ? v.v : undefined;
  return name !== undefined && Object.prototype.hasOwnProperty.call(BY_TORCH_NAME, name) ? BY_TORCH_NAME[name] : undefined;
}

/** A named dtype, or a graph tensor → the dtype it has; undefined when the value names no float dtype. */
function dtypeOf(v: Value | undefined): PinnedDtype | 'fp64' | 'activations' | undefined {
  if (v?.k === 'tensor' && v.id) return v.dtype ?? 'activations';
  return namedDtype(v);
}

/**
 * What `t.dtype` reads as for a tensor at the activations' dtype: the plan decides it, so its value is unknown, but a
 * `.to(…)` given it (`.to(input_dtype)`, `.to(query.dtype)`) is a cast back to that dtype, not a device move.
 */
const ACTIVATIONS_DTYPE: Value = { k: 'unknown', why: "the activations' dtype, which the plan's precision sets" };
/** Each `t.dtype` read of an uncast tensor is its own such value, mapped to t's id: a cast to it takes t's dtype. */
const DTYPE_SOURCE = new WeakMap<Value, string>();
const isActivationsDtype = (v: Value | undefined): boolean => v !== undefined && (v === ACTIVATIONS_DTYPE || DTYPE_SOURCE.has(v));

/**
 * The dtype a cast method converts `x` to (with `x` first in args), or undefined when the call converts nothing it
 * can tell: `.to(device)`, `.type()` with no dtype, a `.to(v)` whose v it cannot read.
 */
export function castTargetOf(name: string, x: TensorV, args: Value[], kwargs: Map<string, Value>): PinnedDtype | 'fp64' | 'activations' | undefined {
  const direct = BY_METHOD[name];
  if (direct) return direct;
  if (name === 'type_as') return dtypeOf(args[1] ?? kwargs.get('other')) ?? 'activations';
  if (name !== 'to' && name !== 'type') return undefined;
  const a = bindArgs(['self', 'first', 'second'], args, kwargs);
  const stated = dtypeOf(a.get('dtype')) ?? dtypeOf(a.get('first')) ?? dtypeOf(a.get('second'));
  if (stated) return stated;
  return isActivationsDtype(a.get('first')) || isActivationsDtype(a.get('dtype')) ? 'activations' : undefined;
}

/** For a cast back to "the activations' dtype": the tensor whose dtype it takes (`type_as(y)`: y; `.to(x.dtype)`: x), when known. */
function dtypeSourceOf(name: string, args: Value[], kwargs: Map<string, Value>): string | undefined {
  if (name === 'type_as') {
    const other = args[1] ?? kwargs.get('other');
    return other?.k === 'tensor' && other.id && !other.dtype ? other.id : undefined;
  }
  const a = bindArgs(['self', 'first', 'second'], args, kwargs);
  for (const v of [a.get('dtype'), a.get('first')]) {
    const id = v ? DTYPE_SOURCE.get(v) : undefined;
    if (id) return id;
  }
  return undefined;
}

/** The float dtype a `dtype=` argument states, when it is one WAP pins (fp64 is not). */
export function statedDtype(v: Value | undefined): PinnedDtype | undefined {
  const d = v?.k === 'tensor' ? undefined : dtypeOf(v);
  return d === 'fp32' || d === 'fp16' || d === 'bf16' ? d : undefined;
}

/** `x.dtype`: the torch dtype a cast copy holds, else the activations' own (the plan's, unknown here). */
export function dtypeAttr(x: TensorV): Value {
  if (x.dtype) return { k: 'lib', path: `torch.${TORCH_NAME[x.dtype]}` };
  if (!x.id) return ACTIVATIONS_DTYPE;
  const v: Value = { ...ACTIVATIONS_DTYPE };
  DTYPE_SOURCE.set(v, x.id);
  return v;
}

/** The cast node's attrs and the tensor's dtype after it; undefined (record nothing) when the dtype does not change. */
export function castRecord(x: TensorV, target: PinnedDtype | 'activations'): { attrs: Attrs; dtype: PinnedDtype | undefined } | undefined {
  const to = target === 'activations' ? undefined : target;
  if (x.dtype === to) return undefined;
  return { attrs: { fn: 'cast', ...(to ? { to } : {}), ...(x.dtype ? { from: x.dtype } : {}) }, dtype: to };
}

/** Ops that own weights compute at the weights' dtype (the plan's, or autocast's), whatever their input's. */
const WEIGHTED = new Set<OpKind>(['conv', 'separable_conv', 'linear', 'embedding', 'batchnorm', 'layernorm', 'groupnorm', 'mha', 'rnn', 'parameter', 'opaque']);

/**
 * The dtype an op's result has: a cast's target; else torch's type promotion over the pinned inputs (fp32 wins, and
 * fp16 with bf16 gives fp32), or undefined (the plan's) when no input was pinned or the op owns weights.
 */
export function resultDtype(op: OpKind, attrs: Attrs, inputs: readonly TensorV[]): PinnedDtype | undefined {
  if (op === 'activation' && attrs.fn === 'cast') return attrs.to as PinnedDtype | undefined;
  if (WEIGHTED.has(op)) return undefined;
  const pinned = new Set(inputs.map((t) => t.dtype).filter((d): d is PinnedDtype => d !== undefined));
  if (pinned.size === 0) return undefined;
  if (pinned.size > 1 || pinned.has('fp32')) return 'fp32';
  return [...pinned][0];
}

/**
 * `x.<name>(…)` when it is a cast: the recorded cast (`record` adds the node), the tensor with its new dtype when the
 * tensor is no per-sample activation (a parameter cast once per step), or x itself when the dtype does not change.
 * Undefined when the call is no cast. fp64 is priced as fp32, which the diagnostic says.
 */
export function castCall(interp: Interp, node: PyNode, name: string, x: TensorV, args: Value[], kwargs: Map<string, Value>, record: (attrs: Attrs, dtypeLike?: string) => Value): Value | undefined {
  let target = castTargetOf(name, x, args, kwargs);
  if (target === undefined) {
    // On a cast copy, a `.to(v)` with an unreadable v may be a dtype WAP cannot see: say what it was read as.
    if (name === 'to' && x.dtype && args.slice(1).some((v) => v.k === 'unknown')) {
      interp.warn(node, `\`.to(…)\` on an ${x.dtype} copy with an argument WAP cannot read is taken as a device move: if it converts the dtype, the ops after it are priced at ${x.dtype}`, 'cast-unread', 'info');
    }
    return undefined;
  }
  if (target === 'fp64') {
    interp.warn(node, 'float64 activations are not modelled: this cast and the ops after it are priced as float32 (GPU specs carry no fp64 peak)', 'unknown-op');
    target = 'fp32';
  }
  const cast = castRecord(x, target);
  if (!cast) return x;
  if (!perSample(x)) return withProps(x, { dtype: cast.dtype });
  const out = record(cast.attrs, target === 'activations' ? dtypeSourceOf(name, args, kwargs) : undefined);
  return out.k === 'tensor' ? withProps(out, { castOf: x }) : out;
}
