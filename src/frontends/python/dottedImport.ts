/**
 * A class or function named by its dotted import path in a config, as Hydra's `_target_` and jsonargparse's
 * `class_path` (LightningCLI) name them: `src.models.mnist_module.MNISTLitModule`, `torch.optim.Adam`. Resolved as
 * the program would import it: a modelled library stays a library path, a workspace or installed module is followed
 * and its attribute read, `__main__.Net` is the running script's own name.
 */
import type { PyNode } from './ast';
import { getAttr } from './access';
import { isModelledOrStdlib } from '../imports';
import type { Interp } from './interpreter';
import type { Value } from './values';

/** The value `path` names, or an unknown that says why it could not be imported (`key` names the config's word). */
export function importDotted(interp: Interp, path: string, node: PyNode, key: string): Value {
  const parts = path.split('.');
  if (parts[0] === '__main__' && parts.length > 1) {
    const top = interp.globals.vars.get(parts[1]!) ?? { k: 'unknown', why: `${key} ${path}: the script defines no ${parts[1]}` };
    return parts.slice(2).reduce<Value>((v, p) => getAttr(interp, v, p, node), top);
  }
  if (isModelledOrStdlib(path) || !interp.loader) return { k: 'lib', path };
  let missing: string | undefined;
  for (let i = parts.length - 1; i >= 1; i--) {
    const r = interp.loader.resolve(parts.slice(0, i).join('.'), 0, node);
    if (r.kind === 'library') return { k: 'lib', path };
    if (r.kind === 'missing') missing ??= `${r.why}; looked in ${r.looked.join(', ')}`;
    if (r.kind !== 'source' && r.kind !== 'namespace') continue;
    let v: Value = { k: 'module', mod: interp.loader.moduleFor(r) };
    for (const p of parts.slice(i)) v = getAttr(interp, v, p, node);
    return v;
  }
  // The program imports it from sys.path, which a project's rootutils/pyrootutils.setup_root extends with the project
  // root: open that folder as the workspace (or run wap from it) so the import resolves there too.
  return { k: 'unknown', why: `${key} ${path} could not be imported (${missing ?? 'no module of it found'}); open the project root as the workspace folder` };
}
