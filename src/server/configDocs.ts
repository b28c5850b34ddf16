/**
 * Training-config documents (accelerate YAML, DeepSpeed JSON, Lightning
 * Trainer calls, torchrun scripts, Makefiles…): findings against a plan as
 * diagnostics, their fixes as quick-fixes, and "Fix all WAP config issues".
 *
 * Which plan does a config compare against? In this order:
 *   1. the model of the script the config launches (torchrun/accelerate/deepspeed script argument,
 *      a launch script beside a YAML/JSON/TOML config that names it, a Lightning script itself),
 *      following the script's import of a local model module (src/configs/modelFor.ts);
 *   2. the model file named by the `wap.model` setting (read from disk and planned when not open);
 *   3. the model file the user picked for this config (the client's quick pick, remembered per
 *      config and sent with `wap/setConfigModels`; see configModelChoice.ts);
 *   4. none: an info diagnostic whose quick fix asks. Never "the model planned last".
 * Without a plan, only the config's own consistency is checked (e.g. DeepSpeed batch arithmetic).
 */
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { pathToFileURL } from 'node:url';
import { CodeActionKind, DiagnosticSeverity, type CodeAction, type Diagnostic, type Range, type TextEdit, type WorkspaceEdit } from 'vscode-languageserver';
import type { TextDocument } from 'vscode-languageserver-textdocument';
import { checkConfig, configMentioned, detectConfigFormats, fixAll, initConfigReaders, namedModel, readConfigSetups, resolveLaunchedModel, statedSequence, weighedByVersus, type ConfigFormat, type FileAccess } from '../configs';
import type { AnalyzedModel } from '../core/ir';
import { namedModelNotFound, pretrainedConfigPath } from '../frontends/huggingface/sources';
import { listOrEmpty, readOrUndefined } from './diskFiles';
import type { PlanReport } from '../protocol/plan';
import { configVersus } from './configVersus';
import { chosenLabel, ConfigModelChoices, missingModelMessage, modelChoiceAction, type ModelSource } from './configModelChoice';
import { ClientCommands, FIX_ALL_KIND } from '../protocol/lsp';
import { adviseExport, EXPORT_PARALLELIZE_TITLE } from './editorAdvice';
import { DIAGNOSTIC_SOURCE, lspSeverity } from './diagnostics';
import type { DocumentStore } from './documentStore';
import { fileNameOf } from './documentStore';
import type { Environment } from './environment';
import type { PlanService } from './planService';
import type { SettingsCache } from './settings';

type Finding = ReturnType<typeof checkConfig>['findings'][number];

interface ConfigState {
  version: number;
  findings: Finding[];
  diagnostics: Diagnostic[];
  planLabel?: string;
  /** "your config … · best plan …", when the config states a setup and a plan is known. */
  versus?: string;
  /** Where the model came from: decides how the user changes it (code action). */
  modelSource: ModelSource;
  /** The planned model, for the code actions that act on its plan (export). */
  modelRef?: { uri: string; model: string };
}

interface PlanChoice {
  plan: PlanReport | undefined;
  label?: string;
  /** Why there is no model to compare with, and how to choose one. */
  missing?: string;
  /** The model that was planned, for planning it again with the config's setup pinned. */
  model?: AnalyzedModel;
  source: ModelSource;
  modelRef?: { uri: string; model: string };
}

export class ConfigDocuments {
  private readonly states = new Map<string, ConfigState>();
  private ready: Promise<void> | undefined;
  private recheckTimer: ReturnType<typeof setTimeout> | undefined;
  /** Per-document debounce of re-checks after edits, like model documents: typing re-checks once it pauses. */
  private readonly pending = new Map<string, ReturnType<typeof setTimeout>>();
  private readonly planning = new Set<string>();
  /** The models the user picked per config (step 3 of the order). */
  readonly choices = new ConfigModelChoices();
  /** True for the VS Code extension: the wording points at its quick fixes. */
  clientCommands = false;
  /** Files as a config's references see them: an open editor's text first (unsaved edits count), else the disk. */
  private readonly files: FileAccess = {
    read: (p) => this.getText(pathToFileURL(p).href)?.getText() ?? readOrUndefined(p),
    list: (dir) => listOrEmpty(dir),
    pretrainedConfig: pretrainedConfigPath,
  };

