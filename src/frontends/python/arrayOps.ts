/**
 * torch / numpy functions and methods on numeric arrays (numericArrays.ts):
 * the constructors (arange, linspace, tensor, meshgrid, stack), elementwise math
 * (round, log, pow, divide), reductions and reshapes, `.tolist()` / `.item()`,
 * (indexing lives in arrayIndexing.ts).
 * Each returns undefined when the call is not one it knows or its arguments are
 * not known arrays and numbers, so the caller's symbolic handling goes on.
 */
import {
  arrayBinary,
  filledArray,
  fromNested,
  isArray,
  makeArray,
  mapArray,
  roundHalfEven,
  shapeOnly,
  stridesOf,
  toPython,
  withDtype,
  arrayElements,
  type ArrayV,
  type DType,
} from './numericArrays';
import { UNKNOWN, int, iterItems, toNumber, type Value } from './values';
const one = (): Value => ({ k: 'num', v: 1, float: false });


function dtypeArg(v: Value | undefined, lib: 'torch' | 'numpy'): DType | undefined {
  if (!v || v.k === 'none') return undefined;
  const name = v.k === 'lib' ? v.path.split('.').pop()! : v.k === 'str' ? v.v : v.k === 'native' ? v.name : '';
  if (/^(int|long|int64|int32|int16|int8|uint8|short)$/.test(name)) return 'int';
  if (name === 'bool') return 'bool';
  if (/^(float64|double)$/.test(name) || (name === 'float' && lib === 'numpy')) return 'f64';
  if (/^(float|float32|half|float16|bfloat16)$/.test(name)) return 'f32';
  return undefined;
}

const floatOf = (lib: 'torch' | 'numpy'): DType => (lib === 'torch' ? 'f32' : 'f64');

function asArray(v: Value | undefined, lib: 'torch' | 'numpy', dtype?: DType): ArrayV | undefined {
  if (!v) return undefined;
  if (isArray(v)) return dtype ? withDtype(v, dtype) : v;
  const nested = fromNested(v);
  if (!nested || nested.data.length > arrayElements()) return undefined;
  return makeArray(nested.shape, nested.data, dtype ?? (nested.float ? floatOf(lib) : 'int'), lib);
}

const UNARY: Record<string, (x: number) => number> = {
  round: roundHalfEven,
  log: Math.log,
  log2: Math.log2,
  exp: Math.exp,
  sqrt: Math.sqrt,
  floor: Math.floor,
  ceil: Math.ceil,
  abs: Math.abs,
  sign: Math.sign,
  neg: (x) => -x,
  negative: (x) => -x,
};
const KEEPS_INT = new Set(['floor', 'ceil', 'abs', 'sign', 'neg', 'negative', 'round']);

const BINARY_FN: Record<string, string> = { add: '+', sub: '-', subtract: '-', mul: '*', multiply: '*', div: '/', divide: '/', true_divide: '/', pow: '**', power: '**', floor_divide: '//', remainder: '%' };

