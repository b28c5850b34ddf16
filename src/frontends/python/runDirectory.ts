/**
 * Where a relative path a script opens lies. Python opens it from the process's working directory, which WAP does not
 * know: the launch runs the script from there. nanoGPT is run from its own folder (`python train.py` beside
 * configurator.py), so the script's folder is looked in first; nanochat is run from the repository root as a module
 * (`python -m scripts.base_train`, speedrun.sh), and scripts/base_train.py opens `nanochat/configurator.py`, a path
 * only that root holds. A path not beside the script is looked up in the folders above it (as far as launch scripts
 * are looked for, configs/launchedBy.ts), then in the workspace folders (where imports are resolved from, as the
 * working directory is on a `python -m` run's sys.path); the first folder that holds it is taken as where the run
 * starts, and said.
 */
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import type { Interp } from './interpreter';
import { statKind } from '../imports/sourceFiles';
import { fileLabel } from './runFacts';

/** How many folders above the script a run's working directory is looked for: launch scripts sit up to three above. */
const FOLDERS_ABOVE = 3;

export interface RunFile {
  file: string;
  /** Where the run was taken to start, when it is not the script's folder (a note says so). */
  startsIn?: string;
  /** Where else it was looked for, when it is nowhere (the error names them). */
  alsoLooked?: string[];
}

/** Whether a path names a file WAP can read: saved on disk, or an open editor's buffer. */
function exists(interp: Interp, file: string): boolean {
  return interp.loader?.options.overrides?.has(file) === true || statKind(file) === 'file';
}

/** The folders other than the script's own a run of `script` could start in, nearest first: above it, the workspace's. */
function otherStartFolders(interp: Interp, script: string): string[] {
  const own = dirname(resolve(script));
  const folders: string[] = [];
  let folder = own;
  for (let i = 0; i < FOLDERS_ABOVE && dirname(folder) !== folder; i++) folders.push((folder = dirname(folder)));
  for (const w of (interp.loader?.options.workspaceFolders ?? []).map((f) => resolve(f))) if (w !== own && !folders.includes(w)) folders.push(w);
  return folders;
}

/**
 * The file a relative path names for the analysed script's run: beside the script when it is there (or nowhere else:
 * the error then names that path), else in the nearest folder a run could start in that holds it.
 */
export function runFile(interp: Interp, script: string, path: string): RunFile {
  if (isAbsolute(path)) return { file: path };
  const beside = join(dirname(script), path);
  if (exists(interp, beside)) return { file: beside };
  const others = otherStartFolders(interp, script);
  for (const folder of others) {
    const file = join(folder, path);
    if (exists(interp, file)) return { file, startsIn: folder };
  }
  return { file: beside, alsoLooked: others };
}

/** The note for a path read from a folder other than the script's: which folder the run is taken to start in. */
export function runFileNote(script: string, path: string, found: RunFile): string | undefined {
  if (!found.startsIn) return undefined;
  const from = relative(dirname(resolve(script)), found.startsIn);
  return `'${path}' is not beside ${fileLabel(script)}: WAP read ${found.file}, the file a run started in ${found.startsIn} ('${from}' from the script's folder) opens; a run started elsewhere opens another file, or fails`;
}
