/**
 * `sys.path.append(path)` / `sys.path.insert(0, path)`: a script that puts a folder on its import path before
 * importing from it (DeepSpeed-Chat's step-1 main.py appends its training folder, computed from `__file__`, then
 * imports `utils.ds_utils`). The folder is searched for the script's later imports (imports/resolver.ts). A relative
 * path starts at the run's directory, the script's folder (osPaths.ts). A path WAP cannot compute is said, since the
 * imports that need it may then not resolve.
 */
import { isAbsolute, join } from 'node:path';
import type { Interp } from './interpreter';
import { scriptFolderOf } from './osPaths';
import { NONE, type CallSite, type Value } from './values';

export function extendSysPath(interp: Interp, path: string, args: Value[], site: CallSite): Value {
  const folder = path === 'sys.path.insert' ? args[1] : args[0];
  const base = scriptFolderOf(interp);
  if (folder?.k !== 'str' || (!isAbsolute(folder.v) && !base)) {
    interp.warn(site.node, `\`${interp.text(site.node).slice(0, 80)}\` adds a folder WAP cannot compute to the import path: modules imported from it may not resolve`, 'sys-path-unknown');
    return NONE;
  }
  interp.loader?.resolver.addSearchRoot(isAbsolute(folder.v) ? folder.v : join(base!, folder.v));
  return NONE;
}