/** `torch.X(...)` / `np.X(...)` on known arrays and numbers; undefined when not handled. */
export function callArrayFunction(path: string, args: Value[], kwargs: Map<string, Value>, inForward: boolean): Value | undefined {
  const lib = path.startsWith('numpy.') ? 'numpy' : path.startsWith('torch.') && path.split('.').length === 2 ? 'torch' : undefined;
  if (!lib) return undefined;
  const name = path.slice(path.lastIndexOf('.') + 1);
  const dtype = dtypeArg(kwargs.get('dtype'), lib);
  switch (name) {
    case 'arange': {
      // In forward, positions over a sequence stay the symbolic stand-in (tensorOps).
      if (inForward && lib === 'torch') return undefined;
      const ns = args.map(toNumber);
      if (!ns.length || ns.some((n) => n === undefined)) return undefined;
      const [start, stop, step] = (ns.length === 1 ? [0, ns[0], 1] : [ns[0], ns[1], ns[2] ?? 1]) as number[];
      if (!step) return undefined;
      const count = Math.max(0, Math.ceil((stop - start) / step));
      if (count > arrayElements()) return undefined;
      const float = args.some((a) => a.k === 'num' && a.float);
      return makeArray([count], Array.from({ length: count }, (_, i) => start + i * step), dtype ?? (float ? floatOf(lib) : 'int'), lib);
    }
    case 'linspace': {
      const start = toNumber(args[0] ?? kwargs.get('start'));
      const stop = toNumber(args[1] ?? kwargs.get('end') ?? kwargs.get('stop'));
      const steps = toNumber(args[2] ?? kwargs.get('steps') ?? kwargs.get('num') ?? (lib === 'numpy' ? int(50) : undefined));
      if (start === undefined || stop === undefined || steps === undefined || steps < 0 || steps > arrayElements()) return undefined;
      // numpy: start + i·step, the last value exactly stop; torch (float32) the same formula.
      const step = steps > 1 ? (stop - start) / (steps - 1) : 0;
      const data = Array.from({ length: steps }, (_, i) => (i === steps - 1 && steps > 1 ? stop : start + i * step));
      return makeArray([steps], data, dtype ?? floatOf(lib), lib);
    }
    case 'zeros':
    case 'ones':
    case 'full': {
      // Small constants of known values (`torch.log(10 * torch.ones((heads, 1, 1)))`); larger ones (a LayerNorm weight of ones) stay shape-only.
      const sizes = name === 'full' ? args[0] : args.length === 1 && (args[0].k === 'tuple' || args[0].k === 'list') ? args[0] : { k: 'tuple' as const, items: args };
      const dims = (iterItems(sizes ?? UNKNOWN) ?? []).map(toNumber);
      const fill = name === 'full' ? toNumber(args[1] ?? kwargs.get('fill_value')) : name === 'ones' ? 1 : 0;
      const n = dims.reduce<number | undefined>((p, d) => (p === undefined || d === undefined || d < 0 ? undefined : p * d), 1);
      if (!dims.length || n === undefined || fill === undefined || n > 4096) return undefined;
      const float = name !== 'full' || (args[1]?.k === 'num' && args[1].float);
      return filledArray(dims as number[], n, fill, dtype ?? (float ? floatOf(lib) : 'int'), lib);
    }
    case 'tensor':
    case 'as_tensor':
    case 'array':
    case 'asarray':
      return args[0] ? asArray(args[0], lib, dtype) : undefined;
    case 'meshgrid': {
      const list = args.length === 1 && (args[0].k === 'list' || args[0].k === 'tuple') ? args[0].items : args;
      const arrays = list.map((a) => asArray(a, lib));
      if (!arrays.length || arrays.some((a) => !a || a.shape.length !== 1)) return undefined;
      const ok = arrays as ArrayV[];
      const indexing = kwargs.get('indexing');
      const xy = indexing?.k === 'str' ? indexing.v === 'xy' : lib === 'numpy';
      const dims = ok.map((a) => a.shape[0]);
      if (xy && dims.length >= 2) [dims[0], dims[1]] = [dims[1], dims[0]];
      const out = ok.map((a, k) => {
        const axis = xy && k < 2 ? 1 - k : k;
        const n = dims.reduce((x, y) => x * y, 1);
        const after = dims.slice(axis + 1).reduce((x, y) => x * y, 1);
        return makeArray([...dims], Array.from({ length: n }, (_, i) => a.values.data[Math.floor(i / after) % dims[axis]]), a.values.dtype, lib);
      });
      return { k: 'tuple', items: out };
    }
    case 'stack':
    case 'cat':
    case 'concatenate': {
      const items = iterItems(args[0] ?? UNKNOWN)?.map((a) => asArray(a, lib));
      if (!items?.length || items.some((a) => !a)) return undefined;
      const ok = items as ArrayV[];
      const axisArg = toNumber(args[1] ?? kwargs.get('dim') ?? kwargs.get('axis')) ?? 0;
      return name === 'stack' ? stack(ok, axisArg) : concat(ok, axisArg);
    }
    case 'flatten': {
      const a = asArray(args[0], lib);
      return a ? arrayMethod(a, 'flatten', args.slice(1), kwargs) : undefined;
    }
    case 'diff': {
      const a = asArray(args[0], lib);
      if (!a || a.shape.length !== 1) return undefined;
      const d = a.values.data;
      return makeArray([Math.max(0, d.length - 1)], d.slice(1).map((x, i) => x - d[i]), a.values.dtype, lib);
    }
    case 'unique': {
      const a = asArray(args[0], lib);
      if (!a) return undefined;
      const data = [...new Set(a.values.data)].sort((x, y) => x - y);
      return makeArray([data.length], data, a.values.dtype, lib);
    }
    case 'sum':
    case 'prod':
    case 'cumsum': {
      const a = asArray(args[0], lib);
      return a && (args.length === 1 || isArray(args[0])) ? arrayMethod(a, name, args.slice(1), kwargs) : undefined;
    }
  }
  if (UNARY[name]) {
    const a = args.length === 1 ? asArray(args[0], lib) : undefined;
    if (!a || (!isArray(args[0]) && lib === 'torch')) return undefined;
    const keep = KEEPS_INT.has(name) && (a.values.dtype === 'int' || a.values.dtype === 'bool');
    return mapArray(a, UNARY[name], keep ? a.values.dtype : undefined);
  }
  if (BINARY_FN[name] && args.length === 2 && (isArray(args[0]) || isArray(args[1]) || lib === 'numpy')) {
    const [a, b] = args.map((x) => (isArray(x) || x.k === 'num' || x.k === 'bool' ? x : asArray(x, lib) ?? x));
    const la = isArray(a) || isArray(b) ? a : asArray(a, lib);
    return la ? arrayBinary(BINARY_FN[name], la, b) : undefined;
  }
  return undefined;
}