  constructor(
    private readonly store: DocumentStore,
    private readonly plans: PlanService,
    private readonly settings: SettingsCache,
    private readonly env: Environment,
    private readonly getText: (uri: string) => TextDocument | undefined,
    private readonly allUris: () => string[],
    private readonly publish: (uri: string) => void,
  ) {}

  init(): Promise<void> {
    return (this.ready ??= initConfigReaders().catch((err: unknown) => this.env.reportError('loading config readers', err)));
  }

  diagnostics(uri: string): Diagnostic[] {
    return this.states.get(uri)?.diagnostics ?? [];
  }

  forget(uri: string): void {
    this.cancelPending(uri);
    this.states.delete(uri);
  }

  /** Re-checks `uri` once edits pause for `delayMs`; failures reach the log and status. */
  scheduleCheck(uri: string, delayMs = CHECK_DEBOUNCE_MS): void {
    this.cancelPending(uri);
    this.pending.set(
      uri,
      setTimeout(() => {
        this.pending.delete(uri);
        void this.check(uri).catch((err: unknown) => this.env.reportError(`checking ${uri}`, err));
      }, delayMs),
    );
  }

  /** Runs a pending debounced check now (a code action must see the current text's findings). */
  async flush(uri: string): Promise<void> {
    if (!this.pending.has(uri)) return;
    this.cancelPending(uri);
    await this.check(uri);
  }

  private cancelPending(uri: string): void {
    const timer = this.pending.get(uri);
    if (timer) clearTimeout(timer);
    this.pending.delete(uri);
  }

  /** Re-checks one document (after open/edit). Not a config → no state, no diagnostics. */
  async check(uri: string): Promise<void> {
    this.cancelPending(uri);
    await this.init();
    const doc = this.getText(uri);
    if (!doc) return;
    const fileName = fileNameOf(uri);
    const text = doc.getText();
    // Detect here, before choosing a plan: choosing one may read and plan `wap.model`, which a non-config must not trigger.
    const formats = this.detectFormats(fileName, text);
    if (formats.length === 0) {
      if (this.states.delete(uri)) this.publish(uri);
      return;
    }
    const { plan, label, missing, model, source, modelRef } = await this.atConfigLength(fileName, text, await this.planFor(uri));
    const versus = plan && model ? await configVersus(fileName, text, plan, model, await this.settings.get(uri), this.env, this.files).catch((err: unknown) => {
      this.env.reportError(`comparing ${fileName} with the best plan`, err);
      return undefined;
    }) : undefined;
    // A newer edit arrived while the plan was chosen: its own (debounced) check will publish.
    if (doc.version !== this.getText(uri)?.version) return;
    // The text is unchanged since detection (same version), so its formats are reused rather than detected again.
    const checked = checkConfig(fileName, text, plan, formats, this.files);
    const result = versus ? { ...checked, findings: weighedByVersus(checked.findings, versus.yours, versus.best) } : checked;
    const diagnostics = result.findings.map((f): Diagnostic => ({
      severity: lspSeverity(f.severity),
      range: { start: doc.positionAt(f.range.start), end: doc.positionAt(f.range.end) },
      message: label && plan ? `${f.message} (plan: ${label})` : f.message,
      source: DIAGNOSTIC_SOURCE,
      code: f.code,
    }));
    if (versus) {
      const f: Finding = { format: formats[0]!, severity: 'info', code: 'config-vs-best', message: versus.line, range: versus.anchor };
      result.findings.push(f);
      diagnostics.push({ severity: lspSeverity('info'), range: { start: doc.positionAt(f.range.start), end: doc.positionAt(f.range.end) }, message: label ? `${f.message} (model: ${label})` : f.message, source: DIAGNOSTIC_SOURCE, code: f.code });
    }
    if (source === 'chosen' && label) {
      // A hint (no Problems entry) that names the chosen model, so its "Change…" quick fix is there even when the config agrees with the plan.
      const end = Math.min(text.indexOf('\n') >>> 0, text.length);
      const message = `WAP checks this config against ${label}.`;
      result.findings.push({ format: formats[0]!, severity: 'info', code: 'config-model', message, range: { start: 0, end } });
      diagnostics.push({ severity: DiagnosticSeverity.Hint, range: { start: doc.positionAt(0), end: doc.positionAt(end) }, message, source: DIAGNOSTIC_SOURCE, code: 'config-model' });
    }
    if (missing) {
      result.findings.push({ format: formats[0]!, severity: 'info', code: 'no-model', message: missing, range: { start: 0, end: Math.min(doc.getText().indexOf('\n') >>> 0, doc.getText().length) } });
      diagnostics.push({ severity: lspSeverity('info'), range: { start: doc.positionAt(0), end: doc.positionAt(Math.min(doc.getText().indexOf('\n') >>> 0, doc.getText().length)) }, message: missing, source: DIAGNOSTIC_SOURCE, code: 'no-model' });
    }
    this.states.set(uri, { version: doc.version, findings: result.findings, diagnostics, planLabel: label, versus: versus && (label ? `${versus.line} (model: ${label})` : versus.line), modelSource: source, modelRef });
    this.publish(uri);
    if (formats.includes('deepspeed')) this.recheckReferrers(uri, fileName);
  }

