/**
 * Wires the LSP connection to WAP: capabilities, document sync, hover,
 * CodeLens, diagnostics, code actions, commands and the custom requests.
 * Every handler goes through `guard`, so a failure is logged and shown in the
 * status, and the server keeps serving.
 */
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import {
  CodeActionKind,
  CodeLensRefreshRequest,
  TextDocuments,
  TextDocumentSyncKind,
  type CodeAction,
  type CodeLens,
  type Connection,
  type Hover,
  type HoverParams,
  type InitializeResult,
  type CancellationToken,
  type WorkDoneProgressReporter,
} from 'vscode-languageserver';
import { TextDocument } from 'vscode-languageserver-textdocument';
import { setHfSearchRoots } from '../frontends/huggingface/sources';
import {
  ApplyPlanToConfigsRequest,
  ClientCommands,
  ClusterPresetsRequest,
  ExportPlanRequest,
  ExportTraceRequest,
  FIX_ALL_KIND,
  ModelsRequest,
  PlanRequest,
  ProfileRequest,
  ValidateRequest,
  type ValidateParams,
  ServerCommands,
  PlansStaleNotification,
  SetTrustedNotification,
  SetPythonNotification,
  SetConfigModelsNotification,
  type WapInitializationOptions,
  type ClusterPresetsResult,
  type PlanParams,
  type ProfileParams,
} from '../protocol/lsp';
import { CLUSTER_PRESETS, DEFAULT_PRESET } from '../planner';
import { isLaunchScriptName, launchedArguments } from '../configs';
import { listOrEmpty, readOrUndefined } from './diskFiles';
import { ConfigDocuments } from './configDocs';
import { modelDiagnostics } from './diagnostics';
import { modelCodeActions } from './modelActions';
import { DocumentStore } from './documentStore';
import { Environment } from './environment';
import { planLensTitle } from './format';
import { layerHoverMarkdown, modelHoverMarkdown } from './hover';
import { ImportEnvironment } from './importEnvironment';
import { PlanService } from './planService';
import { asResponseError, RequestHandlers } from './requests';
import { SettingsCache } from './settings';
import { toLspRange } from './positions';
import { runServerCommand } from './commands';
import { forEditor, outcomeForEditor } from './editorAdvice';

