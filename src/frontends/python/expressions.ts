/**
 * The expression half of the partial evaluator: literals, names, operators,
 * comprehensions, calls and assignment targets.
 */
import { field, namedChildren, type PyNode } from './ast';
import { getAttr, getItem, setAttr, setItem, superProxy } from './access';
import { builtinNames } from './builtins';
import type { Interp } from './interpreter';
import { tensorBinary } from './tensorOps';
import {
  NONE,
  UNKNOWN,
  bool,
  int,
  iterItems,
  keyOf,
  num,
  str,
  toNumber,
  truthy,
  type DictV,
  type Scope,
  type Value,
} from './values';

export function evalExpr(interp: Interp, node: PyNode, scope: Scope): Value {
  interp.tick();
  switch (node.type) {
    case 'identifier': {
      const name = interp.text(node);
      const found = interp.lookup(name, scope) ?? interp.globals.vars.get(name) ?? builtinNames.get(name);
      if (found) return found;
      return interp.wildcards.length ? { k: 'lib', path: interp.wildcards[0] + '.' + name } : UNKNOWN;
    }
    case 'integer': {
      const t = interp.text(node).replace(/_/g, '').replace(/[lLjJ]$/, '');
      const v = /^0[xob]/i.test(t) ? Number(t) : parseInt(t, 10);
      return Number.isFinite(v) ? int(v) : UNKNOWN;
    }
    case 'float':
      return num(parseFloat(interp.text(node).replace(/_/g, '')), true);
    case 'true':
      return bool(true);
    case 'false':
      return bool(false);
    case 'none':
      return NONE;
    case 'string':
      return evalString(interp, node, scope);
    case 'concatenated_string': {
      let out = '';
      for (const c of namedChildren(node)) {
        const v = evalString(interp, c, scope);
        if (v.k !== 'str') return UNKNOWN;
        out += v.v;
      }
      return str(out);
    }
    case 'parenthesized_expression': {
      const inner = namedChildren(node)[0];
      return inner ? evalExpr(interp, inner, scope) : UNKNOWN;
    }
    case 'tuple':
    case 'expression_list':
      return { k: 'tuple', items: evalItems(interp, namedChildren(node), scope) };
    case 'list':
    case 'set':
      return { k: 'list', items: evalItems(interp, namedChildren(node), scope) };
    case 'dictionary':
      return evalDict(interp, node, scope);
    case 'list_comprehension':
    case 'set_comprehension':
    case 'generator_expression':
      return { k: 'list', items: comprehension(interp, node, scope, (s) => evalExpr(interp, field(node, 'body')!, s)) };
    case 'dictionary_comprehension': {
      const out: DictV = { k: 'dict', map: new Map() };
      const pair = field(node, 'body');
      comprehension(interp, node, scope, (s) => {
        const key = evalExpr(interp, field(pair!, 'key')!, s);
        out.map.set(keyOf(key), [key, evalExpr(interp, field(pair!, 'value')!, s)]);
        return NONE;
      });
      return out;
    }
    case 'attribute': {
      const obj = field(node, 'object');
      const attr = field(node, 'attribute');
      if (!obj || !attr) return UNKNOWN;
      const name = interp.text(attr);
      if (obj.type === 'call' && interp.text(field(obj, 'function') ?? obj) === 'super') return superProxy(interp, scope, name);
      return getAttr(interp, evalExpr(interp, obj, scope), name, node);
    }
    case 'subscript': {
      const value = field(node, 'value');
      if (!value) return UNKNOWN;
      const subs = node.children.filter((c) => c.field === 'subscript');
      const keys = subs.map((s) => (s.type === 'slice' ? evalSlice(interp, s, scope) : evalExpr(interp, s, scope)));
      return getItem(interp, evalExpr(interp, value, scope), keys.length === 1 ? keys[0] : { k: 'tuple', items: keys }, node);
    }
    case 'call':
      return evalCall(interp, node, scope);
    case 'binary_operator': {
      const l = field(node, 'left');
      const r = field(node, 'right');
      const op = node.children.find((c) => c.field === 'operator');
      if (!l || !r || !op) return UNKNOWN;
      return binaryOp(interp, interp.text(op), evalExpr(interp, l, scope), evalExpr(interp, r, scope), node);
    }
    case 'unary_operator': {
      const arg = field(node, 'argument');
      const v = arg ? evalExpr(interp, arg, scope) : UNKNOWN;
      const n = toNumber(v);
      const op = interp.text(node).trim()[0];
      if (n === undefined) return v.k === 'tensor' ? v : UNKNOWN;
      if (op === '-') return num(-n, v.k === 'num' && v.float);
      if (op === '~') return int(~n);
      return num(n, v.k === 'num' && v.float);
    }
    case 'not_operator': {
      const arg = field(node, 'argument');
      const t = arg ? truthy(evalExpr(interp, arg, scope)) : undefined;
      return t === undefined ? UNKNOWN : bool(!t);
    }
    case 'boolean_operator': {
      const l = evalExpr(interp, field(node, 'left')!, scope);
      const isAnd = node.children.some((c) => !c.named && c.type === 'and');
      const t = truthy(l);
      if (t === undefined) return UNKNOWN;
      if (isAnd ? !t : t) return l;
      return evalExpr(interp, field(node, 'right')!, scope);
    }
    case 'comparison_operator':
      return evalComparison(interp, node, scope);
    case 'conditional_expression': {
      const [a, cond, b] = namedChildren(node);
      const t = cond ? truthy(evalExpr(interp, cond, scope)) : undefined;
      if (t === false) return b ? evalExpr(interp, b, scope) : UNKNOWN;
      return a ? evalExpr(interp, a, scope) : UNKNOWN;
    }
    case 'lambda':
      return interp.makeFunction(node, '<lambda>', scope);
    case 'named_expression': {
      const value = evalExpr(interp, field(node, 'value')!, scope);
      const name = field(node, 'name');
      if (name) interp.bind(interp.text(name), value, scope);
      return value;
    }
    case 'keyword_argument':
    case 'list_splat':
    case 'dictionary_splat':
    default:
      return UNKNOWN;
  }
}

