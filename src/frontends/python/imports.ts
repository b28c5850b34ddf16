/**
 * Imports bind names to library paths (never load anything): `import torch.nn as nn`
 * makes `nn` the path 'torch.nn'; spellings of the same API share one canonical path
 * (`tf.keras.layers`, `tensorflow.keras.layers`, `keras.layers` → 'keras.layers').
 */
import { field, fields, namedChildren, type PyNode } from './ast';
import { followImport } from './importBinding';
import type { Interp } from './interpreter';
import type { Scope, Value } from './values';

/** Attribute reads on library paths (`nn.Conv2d`) happen on every layer construction: memoised. */
const canonicalCache = new Map<string, string>();

export function canonicalPath(path: string): string {
  let p = canonicalCache.get(path);
  if (p === undefined) {
    if (canonicalCache.size > 10_000) canonicalCache.clear();
    canonicalCache.set(path, (p = computeCanonicalPath(path)));
  }
  return p;
}

function computeCanonicalPath(path: string): string {
  let p = path
    .replace(/^(tensorflow\.(python\.)?keras|tf_keras)(?=\.|$)/, 'keras')
    .replace(/^keras\.(src|api|_tf_keras\.keras)\./, 'keras.')
    .replace(/^torch\.nn\.modules\.\w+\./, 'torch.nn.')
    .replace(/^torch\.nn\.modules\.(?=[A-Z])/, 'torch.nn.')
    .replace(/^torch\.nn\.parameter\.(?=Parameter$)/, 'torch.nn.');
  if (/^keras\.(models|engine\.\w+)\.(Sequential|Model)$/.test(p)) p = 'keras.' + p.split('.').pop();
  if (p === 'keras.layers.Input' || p === 'keras.layers.InputLayer') p = p === 'keras.layers.Input' ? 'keras.Input' : p;
  return p;
}

function lib(path: string): Value {
  return { k: 'lib', path: canonicalPath(path) };
}

export function importStatement(interp: Interp, node: PyNode, scope: Scope): void {
  const note = (path: string): void => {
    if (/^torch(\.|$)|^torchvision/.test(path)) interp.imports.torch = true;
    if (/^(keras|tensorflow|tf_keras)(\.|$)/.test(path)) interp.imports.keras = true;
  };
  if (interp.loader) {
    const moduleNode = node.type === 'import_from_statement' ? field(node, 'module_name') : undefined;
    if (moduleNode) note(interp.text(moduleNode));
    else for (const n of fields(node, 'name')) note(interp.text(n.type === 'aliased_import' ? (field(n, 'name') ?? n) : n));
    return followImport(interp, interp.loader, node, scope, (name, path) => scope.vars.set(name, lib(path)));
  }
  if (node.type === 'import_statement') {
    for (const n of fields(node, 'name')) {
      if (n.type === 'aliased_import') {
        const name = field(n, 'name');
        const alias = field(n, 'alias');
        if (!name || !alias) continue;
        const path = interp.text(name);
        note(path);
        scope.vars.set(interp.text(alias), lib(path));
      } else {
        const path = interp.text(n);
        note(path);
        const head = path.split('.')[0];
        scope.vars.set(head, lib(head));
      }
    }
    return;
  }
  const moduleNode = field(node, 'module_name');
  if (!moduleNode) return;
  const relative = moduleNode.type === 'relative_import';
  const modulePath = relative ? 'relative.' + interp.text(moduleNode).replace(/^\.+/, '') : interp.text(moduleNode);
  note(modulePath);
  if (namedChildren(node).some((c) => c.type === 'wildcard_import')) {
    interp.wildcards.push(canonicalPath(modulePath));
    return;
  }
  for (const n of fields(node, 'name')) {
    const nameNode = n.type === 'aliased_import' ? field(n, 'name') : n;
    const aliasNode = n.type === 'aliased_import' ? field(n, 'alias') : undefined;
    if (!nameNode) continue;
    const name = interp.text(nameNode);
    scope.vars.set(interp.text(aliasNode ?? nameNode), lib(modulePath + '.' + name));
  }
}