  /** A DeepSpeed JSON changed: the open configs that name it (deepspeed_config_file, deepspeed="…") read it again. */
  private recheckReferrers(uri: string, fileName: string): void {
    for (const other of this.states.keys()) {
      const text = other === uri ? undefined : this.getText(other)?.getText();
      if (text !== undefined && configMentioned(text, basename(fileName))) this.scheduleCheck(other);
    }
  }

  private detectFormats(fileName: string, text: string): ConfigFormat[] {
    try {
      return detectConfigFormats(fileName, text);
    } catch (err) {
      this.env.reportError(`detecting the config format of ${fileName}`, err);
      return [];
    }
  }

  /** The fixes and unfixable findings of one open config against a given plan (the panel's "Apply to training config"). Not a config → undefined. */
  againstPlan(uri: string, plan: PlanReport): { edits: TextEdit[]; unfixed: string[] } | undefined {
    const doc = this.getText(uri);
    if (!doc) return undefined;
    const fileName = fileNameOf(uri);
    const text = doc.getText();
    const { formats, findings } = checkConfig(fileName, text, plan, undefined, this.files);
    if (formats.length === 0) return undefined;
    const edits = findings.some((f) => f.fix) ? fixAll(fileName, text, plan, formats, this.files).edits.map((e) => toTextEdit(doc, e)) : [];
    return { edits, unfixed: findings.filter((f) => !f.fix).map((f) => f.message) };
  }

  /** After any plan changes: re-check every open config, debounced. */
  scheduleRecheck(): void {
    if (this.recheckTimer) clearTimeout(this.recheckTimer);
    this.recheckTimer = setTimeout(() => {
      this.recheckTimer = undefined;
      for (const uri of this.allUris()) {
        if (this.states.has(uri) || !this.store.get(uri)) void this.check(uri).catch((err: unknown) => this.env.reportError(`checking ${uri}`, err));
      }
    }, 50);
  }

  /** The plan a config compares against (see the file comment for the order). */
  async planFor(configUri: string): Promise<PlanChoice> {
    const configPath = fileNameOf(configUri);
    const doc = this.getText(configUri);
    // 1. The model of the script this config launches (or the Lightning script itself).
    const target = doc ? resolveLaunchedModel(configPath, doc.getText(), this.files) : undefined;
    if (target) return this.planOfFile(target.file, target.modelName, `${target.modelName ?? basename(target.file)} in ${basename(target.file)}, ${target.how}`, 'launch');
    // 2. The wap.model setting.
    const settings = await this.settings.get(configUri);
    if (settings.model) return this.planOfFile(this.env.resolvePath(settings.model), undefined, `${basename(settings.model)} from the wap.model setting`, 'setting');
    // 3. The model the user picked for this config.
    const chosen = this.choices.get(configUri);
    if (chosen) return this.planOfFile(chosen, undefined, chosenLabel(chosen, this.clientCommands), 'chosen');
    // 4. Never a guess (such as the model planned last): say how to choose.
    const named = doc ? namedModel(configPath, doc.getText()) : undefined;
    return { plan: undefined, missing: missingModelMessage(this.clientCommands, named && namedModelNotFound(named, configPath)), source: 'none' };
  }

