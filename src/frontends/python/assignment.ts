/**
 * Assignment targets: names, tuple/list unpacking (with `*rest` and split
 * results), attributes and subscripts.
 */
import { field, namedChildren, type PyNode } from './ast';
import { getItem, setAttr, setItem } from './access';
import { evalExpr, subscriptKey } from './expressions';
import type { Interp } from './interpreter';
import { UNKNOWN, int, iterItems, type Scope, type Value } from './values';

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
      if (obj) setItem(interp, evalExpr(interp, obj, scope), subscriptKey(interp, target, scope), value);
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
