/**
 * Parameters of user functions (`def f(a, b=2, *args, c, **kw)`) and binding
 * call arguments to them, as Python does: positional, keyword, defaults,
 * `*args` tuples and `**kwargs` dicts.
 */
import { field, namedChildren, textOf, type PyNode } from './ast';
import type { FuncV, Value } from './values';

export interface ParamSpec {
  name: string;
  kind: 'pos' | 'star' | 'kwonly' | 'dstar';
  defaultNode?: PyNode;
}

/** By function node: nodes survive edits elsewhere in the file (incremental.ts), and so does this. */
const paramCache = new WeakMap<PyNode, readonly ParamSpec[]>();

export function parametersOf(fnNode: PyNode, source: string): readonly ParamSpec[] {
  const cached = paramCache.get(fnNode);
  if (cached) return cached;
  const out: ParamSpec[] = [];
  const list = field(fnNode, 'parameters');
  let kwonly = false;
  for (const p of list ? namedChildren(list) : []) {
    let node = p;
    if (p.type === 'typed_parameter') node = namedChildren(p)[0] ?? p;
    if (node.type === 'identifier') out.push({ name: textOf(node, source), kind: kwonly ? 'kwonly' : 'pos' });
    else if (node.type === 'default_parameter' || node.type === 'typed_default_parameter') {
      const n = field(node, 'name');
      if (n) out.push({ name: textOf(n, source), kind: kwonly ? 'kwonly' : 'pos', defaultNode: field(node, 'value') });
    } else if (node.type === 'list_splat_pattern') {
      kwonly = true;
      const n = namedChildren(node)[0];
      if (n) out.push({ name: textOf(n, source), kind: 'star' });
    } else if (node.type === 'dictionary_splat_pattern') {
      const n = namedChildren(node)[0];
      if (n) out.push({ name: textOf(n, source), kind: 'dstar' });
    } else if (node.type === 'keyword_separator') kwonly = true;
  }
  paramCache.set(fnNode, out);
  return out;
}

/** A required argument was not given: the call cannot be evaluated (factories need args → not models). */
export class MissingArgument {
  constructor(
    readonly fn: string,
    readonly param: string,
  ) {}
}

function missingArgument(fn: FuncV, param: string): never {
  throw new MissingArgument(fn.name, param);
}

/** Binds arguments into `vars`; throws MissingArgument when a required one is absent. */
export function bindArguments(fn: FuncV, params: readonly ParamSpec[], args: Value[], kwargs: Map<string, Value>, vars: Map<string, Value>): void {
  let i = 0;
  // Copied only when there is something to consume: most calls pass no keywords.
  const rest = kwargs.size ? new Map(kwargs) : kwargs;
  for (const p of params) {
    if (p.kind === 'pos') {
      if (i < args.length) vars.set(p.name, args[i++]);
      else if (rest.has(p.name)) vars.set(p.name, rest.get(p.name)!);
      else vars.set(p.name, fn.defaults.get(p.name) ?? missingArgument(fn, p.name));
      rest.delete(p.name);
    } else if (p.kind === 'star') {
      vars.set(p.name, { k: 'tuple', items: args.slice(i) });
      i = args.length;
    } else if (p.kind === 'kwonly') {
      vars.set(p.name, rest.get(p.name) ?? fn.defaults.get(p.name) ?? missingArgument(fn, p.name));
      rest.delete(p.name);
    } else {
      const map = new Map<string, [Value, Value]>();
      for (const [k, v] of rest) map.set('s:' + k, [{ k: 'str', v: k }, v]);
      vars.set(p.name, { k: 'dict', map });
    }
  }
}
