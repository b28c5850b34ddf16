/**
 * Windows folded into the batch (Swin: `x.reshape(B * num_windows, ws * ws, C)`,
 * later `attn.view(x.size(0) // num_windows, num_windows, …)`). The IR keeps
 * the batch as its own first axis, so a tensor whose torch dim 0 is `B · k`
 * is recorded as [B, k, …] and carries `fold: k`; torch axes are mapped onto
 * IR axes for reshape, permute and size reads. `B` itself is a symbolic batch
 * value (`x.shape[0]`, `{ k: 'batch', factor }`) that only multiplies and
 * floor-divides by integers. A permute that moves the batch off the front is
 * modelled only as Swin's `qkv.permute(2, 0, 3, 1, 4)` followed by `qkv[i]`
 * (`front`); anything else stays a warning. Only a reading for a known input
 * (specialise.ts) produces batch values, so other readings are unchanged.
 */
import type { Interp } from './interpreter';
import type { CallSite, Dims, TensorV, Value } from './values';
import { UNKNOWN, int, toNumber } from './values';
import { withProps } from '../../core/objects';

export type BatchV = Extract<Value, { k: 'batch' }>;

/** `B * n`, `n * B`, `B // n` on symbolic batch values; undefined when no operand is one. */
export function batchArithmetic(op: string, a: Value, b: Value): Value | undefined {
  if (a.k !== 'batch' && b.k !== 'batch') return undefined;
  const [batch, other] = a.k === 'batch' ? [a, b] : [b as BatchV, a];
  const n = toNumber(other);
  if (n === undefined || !Number.isInteger(n) || n <= 0) return UNKNOWN;
  if (op === '*') return { k: 'batch', factor: batch.factor * n };
  if (op === '//' && a.k === 'batch' && batch.factor % n === 0) return { k: 'batch', factor: batch.factor / n };
  return UNKNOWN;
}

/** The torch-visible dims of a tensor (dim 0 stands for the batch, folded or not). */
export function torchDims(t: TensorV): Dims | undefined {
  if (!t.shape) return undefined;
  const off = t.fold ? 1 : 0;
  if (t.front) return [t.shape[1 + off], undefined, ...t.shape.slice(2 + off)];
  return t.fold ? [undefined, ...t.shape.slice(2)] : t.shape;
}

/** `x.shape` / `x.size()` in a reading for a known input: dim 0 is the symbolic batch. */
export function sizeValues(t: TensorV): Value[] | undefined {
  const dims = torchDims(t);
  if (!dims) return undefined;
  return dims.map((d, i) => (i === 0 && !t.front ? { k: 'batch', factor: t.fold ?? 1 } : d === undefined ? (t.front && i === 1 ? ({ k: 'batch', factor: t.fold ?? 1 } as Value) : UNKNOWN) : int(d)));
}

type Record = (op: 'reshape' | 'permute', attrs: { shape?: number[]; dims?: number[] }, shape: Dims | undefined) => Value;

/**
 * A reshape of (or into) a folded tensor: the first size is `B · k` (a batch value, or -1 standing for it:
 * `attn.view(-1, heads, N, N)` folds whatever the other sizes leave over into the batch).
 * Undefined when this is not one (the caller's own reshape applies).
 */
export function foldedReshape(x: TensorV, sizes: Value[], record: Record): Value | undefined {
  const first = sizes[0];
  if (!first || (first.k !== 'batch' && toNumber(first) !== -1)) return undefined;
  const rest = sizes.slice(1).map(toNumber);
  const inferred = rest.filter((d) => d === -1).length;
  if (rest.some((d) => d === undefined || d < -1) || inferred > 1 || (inferred && first.k !== 'batch') || !x.shape || x.shape.slice(1).some((d) => d === undefined)) return UNKNOWN;
  // Elements per batch entry, the folded windows included.
  const total = (x.shape.slice(1) as number[]).reduce((p, d) => p * d, 1);
  const known = (rest as number[]).filter((d) => d !== -1).reduce((p, d) => p * d, 1);
  let factor: number;
  if (first.k === 'batch') factor = first.factor;
  else {
    if (total % known !== 0) return UNKNOWN;
    factor = total / known;
  }
  if (total % (factor * known) !== 0) return UNKNOWN;
  const restN = (rest as number[]).map((d) => (d === -1 ? total / (factor * known) : d));
  const target = factor > 1 ? [factor, ...restN] : restN;
  const out = record('reshape', { shape: target }, [undefined, ...target]);
  return out.k === 'tensor' ? withProps(out, { fold: factor > 1 ? factor : undefined }) : out;
}

/**
 * A permute of a folded tensor (IR dims with (batch, k) for torch axis 0), or one that moves the batch to
 * torch axis 1; undefined when it is neither (the caller's own permute applies).
 */
export function foldedPermute(x: TensorV, dims: number[], record: Record): Value | undefined {
  if (x.front) return undefined;
  const rank = dims.length;
  const norm = dims.map((d) => (d < 0 ? d + rank : d));
  if (!x.fold && (norm[0] === 0 || norm[1] !== 0)) return undefined;
  const ir = (d: number): number[] => (d === 0 ? (x.fold ? [0, 1] : [0]) : [d + (x.fold ? 1 : 0)]);
  if (norm[0] === 0) {
    const out = record('permute', { dims: norm.flatMap(ir) }, undefined);
    return out.k === 'tensor' ? withProps(out, { fold: x.fold }) : out;
  }
  // qkv.permute(2, 0, 3, 1, 4): the batch moves to torch axis 1; IR keeps it first, torch axis 0 is IR axis 2.
  if (norm[1] !== 0) return UNKNOWN;
  const out = record('permute', { dims: [...ir(0), ...ir(norm[0]), ...norm.slice(2).flatMap(ir)] }, undefined);
  return out.k === 'tensor' ? withProps(out, { fold: x.fold, front: true }) : out;
}

export function isBatchDim(v: Value | undefined): boolean {
  return v?.k === 'batch';
}

export type { CallSite, Interp };
