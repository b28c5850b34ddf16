/**
 * Python builtins model code uses to compute layer sizes and names (the str/list/dict methods are in
 * valueMethods.ts). Anything unknown in, Unknown out.
 */
import { formatValue } from './strings';
import {
  FALSE,
  NONE,
  TRUE,
  UNKNOWN,
  bool,
  int,
  iterItems,
  keyOf,
  native,
  num,
  str,
  toNumber,
  truthy,
  type CallSite,
  type DictV,
  type NativeFn,
  type Value,
} from './values';

function numbers(args: Value[]): number[] | undefined {
  const items = args.length === 1 ? (iterItems(args[0]) ?? args) : args;
  if (!items) return undefined;
  const out: number[] = [];
  for (const i of items) {
    const n = toNumber(i);
    if (n === undefined) return undefined;
    out.push(n);
  }
  return out;
}

const isFloat = (args: Value[]): boolean => (args.length === 1 ? iterItems(args[0]) ?? [] : args).some((a) => a.k === 'num' && a.float);

export function dictFrom(args: Value[], kwargs: Map<string, Value>): DictV {
  const out: DictV = { k: 'dict', map: new Map() };
  const src = args[0];
  if (src?.k === 'dict') for (const [k, v] of src.map) out.map.set(k, v);
  else if (src) {
    for (const pair of iterItems(src) ?? []) {
      const kv = iterItems(pair);
      if (kv && kv.length === 2) out.map.set(keyOf(kv[0]), [kv[0], kv[1]]);
    }
  }
  for (const [k, v] of kwargs) out.map.set('s:' + k, [str(k), v]);
  return out;
}

const fns: Record<string, NativeFn> = {
  int: ([a]) => {
    if (a?.k === 'str') return /^\s*-?\d+\s*$/.test(a.v) ? int(parseInt(a.v, 10)) : UNKNOWN;
    const n = toNumber(a);
    return n === undefined ? (a ? UNKNOWN : int(0)) : int(Math.trunc(n));
  },
  float: ([a]) => {
    const n = a?.k === 'str' ? parseFloat(a.v) : toNumber(a);
    return n === undefined || Number.isNaN(n) ? UNKNOWN : num(n, true);
  },
  str: ([a]) => {
    const s = a ? formatValue(a) : '';
    return s === undefined ? UNKNOWN : str(s);
  },
  bool: ([a]) => {
    const t = a ? truthy(a) : false;
    return t === undefined ? UNKNOWN : bool(t);
  },
  round: ([a, d]) => {
    const n = toNumber(a);
    if (n === undefined) return UNKNOWN;
    const digits = toNumber(d);
    if (digits === undefined) {
      // Python rounds half to even.
      const r = Math.round(n);
      return int(Math.abs(n % 1) === 0.5 && r % 2 !== 0 ? r - 1 : r);
    }
    const f = 10 ** digits;
    return num(Math.round(n * f) / f, true);
  },
  abs: ([a]) => {
    const n = toNumber(a);
    return n === undefined ? UNKNOWN : num(Math.abs(n), a.k === 'num' && a.float);
  },
  max: (args) => {
    const ns = numbers(args);
    return ns?.length ? num(Math.max(...ns), isFloat(args)) : UNKNOWN;
  },
  min: (args) => {
    const ns = numbers(args);
    return ns?.length ? num(Math.min(...ns), isFloat(args)) : UNKNOWN;
  },
  sum: ([a, start]) => {
    const ns = a ? numbers([a]) : undefined;
    return ns ? num(ns.reduce((x, y) => x + y, toNumber(start) ?? 0), isFloat([a])) : UNKNOWN;
  },
  len: ([a]) => {
    if (a?.k === 'dict') return int(a.map.size);
    if (a?.k === 'mod' && a.children) return int(a.children.size);
    if (a?.k === 'inst' && a.children) return int(a.children.size);
    const items = a ? iterItems(a) : undefined;
    return items ? int(items.length) : stillUnknown(a);
  },
  range: (args) => {
    // Python raises TypeError here: a size left None (minGPT's n_layer before its model_type fills it in) is said where the loop over it is.
    if (args.some((a) => a.k === 'none')) return { k: 'unknown', why: 'range() of None, which Python refuses (TypeError): a size the code never set' };
    const ns = args.map(toNumber);
    if (ns.some((n) => n === undefined)) return UNKNOWN;
    if (ns.length === 0) return UNKNOWN;
    const [start, stop, step] = (ns.length === 1 ? [0, ns[0], 1] : [ns[0], ns[1], ns[2] ?? 1]) as number[];
    return { k: 'range', start, stop, step };
  },
  // An unknown iterable stays unknown (an empty list would silently drop what a loop over it builds).
  list: ([a]) => (!a ? { k: 'list', items: [] } : iterable(a, (items) => ({ k: 'list', items: [...items] }))),
  tuple: ([a]) => (!a ? { k: 'tuple', items: [] } : iterable(a, (items) => ({ k: 'tuple', items: [...items] }))),
  set: ([a]) => (!a ? { k: 'list', items: [] } : iterable(a, (items) => ({ k: 'list', items: [...new Map(items.map((v) => [keyOf(v), v])).values()] }))),
  sorted: ([a]) => {
    const items = a ? iterItems(a) : undefined;
    const ns = items ? numbers([a]) : undefined;
    if (ns) return { k: 'list', items: [...items!].sort((x, y) => toNumber(x)! - toNumber(y)!) };
    return items ? { k: 'list', items: [...items] } : stillUnknown(a);
  },
  reversed: ([a]) => iterable(a, (items) => ({ k: 'list', items: [...items].reverse() })),
  dict: (args, kwargs) => dictFrom(args, kwargs),
  enumerate: ([a, start]) => {
    const s = toNumber(start) ?? 0;
    return iterable(a, (items) => ({ k: 'list', items: items.map((v, i) => ({ k: 'tuple', items: [int(i + s), v] })) }));
  },
  zip: (args) => {
    const known = args.map((a) => iterItems(a));
    if (known.some((l) => l === undefined)) return UNKNOWN;
    const lists = known as Value[][];
    const n = lists.length ? Math.min(...lists.map((l) => l.length)) : 0;
    return { k: 'list', items: Array.from({ length: n }, (_, i) => ({ k: 'tuple', items: lists.map((l) => l[i]) })) };
  },
  any: ([a]) => {
    const items = iterItems(a);
    if (!items) return UNKNOWN;
    const ts = items.map(truthy);
    return ts.includes(true) ? TRUE : ts.includes(undefined) ? UNKNOWN : FALSE;
  },
  all: ([a]) => {
    const items = iterItems(a);
    if (!items) return UNKNOWN;
    const ts = items.map(truthy);
    return ts.includes(false) ? FALSE : ts.includes(undefined) ? UNKNOWN : TRUE;
  },
  divmod: ([a, b]) => {
    const x = toNumber(a);
    const y = toNumber(b);
    if (x === undefined || !y) return UNKNOWN;
    return { k: 'tuple', items: [int(Math.floor(x / y)), int(((x % y) + y) % y)] };
  },
  pow: ([a, b]) => {
    const x = toNumber(a);
    const y = toNumber(b);
    return x === undefined || y === undefined ? UNKNOWN : num(x ** y);
  },
  isinstance: ([obj, cls]) => {
    const classes = cls?.k === 'tuple' ? cls.items : cls ? [cls] : [];
    const results = classes.map((c) => isInstance(obj, c));
    return results.includes(true) ? TRUE : results.every((r) => r === false) ? FALSE : UNKNOWN;
  },
  callable: ([a]) => bool(!!a && ['func', 'bound', 'native', 'class', 'lib', 'mod', 'klayer'].includes(a.k)),
  print: () => NONE,
  id: () => UNKNOWN,
  hash: () => UNKNOWN,
  type: () => UNKNOWN,
  iter: ([a]) => a ?? UNKNOWN,
  next: ([a]) => iterItems(a ?? UNKNOWN)?.[0] ?? UNKNOWN,
};