function stack(items: ArrayV[], axis: number): Value | undefined {
  const shape = items[0].shape;
  if (items.some((a) => a.shape.join() !== shape.join())) return undefined;
  const ax = axis < 0 ? axis + shape.length + 1 : axis;
  const expanded = items.map((a) => makeArray([...shape.slice(0, ax), 1, ...shape.slice(ax)], a.values.data, a.values.dtype, a.values.lib));
  return concat(expanded, ax);
}

function concat(items: ArrayV[], axis: number): Value | undefined {
  const rank = items[0].shape.length;
  const ax = axis < 0 ? axis + rank : axis;
  if (items.some((a) => a.shape.length !== rank || a.shape.some((d, i) => i !== ax && d !== items[0].shape[i]))) return undefined;
  const outer = items[0].shape.slice(0, ax).reduce((x, y) => x * y, 1);
  const data: number[] = [];
  for (let o = 0; o < outer; o++) {
    for (const a of items) {
      const chunk = a.shape.slice(ax).reduce((x, y) => x * y, 1);
      data.push(...a.values.data.slice(o * chunk, (o + 1) * chunk));
    }
  }
  const shape = [...items[0].shape];
  shape[ax] = items.reduce((s, a) => s + a.shape[ax], 0);
  return makeArray(shape, data, items[0].values.dtype, items[0].values.lib);
}

function reshaped(a: ArrayV, dims: Value[]): Value | undefined {
  const target = (dims.length === 1 && (dims[0].k === 'tuple' || dims[0].k === 'list') ? dims[0].items : dims).map(toNumber);
  if (target.some((d) => d === undefined)) return undefined;
  const t = target as number[];
  const total = a.values.data.length;
  const known = t.filter((d) => d !== -1).reduce((x, y) => x * y, 1);
  const out = t.map((d) => (d === -1 ? total / known : d));
  if (out.reduce((x, y) => x * y, 1) !== total || out.some((d) => !Number.isInteger(d))) return undefined;
  return makeArray(out, a.values.data, a.values.dtype, a.values.lib);
}

function permuted(a: ArrayV, order: number[]): Value | undefined {
  const rank = a.shape.length;
  const p = order.map((d) => (d < 0 ? d + rank : d));
  if (p.length !== rank || new Set(p).size !== rank) return undefined;
  const shape = p.map((d) => a.shape[d]);
  const src = stridesOf(a.shape);
  const n = a.values.data.length;
  const outSt = stridesOf(shape);
  const data = new Array<number>(n);
  for (let i = 0; i < n; i++) {
    let idx = 0;
    for (let d = 0; d < rank; d++) idx += (Math.floor(i / outSt[d]) % shape[d]) * src[p[d]];
    data[i] = a.values.data[idx];
  }
  return makeArray(shape, data, a.values.dtype, a.values.lib);
}

function reduce(a: ArrayV, name: 'sum' | 'prod' | 'cumsum', dimArg: Value | undefined): Value | undefined {
  const op = name === 'prod' ? (x: number, y: number) => x * y : (x: number, y: number) => x + y;
  const init = name === 'prod' ? 1 : 0;
  const dim = toNumber(dimArg);
  if (dim === undefined) {
    if (name === 'cumsum') return undefined;
    const total = a.values.data.reduce(op, init);
    return makeArray([], [total], a.values.dtype === 'bool' ? 'int' : a.values.dtype, a.values.lib);
  }
  const rank = a.shape.length;
  const ax = dim < 0 ? dim + rank : dim;
  if (ax < 0 || ax >= rank) return undefined;
  const outer = a.shape.slice(0, ax).reduce((x, y) => x * y, 1);
  const inner = a.shape.slice(ax + 1).reduce((x, y) => x * y, 1);
  const len = a.shape[ax];
  const src = a.values.data;
  const dtype = a.values.dtype === 'bool' ? 'int' : a.values.dtype;
  if (name === 'cumsum') {
    const data = [...src];
    for (let o = 0; o < outer; o++) for (let i = 0; i < inner; i++) for (let k = 1; k < len; k++) data[(o * len + k) * inner + i] += data[(o * len + k - 1) * inner + i];
    return makeArray(a.shape, data, dtype, a.values.lib);
  }
  const data: number[] = [];
  for (let o = 0; o < outer; o++) {
    for (let i = 0; i < inner; i++) {
      let acc = init;
      for (let k = 0; k < len; k++) acc = op(acc, src[(o * len + k) * inner + i]);
      data.push(acc);
    }
  }
  return makeArray([...a.shape.slice(0, ax), ...a.shape.slice(ax + 1)], data, dtype, a.values.lib);
}

