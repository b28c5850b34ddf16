/**
 * Modules followed through imports: a workspace `model.py`, torchvision's
 * `models/resnet.py`. Each is parsed (cached per file version by the caller),
 * registered so its nodes know their file and text, and its top level is
 * evaluated once per analysis in a scope of its own — so its classes,
 * functions and constants behave exactly as if defined locally, with ranges
 * pointing at the file that defines them. Packages load lazily: `import
 * torchvision` binds a module whose attributes are resolved on first use,
 * so `torchvision.models.resnet50` never evaluates `torchvision/__init__.py`.
 */
import { basename, dirname, join, sep } from 'node:path';
import type { Diagnostic } from '../../core/ir';
import { foreignFiles, type ConvertedTree, type PyNode } from './ast';
import { ImportResolver, readSource, type ImportOptions, type Resolution } from '../imports';
import type { Interp } from './interpreter';
import { LimitSignal, isSignal } from './signals';
import { isTimmFactory, timmCreateModel } from './timmRegistry';
import type { Scope, Value } from './values';

/** Deeper import chains than this are not followed (guards pathological packages). */
const MAX_IMPORT_DEPTH = 32;
/** At most this many modules are evaluated per analysis. */
const MAX_MODULES = 400;

export interface LoadedModule {
  name: string;
  /** The `.py` file; undefined for namespace packages. */
  file?: string;
  /** Folders searched for submodules (packages only). */
  dirs: string[];
  library: boolean;
  state: 'unloaded' | 'loading' | 'loaded' | 'failed';
  scope: Scope;
  why?: string;
  /** Where a user module fails to parse ("line 60: Syntax error near …"): a name missing from it may be past the error. */
  unparsed?: string;
}

export interface ModuleV {
  k: 'module';
  mod: LoadedModule;
}

export type ParseModule = (file: string, text: string, version: string) => ConvertedTree;

export interface ImportContext {
  options: ImportOptions;
  parse: ParseModule;
  /** The analysed file (absolute), so relative imports in it resolve. */
  mainFile: string;
}

export class ModuleLoader {
  readonly resolver: ImportResolver;
  /** Unresolved imports and names, one per import line (file diagnostics of the analysis). */
  readonly diagnostics: Diagnostic[] = [];
  private readonly modules = new Map<string, LoadedModule>();
  private readonly loading: string[] = [];
  private count = 0;

  constructor(
    private readonly interp: Interp,
    private readonly ctx: ImportContext,
  ) {
    this.resolver = new ImportResolver(ctx.options);
  }

  get options(): ImportOptions {
    return this.ctx.options;
  }

  /** The analysed file itself is a module too: a circular import back into it sees its partial scope. */
  registerMain(scope: Scope): void {
    const name = basename(this.ctx.mainFile).replace(/\.pyi?$/, '');
    const mod: LoadedModule = { name, file: this.ctx.mainFile, dirs: [], library: false, state: 'loading', scope };
    this.modules.set(this.ctx.mainFile, mod);
    this.loading.push(this.ctx.mainFile);
  }

  finishMain(): void {
    const mod = this.modules.get(this.ctx.mainFile);
    if (mod) mod.state = 'loaded';
    this.loading.length = 0;
  }

  /** The file a node of any followed module lies in. */
  fileOf(node: PyNode): string {
    return foreignFiles.get(node.lines)?.file ?? this.ctx.mainFile;
  }

  isLibraryNode(node: PyNode): boolean {
    const file = foreignFiles.get(node.lines)?.file;
    return !!file && this.modules.get(file)?.library === true;
  }

  resolve(name: string, level: number, node: PyNode): Resolution {
    return this.resolver.resolve(name, level, this.fileOf(node));
  }

  /** The module for a resolution (not evaluated yet). */
  moduleFor(r: Extract<Resolution, { kind: 'source' | 'namespace' }>): LoadedModule {
    const key = r.kind === 'source' ? r.file : 'ns:' + r.dirs.join(':');
    let mod = this.modules.get(key);
    if (!mod) {
      mod =
        r.kind === 'source'
          ? { name: r.name, file: r.file, dirs: r.isPackage ? [dirname(r.file)] : [], library: r.library, state: 'unloaded', scope: { vars: new Map() } }
          : { name: r.name, dirs: r.dirs, library: r.library, state: 'loaded', scope: { vars: new Map() } };
      this.modules.set(key, mod);
    }
    return mod;
  }

