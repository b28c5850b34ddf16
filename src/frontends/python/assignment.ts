/**
 * Assignment targets: names, tuple/list unpacking (with `*rest` and split
 * results), attributes and subscripts; and `del` of the same targets.
 */
import { field, namedChildren, type PyNode } from './ast';
import { getItem, setAttr, setItem } from './access';
import { evalExpr, subscriptKey } from './expressions';
import type { Interp } from './interpreter';
import { UNKNOWN, int, iterItems, keyOf, toNumber, type Scope, type Value } from './values';

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

/**
 * `del d[k]`, `del self.fc`, `del layers[i]`: torchvision's IntermediateLayerGetter deletes each found return
 * layer and stops when none is left, so a `del` that did nothing would keep the backbone's head in the model.
 */
export function deleteTarget(interp: Interp, target: PyNode, scope: Scope): void {
  switch (target.type) {
    case 'expression_list':
    case 'tuple':
    case 'list':
    case 'parenthesized_expression':
      for (const t of namedChildren(target)) deleteTarget(interp, t, scope);
      return;
    case 'attribute': {
      const obj = field(target, 'object');
      const attr = field(target, 'attribute');
      const owner = obj ? evalExpr(interp, obj, scope) : UNKNOWN;
      if (owner.k !== 'inst' || !attr) return;
      // nn.Module.__delattr__ removes a submodule as well as a plain attribute.
      owner.attrs.delete(interp.text(attr));
      owner.children?.delete(interp.text(attr));
      return;
    }
    case 'subscript': {
      const objNode = field(target, 'value');
      const obj = objNode ? evalExpr(interp, objNode, scope) : UNKNOWN;
      const key = subscriptKey(interp, target, scope);
      if (obj.k === 'dict') obj.map.delete(keyOf(key));
      else if (obj.k === 'list') {
        const i = toNumber(key);
        if (i !== undefined && Number.isInteger(i) && obj.items[i < 0 ? i + obj.items.length : i] !== undefined) obj.items.splice(i < 0 ? i + obj.items.length : i, 1);
      } else if ((obj.k === 'mod' || obj.k === 'inst') && obj.children) {
        const i = toNumber(key);
        const name = key.k === 'str' ? key.v : i === undefined ? undefined : [...obj.children.keys()][i < 0 ? i + obj.children.size : i];
        if (name !== undefined) obj.children.delete(name);
      }
      return;
    }
    default:
      return;
  }
}