export function startServer(connection: Connection): void {
  const texts = new TextDocuments(TextDocument);
  const settings = new SettingsCache(connection);
  let roots: string[] = [];
  let clientCommands = false;
  let codeLensRefresh = false;
  let cacheDir = join(tmpdir(), 'wap-profile-cache');
  const env = new Environment(connection, false, () => roots);
  env.workspaceClusterSetting = async () => (await settings.get(roots[0] ? pathToFileURL(roots[0]).href : '')).cluster;

  const log = (m: string) => connection.console.log(m);
  const publish = (uri: string) => {
    const doc = store.get(uri);
    if (doc?.hidden) return;
    // The rooms word advice for the CLI; the editor gets its own wording (editorAdvice.ts).
    const diagnostics = [...(doc ? modelDiagnostics(doc) : []), ...configs.diagnostics(uri)].map((d) => ({ ...d, message: forEditor(d.message) }));
    void connection.sendDiagnostics({ uri, diagnostics }).catch(() => undefined);
  };
  const refreshLenses = () => {
    if (codeLensRefresh) void connection.sendRequest(CodeLensRefreshRequest.type).catch(() => undefined);
  };

  const store: DocumentStore = new DocumentStore({
    analyzed(doc) {
      publish(doc.uri);
      refreshLenses();
      // Hidden documents (read from disk for a request or `wap.model`) are planned on demand only.
      if (!doc.hidden) plans.scheduleBackground(doc);
    },
    log,
    error: (context, err) => env.reportError(context, err),
  });
  const plans: PlanService = new PlanService(
    settings,
    env,
    (doc) => {
      publish(doc.uri);
      refreshLenses();
      configs.scheduleRecheck();
    },
    (doc, options) => store.analyzeWith(doc, options),
  );
  const importEnv = new ImportEnvironment(
    () => roots,
    // Every open editor's text, not only models': a script reads its YAML settings and Hydra configs too.
    () => new Map(texts.all().filter((d) => d.uri.startsWith('file:')).map((d) => [fileURLToPath(d.uri), d.getText()])),
    (what) => store.dependencyChanged(what),
    log,
  );
  store.imports = importEnv;
  // A launch script open in the editor counts with its unsaved edits.
  store.scriptArguments = (file, recordRead) =>
    launchedArguments(file, {
      read: (p) => {
        const text = texts.get(pathToFileURL(p).href)?.getText() ?? readOrUndefined(p);
        if (text !== undefined && text.includes(basename(file))) recordRead?.(p);
        return text;
      },
      list: listOrEmpty,
    });
  const configs: ConfigDocuments = new ConfigDocuments(store, plans, settings, env, (uri) => texts.get(uri), () => texts.all().map((d) => d.uri), publish);
  const handlers = new RequestHandlers(connection, store, plans, configs, settings, env, cacheDir);

  /** Runs a handler; on failure logs, shows it in the status and answers `fallback` (or rethrows request errors). */
  function guard<A extends unknown[], R>(name: string, fallback: R, fn: (...args: A) => R | Promise<R>, rethrow = false) {
    return async (...args: A): Promise<R> => {
      try {
        return await fn(...args);
      } catch (err) {
        if (rethrow) {
          const response = asResponseError(err, name);
          response.message = forEditor(response.message);
          if (response.code !== -32800 && !(err instanceof Error && err.name === 'ResponseError')) env.reportError(name, err);
          throw response;
        }
        env.reportError(name, err);
        return fallback;
      }
    };
  }

  connection.onInitialize((params): InitializeResult => {
    const init = (params.initializationOptions ?? {}) as WapInitializationOptions & { settings?: unknown };
    env.trusted = init.trusted === true;
    importEnv.trusted = env.trusted;
    if (typeof init.python === 'string' && init.python) importEnv.selectedInterpreter = init.python;
    clientCommands = init.clientCommands === true;
    configs.clientCommands = clientCommands;
    configs.setChoices(init.configModels);
    if (typeof init.cacheDir === 'string' && init.cacheDir) cacheDir = init.cacheDir;
    Object.assign(handlers, { cacheDir });
    settings.pullSupported = params.capabilities.workspace?.configuration === true;
    settings.setInitial(init.settings);
    codeLensRefresh = params.capabilities.workspace?.codeLens?.refreshSupport === true;
    roots = (params.workspaceFolders ?? []).map((f) => safePath(f.uri)).filter((p): p is string => !!p);
    if (roots.length === 0 && params.rootUri) roots = [safePath(params.rootUri)].filter((p): p is string => !!p);
    // from_pretrained('./folder') also looks under the workspace folders.
    setHfSearchRoots(roots);
    void store.init();
    void configs.init();
    return {
      capabilities: {
        textDocumentSync: TextDocumentSyncKind.Incremental,
        hoverProvider: true,
        codeLensProvider: { resolveProvider: false },
        codeActionProvider: { codeActionKinds: [CodeActionKind.QuickFix, FIX_ALL_KIND], resolveProvider: false },
        executeCommandProvider: { commands: Object.values(ServerCommands) },
        workspace: { workspaceFolders: { supported: true, changeNotifications: true } },
      },
      serverInfo: { name: 'wap-language-server', version: '0.1.0' },
    };
  });

  connection.onInitialized(
    guard('initialized', undefined, async () => {
      log(`wap: server ready (trusted: ${env.trusted}, workspace: ${roots.join(', ') || 'none'})`);
      await readPythonSetting();
      await env.publishStatus();
    }),
  );

  connection.onDidChangeConfiguration(
    guard('configuration change', undefined, (params) => {
      settings.clear(params.settings);
      env.clearClusterCache();
      void readPythonSetting();
      for (const doc of store.docs.values()) if (!doc.hidden) plans.scheduleBackground(doc);
      configs.scheduleRecheck();
      void env.publishStatus();
      // Sent after the settings cache is cleared: a view that re-plans on it reads the new settings.
      void connection.sendNotification(PlansStaleNotification, { reason: 'settings changed' }).catch(() => undefined);
    }),
  );

  connection.onNotification(
    SetTrustedNotification,
    guard('trust change', undefined, (p) => {
      env.setTrusted(p?.trusted === true);
      if (importEnv.trusted !== env.trusted) {
        importEnv.trusted = env.trusted;
        importEnv.reset();
      }
      for (const doc of store.docs.values()) if (!doc.hidden) plans.scheduleBackground(doc);
    }),
  );

  connection.onNotification(
    SetPythonNotification,
    guard('python change', undefined, (p) => {
      const chosen = typeof p?.interpreter === 'string' && p.interpreter ? p.interpreter : undefined;
      if (chosen === importEnv.selectedInterpreter) return;
      importEnv.selectedInterpreter = chosen;
      log(`wap: Python interpreter ${chosen ?? '(none selected)'}${p?.source ? ` from ${p.source}` : ''}`);
      importEnv.reset();
    }),
  );

  connection.onNotification(
    SetConfigModelsNotification,
    guard('config models change', undefined, (p) => configs.setChoices(p?.models)),
  );

  /** `wap.python` of the first workspace folder; a change re-reads installed libraries. */
  async function readPythonSetting(): Promise<void> {
    const python = (await settings.get(roots[0] ? pathToFileURL(roots[0]).href : '')).python ?? '';
    if (python === importEnv.settingInterpreter) return;
    importEnv.settingInterpreter = python;
    importEnv.reset();
  }

  // The config check is not awaited (it may wait for a plan); its failure must still reach the log and status.
  const checkConfig = (uri: string) => void configs.check(uri).catch((err: unknown) => env.reportError(`checking ${uri}`, err));
  texts.onDidOpen(guard('open', undefined, (e) => {
    store.open(e.document.uri, e.document.getText(), e.document.version);
    checkConfig(e.document.uri);
  }));
  // A launch script's edits (and closing it unsaved) change the arguments the scripts it runs are read with; any other
  // file a script reads as it runs (a settings YAML, a Hydra config group) reads the scripts that read it again.
  const readFileChanged = (uri: string, text: string): void => {
    if (store.get(uri) || !uri.startsWith('file:')) return;
    const path = fileURLToPath(uri);
    store.dependencyChanged(isLaunchScriptName(path, text) ? { launchScript: path } : { file: path });
  };
  texts.onDidChangeContent(guard('change', undefined, (e) => {
    store.change(e.document.uri, e.document.getText(), e.document.version);
    configs.scheduleCheck(e.document.uri);
    readFileChanged(e.document.uri, e.document.getText());
  }));
  texts.onDidClose(guard('close', undefined, (e) => {
    store.close(e.document.uri);
    readFileChanged(e.document.uri, e.document.getText());
    configs.forget(e.document.uri);
    void connection.sendDiagnostics({ uri: e.document.uri, diagnostics: [] }).catch(() => undefined);
  }));

  /** The hover of a layer, a model's name line, or a config ("your config vs best plan"). */
  const hover = async (params: HoverParams): Promise<Hover | null> => {
    const doc = store.get(params.textDocument.uri);
    const versus = configs.hoverLine(params.textDocument.uri);
    const configHover = versus ? ({ contents: { kind: 'markdown', value: `**WAP** · ${versus}` } } as Hover) : null;
    if (!doc) return configHover;
    if (!store.flush(doc)) await store.current(doc);
    const hit = doc.layerAt(params.position);
    if (hit) {
      return { contents: { kind: 'markdown', value: layerHoverMarkdown(doc, hit, clientCommands) }, range: hit.range };
    }
    const model = doc.modelAt(params.position);
    if (model && toLspRange(model.range).start.line === params.position.line) {
      return { contents: { kind: 'markdown', value: modelHoverMarkdown(doc, model, clientCommands) } };
    }
    return configHover;
  };
  // Hovers speak the editor's terms too (editorAdvice.ts).
  const editorHover = (h: Hover | null): Hover | null =>
    h && typeof h.contents === 'object' && 'value' in h.contents ? { ...h, contents: { ...h.contents, value: forEditor(h.contents.value) } } : h;
  connection.onHover(guard('hover', null as Hover | null, async (params) => editorHover(await hover(params))));

  connection.onCodeLens(
    guard('codeLens', [] as CodeLens[], async (params) => {
      const doc = store.get(params.textDocument.uri);
      if (!doc) return [];
      await store.current(doc);
      return doc.models.map((m): CodeLens => {
        const start = toLspRange(m.range).start;
        const entry = doc.plans.get(m.name);
        const title = entry ? planLensTitle(entry.outcome) : 'Parallelize model';
        const command = clientCommands ? (entry ? ClientCommands.showPlan : ClientCommands.parallelizeModel) : ServerCommands.parallelizeModel;
        return { range: { start, end: start }, command: { title, command, arguments: [doc.uri, m.name] } };
      });
    }),
  );

  connection.onCodeAction(
    guard('codeAction', [] as CodeAction[], async (params) => {
      const uri = params.textDocument.uri;
      const doc = store.get(uri);
      const modelActions = doc && !doc.hidden && (!params.context.only || params.context.only.some((k) => k.startsWith(CodeActionKind.QuickFix))) ? modelCodeActions(doc, params.range, params.context.diagnostics, clientCommands) : [];
      await configs.flush(uri);
      if (!configs.diagnostics(uri).length) await configs.check(uri);
      return [...modelActions, ...(await configs.codeActions(uri, params.range, params.context.only))];
    }),
  );
  connection.onExecuteCommand(
    guard('command', undefined as unknown, (params, token) => runServerCommand(connection, params, token, { handlers, configs }), true),
  );

  const withProgress = (p: { workDoneToken?: string | number } | undefined): WorkDoneProgressReporter => connection.window.attachWorkDoneProgress(p?.workDoneToken);
  connection.onRequest(PlanRequest, guard('wap/plan', undefined as never, async (p: PlanParams, token: CancellationToken) => outcomeForEditor(await handlers.plan(p, token, withProgress(p))), true));
  connection.onRequest(ProfileRequest, guard('wap/profile', undefined as never, async (p: ProfileParams, token: CancellationToken) => outcomeForEditor(await handlers.profile(p, token, withProgress(p))), true));
  connection.onRequest(ValidateRequest, guard('wap/validate', undefined as never, (p: ValidateParams, token: CancellationToken) => handlers.validate(p, token, withProgress(p)), true));
  connection.onRequest(ModelsRequest, guard('wap/models', { models: [] }, (p) => handlers.models(p.uri)));
  connection.onRequest(ExportTraceRequest, guard('wap/exportTrace', undefined as never, (p) => handlers.exportTrace(p), true));
  connection.onRequest(ExportPlanRequest, guard('wap/exportPlan', undefined as never, (p) => handlers.exportPlan(p), true));
  connection.onRequest(ApplyPlanToConfigsRequest, guard('wap/applyPlanToConfigs', undefined as never, (p) => handlers.applyPlanToConfigs(p), true));

  connection.onRequest(
    ClusterPresetsRequest,
    guard('wap/clusterPresets', { presets: [] } as ClusterPresetsResult, () => ({
      presets: Object.entries(CLUSTER_PRESETS).map(([id, p]) => ({ id, description: p.description, gpus: p.spec.gpus.length })),
      defaultPreset: DEFAULT_PRESET,
    })),
  );

  texts.listen(connection);
  connection.listen();
}

function safePath(uri: string): string | undefined {
  try {
    return uri.startsWith('file:') ? fileURLToPath(uri) : undefined;
  } catch {
    return undefined;
  }
}