  /**
   * Evaluates a module's top level once. A module already loading (a
   * circular import) is returned as it stands, partially filled, as Python does.
   */
  load(mod: LoadedModule): LoadedModule {
    if (mod.state !== 'unloaded' || !mod.file) return mod;
    if (this.loading.length >= MAX_IMPORT_DEPTH || this.count >= MAX_MODULES) {
      mod.state = 'failed';
      mod.why = this.count >= MAX_MODULES ? `more than ${MAX_MODULES} modules imported` : `imports nested deeper than ${MAX_IMPORT_DEPTH}`;
      return mod;
    }
    const source = readSource(mod.file, this.ctx.options.overrides);
    if ('why' in source) {
      mod.state = 'failed';
      mod.why = source.why;
      return mod;
    }
    this.ctx.options.filesRead?.add(mod.file);
    this.count++;
    const tree = this.ctx.parse(mod.file, source.text, source.version);
    foreignFiles.set(tree.root.lines, { file: mod.file, source: source.text });
    const unparsed = tree.parseErrors[0];
    if (!mod.library && unparsed) {
      mod.unparsed = `line ${unparsed.line}: ${unparsed.message}`;
      this.sayUnparsed(unparsed, mod.file, `Python cannot import ${mod.name}, so the run stops at its import; WAP read the parts that parse`, true);
    }
    mod.state = 'loading';
    mod.scope.vars.set('__name__', { k: 'str', v: mod.name });
    mod.scope.vars.set('__file__', { k: 'str', v: mod.file });
    this.loading.push(mod.file);
    // Module-level code runs outside whatever call imported it: its own depth, its own graph.
    const depth = this.interp.depth;
    const graph = this.interp.graph;
    this.interp.graph = undefined;
    try {
      this.interp.exec(tree.root, mod.scope);
    } catch (e) {
      if (e instanceof LimitSignal) mod.why = `reading it stopped early: ${e.why}`;
      else if (!isSignal(e)) throw e;
    } finally {
      this.interp.depth = depth;
      this.interp.graph = graph;
      this.loading.pop();
      mod.state = 'loaded';
    }
    return mod;
  }

  /**
   * Code a script execs (scriptExec.ts), evaluated in `scope` as the script's own statements are (it runs in their
   * module), its nodes ranged in `file`. A raise or a limit stops the code, not the script that execs it.
   */
  execIn(file: string, text: string, scope: Scope): void {
    this.ctx.options.filesRead?.add(file);
    const tree = this.ctx.parse(file, text, `${text.length}:${text}`);
    foreignFiles.set(tree.root.lines, { file, source: text });
    // Python compiles the whole text before running any of it: a syntax error runs none of it.
    if (tree.parseErrors[0]) {
      this.sayUnparsed(tree.parseErrors[0], file, 'exec raises SyntaxError before running any of it, so the run stops there; WAP read the script without it', false);
      return;
    }
    const depth = this.interp.depth;
    try {
      this.interp.exec(tree.root, scope);
    } catch (e) {
      if (!isSignal(e)) throw e;
    } finally {
      this.interp.depth = depth;
    }
  }

  /**
   * A syntax error in a file the run imports or execs: an error where it is, carried by every model of the analysed
   * file (Interp.runNotes). A module read in part leaves the models built from it incomplete (`partial`); an exec
   * that runs none of its text leaves the script's own values, read in full.
   */
  private sayUnparsed(error: Diagnostic, file: string, consequence: string, partial: boolean): void {
    const said: Diagnostic = { ...error, file, message: `${error.message} in ${basename(file)}: ${consequence}`, ...(partial ? { incomplete: true } : {}) };
    this.diagnostics.push(said);
    this.interp.runNotes.push(said);
  }

  /** The chain of files being loaded, for circular-import messages. */
  loadingChain(): string[] {
    return [...this.loading];
  }

  isLoading(mod: LoadedModule): boolean {
    return !!mod.file && this.loading.includes(mod.file);
  }

  /**
   * `pkg.name` as Python's attribute access on a module sees it: a name the
   * module defines, else a submodule of a package. Submodules are tried first
   * for packages not yet evaluated, so reaching `torchvision.models` does not
   * evaluate `torchvision/__init__.py` (its other imports are not needed).
   */
  attribute(mod: LoadedModule, name: string): Value | undefined {
    if (isTimmFactory(mod, name)) {
      const timmDir = timmPackageDir(mod);
      if (timmDir) return timmCreateModel(this.interp, this, timmDir);
    }
    const own = mod.scope.vars.get(name);
    if (own !== undefined) return own;
    if (mod.dirs.length) {
      const sub = this.submodule(mod, name);
      if (sub) return sub;
    }
    if (mod.state === 'unloaded') {
      this.load(mod);
      return mod.scope.vars.get(name);
    }
    return undefined;
  }

  submodule(mod: LoadedModule, name: string): ModuleV | undefined {
    for (const dir of mod.dirs) {
      const r = this.resolver.resolve(name, 1, join(dir, '__init__.py'));
      if (r.kind === 'source' || r.kind === 'namespace') {
        const sub = this.moduleFor({ ...r, name: mod.name + '.' + name });
        return { k: 'module', mod: sub };
      }
    }
    return undefined;
  }

  /** Names `from mod import *` binds: `__all__` when it is a list of strings, else the public names. */
  starExports(mod: LoadedModule): Array<[string, Value]> {
    const all = mod.scope.vars.get('__all__');
    if (all && (all.k === 'list' || all.k === 'tuple') && all.items.every((i) => i.k === 'str')) {
      const out: Array<[string, Value]> = [];
      for (const item of all.items) {
        const name = (item as { v: string }).v;
        const v = this.attribute(mod, name);
        if (v !== undefined) out.push([name, v]);
      }
      return out;
    }
    return [...mod.scope.vars].filter(([n]) => !n.startsWith('_'));
  }
}

/** The `timm/` folder of a timm module (`timm/__init__.py`, `timm/models/__init__.py`…). */
function timmPackageDir(mod: LoadedModule): string | undefined {
  const file = mod.file ?? (mod.dirs[0] ? join(mod.dirs[0], '__init__.py') : undefined);
  if (!file) return undefined;
  const i = file.lastIndexOf(`${sep}timm${sep}`);
  return i >= 0 ? file.slice(0, i + 5) : undefined;
}