/** `a.name(args)` on a numeric array; undefined when not handled. */
export function arrayMethod(a: ArrayV, name: string, args: Value[], kwargs: Map<string, Value>): Value | undefined {
  const lib = a.values.lib;
  switch (name) {
    case 'tolist':
      return toPython(a);
    case 'item':
      return a.values.data.length === 1 ? toPython(makeArray([], a.values.data, a.values.dtype, lib)) : undefined;
    case 'int':
    case 'long':
      return withDtype(a, 'int');
    case 'float':
      return withDtype(a, 'f32');
    case 'double':
      return withDtype(a, 'f64');
    case 'bool':
      return withDtype(a, 'bool');
    case 'astype':
      return withDtype(a, dtypeArg(args[0], lib) ?? a.values.dtype);
    case 'numpy':
    case 'contiguous':
    case 'clone':
    case 'detach':
    case 'copy':
    case 'cpu':
    case 'to':
      return a;
    case 'size':
    case 'dim': {
      if (name === 'dim') return int(a.shape.length);
      const d = toNumber(args[0]);
      if (d === undefined) return { k: 'tuple', items: a.shape.map(int) };
      return int(a.shape[d < 0 ? d + a.shape.length : d]);
    }
    case 'view':
    case 'reshape':
      return reshaped(a, args);
    case 'flatten': {
      const rank = a.shape.length;
      const s = toNumber(args[0] ?? kwargs.get('start_dim')) ?? 0;
      const e = toNumber(args[1] ?? kwargs.get('end_dim')) ?? -1;
      const start = s < 0 ? s + rank : s;
      const end = e < 0 ? e + rank : e;
      if (rank === 0) return makeArray([1], a.values.data, a.values.dtype, lib);
      const merged = a.shape.slice(start, end + 1).reduce((x, y) => x * y, 1);
      return makeArray([...a.shape.slice(0, start), merged, ...a.shape.slice(end + 1)], a.values.data, a.values.dtype, lib);
    }
    case 'permute':
      return permuted(a, (args.length === 1 && (args[0].k === 'tuple' || args[0].k === 'list') ? args[0].items : args).map((d) => toNumber(d) ?? NaN));
    case 'transpose': {
      const rank = a.shape.length;
      const d0 = toNumber(args[0]);
      const d1 = toNumber(args[1]);
      if (d0 === undefined || d1 === undefined) return undefined;
      const order = Array.from({ length: rank }, (_, i) => i);
      const i0 = d0 < 0 ? d0 + rank : d0;
      const i1 = d1 < 0 ? d1 + rank : d1;
      [order[i0], order[i1]] = [order[i1], order[i0]];
      return permuted(a, order);
    }
    case 'unsqueeze': {
      const d = toNumber(args[0]);
      if (d === undefined) return undefined;
      const at = d < 0 ? d + a.shape.length + 1 : d;
      return makeArray([...a.shape.slice(0, at), 1, ...a.shape.slice(at)], a.values.data, a.values.dtype, lib);
    }
    case 'squeeze': {
      const d = toNumber(args[0]);
      const shape = d === undefined ? a.shape.filter((x) => x !== 1) : a.shape.filter((x, i) => !(i === (d < 0 ? d + a.shape.length : d) && x === 1));
      return makeArray(shape, a.values.data, a.values.dtype, lib);
    }
    case 'sum':
    case 'prod':
    case 'cumsum':
      return reduce(a, name, args[0] ?? kwargs.get('dim') ?? kwargs.get('axis'));
    case 'masked_fill':
    case 'masked_fill_': {
      // Where the mask is set, the value: value·mask + a·(1 − mask), broadcast as torch does.
      const mask = args[0];
      const value = toNumber(args[1] ?? kwargs.get('value'));
      if (!isArray(mask) || value === undefined) return undefined;
      const kept = arrayBinary('*', a, arrayBinary('-', one(), mask) ?? UNKNOWN);
      const filled = arrayBinary('*', mask, { k: 'num', v: value, float: true });
      const out = kept && filled ? arrayBinary('+', kept, filled) : undefined;
      return isArray(out) && out.shape.join() === a.shape.join() ? withDtype(out, a.values.dtype) : undefined;
    }
  }
  const unary = name.endsWith('_') ? name.slice(0, -1) : name;
  if (UNARY[unary] && args.length === 0) return mapArray(a, UNARY[unary], KEEPS_INT.has(unary) && a.values.dtype === 'int' ? 'int' : undefined);
  if (BINARY_FN[unary] && args.length === 1) return arrayBinary(BINARY_FN[unary], a, args[0]);
  return undefined;
}

export { shapeOnly };