function evalItems(interp: Interp, nodes: PyNode[], scope: Scope): Value[] {
  const out: Value[] = [];
  for (const n of nodes) {
    if (n.type === 'list_splat') {
      const inner = namedChildren(n)[0];
      const items = inner ? iterItems(evalExpr(interp, inner, scope)) : undefined;
      if (items) out.push(...items);
    } else out.push(evalExpr(interp, n, scope));
  }
  return out;
}

function evalDict(interp: Interp, node: PyNode, scope: Scope): Value {
  const out: DictV = { k: 'dict', map: new Map() };
  for (const c of namedChildren(node)) {
    if (c.type === 'pair') {
      const key = evalExpr(interp, field(c, 'key')!, scope);
      out.map.set(keyOf(key), [key, evalExpr(interp, field(c, 'value')!, scope)]);
    } else if (c.type === 'dictionary_splat') {
      const inner = evalExpr(interp, namedChildren(c)[0]!, scope);
      if (inner.k === 'dict') for (const [k, v] of inner.map) out.map.set(k, v);
    }
  }
  return out;
}

function evalString(interp: Interp, node: PyNode, scope: Scope): Value {
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
          out += interp.source.slice(pos, e.start);
          if (e.type === 'escape_sequence' && !raw) out += unescape(interp.text(e));
          else if (e.type === 'interpolation') {
            if (!appendInterpolation(e)) return false;
          } else out += interp.text(e);
          pos = e.end;
        }
        out += interp.source.slice(pos, n.end);
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

function evalSlice(interp: Interp, node: PyNode, scope: Scope): Value {
  // Children: [start] ':' [stop] [':' [step]]
  const parts: Array<Value | undefined> = [undefined, undefined, undefined];
  let slot = 0;
  for (const c of node.children) {
    if (!c.named) {
      if (c.type === ':') slot++;
      continue;
    }
    parts[slot] = evalExpr(interp, c, scope);
  }
  return { k: 'tuple', items: [str('__slice__'), parts[0] ?? NONE, parts[1] ?? NONE, parts[2] ?? NONE] };
}

function comprehension(interp: Interp, node: PyNode, scope: Scope, body: (s: Scope) => Value): Value[] {
  const clauses = namedChildren(node).filter((c) => c.type === 'for_in_clause' || c.type === 'if_clause');
  const inner: Scope = { vars: new Map(), parent: scope };
  const out: Value[] = [];
  const run = (i: number): void => {
    if (i === clauses.length) {
      out.push(body(inner));
      return;
    }
    const c = clauses[i];
    if (c.type === 'if_clause') {
      const cond = namedChildren(c)[0];
      if (cond && truthy(evalExpr(interp, cond, inner)) !== false) run(i + 1);
      return;
    }
    const left = field(c, 'left');
    const right = field(c, 'right');
    const items = right ? iterItems(evalExpr(interp, right, inner)) ?? [] : [];
    for (const item of items) {
      interp.tick();
      if (left) assignTarget(interp, left, item, inner);
      run(i + 1);
    }
  };
  run(0);
  return out;
}

