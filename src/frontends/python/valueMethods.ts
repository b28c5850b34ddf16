/**
 * The methods of str, list, tuple and dict values that model code calls to compute layer sizes and names
 * (`"{}_{}".format(name, i)`, `dims.index(d)`, `cfg.get("width", 64)`), bound to the receiver. Anything unknown in,
 * Unknown out.
 */
import { dictFrom } from './builtins';
import { formatValue } from './strings';
import { NONE, UNKNOWN, bool, int, iterItems, keyOf, native, str, toNumber, type NativeFn, type Value } from './values';

function formatString(template: string, args: Value[], kwargs: Map<string, Value>): Value {
  let auto = 0;
  let failed = false;
  const out = template.replace(/\{\{|\}\}|\{([^{}:!]*)(![rsa])?(:[^{}]*)?\}/g, (m, key: string | undefined) => {
    if (m === '{{') return '{';
    if (m === '}}') return '}';
    const k = key ?? '';
    const v = k === '' ? args[auto++] : /^\d+$/.test(k) ? args[Number(k)] : kwargs.get(k);
    const s = v ? formatValue(v) : undefined;
    if (s === undefined) failed = true;
    return s ?? '';
  });
  return failed ? UNKNOWN : str(out);
}

/** Methods of str, list, tuple and dict values, bound to the receiver. */
export function methodOf(obj: Value, name: string): Value | undefined {
  const m = (fn: NativeFn): Value => native(name, fn);
  if (obj.k === 'str') {
    const s = obj.v;
    switch (name) {
      case 'format':
        return m((args, kwargs) => formatString(s, args, kwargs));
      case 'join':
        return m(([a]) => {
          const parts = (iterItems(a) ?? []).map((p) => (p.k === 'str' ? p.v : undefined));
          return parts.includes(undefined) ? UNKNOWN : str(parts.join(s));
        });
      case 'upper':
        return m(() => str(s.toUpperCase()));
      case 'lower':
        return m(() => str(s.toLowerCase()));
      case 'strip':
        return m(() => str(s.trim()));
      case 'startswith':
        return m(([p]) => affix(p, (a) => s.startsWith(a)));
      case 'endswith':
        return m(([p]) => affix(p, (a) => s.endsWith(a)));
      case 'replace':
        return m(([a, b]) => (a?.k === 'str' && b?.k === 'str' ? str(s.split(a.v).join(b.v)) : UNKNOWN));
      case 'split':
        return m(([sep]) => ({ k: 'list', items: (sep?.k === 'str' ? s.split(sep.v) : s.trim().split(/\s+/)).map(str) }));
      case 'isdigit':
        return m(() => bool(/^\d+$/.test(s)));
      default:
        return undefined;
    }
  }
  if (obj.k === 'list' || obj.k === 'tuple') {
    const items = obj.items;
    switch (name) {
      case 'append':
        return m(([v]) => (items.push(v ?? UNKNOWN), NONE));
      case 'extend':
        return m(([v]) => (items.push(...(iterItems(v ?? UNKNOWN) ?? [])), NONE));
      case 'insert':
        return m(([i, v]) => (items.splice(toNumber(i) ?? items.length, 0, v ?? UNKNOWN), NONE));
      case 'pop':
        return m(([i]) => {
          const idx = toNumber(i) ?? items.length - 1;
          return items.splice(idx < 0 ? idx + items.length : idx, 1)[0] ?? UNKNOWN;
        });
      case 'copy':
        return m(() => ({ k: 'list', items: [...items] }));
      // A set is a list here (`set()`): `s.add(x)` keeps one of each (minGPT's configure_optimizers sorts names so).
      case 'add':
        return m(([v]) => {
          if (!v || v.k === 'unknown' || !items.some((x) => keyOf(x) === keyOf(v))) items.push(v ?? UNKNOWN);
          return NONE;
        });
      case 'index':
        return m(([v]) => int(items.findIndex((x) => keyOf(x) === keyOf(v ?? UNKNOWN))));
      case 'count':
        return m(([v]) => int(items.filter((x) => keyOf(x) === keyOf(v ?? UNKNOWN)).length));
      default:
        return undefined;
    }
  }
  if (obj.k === 'dict') {
    const map = obj.map;
    switch (name) {
      case 'items':
        return m(() => ({ k: 'list', items: [...map.values()].map(([k, v]) => ({ k: 'tuple', items: [k, v] })) }));
      case 'keys':
        return m(() => ({ k: 'list', items: [...map.values()].map(([k]) => k) }));
      case 'values':
        return m(() => ({ k: 'list', items: [...map.values()].map(([, v]) => v) }));
      case 'get':
        return m(([k, d]) => map.get(keyOf(k ?? UNKNOWN))?.[1] ?? d ?? NONE);
      case 'pop':
        return m(([k, d]) => {
          const key = keyOf(k ?? UNKNOWN);
          const v = map.get(key)?.[1];
          map.delete(key);
          return v ?? d ?? UNKNOWN;
        });
      case 'setdefault':
        return m(([k, d]) => {
          const key = keyOf(k ?? UNKNOWN);
          if (!map.has(key)) map.set(key, [k ?? UNKNOWN, d ?? NONE]);
          return map.get(key)![1];
        });
      case 'update':
        return m(([other], kwargs) => {
          const src = dictFrom(other ? [other] : [], kwargs);
          for (const [k, v] of src.map) map.set(k, v);
          return NONE;
        });
      case 'copy':
        return m(() => ({ k: 'dict', map: new Map(map) }));
      default:
        return undefined;
    }
  }
  return undefined;
}


/** str.startswith / endswith: a prefix, or a tuple of them (any matches). */
function affix(p: Value | undefined, test: (affix: string) => boolean): Value {
  if (p?.k === 'str') return bool(test(p.v));
  if (p?.k !== 'tuple' || !p.items.every((i) => i.k === 'str')) return UNKNOWN;
  return bool(p.items.some((i) => test((i as { v: string }).v)));
}
