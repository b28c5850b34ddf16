/**
 * The expression half of the partial evaluator: literals, names, containers,
 * comprehensions, attribute/item reads and calls. Operators live in
 * operators.ts, strings in strings.ts, assignment targets in assignment.ts.
 */
import { field, namedChildren, type PyNode } from './ast';
import { getAttr, getItem, iterate, superProxy } from './access';
import { assignTarget } from './assignment';
import { builtinNames } from './builtins';
import type { Interp } from './interpreter';
import { binaryOp, evalComparison } from './operators';
import { isArray, mapArray } from './numericArrays';
import { evalString } from './strings';
import { decideConditional } from './branches';
import { tensorNegate } from './tensorArithmetic';
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
    case 'ellipsis':
      return { k: 'lib', path: 'Ellipsis' };
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
    case 'generator_expression': {
      const items = comprehension(interp, node, scope, (s) => evalExpr(interp, field(node, 'body')!, s));
      return Array.isArray(items) ? { k: 'list', items } : unknownIterable(interp, node, items);
    }
    case 'dictionary_comprehension': {
      const out: DictV = { k: 'dict', map: new Map() };
      const pair = field(node, 'body');
      const done = comprehension(interp, node, scope, (s) => {
        const key = evalExpr(interp, field(pair!, 'key')!, s);
        out.map.set(keyOf(key), [key, evalExpr(interp, field(pair!, 'value')!, s)]);
        return NONE;
      });
      return Array.isArray(done) ? out : unknownIterable(interp, node, done);
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
      return getItem(interp, evalExpr(interp, value, scope), subscriptKey(interp, node, scope), node);
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
      if (isArray(v)) return op === '-' ? mapArray(v, (x) => -x, v.values.dtype) : op === '+' ? v : { k: 'unknown' };
      if (n === undefined) return v.k === 'tensor' ? (op === '-' ? tensorNegate(interp, v, node) : v) : UNKNOWN;
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
      const [a, , b] = namedChildren(node);
      const side = decideConditional(interp, node, scope);
      const read = side === 'a' ? a : side === 'b' ? b : undefined;
      return read ? evalExpr(interp, read, scope) : UNKNOWN;
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

function evalItems(interp: Interp, nodes: readonly PyNode[], scope: Scope): Value[] {
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

/** The key of `x[a]`, `x[a, b:c]` (a tuple of several), slices as `('__slice__', start, stop, step)`. */
export function subscriptKey(interp: Interp, node: PyNode, scope: Scope): Value {
  const subs = node.children.filter((c) => c.field === 'subscript');
  const keys = subs.map((s) => (s.type === 'slice' ? evalSlice(interp, s, scope) : evalExpr(interp, s, scope)));
  return keys.length === 1 ? keys[0] : { k: 'tuple', items: keys };
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

/**
 * A comprehension's items, or what one of its `for` clauses runs over where WAP cannot iterate it (files listed from
 * disk, a dataset's labels): its length is the data's, not 0.
 */
function comprehension(interp: Interp, node: PyNode, scope: Scope, body: (s: Scope) => Value): Value[] | Value {
  const clauses = namedChildren(node).filter((c) => c.type === 'for_in_clause' || c.type === 'if_clause');
  const inner: Scope = { vars: new Map(), parent: scope };
  const out: Value[] = [];
  let unknown: Value | undefined;
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
    const over = right ? evalExpr(interp, right, inner) : undefined;
    const items = over ? iterate(interp, over) : [];
    if (!items) {
      unknown ??= over;
      return;
    }
    for (const item of items) {
      interp.tick();
      if (left) assignTarget(interp, left, item, inner);
      run(i + 1);
    }
  };
  run(0);
  return unknown ?? out;
}

/** What a comprehension over the unknown is: unknown, with why (its source's, else its own words). */
function unknownIterable(interp: Interp, node: PyNode, over: Value): Value {
  if (over.k === 'unknown' && over.why) return over;
  const text = interp.text(node).replace(/\s+/g, ' ');
  return { k: 'unknown', why: `\`${text.length > 60 ? `${text.slice(0, 57)}…` : text}\` runs over values WAP cannot know (data read as the script runs)` };
}

function evalCall(interp: Interp, node: PyNode, scope: Scope): Value {
  const fnNode = field(node, 'function');
  if (!fnNode) return UNKNOWN;
  const callee = evalExpr(interp, fnNode, scope);
  const { args, kwargs } = evalArguments(interp, field(node, 'arguments'), scope);
  return interp.callValue(callee, args, kwargs, interp.site(node, interp.text(fnNode)));
}

/** A call's arguments as Python binds them: positional, keywords, and `*`/`**` splats (said where unreadable). */
export function evalArguments(interp: Interp, argsNode: PyNode | undefined, scope: Scope): { args: Value[]; kwargs: Map<string, Value> } {
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
        const items = iterItems(v);
        if (!items) unreadSplat(interp, a, v);
        args.push(...(items ?? []));
      } else if (a.type === 'dictionary_splat') {
        const v = evalExpr(interp, namedChildren(a)[0]!, scope);
        if (v.k === 'dict') {
          for (const [k, entry] of v.map) if (k.startsWith('s:')) kwargs.set(k.slice(2), entry[1]);
        } else unreadSplat(interp, a, v);
      } else args.push(evalExpr(interp, a, scope));
    }
  }
  return { args, kwargs };
}

/**
 * `f(**cfg['model'])` or `f(*sizes)` whose value WAP cannot read: the call is read without those arguments, at its
 * defaults, which may not be the run's. Said, so a model built so is never silently the defaults' model.
 */
function unreadSplat(interp: Interp, splat: PyNode, v: Value): void {
  const why = v.k === 'unknown' && v.why ? ` (${v.why})` : '';
  interp.warn(splat, `\`${interp.text(splat).slice(0, 60)}\` could not be read${why}: the call is read without those arguments, at its defaults`, 'unread-arguments');
}
