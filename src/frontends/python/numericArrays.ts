/**
 * Numeric arrays computed while a model is built: `torch.arange(depth) * w_a + w_0`,
 * `torch.round(torch.log(…))`, `np.linspace(0, p, n).tolist()`, a relative
 * position index from `torch.meshgrid`. They are constant tensors (no graph id)
 * whose values are known: elementwise arithmetic broadcasts as numpy and torch
 * do, with torch's float32 default (rounded through Math.fround) and numpy's
 * float64, so `.tolist()` / `.item()` hand the layer sizes they encode back to
 * Python. An operation whose values are not modelled keeps the array's shape
 * when it is known and drops the values: later reads of them are Unknown, never
 * a guess.
 */
import { toNumber, type Dims, type TensorV, type Value } from './values';

export type DType = 'int' | 'bool' | 'f32' | 'f64';

export interface ArrayData {
  data: number[];
  dtype: DType;
  /** Which library made it: decides the float type a Python float promotes to. */
  lib: 'torch' | 'numpy';
}

export type ArrayV = Omit<TensorV, 'shape' | 'values'> & { shape: number[]; values: ArrayData };

const MAX_ELEMENTS = 1_000_000;

export function isArray(v: Value | undefined): v is ArrayV {
  return v?.k === 'tensor' && v.id === '' && v.values !== undefined && !!v.shape;
}

const cast = (x: number, dtype: DType): number => (dtype === 'int' ? Math.trunc(x) : dtype === 'bool' ? (x ? 1 : 0) : dtype === 'f32' ? Math.fround(x) : x);

export function makeArray(shape: number[], data: number[], dtype: DType, lib: 'torch' | 'numpy'): ArrayV {
  return { k: 'tensor', id: '', shape, framework: 'pytorch', values: { data: data.map((x) => cast(x, dtype)), dtype, lib } };
}

/**
 * `n` copies of one value (torch.zeros/ones/full): makeArray's result for
 * `new Array(n).fill(value)`, with the value cast once instead of copying a
 * filled array element by element (nanoGPT's 49 LayerNorms build two
 * 1,024-element arrays each on every analysis).
 */
export function filledArray(shape: number[], n: number, value: number, dtype: DType, lib: 'torch' | 'numpy'): ArrayV {
  return { k: 'tensor', id: '', shape, framework: 'pytorch', values: { data: new Array<number>(n).fill(cast(value, dtype)), dtype, lib } };
}

/** A constant of known shape whose values are not modelled. */
export function shapeOnly(shape: Dims | undefined): TensorV {
  return { k: 'tensor', id: '', shape, framework: 'pytorch' };
}

const size = (shape: readonly number[]): number => shape.reduce((a, b) => a * b, 1);

/** Nested Python lists of numbers → flat data and shape; undefined when ragged or unknown. */
export function fromNested(v: Value): { data: number[]; shape: number[]; float: boolean } | undefined {
  if (isArray(v)) return { data: v.values.data, shape: v.shape, float: v.values.dtype === 'f32' || v.values.dtype === 'f64' };
  const n = toNumber(v);
  if (n !== undefined) return { data: [n], shape: [], float: v.k === 'num' && v.float };
  if (v.k !== 'list' && v.k !== 'tuple') return undefined;
  const parts = v.items.map(fromNested);
  if (parts.some((p) => !p)) return undefined;
  const ok = parts as Array<{ data: number[]; shape: number[]; float: boolean }>;
  const inner = ok[0]?.shape ?? [];
  if (ok.some((p) => p.shape.join() !== inner.join())) return undefined;
  return { data: ok.flatMap((p) => p.data), shape: [ok.length, ...inner], float: ok.some((p) => p.float) };
}

/** Scalars and arrays as one operand: shape [] for a Python number. */
function operand(v: Value): { data: number[]; shape: number[]; dtype: DType; lib?: 'torch' | 'numpy' } | undefined {
  if (isArray(v)) return { data: v.values.data, shape: v.shape, dtype: v.values.dtype, lib: v.values.lib };
  if (v.k === 'num') return { data: [v.v], shape: [], dtype: v.float ? 'f64' : 'int' };
  if (v.k === 'bool') return { data: [v.v ? 1 : 0], shape: [], dtype: 'bool' };
  return undefined;
}

/** numpy/torch broadcasting of two shapes; undefined when they do not broadcast. */
export function broadcastShapes(a: readonly number[], b: readonly number[]): number[] | undefined {
  const n = Math.max(a.length, b.length);
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const x = a[a.length - n + i] ?? 1;
    const y = b[b.length - n + i] ?? 1;
    if (x !== y && x !== 1 && y !== 1) return undefined;
    out.push(x === 1 ? y : x);
  }
  return out;
}

/** Row-major element strides of a shape (the last axis moves fastest). */
export function stridesOf(shape: readonly number[]): number[] {
  const s = new Array<number>(shape.length);
  let acc = 1;
  for (let i = shape.length - 1; i >= 0; i--) {
    s[i] = acc;
    acc *= shape[i];
  }
  return s;
}