  /**
   * The choice planned again at the tokens per sample the config trains on (`cutoff_len: 2048`), where the model was
   * planned at a length it assumed (a Hugging Face model at its max positions): "your config", the best plan and the
   * findings then compare the run the config describes. Unchanged where the config states no length or the model's
   * own code or command line states one.
   */
  private async atConfigLength(fileName: string, text: string, choice: PlanChoice): Promise<PlanChoice> {
    const planned = choice.model?.sequence;
    if (!choice.plan || !choice.modelRef || !planned?.assumed) return choice;
    let sequence;
    try {
      sequence = statedSequence(readConfigSetups(fileName, text, this.files), basename(fileName));
    } catch {
      return choice; // a malformed config has its own diagnostic
    }
    const doc = this.store.get(choice.modelRef.uri);
    if (!sequence || sequence.tokens === planned.length || !doc) return choice;
    const replanned = await this.plans.planAtLength(doc, choice.modelRef.model, sequence.tokens, sequence.source);
    if (!replanned) return choice;
    const label = `${choice.label ?? choice.modelRef.model}, at ${sequence.source}`;
    if (!replanned.outcome.feasible) return { ...choice, plan: undefined, model: undefined, label, missing: `${choice.modelRef.model} at ${sequence.source} has no plan: ${replanned.outcome.reason}` };
    return { ...choice, plan: replanned.outcome, model: replanned.model, label };
  }

  /** The client sent the per-config choices (all of them): re-check the configs whose choice changed. */
  setChoices(models: Record<string, string> | undefined): void {
    for (const uri of this.choices.replace(models)) {
      if (this.getText(uri)) void this.check(uri).catch((err: unknown) => this.env.reportError(`checking ${uri}`, err));
    }
  }

  /** The newest feasible plan of `model` (or the file's first model) in `path`, planning it in the background when there is none yet. */
  private planOfFile(path: string, model: string | undefined, label: string, source: ModelSource): PlanChoice {
    const uri = pathToFileURL(path).href;
    let doc = this.store.get(uri);
    if (!doc) {
      try {
        doc = this.store.open(uri, readFileSync(path, 'utf8'), 0, true);
      } catch (err) {
        this.env.reportError(`reading the model file ${path}`, err);
      }
    }
    if (!doc) return { plan: undefined, source };
    const entry = model ? doc.plans.get(model) : undefined;
    const best = entry?.outcome.feasible ? { model: model!, report: entry.outcome } : model && doc.findModel(model) ? undefined : newestFeasible(doc.plans);
    if (!best) this.planInBackground(doc, model);
    return best ? { plan: best.report, label, model: doc.findModel(best.model), source, modelRef: { uri, model: best.model } } : { plan: undefined, label, source };
  }

  /** The config file's hover: one line, your config vs the best plan. */
  hoverLine(uri: string): string | undefined {
    return this.states.get(uri)?.versus;
  }

  /** The `wap.model` file is not open: plan it once, then re-check the configs against it. */
  private planInBackground(doc: import('./modelDocs').ModelDocument, name?: string): void {
    if (this.planning.has(doc.uri)) return;
    this.planning.add(doc.uri);
    void this.store
      .current(doc)
      .then(async () => {
        const model = (name && doc.findModel(name)) || doc.findModel();
        if (model) await this.plans.plan(doc, model);
        this.scheduleRecheck();
      })
      .catch((err: unknown) => this.env.reportError(`planning wap.model ${doc.fileName}`, err))
      .finally(() => this.planning.delete(doc.uri));
  }

