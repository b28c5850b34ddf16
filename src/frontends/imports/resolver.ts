/**
 * Static import resolution, as Pylance does it: a dotted module name (or a
 * relative one, `.blocks`, `..ops.misc`) → the file that defines it. Searched
 * in order: the importing file's own folder (for files in the workspace),
 * the workspace folders, then the `sys.path` of the user's interpreter
 * (site-packages). Nothing is imported or run; only `stat` and reads.
 */
import { readdirSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { isModelledOrStdlib, isSitePackages } from './policy';
import { statKind } from './sourceFiles';

/** What the caller knows about where libraries live; built per analysis by the server or CLI. */
export interface ImportOptions {
  /** Workspace folders (absolute). Files under them are the user's own modules. */
  workspaceFolders?: readonly string[];
  /**
   * `sys.path` of the user's interpreter. Undefined when it is not known:
   * then `libraryNote` says why (untrusted workspace, probe failed, not probed yet).
   */
  libraryRoots?: readonly string[];
  /** Why library imports could not be followed, when `libraryRoots` is undefined. */
  libraryNote?: string;
  /** The interpreter the roots came from, for messages. */
  interpreter?: string;
  /** Open editor documents: path → text, used instead of the file on disk. */
  overrides?: ReadonlyMap<string, string>;
  /** Filled during analysis: library modules that could not be looked up because `libraryRoots` was unknown. */
  wantedLibraries?: Set<string>;
  /** Filled during analysis: every file read to follow imports (the server re-analyses when one changes). */
  filesRead?: Set<string>;
}

export type Resolution =
  /** A `.py` file: a module, or a package's `__init__.py`. */
  | { kind: 'source'; name: string; file: string; isPackage: boolean; library: boolean }
  /** A folder without `__init__.py` (PEP 420 namespace package): only its submodules exist. */
  | { kind: 'namespace'; name: string; dirs: string[]; library: boolean }
  /** Kept as a library path: modelled by the evaluator, standard library, or a compiled module. */
  | { kind: 'library'; name: string }
  | { kind: 'missing'; name: string; looked: string[]; why: string };

/** Absolute dotted name of a relative import; undefined when it climbs above the filesystem root. */
export function relativeBase(fromFile: string, level: number): string | undefined {
  let dir = dirname(fromFile);
  for (let i = 1; i < level; i++) {
    const up = dirname(dir);
    if (up === dir) return undefined;
    dir = up;
  }
  return dir;
}

export class ImportResolver {
  private readonly workspace: string[];
  private readonly libraries: string[] | undefined;
  private readonly memo = new Map<string, Resolution>();
  /** Folders the program adds to its own sys.path (`sys.path.append(…)`), searched after the workspace. */
  private readonly added: string[] = [];

  constructor(readonly options: ImportOptions) {
    this.workspace = (options.workspaceFolders ?? []).map((f) => resolve(f));
    this.libraries = options.libraryRoots?.map((f) => resolve(f));
  }

  /**
   * A folder the program puts on its sys.path (DeepSpeed-Chat's `sys.path.append(<its training folder>)` before
   * `from utils.ds_utils import …`): searched after the importing file's folder and the workspace, as the user's own
   * modules. Earlier resolutions may change, so they are forgotten. False when it was there already.
   */
  addSearchRoot(dir: string): boolean {
    const root = resolve(dir);
    if (this.added.includes(root)) return false;
    this.added.push(root);
    this.memo.clear();
    return true;
  }

  /** Whether a file lies in a library root rather than the user's workspace. */
  isLibraryFile(file: string): boolean {
    if (this.workspace.some((w) => isInside(file, w))) return false;
    return !!this.libraries?.some((l) => isInside(file, l));
  }

  /**
   * Resolves `name` (dotted, without leading dots) imported from `fromFile` at
   * relative `level` (0 for absolute imports, 1 for `.`, 2 for `..`).
   */
  resolve(name: string, level: number, fromFile: string): Resolution {
    const key = `${level}|${level > 0 || !this.isLibraryFile(fromFile) ? dirname(fromFile) : ''}|${name}`;
    let r = this.memo.get(key);
    if (!r) this.memo.set(key, (r = this.compute(name, level, fromFile)));
    return r;
  }

  private compute(name: string, level: number, fromFile: string): Resolution {
    const parts = name ? name.split('.') : [];
    if (level > 0) {
      const base = relativeBase(fromFile, level);
      const display = '.'.repeat(level) + name;
      if (!base) return { kind: 'missing', name: display, looked: [], why: 'the relative import climbs above the filesystem root' };
      const library = this.isLibraryFile(fromFile);
      const found = findIn(base, parts, display, library);
      return found ?? { kind: 'missing', name: display, looked: [join(base, ...parts)], why: `no module ${display} next to ${fromFile}` };
    }
    if (isModelledOrStdlib(name)) return { kind: 'library', name };
    const looked: string[] = [];
    const fromLibrary = this.isLibraryFile(fromFile);
    const localRoots = fromLibrary ? [] : [dirname(fromFile), ...this.workspace, ...this.added];
    let namespace: Resolution | undefined;
    for (const root of unique(localRoots)) {
      looked.push(root);
      const found = findIn(root, parts, name, false);
      if (found?.kind === 'source') return found;
      namespace ??= found;
    }
    if (!this.libraries) {
      if (namespace) return namespace;
      this.options.wantedLibraries?.add(name.split('.')[0]);
      return { kind: 'missing', name, looked, why: this.options.libraryNote ?? 'installed libraries were not looked up' };
    }
    for (const root of this.libraries) {
      looked.push(root);
      const found = findIn(root, parts, name, true);
      if (!found) continue;
      // Only installed packages are read; the standard library is modelled by path or left alone.
      if (!isSitePackages(root) && !this.workspace.some((w) => isInside(root, w))) return { kind: 'library', name };
      if (found.kind === 'source') return found;
      namespace ??= found;
    }
    if (namespace) return namespace;
    if (compiledModuleIn(this.libraries, parts)) return { kind: 'library', name };
    const interp = this.options.interpreter ? `for ${this.options.interpreter}` : 'for the interpreter';
    return { kind: 'missing', name, looked, why: `'${parts[0]}' is not installed ${interp} (not on its sys.path) and is not in the workspace` };
  }
}

/** `root/a/b.py`, `root/a/b/__init__.py`, or the namespace folder `root/a/b/`. */
function findIn(root: string, parts: string[], name: string, library: boolean): Resolution | undefined {
  const path = join(root, ...parts);
  if (parts.length > 0 && statKind(path + '.py') === 'file') return { kind: 'source', name, file: path + '.py', isPackage: false, library };
  if (statKind(join(path, '__init__.py')) === 'file') return { kind: 'source', name, file: join(path, '__init__.py'), isPackage: true, library };
  if (parts.length > 0 && statKind(path) === 'dir') return { kind: 'namespace', name, dirs: [path], library };
  return undefined;
}

function compiledModuleIn(roots: readonly string[], parts: string[]): boolean {
  // Extension modules (`_C.cpython-311-x86_64-linux-gnu.so`) cannot be read; they are libraries, not missing.
  const last = parts[parts.length - 1];
  return roots.some((r) => {
    const dir = join(r, ...parts.slice(0, -1));
    if (statKind(dir) !== 'dir') return false;
    try {
      return readdirSync(dir).some((f) => f.startsWith(last + '.') && /\.(so|pyd)$/.test(f));
    } catch {
      return false;
    }
  });
}

function isInside(file: string, folder: string): boolean {
  const rel = relative(folder, file);
  return rel === '' || (!rel.startsWith('..') && !rel.startsWith(sep) && !/^[a-zA-Z]:/.test(rel));
}

function unique(xs: string[]): string[] {
  return [...new Set(xs.map((x) => resolve(x)))];
}
