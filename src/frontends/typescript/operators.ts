/**
 * Pure pieces of the evaluator: JS operators on known values, and the few
 * array methods model code uses (map/forEach/reduce with user callbacks).
 */
import * as ts from 'typescript';
import { FuncRef, Unknown, type Value } from './values';

const SK = ts.SyntaxKind;
const MAX_LOOP = 10_000;

export const COMPOUND = new Map<ts.SyntaxKind, ts.SyntaxKind>([
  [SK.PlusEqualsToken, SK.PlusToken],
  [SK.MinusEqualsToken, SK.MinusToken],
  [SK.AsteriskEqualsToken, SK.AsteriskToken],
  [SK.SlashEqualsToken, SK.SlashToken],
]);

export function arrayMethod(arr: Value[], method: string, args: Value[], call: ts.CallExpression, callFn: (fn: FuncRef, args: Value[]) => Value): Value {
  const fn = args[0] instanceof FuncRef ? (args[0] as FuncRef) : undefined;
  switch (method) {
    case 'push':
      arr.push(...args);
      return arr.length;
    case 'concat':
      return arr.concat(...args.map((a) => (Array.isArray(a) ? a : [a])));
    case 'slice':
      return arr.slice(typeof args[0] === 'number' ? args[0] : 0, typeof args[1] === 'number' ? args[1] : undefined);
    case 'map':
      return fn ? arr.slice(0, MAX_LOOP).map((v, i) => callFn(fn, [v, i, arr])) : new Unknown(call, 'map');
    case 'forEach':
      if (fn) arr.slice(0, MAX_LOOP).forEach((v, i) => callFn(fn, [v, i, arr]));
      return undefined;
    case 'reduce': {
      if (!fn) return new Unknown(call, 'reduce');
      let acc: Value = args.length > 1 ? args[1] : arr[0];
      arr.slice(args.length > 1 ? 0 : 1, MAX_LOOP).forEach((v, i) => {
        acc = callFn(fn, [acc, v, i, arr]);
      });
      return acc;
    }
    default:
      return new Unknown(call, `array .${method}()`);
  }
}

export function isRecord(v: Value): v is Record<string, Value> {
  return v !== null && typeof v === 'object' && !Array.isArray(v) && Object.getPrototypeOf(v) === Object.prototype;
}

export function truthy(v: Value): boolean {
  return Boolean(v);
}

export function propertyKey(name: ts.PropertyName): string | undefined {
  if (ts.isIdentifier(name) || ts.isStringLiteral(name) || ts.isNumericLiteral(name)) return name.text;
  return undefined;
}

export function arith(op: ts.SyntaxKind, l: Value, r: Value, node: ts.Node): Value {
  if (l instanceof Unknown) return l;
  if (r instanceof Unknown) return r;
  if (op === SK.PlusToken && (typeof l === 'string' || typeof r === 'string')) {
    if ((l !== null && typeof l === 'object') || (r !== null && typeof r === 'object')) return new Unknown(node, 'string concat');
    return String(l) + String(r);
  }
  if (op === SK.EqualsEqualsEqualsToken || op === SK.EqualsEqualsToken) return l === r;
  if (op === SK.ExclamationEqualsEqualsToken || op === SK.ExclamationEqualsToken) return l !== r;
  if (typeof l !== 'number' || typeof r !== 'number') return new Unknown(node, 'arithmetic on non-numbers');
  switch (op) {
    case SK.PlusToken:
      return l + r;
    case SK.MinusToken:
      return l - r;
    case SK.AsteriskToken:
      return l * r;
    case SK.SlashToken:
      return l / r;
    case SK.PercentToken:
      return l % r;
    case SK.AsteriskAsteriskToken:
      return l ** r;
    case SK.LessThanToken:
      return l < r;
    case SK.LessThanEqualsToken:
      return l <= r;
    case SK.GreaterThanToken:
      return l > r;
    case SK.GreaterThanEqualsToken:
      return l >= r;
    default:
      return new Unknown(node, 'operator');
  }
}