  async codeActions(uri: string, range: Range, only: string[] | undefined): Promise<CodeAction[]> {
    const state = this.states.get(uri);
    const doc = this.getText(uri);
    if (!state || !doc || state.version !== doc.version) return [];
    const wants = (kind: string) => !only || only.some((o) => kind === o || kind.startsWith(`${o}.`));
    const actions: CodeAction[] = [];
    if (wants(CodeActionKind.QuickFix)) {
      state.findings.forEach((f, i) => {
        if (!f.fix) return;
        const diag = state.diagnostics[i];
        if (!overlaps(diag.range, range)) return;
        actions.push({
          title: f.fix.title,
          kind: CodeActionKind.QuickFix,
          diagnostics: [diag],
          isPreferred: f.fix.preferred ?? false,
          edit: { changes: { [uri]: f.fix.edits.map((e) => toTextEdit(doc, e)) } },
        });
      });
    }
    if (wants(CodeActionKind.QuickFix) && this.clientCommands) {
      // How to change the model the findings compare against, on the WAP diagnostics under the cursor.
      const here = state.diagnostics.filter((d) => overlaps(d.range, range));
      const change = modelChoiceAction(uri, state.modelSource, here);
      if (change) actions.push(change);
      // Advice to export parallelize() code (a launcher cannot split layers) is a click, not a CLI line.
      const exportable = state.findings.map((f, i) => (adviseExport(f.message) && overlaps(state.diagnostics[i].range, range) ? state.diagnostics[i] : undefined)).filter((d): d is Diagnostic => !!d);
      if (exportable.length && state.modelRef) {
        const args = [state.modelRef.uri, state.modelRef.model, 'torch-parallelize'];
        actions.push({ title: EXPORT_PARALLELIZE_TITLE, kind: CodeActionKind.QuickFix, diagnostics: exportable, command: { title: EXPORT_PARALLELIZE_TITLE, command: ClientCommands.exportPlan, arguments: args } });
      }
    }
    const fixable = state.findings.filter((f) => f.fix).length;
    if (fixable > 0 && wants(FIX_ALL_KIND)) {
      const edit = await this.fixAllEdit(uri);
      if (edit) actions.push({ title: 'Fix all WAP config issues', kind: FIX_ALL_KIND, diagnostics: state.diagnostics.filter((_, i) => state.findings[i].fix), edit });
    }
    return actions;
  }

  /** The edit of "Fix all": every fix of the document at once, computed by the configs room so overlapping fixes compose. */
  async fixAllEdit(uri: string): Promise<WorkspaceEdit | undefined> {
    const doc = this.getText(uri);
    if (!doc) return undefined;
    const { plan } = await this.atConfigLength(fileNameOf(uri), doc.getText(), await this.planFor(uri));
    const result = fixAll(fileNameOf(uri), doc.getText(), plan, undefined, this.files);
    if (result.edits.length === 0) return undefined;
    return { changes: { [uri]: result.edits.map((e) => toTextEdit(doc, e)) } };
  }

  /** Messages of findings without an automatic fix, for "Apply to training config". */
  unfixed(uri: string): string[] {
    return (this.states.get(uri)?.findings ?? []).filter((f) => !f.fix).map((f) => f.message);
  }

  /** Documents known as configs, and those whose (debounced) check is still pending. */
  configUris(): string[] {
    return [...new Set([...this.states.keys(), ...this.pending.keys()])];
  }

  hasFindings(uri: string): boolean {
    return (this.states.get(uri)?.findings.length ?? 0) > 0;
  }
}

const CHECK_DEBOUNCE_MS = 150;

function toTextEdit(doc: TextDocument, e: { start: number; end: number; newText: string }): TextEdit {
  return { range: { start: doc.positionAt(e.start), end: doc.positionAt(e.end) }, newText: e.newText };
}

function overlaps(a: Range, b: Range): boolean {
  const before = (p: Range['start'], q: Range['start']) => p.line < q.line || (p.line === q.line && p.character < q.character);
  return !before(a.end, b.start) && !before(b.end, a.start);
}

function newestFeasible(plans: Map<string, { outcome: import('../protocol/plan').PlanOutcome; plannedAt: number }>): { model: string; report: PlanReport } | undefined {
  let best: { model: string; report: PlanReport; at: number } | undefined;
  for (const [model, entry] of plans) {
    if (entry.outcome.feasible && (!best || entry.plannedAt > best.at)) best = { model, report: entry.outcome, at: entry.plannedAt };
  }
  return best;
}
