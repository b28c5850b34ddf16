/**
 * Python operators on evaluated values: comparisons (chained, `in`, `is`),
 * equality, and arithmetic; tensor operands become graph nodes (tensorOps).
 */
import type { PyNode } from './ast';
import { evalExpr } from './expressions';
import type { Interp } from './interpreter';
import { batchArithmetic } from './batchFolding';
import { arrayBinary } from './numericArrays';
import { percentFormat } from './strings';
import { tensorBinary } from './tensorArithmetic';
import { UNKNOWN, bool, int, iterItems, keyOf, num, str, toNumber, type Scope, type Value } from './values';
import { withProps } from '../../core/objects';

export function evalComparison(interp: Interp, node: PyNode, scope: Scope): Value {
  const operands: PyNode[] = [];
  const ops: string[] = [];
  for (const c of node.children) {
    if (c.named) operands.push(c);
    else if (c.type === 'in' && ops[ops.length - 1] === 'not' && ops.length === operands.length) ops[ops.length - 1] = 'not in';
    else if (c.type === 'not' && ops[ops.length - 1] === 'is' && ops.length === operands.length) ops[ops.length - 1] = 'is not';
    else ops.push(c.type);
  }
  let left = evalExpr(interp, operands[0], scope);
  if (ops.length === 1 && operands[1]) {
    // `mask != 0` on a constant array is an array of booleans.
    const right = evalExpr(interp, operands[1], scope);
    const array = ['<', '<=', '>', '>=', '==', '!='].includes(ops[0]) ? arrayBinary(ops[0], left, right) : undefined;
    if (array) return array;
    const r = compare(ops[0], left, right);
    return r === undefined ? UNKNOWN : bool(r);
  }
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
  // Classes and functions compare by identity (`self.__class__ == ConvNormActivation`).
  if (a.k === 'class' || a.k === 'func' || b.k === 'class' || b.k === 'func') return a === b;
  if (a.k === 'str' || b.k === 'str') return false;
  return a === b;
}

export function binaryOp(interp: Interp, op: string, a: Value, b: Value, node: PyNode): Value {
  const batch = batchArithmetic(op, a, b);
  if (batch) return batch;
  const array = arrayBinary(op, a, b);
  if (array) return array;
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
  if (op === '%' && a.k === 'str') {
    const s = percentFormat(a.v, b);
    return s === undefined ? UNKNOWN : str(s);
  }
  if (op === '+') {
    // `self.layers += [Layer(…)]` / `ModuleList + ModuleList`: a container with both sets of children.
    if (a.k === 'mod' && a.children && (a.container === 'list' || a.container === 'sequential')) {
      const more = b.k === 'mod' && b.children ? [...b.children.values()] : iterItems(b);
      if (!more) return UNKNOWN;
      const children = new Map(a.children);
      for (const m of more) children.set(String(children.size), m);
      return withProps(a, { children });
    }
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