/** numbers' and collections.abc's classes, by the value kinds that are instances of them (Python's data model). */
const ABSTRACT_KINDS: Readonly<Record<string, readonly string[]>> = {
  'numbers.Number': ['num', 'bool'], 'numbers.Real': ['num', 'bool'],
  'collections.abc.Sequence': ['list', 'tuple', 'str'], 'typing.Sequence': ['list', 'tuple', 'str'],
  'collections.abc.Mapping': ['dict'], 'typing.Mapping': ['dict'], 'collections.abc.Iterable': ['list', 'tuple', 'str', 'dict'],
};

function isInstance(obj: Value | undefined, cls: Value): boolean | undefined {
  if (!obj || obj.k === 'unknown') return undefined;
  if (cls.k === 'native') {
    const byName: Record<string, string[]> = { int: ['num', 'bool'], float: ['num'], str: ['str'], list: ['list'], tuple: ['tuple'], dict: ['dict'], bool: ['bool'] };
    const kinds = byName[cls.name];
    if (!kinds) return undefined;
    if (cls.name === 'int') return obj.k === 'bool' || (obj.k === 'num' && !obj.float);
    if (cls.name === 'float') return obj.k === 'num' && obj.float;
    return kinds.includes(obj.k);
  }
  if (cls.k === 'class') {
    if (obj.k !== 'inst') return false;
    const seen = new Set<Value>();
    const walk = (c: Value): boolean => {
      if (c === cls) return true;
      if (c.k !== 'class' || seen.has(c)) return false;
      seen.add(c);
      return c.bases.some(walk);
    };
    return walk(obj.cls);
  }
  if (cls.k === 'lib') {
    const short = cls.path.split('.').pop() ?? '';
    if (cls.path === 'types.FunctionType') return obj.k === 'func' || obj.k === 'native';
    // The abstract base classes code checks plain values against (torchvision's _setup_size: Number, Sequence).
    const abc = ABSTRACT_KINDS[cls.path];
    if (abc && ['num', 'bool', 'str', 'list', 'tuple', 'dict', 'none'].includes(obj.k)) return abc.includes(obj.k);
    // `isinstance(input, Tensor)` (DenseNet's layers take a tensor or a list of them).
    if (cls.path === 'torch.Tensor') return obj.k === 'tensor' || obj.k === 'param' ? true : ['list', 'tuple', 'dict', 'num', 'str', 'none', 'bool'].includes(obj.k) ? false : undefined;
    if (obj.k === 'mod') return short === 'Module' || obj.type === short;
    if (obj.k === 'klayer') return short === 'Layer' || obj.type === short;
    if (obj.k === 'inst') {
      // A user class is an instance of the library classes among its ancestors.
      const seen = new Set<Value>();
      const walk = (c: Value): boolean | undefined => {
        if (seen.has(c)) return false;
        seen.add(c);
        if (c.k === 'lib') return c.path === cls.path || (short === 'Module' && c.path.startsWith('torch.nn.')) ? true : c.path.startsWith('torch.nn.') ? false : undefined;
        if (c.k !== 'class') return undefined;
        const r = c.bases.map(walk);
        return r.includes(true) ? true : r.every((x) => x === false) ? false : undefined;
      };
      return walk(obj.cls);
    }
    return undefined;
  }
  return undefined;
}

