/**
 * Import statements when imports are followed (an import context was given):
 * names bound from workspace modules and installed model libraries are the
 * values those modules define; modelled libraries (torch, keras, the standard
 * library) stay library paths as before; an import that cannot be resolved is
 * a diagnostic on its line, and the names it binds are opaque with the reason.
 */
import { field, fields, namedChildren, rangeOf, type PyNode } from './ast';
import type { Interp } from './interpreter';
import type { LoadedModule, ModuleLoader, ModuleV } from './modules';
import { isTimmFactory } from './timmRegistry';
import type { Resolution } from '../imports';
import type { Scope } from './values';

/** Binds a library path the old way (torch.nn, math…); supplied by imports.ts. */
export type BindLibrary = (name: string, path: string) => void;

export function followImport(interp: Interp, loader: ModuleLoader, node: PyNode, scope: Scope, bindLibrary: BindLibrary): void {
  if (node.type === 'import_statement') {
    for (const n of fields(node, 'name')) {
      const aliased = n.type === 'aliased_import';
      const nameNode = aliased ? field(n, 'name') : n;
      const aliasNode = aliased ? field(n, 'alias') : undefined;
      if (!nameNode) continue;
      const path = interp.text(nameNode);
      const r = loader.resolve(path, 0, node);
      if (r.kind === 'library') {
        if (aliasNode) bindLibrary(interp.text(aliasNode), path);
        else bindLibrary(path.split('.')[0], path.split('.')[0]);
        continue;
      }
      if (r.kind === 'missing') {
        const why = report(interp, loader, n, r);
        scope.vars.set(aliasNode ? interp.text(aliasNode) : path.split('.')[0], { k: 'unknown', why });
        continue;
      }
      if (aliasNode) scope.vars.set(interp.text(aliasNode), moduleValue(loader, r));
      else {
        // `import a.b.c` binds `a`; `a.b.c` is then reached attribute by attribute.
        const head = path.split('.')[0];
        const top = head === path ? r : loader.resolve(head, 0, node);
        if (top.kind === 'source' || top.kind === 'namespace') scope.vars.set(head, moduleValue(loader, top));
      }
    }
    return;
  }

  const moduleNode = field(node, 'module_name');
  if (!moduleNode) return;
  const written = interp.text(moduleNode);
  const level = moduleNode.type === 'relative_import' ? /^\.*/.exec(written)![0].length : 0;
  const name = written.slice(level);
  const r = loader.resolve(name, level, node);
  const wildcard = namedChildren(node).some((c) => c.type === 'wildcard_import');
  const imported = fields(node, 'name').map((n) => {
    const aliased = n.type === 'aliased_import';
    const nameNode = aliased ? field(n, 'name') : n;
    const aliasNode = aliased ? field(n, 'alias') : undefined;
    return { node: n, name: nameNode ? interp.text(nameNode) : '', as: interp.text(aliasNode ?? nameNode ?? n) };
  });
  if (r.kind === 'library') {
    if (wildcard) interp.wildcards.push(name);
    for (const i of imported) if (i.name) bindLibrary(i.as, name + '.' + i.name);
    return;
  }
  if (r.kind === 'missing') {
    const why = report(interp, loader, moduleNode, r);
    // Each name says which import it came from, so a layer built from it names e.g. 'mystery.FancyBlock'.
    for (const i of imported) scope.vars.set(i.as, { k: 'unknown', why: `'${r.name}.${i.name}' is imported ${why}` });
    return;
  }
  const mod = loader.moduleFor(r);
  // `from timm import create_model` needs timm's registry, not its package __init__ (which imports every model file).
  const onlyFactories = !wildcard && imported.length > 0 && imported.every((i) => isTimmFactory(mod, i.name));
  if (!onlyFactories) loader.load(mod);
  if (wildcard) {
    for (const [n, v] of loader.starExports(mod)) scope.vars.set(n, v);
    return;
  }
  for (const i of imported) {
    if (!i.name) continue;
    const v = (isTimmFactory(mod, i.name) ? loader.attribute(mod, i.name) : undefined) ?? mod.scope.vars.get(i.name) ?? (mod.dirs.length ? loader.submodule(mod, i.name) : undefined);
    if (v !== undefined) {
      scope.vars.set(i.as, v);
      continue;
    }
    const why = missingName(loader, mod, i.name);
    if (!loader.isLibraryNode(node)) warn(interp, loader, i.node, why, 'import-name-missing');
    scope.vars.set(i.as, { k: 'unknown', why });
  }
}

function moduleValue(loader: ModuleLoader, r: Extract<Resolution, { kind: 'source' | 'namespace' }>): ModuleV {
  return { k: 'module', mod: loader.moduleFor(r) };
}

function missingName(loader: ModuleLoader, mod: LoadedModule, name: string): string {
  const where = mod.file ?? mod.name;
  if (loader.isLoading(mod)) {
    const chain = [...loader.loadingChain(), mod.file ?? mod.name].map((f) => f.split(/[\\/]/).pop()).join(' → ');
    return `cannot import '${name}' from ${mod.name}: circular import (${chain}) reaches it before ${where} defines it`;
  }
  if (mod.state === 'failed') return `cannot import '${name}' from ${mod.name}: ${mod.why ?? 'it could not be read'}`;
  if (mod.unparsed) return `cannot import '${name}' from ${mod.name} (${where}): the file does not parse (${mod.unparsed}), and WAP read only the parts that do`;
  return `cannot import '${name}' from ${mod.name} (${where}): it does not define it`;
}

/** One diagnostic per unresolved import in the user's files; imports inside installed libraries stay quiet. */
function report(interp: Interp, loader: ModuleLoader, node: PyNode, r: Extract<Resolution, { kind: 'missing' }>): string {
  const looked = r.looked.length ? `; looked in ${r.looked.join(', ')}` : '';
  const why = `module '${r.name}' could not be resolved: ${r.why}${looked}`;
  if (!loader.isLibraryNode(node)) warn(interp, loader, node, why + '. Names imported from it are opaque.', 'import-unresolved');
  return `from '${r.name}', which could not be resolved (${r.why})`;
}

function warn(interp: Interp, loader: ModuleLoader, node: PyNode, message: string, code: string): void {
  const r = rangeOf(node);
  loader.diagnostics.push({ severity: 'warning', message, line: r.line, column: r.column, endLine: r.endLine, endColumn: r.endColumn, code, ...(r.file ? { file: r.file } : {}) });
  void interp;
}

