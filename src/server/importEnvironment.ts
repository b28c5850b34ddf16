/**
 * Where imports of the analysed files are resolved: the workspace folders,
 * the open documents' unsaved texts, and — in trusted workspaces only — the
 * `sys.path` of the user's interpreter (the Python extension's selection, else
 * `wap.python`, else `WAP_PYTHON`/`python3`). The probe runs in the background
 * at most once per interpreter; analysis never waits for it: a file that
 * imports an installed library is analysed again when the probe answers.
 */
import { watch, type FSWatcher } from 'node:fs';
import { forgetFileStats, type ImportOptions } from '../frontends/imports';
import { probePython, resolvePython, type PythonInfo } from '../profiler/pythonEnv';

/** Imported workspace files watched for changes on disk; beyond this, files are re-read by mtime on the next analysis. */
const MAX_WATCHED = 256;

export class ImportEnvironment {
  trusted = false;
  /** From the Python extension (`wap/setPython` or initialization options). */
  selectedInterpreter: string | undefined;
  /** `wap.python` of the workspace. */
  settingInterpreter = '';
  private probe: { interpreter: string; info?: PythonInfo; pending?: Promise<PythonInfo> } | undefined;
  private readonly watchers = new Map<string, FSWatcher>();
  /** Spawned probes, for tests and the log. */
  probesStarted = 0;

  constructor(
    private readonly roots: () => string[],
    /** Open documents: path → current text. */
    private readonly openTexts: () => Map<string, string>,
    /** Called when something an analysis depended on changed: re-analyse the files that want it. */
    private readonly onChange: (reason: { libraries?: boolean; file?: string }) => void,
    private readonly log: (m: string) => void,
  ) {}

  get interpreter(): string {
    return resolvePython(this.selectedInterpreter || this.settingInterpreter || undefined);
  }

  /** Forget the probe (interpreter or trust changed) and re-analyse. */
  reset(): void {
    this.probe = undefined;
    this.onChange({ libraries: true });
  }

  /** Options for one analysis; never blocks. */
  options(): ImportOptions {
    const base: ImportOptions = {
      workspaceFolders: this.roots(),
      overrides: this.openTexts(),
      wantedLibraries: new Set(),
      filesRead: new Set(),
    };
    if (!this.trusted) return { ...base, libraryNote: 'the workspace is not trusted, so installed libraries were not read (WAP asks the Python interpreter for its sys.path only in trusted workspaces)' };
    const interpreter = this.interpreter;
    const probe = this.probe?.interpreter === interpreter ? this.probe : undefined;
    if (probe?.info?.ok) return { ...base, libraryRoots: probe.info.sysPath, interpreter: probe.info.executable ?? interpreter };
    if (probe?.info) return { ...base, interpreter, libraryNote: `the interpreter could not be asked for its sys.path: ${probe.info.reason ?? 'unknown error'}; choose one with the Python extension or wap.python` };
    return { ...base, interpreter, libraryNote: `the sys.path of ${interpreter} is still being read` };
  }

  /** After an analysis: start the probe if the file wanted installed libraries; watch the workspace files it read. */
  afterAnalysis(options: ImportOptions): void {
    if (this.trusted && options.wantedLibraries?.size && !options.libraryRoots) this.startProbe();
    for (const file of options.filesRead ?? []) this.watchFile(file, options);
  }

  private startProbe(): void {
    const interpreter = this.interpreter;
    if (this.probe?.interpreter === interpreter) return;
    this.probesStarted++;
    const pending = probePython(interpreter);
    const probe: { interpreter: string; info?: PythonInfo; pending?: Promise<PythonInfo> } = { interpreter, pending };
    this.probe = probe;
    void pending.then((info) => {
      if (this.probe !== probe) return;
      probe.info = info;
      this.log(info.ok ? `wap: reading installed libraries of ${info.executable ?? interpreter} (${info.sysPath.length} sys.path entries)` : `wap: ${info.reason}`);
      this.onChange({ libraries: true });
    });
  }

  private watchFile(file: string, options: ImportOptions): void {
    // Only the user's files change while they work; installed libraries are re-read by mtime if they ever do.
    const inWorkspace = (options.workspaceFolders ?? []).some((r) => file.startsWith(r));
    if (!inWorkspace || this.watchers.has(file) || this.watchers.size >= MAX_WATCHED) return;
    try {
      const w = watch(file, { persistent: false }, () => {
        forgetFileStats([file]);
        this.onChange({ file });
      });
      w.on('error', () => {
        w.close();
        this.watchers.delete(file);
      });
      this.watchers.set(file, w);
    } catch {
      // Unwatchable (e.g. too many watchers): the next analysis still re-reads it by mtime.
    }
  }

  dispose(): void {
    for (const w of this.watchers.values()) w.close();
    this.watchers.clear();
  }
}
