/**
 * String literals (escapes, raw strings, f-strings) and Python's str() of the
 * values that layer names are built from (`f"layer{i}"`).
 */
import { field, type PyNode } from './ast';
import { evalExpr } from './expressions';
import type { Interp } from './interpreter';
import { UNKNOWN, str, type Scope, type Value } from './values';

export function evalString(interp: Interp, node: PyNode, scope: Scope): Value {
  if (node.type !== 'string') return evalExpr(interp, node, scope);
  const prefix = interp.text(node.children[0] ?? node).toLowerCase();
  const raw = prefix.includes('r');
  let out = '';
  const append = (n: PyNode): boolean => {
    if (n.type === 'string_content') {
      if (n.children.length === 0) out += raw ? interp.text(n) : unescape(interp.text(n));
      else {
        let pos = n.start;
        for (const e of n.children) {
          out += interp.sourceFor(n).slice(pos, e.start);
          if (e.type === 'escape_sequence' && !raw) out += unescape(interp.text(e));
          else if (e.type === 'interpolation') {
            if (!appendInterpolation(e)) return false;
          } else out += interp.text(e);
          pos = e.end;
        }
        out += interp.sourceFor(n).slice(pos, n.end);
      }
    } else if (n.type === 'escape_sequence') out += raw ? interp.text(n) : unescape(interp.text(n));
    else if (n.type === 'interpolation') return appendInterpolation(n);
    return true;
  };
  const appendInterpolation = (n: PyNode): boolean => {
    const expr = field(n, 'expression');
    const v = expr ? evalExpr(interp, expr, scope) : UNKNOWN;
    const s = formatValue(v);
    if (s === undefined) return false;
    out += s;
    return true;
  };
  for (const c of node.children) if (!append(c)) return UNKNOWN;
  return str(out);
}

function unescape(s: string): string {
  return s.replace(/\\(n|t|r|\\|'|"|\n)/g, (_, c: string) => ({ n: '\n', t: '\t', r: '\r', '\\': '\\', "'": "'", '"': '"', '\n': '' })[c] ?? c);
}

/** Python's str() for the values names are built from; undefined when unknown. */
export function formatValue(v: Value): string | undefined {
  switch (v.k) {
    case 'str':
      return v.v;
    case 'num':
      return v.float && Number.isInteger(v.v) ? v.v.toFixed(1) : String(v.v);
    case 'bool':
      return v.v ? 'True' : 'False';
    case 'none':
      return 'None';
    case 'list':
    case 'tuple': {
      const parts = v.items.map((i) => (i.k === 'str' ? `'${i.v}'` : formatValue(i)));
      if (parts.some((p) => p === undefined)) return undefined;
      return v.k === 'list' ? `[${parts.join(', ')}]` : `(${parts.join(', ')}${parts.length === 1 ? ',' : ''})`;
    }
    default:
      return undefined;
  }
}

/** printf-style `"denselayer%d" % (i + 1)`: %s %r %d %i %f (with width/precision) and %%; undefined when anything is unknown. */
export function percentFormat(template: string, arg: Value): string | undefined {
  const args = arg.k === 'tuple' ? arg.items : [arg];
  let next = 0;
  let failed = false;
  const out = template.replace(/%(%|[-+ 0#]*(\d*)(?:\.(\d+))?([sdirfgxX]))/g, (_m, spec: string, _width: string, precision: string | undefined, conv: string | undefined) => {
    if (spec === '%') return '%';
    const v = args[next++];
    if (!v) {
      failed = true;
      return '';
    }
    const n = v.k === 'num' ? v.v : v.k === 'bool' ? (v.v ? 1 : 0) : undefined;
    switch (conv) {
      case 'd':
      case 'i':
        if (n === undefined) failed = true;
        return String(Math.trunc(n ?? 0));
      case 'f':
        if (n === undefined) failed = true;
        return (n ?? 0).toFixed(precision === undefined ? 6 : Number(precision));
      case 'x':
      case 'X': {
        if (n === undefined) failed = true;
        const hex = Math.trunc(n ?? 0).toString(16);
        return conv === 'X' ? hex.toUpperCase() : hex;
      }
      default: {
        if (conv === 'r' && v.k === 'str') return `'${v.v}'`;
        const s = formatValue(v);
        if (s === undefined) failed = true;
        return s ?? '';
      }
    }
  });
  return failed || next !== args.length ? undefined : out;
}
