/**
 * `def` and `class` statements (plain or decorated): turning their source into
 * function and class values bound in a scope. Kept apart from interpreter.ts
 * because building a definition is its own job (decorator kinds, dataclass
 * fields, method closures), while the interpreter only routes statements here.
 */
import { field, namedChildren, type PyNode } from './ast';
import { methodOwner } from './access';
import { evalExpr } from './expressions';
import { hydraMainOf } from './hydraRuntime';
import { turnsGradientsOff } from './evaluationPasses';
import type { Interp } from './interpreter';
import { UNKNOWN, type ClassV, type FuncV, type Scope, type Value } from './values';

export function execDecorated(interp: Interp, node: PyNode, scope: Scope): void {
  const decorators = node.children.filter((c) => c.type === 'decorator').map((d) => interp.text(d).replace(/^@\s*/, '').replace(/\(.*$/s, ''));
  const def = field(node, 'definition');
  if (def?.type === 'function_definition') {
    defineFunction(interp, def, scope, decorators);
    const hydra = decorators.some((d) => /(^|\.)main$/.test(d)) ? hydraMainOf(interp, node.children.filter((c) => c.type === 'decorator'), scope) : undefined;
    const fn = hydra && scope.vars.get(interp.text(field(def, 'name') ?? def));
    if (fn?.k === 'func') fn.hydraMain = hydra;
  }
  else if (def?.type === 'class_definition') defineClass(interp, def, scope, decorators);
}

export function defineFunction(interp: Interp, node: PyNode, scope: Scope, decorators: string[]): void {
  const nameNode = field(node, 'name');
  if (!nameNode) return;
  const fn = makeFunction(interp, node, interp.text(nameNode), scope);
  if (decorators.some((d) => d === 'staticmethod')) fn.kind = 'static';
  else if (decorators.some((d) => d === 'classmethod')) fn.kind = 'class';
  else if (decorators.some((d) => d === 'property' || d.endsWith('cached_property'))) fn.kind = 'property';
  const gradientsOff = decorators.find(turnsGradientsOff);
  if (gradientsOff) fn.withoutGradients = `@${gradientsOff}()`;
  scope.vars.set(fn.name, fn);
}

export function makeFunction(interp: Interp, node: PyNode, name: string, scope: Scope): FuncV {
  const defaults = new Map<string, Value>();
  for (const p of interp.params(node)) if (p.defaultNode) defaults.set(p.name, evalExpr(interp, p.defaultNode, scope));
  return { k: 'func', name, node, closure: scope, defaults, kind: 'method' };
}

export function defineClass(interp: Interp, node: PyNode, scope: Scope, decorators: string[]): void {
  const nameNode = field(node, 'name');
  if (!nameNode) return;
  const bases: Value[] = [];
  const superclasses = field(node, 'superclasses');
  for (const b of superclasses ? namedChildren(superclasses) : []) if (b.type !== 'keyword_argument') bases.push(evalExpr(interp, b, scope));
  const cls: ClassV = { k: 'class', name: interp.text(nameNode), bases, attrs: new Map(), node, dataclass: decorators.some((d) => /(^|\.)dataclass$/.test(d)), fields: [] };
  const classScope: Scope = { vars: cls.attrs, parent: scope };
  // As Python does: a class knows the module it was defined in (`obj.__module__`).
  const moduleName = interp.lookup('__name__', scope);
  if (moduleName?.k === 'str') cls.attrs.set('__module__', moduleName);
  const body = field(node, 'body');
  if (body) {
    for (const stmt of body.children) {
      if (cls.dataclass && stmt.type === 'expression_statement') {
        const a = stmt.children[0];
        if (a?.type === 'assignment' && field(a, 'type') && field(a, 'left')?.type === 'identifier') {
          const right = field(a, 'right');
          const name = interp.text(field(a, 'left')!);
          const fallback = right ? dataclassDefault(interp, right, classScope) : undefined;
          cls.fields.push({ name, default: fallback?.value });
          // Python keeps a plain default (and `field(default=…)`) as the class attribute, so `cfg.width` reads it
          // (pytorch/examples' FSDP T5 passes `train_config.model_name` to from_pretrained); a default_factory is not one.
          if (fallback?.classAttribute) cls.attrs.set(name, fallback.value);
          continue;
        }
      }
      interp.execBlock([stmt], classScope);
    }
  }
  // Methods see the module scope, not the class body (as in Python); remember their class for super().
  for (const v of cls.attrs.values()) {
    if (v.k === 'func' && v.closure === classScope) {
      v.closure = scope;
      methodOwner.set(v, cls);
    }
  }
  scope.vars.set(cls.name, cls);
}

/** A field's default, and whether the class keeps it as its attribute (not for a default_factory, as in Python). */
function dataclassDefault(interp: Interp, right: PyNode, scope: Scope): { value: Value; classAttribute: boolean } {
  // `field(default_factory=Foo)` / `field(default=3)`.
  if (right.type === 'call' && /(^|\.)field$/.test(interp.text(field(right, 'function')!))) {
    const args = field(right, 'arguments');
    for (const kw of args ? namedChildren(args) : []) {
      if (kw.type !== 'keyword_argument') continue;
      const name = interp.text(field(kw, 'name')!);
      const value = field(kw, 'value');
      if (!value) continue;
      if (name === 'default') return { value: evalExpr(interp, value, scope), classAttribute: true };
      if (name === 'default_factory') return { value: interp.callValue(evalExpr(interp, value, scope), [], new Map(), interp.site(value)), classAttribute: false };
    }
    return { value: UNKNOWN, classAttribute: false };
  }
  return { value: evalExpr(interp, right, scope), classAttribute: true };
}
