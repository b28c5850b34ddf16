/**
 * Keeps one ModelDocument per open model file and re-analyses it after edits,
 * debounced so typing does not analyse every keystroke. A request that needs
 * the current text (hover, CodeLens, plan) flushes the pending analysis first.
 */
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { analyzeSourceSync, initFrontends, sourceKindOf, type ImportOptions } from '../frontends';
import type { AnalysisResult, AnalyzeOptions } from '../core/ir';
import { ModelDocument } from './modelDocs';

export const ANALYSIS_DEBOUNCE_MS = 150;

export function fileNameOf(uri: string): string {
  if (uri.startsWith('file:')) {
    try {
      return fileURLToPath(uri);
    } catch {
      // fall through: an odd URI is still a name the frontends can dispatch on
    }
  }
  return decodeURIComponent(uri.replace(/^[a-z-]+:\/*/i, '/'));
}

export function isModelSource(uri: string): boolean {
  return sourceKindOf(fileNameOf(uri)) !== undefined;
}

/**
 * Whether a script reads the command line a launch script in `script`'s folder may give it: it parses its arguments,
 * and the launch script is in its folder or the one above (where configs' launchedArguments looks).
 */
function readsCommandLine(doc: ModelDocument, script: string): boolean {
  if (!/\.py$/i.test(doc.fileName) || !/\b(argparse|HfArgumentParser|TrlParser|sys\.argv|hydra|LightningCLI)\b/.test(doc.text)) return false;
  const own = dirname(doc.fileName);
  return dirname(script) === own || dirname(script) === dirname(own);
}

export interface StoreEvents {
  /** After every analysis of a document (diagnostics, CodeLens refresh, background plan). */
  analyzed(doc: ModelDocument): void;
  log(message: string): void;
  error(context: string, err: unknown): void;
}

/** Where imports resolve (importEnvironment.ts); absent, imports are not followed. */
export interface ImportProvider {
  options(): ImportOptions;
  afterAnalysis(options: ImportOptions): void;
}

export class DocumentStore {
  readonly docs = new Map<string, ModelDocument>();
  private ready: Promise<void> | undefined;
  private isReady = false;
  imports: ImportProvider | undefined;
  /**
   * The command line a script is run with (the launch script beside it that runs it), for its argparse; absent, none.
   * `read` is told each launch script that names the script, so a change to one on disk reads the script again.
   */
  scriptArguments: ((fileName: string, read?: (file: string) => void) => AnalyzeOptions['scriptArguments']) | undefined;

  constructor(private readonly events: StoreEvents) {}

  /** Loads the parsers once (wasm); analysis waits for it. */
  init(): Promise<void> {
    this.ready ??= initFrontends().then(
      () => {
        this.isReady = true;
      },
      (err: unknown) => {
        this.events.error('loading the parsers', err);
        this.isReady = true; // analysis then reports per-file errors instead of waiting forever
      },
    );
    return this.ready;
  }

  get(uri: string): ModelDocument | undefined {
    return this.docs.get(uri);
  }

  open(uri: string, text: string, version: number, hidden = false): ModelDocument | undefined {
    if (!isModelSource(uri)) return undefined;
    const existing = this.docs.get(uri);
    if (existing && !existing.hidden && hidden) return existing;
    const doc = new ModelDocument(uri, fileNameOf(uri), text, version, hidden);
    // A file read from disk for a request (hidden) and then opened in the editor keeps what was
    // computed for it: its plans, panel overrides and measured profiles (dropping the profile
    // would make the background re-plan replace a measured plan with an analytical one).
    if (existing) {
      this.stopWork(existing);
      for (const [k, v] of existing.plans) doc.plans.set(k, v);
      for (const [k, v] of existing.overrides) doc.overrides.set(k, v);
      for (const [k, v] of existing.profiles) doc.profiles.set(k, v);
    }
    this.docs.set(uri, doc);
    this.schedule(doc, 0);
    return doc;
  }

  change(uri: string, text: string, version: number): void {
    const doc = this.docs.get(uri);
    if (!doc) return;
    doc.text = text;
    doc.version = version;
    if (doc.backgroundCancel) doc.backgroundCancel.isCancellationRequested = true;
    this.schedule(doc, ANALYSIS_DEBOUNCE_MS);
    this.dependencyChanged({ file: doc.fileName });
  }

  /**
   * Something an analysis read changed: an imported file (edited in the editor
   * or on disk), the installed libraries (the interpreter's sys.path became
   * known), or a launch script that may run a script with other arguments. The
   * documents that depended on it are analysed again.
   */
  dependencyChanged(what: { file?: string; libraries?: boolean; launchScript?: string }): void {
    for (const doc of this.docs.values()) {
      const depends =
        (what.file !== undefined && what.file !== doc.fileName && doc.importedFiles.has(what.file)) ||
        (what.libraries && doc.wantsLibraries) ||
        (what.launchScript !== undefined && readsCommandLine(doc, what.launchScript));
      if (!depends) continue;
      doc.analyzedVersion = -1;
      this.schedule(doc, ANALYSIS_DEBOUNCE_MS);
    }
  }

  close(uri: string): void {
    const doc = this.docs.get(uri);
    if (!doc) return;
    this.stopWork(doc);
    this.docs.delete(uri);
  }

  private stopWork(doc: ModelDocument): void {
    if (doc.pendingTimer) clearTimeout(doc.pendingTimer);
    doc.pendingTimer = undefined;
    if (doc.backgroundCancel) doc.backgroundCancel.isCancellationRequested = true;
  }

  private schedule(doc: ModelDocument, delayMs: number): void {
    if (doc.pendingTimer) clearTimeout(doc.pendingTimer);
    doc.pendingTimer = setTimeout(() => {
      doc.pendingTimer = undefined;
      // Nobody awaits this chain: a failure in a listener (diagnostics, CodeLens) is reported, not left unhandled.
      void this.init()
        .then(() => this.analyzeNow(doc))
        .catch((err: unknown) => this.events.error(`analysing ${doc.fileName}`, err));
    }, delayMs);
  }

  /**
   * Brings a document's analysis up to date now, if the parsers are loaded.
   * Returns false when they are still loading (callers answer from what they have).
   */
  flush(doc: ModelDocument): boolean {
    if (!doc.dirty) return true;
    if (!this.isReady) return false;
    if (doc.pendingTimer) {
      clearTimeout(doc.pendingTimer);
      doc.pendingTimer = undefined;
    }
    this.analyzeNow(doc);
    return true;
  }

  /** Waits for the parsers, then flushes. */
  async current(doc: ModelDocument): Promise<ModelDocument> {
    await this.init();
    this.flush(doc);
    return doc;
  }

  /**
   * The document's text read again with other options (a sequence length), imports followed as for its own
   * analysis; the document keeps its analysis. Throws what the frontend throws.
   */
  analyzeWith(doc: ModelDocument, options: AnalyzeOptions): AnalysisResult {
    const imports = this.imports?.options();
    return analyzeSourceSync(doc.fileName, doc.text, { ...this.runOptions(doc, imports), ...options }, imports);
  }

  /** What every analysis of the document is given: the arguments its launch script runs it with. */
  private runOptions(doc: ModelDocument, imports: ImportOptions | undefined): AnalyzeOptions {
    // The launch scripts read are files the analysis depends on, watched on disk as imported files are.
    const scriptArguments = /\.py$/i.test(doc.fileName) ? this.scriptArguments?.(doc.fileName, (file) => imports?.filesRead?.add(file)) : undefined;
    return scriptArguments ? { scriptArguments } : {};
  }

  private analyzeNow(doc: ModelDocument): void {
    if (!doc.dirty || this.docs.get(doc.uri) !== doc) return;
    const version = doc.version;
    const text = doc.text;
    const started = performance.now();
    let result: AnalysisResult;
    const imports = this.imports?.options();
    try {
      result = analyzeSourceSync(doc.fileName, text, this.runOptions(doc, imports), imports);
    } catch (err) {
      // A frontend bug must not take the document down: report it as one diagnostic.
      this.events.error(`analysing ${doc.fileName}`, err);
      result = {
        file: doc.fileName,
        framework: undefined,
        models: [],
        diagnostics: [{ severity: 'error', message: `WAP could not analyse this file: ${err instanceof Error ? err.message : String(err)}`, line: 1, column: 1, code: 'internal-error' }],
      };
    }
    doc.setAnalysis(result, version, performance.now() - started, text);
    if (imports) {
      doc.importedFiles = imports.filesRead ?? new Set();
      doc.wantsLibraries = (imports.wantedLibraries?.size ?? 0) > 0 || imports.libraryRoots !== undefined && doc.importedFiles.size > 0;
      this.imports?.afterAnalysis(imports);
    }
    this.events.analyzed(doc);
  }
}