export const builtinNames = new Map<string, Value>(Object.entries(fns).map(([name, fn]) => [name, native(name, fn)]));

function getattrFn(getAttr: (obj: Value, name: string) => Value): NativeFn {
  return ([obj, name, dflt]) => {
    if (!obj || name?.k !== 'str') return UNKNOWN;
    const v = getAttr(obj, name.v);
    return v.k === 'unknown' && dflt ? dflt : v;
  };
}

/** Builtins that need attribute access, made per interpreter (kept out of the table to avoid an import cycle). */
export function attrBuiltins(getAttr: (obj: Value, name: string) => Value, setAttr: (obj: Value, name: string, v: Value) => void): Array<[string, Value]> {
  return [
    ['getattr', native('getattr', getattrFn(getAttr))],
    ['hasattr', native('hasattr', ([obj, name]) => (obj && name?.k === 'str' ? bool(getAttr(obj, name.v).k !== 'unknown') : UNKNOWN))],
    [
      'setattr',
      native('setattr', ([obj, name, v]) => {
        if (obj && name?.k === 'str' && v) setAttr(obj, name.v, v);
        return NONE;
      }),
    ],
  ];
}

/**
 * Builtins that call back into the evaluator, made per interpreter: `map(fn, *iterables)` (attention code maps a
 * reshape over `qkv.chunk(3)`), as a list of the calls' results; undefined items when an iterable is unknown; and
 * `next(it)`, which tells `drawn` what it draws from (a DataLoader's batch is the run's: runLoaderBatch.ts).
 */
export function callingBuiltins(
  call: (fn: Value, args: Value[], site: CallSite) => Value,
  iterate: (v: Value) => Value[] | undefined,
  /** The bound `__name__` method an instance of the script's own class defines, if it does. */
  dunder: (obj: Value, name: string) => Value | undefined,
  drawn: (iterable: Value | undefined, site: CallSite) => void,
): Array<[string, Value]> {
  return [
    [
      'next',
      native('next', (args, kwargs, site) => {
        drawn(args[0], site);
        return fns.next!(args, kwargs, site);
      }),
    ],
    // `len(corpus.dictionary)` calls the class's __len__, as Python does (the word language model's vocabulary).
    ['len', native('len', (args, kwargs, site) => {
      const own = args[0] ? dunder(args[0], '__len__') : undefined;
      return own ? call(own, [], site) : fns.len!(args, kwargs, site);
    })],
    [
      'map',
      native('map', ([fn, ...iterables], _kw, site) => {
        const lists = iterables.map(iterate);
        if (!fn || lists.length === 0 || lists.some((l) => l === undefined)) return UNKNOWN;
        const n = Math.min(...lists.map((l) => l!.length));
        return { k: 'list', items: Array.from({ length: n }, (_, i) => call(fn, lists.map((l) => l![i]), site)) };
      }),
    ],
  ];
}

function iterable(a: Value | undefined, make: (items: Value[]) => Value): Value {
  const items = a ? iterItems(a) : undefined;
  return items ? make(items) : stillUnknown(a);
}

/** Unknown, keeping why its input is (a size read from it says where it came from: `len(labels)` of files on disk). */
function stillUnknown(a: Value | undefined): Value {
  return a?.k === 'unknown' && a.why ? a : UNKNOWN;
}