function evalCall(interp: Interp, node: PyNode, scope: Scope): Value {
  const fnNode = field(node, 'function');
  const argsNode = field(node, 'arguments');
  if (!fnNode) return UNKNOWN;
  const callee = evalExpr(interp, fnNode, scope);
  const args: Value[] = [];
  const kwargs = new Map<string, Value>();
  if (argsNode?.type === 'generator_expression') args.push(evalExpr(interp, argsNode, scope));
  else if (argsNode) {
    for (const a of namedChildren(argsNode)) {
      if (a.type === 'keyword_argument') {
        const name = field(a, 'name');
        const value = field(a, 'value');
        if (name && value) kwargs.set(interp.text(name), evalExpr(interp, value, scope));
      } else if (a.type === 'list_splat') {
        const v = evalExpr(interp, namedChildren(a)[0]!, scope);
        args.push(...(iterItems(v) ?? []));
      } else if (a.type === 'dictionary_splat') {
        const v = evalExpr(interp, namedChildren(a)[0]!, scope);
        if (v.k === 'dict') for (const [k, entry] of v.map) if (k.startsWith('s:')) kwargs.set(k.slice(2), entry[1]);
      } else args.push(evalExpr(interp, a, scope));
    }
  }
  return interp.callValue(callee, args, kwargs, interp.site(node, interp.text(fnNode)));
}

function evalComparison(interp: Interp, node: PyNode, scope: Scope): Value {
  const operands: PyNode[] = [];
  const ops: string[] = [];
  for (const c of node.children) {
    if (c.named) operands.push(c);
    else if (c.type === 'in' && ops[ops.length - 1] === 'not' && ops.length === operands.length) ops[ops.length - 1] = 'not in';
    else if (c.type === 'not' && ops[ops.length - 1] === 'is' && ops.length === operands.length) ops[ops.length - 1] = 'is not';
    else ops.push(c.type);
  }
  let left = evalExpr(interp, operands[0], scope);
  let result: boolean | undefined = true;
  for (let i = 0; i < ops.length && operands[i + 1]; i++) {
    const right = evalExpr(interp, operands[i + 1], scope);
    const r = compare(ops[i], left, right);
    if (r === false) return bool(false);
    if (r === undefined) result = undefined;
    left = right;
  }
  return result === undefined ? UNKNOWN : bool(true);
}

export function compare(op: string, a: Value, b: Value): boolean | undefined {
  if (op === 'is' || op === 'is not') {
    const same = a === b || (a.k === 'none' && b.k === 'none') || (a.k === 'bool' && b.k === 'bool' && a.v === b.v);
    if (a.k === 'unknown' || b.k === 'unknown') return undefined;
    return op === 'is' ? same : !same;
  }
  if (op === 'in' || op === 'not in') {
    const items = b.k === 'dict' ? undefined : iterItems(b);
    let found: boolean | undefined;
    if (b.k === 'dict') found = b.map.has(keyOf(a));
    else if (b.k === 'str' && a.k === 'str') found = b.v.includes(a.v);
    else if (items) found = items.some((i) => equal(i, a) === true);
    if (found === undefined) return undefined;
    return op === 'in' ? found : !found;
  }
  if (op === '==' || op === '!=') {
    const e = equal(a, b);
    return e === undefined ? undefined : op === '==' ? e : !e;
  }
  const x = toNumber(a) ?? (a.k === 'str' ? a.v : undefined);
  const y = toNumber(b) ?? (b.k === 'str' ? b.v : undefined);
  if (x === undefined || y === undefined || typeof x !== typeof y) return undefined;
  switch (op) {
    case '<':
      return x < y;
    case '<=':
      return x <= y;
    case '>':
      return x > y;
    case '>=':
      return x >= y;
    default:
      return undefined;
  }
}

function equal(a: Value, b: Value): boolean | undefined {
  const x = toNumber(a);
  const y = toNumber(b);
  if (x !== undefined && y !== undefined) return x === y;
  if (a.k === 'str' && b.k === 'str') return a.v === b.v;
  if (a.k === 'none' || b.k === 'none') return a.k === 'unknown' || b.k === 'unknown' ? undefined : a.k === b.k;
  if ((a.k === 'tuple' || a.k === 'list') && a.k === b.k) {
    if (a.items.length !== b.items.length) return false;
    for (let i = 0; i < a.items.length; i++) if (equal(a.items[i], b.items[i]) !== true) return equal(a.items[i], b.items[i]);
    return true;
  }
  if (a.k === 'unknown' || b.k === 'unknown' || a.k === 'tensor' || b.k === 'tensor') return undefined;
  if (a.k === 'str' || b.k === 'str') return false;
  return a === b;
}