/** Element i of `data` (of `shape`) seen through the broadcast `out` shape. */
function broadcastIndexer(shape: readonly number[], out: readonly number[]): (i: number) => number {
  // The common cases first: the same shape, or a scalar.
  if (shape.length === out.length && shape.every((d, i) => d === out[i])) return (i) => i;
  if (shape.every((d) => d === 1)) return () => 0;
  const st = stridesOf(shape);
  const outSt = stridesOf(out);
  const offset = out.length - shape.length;
  return (i) => {
    let idx = 0;
    for (let d = 0; d < shape.length; d++) {
      const coord = Math.floor(i / outSt[d + offset]) % out[d + offset];
      idx += shape[d] === 1 ? 0 : coord * st[d];
    }
    return idx;
  };
}

/** Result dtype of mixing two operands (torch: a Python float makes an int tensor float32). */
function promote(a: DType, b: DType, lib: 'torch' | 'numpy', trueDivide: boolean): DType {
  const rank = (d: DType): number => ({ bool: 0, int: 1, f32: 2, f64: 3 })[d];
  let out = rank(a) >= rank(b) ? a : b;
  if (out === 'f64' && lib === 'torch' && (a === 'f32' || b === 'f32' || a === 'int' || b === 'int' || a === 'bool' || b === 'bool')) out = a === 'f64' && b === 'f64' ? 'f64' : 'f32';
  if (trueDivide && (out === 'int' || out === 'bool')) out = lib === 'torch' ? 'f32' : 'f64';
  return out;
}

const BINARY: Record<string, (x: number, y: number) => number> = {
  '+': (x, y) => x + y,
  '-': (x, y) => x - y,
  '*': (x, y) => x * y,
  '/': (x, y) => x / y,
  '//': (x, y) => Math.floor(x / y),
  '%': (x, y) => ((x % y) + y) % y,
  '**': (x, y) => x ** y,
  '<': (x, y) => +(x < y),
  '<=': (x, y) => +(x <= y),
  '>': (x, y) => +(x > y),
  '>=': (x, y) => +(x >= y),
  '==': (x, y) => +(x === y),
  '!=': (x, y) => +(x !== y),
};

/**
 * `a op b` where one side is a numeric array and the other an array or a number;
 * undefined when neither is (the caller goes on as before).
 */
export function arrayBinary(op: string, a: Value, b: Value): Value | undefined {
  if (!isArray(a) && !isArray(b)) return undefined;
  const x = operand(a);
  const y = operand(b);
  const other = isArray(a) ? b : a;
  if (!x || !y) return other.k === 'tensor' ? undefined : shapeOnly(undefined);
  const fn = BINARY[op];
  const shape = broadcastShapes(x.shape, y.shape);
  if (!shape) return undefined;
  const lib = x.lib ?? y.lib ?? 'torch';
  if (!fn) return shapeOnly(shape);
  const comparison = ['<', '<=', '>', '>=', '==', '!='].includes(op);
  const dtype: DType = comparison ? 'bool' : promote(x.dtype, y.dtype, lib, op === '/');
  const n = size(shape);
  if (n > MAX_ELEMENTS) return shapeOnly(shape);
  const ix = broadcastIndexer(x.shape, shape);
  const iy = broadcastIndexer(y.shape, shape);
  // Operands are first rounded to the result's float type, as torch converts before computing.
  const pre = (v: number): number => (dtype === 'f32' ? Math.fround(v) : v);
  const data = new Array<number>(n);
  for (let i = 0; i < n; i++) data[i] = fn(pre(x.data[ix(i)]), pre(y.data[iy(i)]));
  return makeArray(shape, data, dtype, lib);
}

/** Python's round(): half to even, as torch.round and np.round do. */
export function roundHalfEven(x: number): number {
  const r = Math.round(x);
  return Math.abs(x % 1) === 0.5 && r % 2 !== 0 ? r - 1 : r;
}

/** The Python value of an array: nested lists of ints/floats (`.tolist()`), a number for rank 0. */
export function toPython(a: ArrayV): Value {
  const float = a.values.dtype === 'f32' || a.values.dtype === 'f64';
  const scalar = (x: number): Value => (a.values.dtype === 'bool' ? { k: 'bool', v: x !== 0 } : { k: 'num', v: x, float });
  const build = (dim: number, offset: number): Value => {
    if (dim === a.shape.length) return scalar(a.values.data[offset]);
    const st = size(a.shape.slice(dim + 1));
    return { k: 'list', items: Array.from({ length: a.shape[dim] }, (_, i) => build(dim + 1, offset + i * st)) };
  };
  return build(0, 0);
}

export function withDtype(a: ArrayV, dtype: DType): ArrayV {
  return makeArray(a.shape, a.values.data, dtype, a.values.lib);
}

export function mapArray(a: ArrayV, fn: (x: number) => number, dtype: DType = a.values.dtype === 'int' || a.values.dtype === 'bool' ? (a.values.lib === 'torch' ? 'f32' : 'f64') : a.values.dtype): ArrayV {
  return makeArray(a.shape, a.values.data.map((x) => fn(x)), dtype, a.values.lib);
}

export function arrayElements(): number {
  return MAX_ELEMENTS;
}