export function binaryOp(interp: Interp, op: string, a: Value, b: Value, node: PyNode): Value {
  if (a.k === 'tensor' || b.k === 'tensor') return tensorBinary(interp, op, a, b, node);
  const x = toNumber(a);
  const y = toNumber(b);
  if (x !== undefined && y !== undefined) {
    const float = (a.k === 'num' && a.float) || (b.k === 'num' && b.float);
    switch (op) {
      case '+':
        return num(x + y, float);
      case '-':
        return num(x - y, float);
      case '*':
        return num(x * y, float);
      case '/':
        return y === 0 ? UNKNOWN : num(x / y, true);
      case '//':
        return y === 0 ? UNKNOWN : num(Math.floor(x / y), float);
      case '%':
        return y === 0 ? UNKNOWN : num(((x % y) + y) % y, float);
      case '**':
        return num(x ** y, float || y < 0);
      case '<<':
        return int(x << y);
      case '>>':
        return int(x >> y);
      case '&':
        return int(x & y);
      case '|':
        return int(x | y);
      case '^':
        return int(x ^ y);
      default:
        return UNKNOWN;
    }
  }
  if (op === '+') {
    if (a.k === 'str' && b.k === 'str') return str(a.v + b.v);
    if (a.k === 'list' && b.k === 'list') return { k: 'list', items: [...a.items, ...b.items] };
    if (a.k === 'tuple' && b.k === 'tuple') return { k: 'tuple', items: [...a.items, ...b.items] };
  }
  if (op === '*') {
    const [seq, n] = y !== undefined ? [a, y] : [b, x];
    if (n !== undefined && n >= 0 && n < 100_000) {
      if (seq.k === 'str') return str(seq.v.repeat(n));
      if (seq.k === 'list' || seq.k === 'tuple') {
        const items: Value[] = [];
        for (let i = 0; i < n; i++) items.push(...seq.items);
        return { k: seq.k, items };
      }
    }
  }
  if (op === '|' && a.k === 'dict' && b.k === 'dict') return { k: 'dict', map: new Map([...a.map, ...b.map]) };
  return UNKNOWN;
}

/** Binds a value to an assignment target: names, tuples/lists (with *rest), attributes, subscripts. */
export function assignTarget(interp: Interp, target: PyNode, value: Value, scope: Scope): void {
  switch (target.type) {
    case 'identifier':
      interp.bind(interp.text(target), value, scope);
      return;
    case 'pattern_list':
    case 'tuple_pattern':
    case 'list_pattern':
    case 'tuple':
    case 'list':
    case 'expression_list': {
      const targets = namedChildren(target);
      const items = unpack(interp, value, targets.length, target);
      const star = targets.findIndex((t) => t.type === 'list_splat_pattern');
      if (star < 0) {
        targets.forEach((t, i) => assignTarget(interp, t, items?.[i] ?? UNKNOWN, scope));
        return;
      }
      const all = iterItems(value);
      const after = targets.length - star - 1;
      targets.forEach((t, i) => {
        if (i < star) assignTarget(interp, t, all?.[i] ?? UNKNOWN, scope);
        else if (i === star) assignTarget(interp, namedChildren(t)[0]!, all ? { k: 'list', items: all.slice(star, all.length - after) } : UNKNOWN, scope);
        else assignTarget(interp, t, all?.[all.length - (targets.length - i)] ?? UNKNOWN, scope);
      });
      return;
    }
    case 'parenthesized_expression': {
      const inner = namedChildren(target)[0];
      if (inner) assignTarget(interp, inner, value, scope);
      return;
    }
    case 'attribute': {
      const obj = field(target, 'object');
      const attr = field(target, 'attribute');
      if (obj && attr) setAttr(interp, evalExpr(interp, obj, scope), interp.text(attr), value, target);
      return;
    }
    case 'subscript': {
      const obj = field(target, 'value');
      const sub = field(target, 'subscript');
      if (obj && sub) setItem(interp, evalExpr(interp, obj, scope), evalExpr(interp, sub, scope), value);
      return;
    }
    default:
      return;
  }
}

function unpack(interp: Interp, value: Value, n: number, node: PyNode): Value[] | undefined {
  if (value.k === 'splitres') return Array.from({ length: n }, (_, i) => getItem(interp, value, int(i), node, n));
  return iterItems(value);
}
