/**
 * WAP's custom LSP requests and notifications, declared once and imported by
 * both the server (src/server/) and the VS Code client (src/extension/).
 * Any other LSP client (Neovim, Emacs…) can send the same JSON: method names
 * and payloads below are the public contract.
 *
 * Positions and ranges in these payloads are LSP ones (0-based lines and
 * UTF-16 columns); the plan report inside keeps its own 1-based lines.
 */
import { NotificationType, ProtocolRequestType, ProtocolRequestType0 } from 'vscode-languageserver-protocol';
import type { Range, WorkDoneProgressParams, WorkspaceEdit } from 'vscode-languageserver-protocol';
import type { PlanOutcome } from './plan';
export { EXPORT_FORMAT_IDS, type ExportFormatId } from './exportFormats';
import type { PlanControls } from './webview';
import type { ValidationReport } from './validate';

/** Identifies one model: the document and, when it holds several, the model's name (default: the first). */
export interface ModelRef {
  uri: string;
  model?: string;
}

/** `wap/plan`: plan a model now with the document's settings, optionally overridden by panel controls. */
export interface PlanParams extends ModelRef, WorkDoneProgressParams {
  controls?: Partial<PlanControls>;
  /** Return the last finished plan when one exists for the current text instead of planning again. */
  reuse?: boolean;
}
export interface PlanResult {
  outcome: PlanOutcome;
  /** Model name actually planned. */
  model: string;
  /** The controls the plan ran with (settings merged with overrides), for the panel. */
  controls: PlanControls;
  /** Upper bound for the panel's GPU control: the cluster's GPU count. */
  maxGpus: number;
}
export const PlanRequest = new ProtocolRequestType<PlanParams, PlanResult, never, void, void>('wap/plan');

/** `wap/profile`: measure the model's layers (trusted workspaces only), then re-plan with the measurements. */
export interface ProfileParams extends ModelRef, WorkDoneProgressParams {
  /** Overrides `wap.profile.backend`. */
  backend?: string;
}
export interface ProfileResult extends PlanResult {
  /** Layers measured (fresh or from the cache). */
  measuredLayers: number;
  backend: string;
  device?: string;
  warnings: string[];
}
export const ProfileRequest = new ProtocolRequestType<ProfileParams, ProfileResult, never, void, void>('wap/profile');

/**
 * `wap/validate`: run a few real data-parallel training steps of the model with torchrun on local
 * devices and compare with the prediction (trusted workspaces only; see src/protocol/validate.ts).
 */
export interface ValidateParams extends ModelRef, WorkDoneProgressParams {
  /** 'cpu:N' or 'cuda:0,1,…'; default: the local GPUs, else cpu:2. */
  devices?: string;
}
export const ValidateRequest = new ProtocolRequestType<ValidateParams, ValidationReport, never, void, void>('wap/validate');

/** `wap/models`: the models found in a document. */
export interface ModelsParams {
  uri: string;
}
export interface ModelInfo {
  name: string;
  framework: string;
  range: Range;
  layers: number;
  params: number;
  /** The CodeLens text once a plan exists, e.g. "4 GPUs · hybrid · 3.1× vs 1 GPU (predicted)". */
  planSummary?: string;
}
export interface ModelsResult {
  models: ModelInfo[];
  /** Duration of the document's latest analysis (parse + shape inference), ms. */
  analysisMs?: number;
}
export const ModelsRequest = new ProtocolRequestType<ModelsParams, ModelsResult, never, void, void>('wap/models');

/** `wap/exportTrace`: the Chrome trace (chrome://tracing, Perfetto) of the model's current plan. */
export interface ExportTraceResult {
  model: string;
  trace: object;
}
export const ExportTraceRequest = new ProtocolRequestType<ModelRef, ExportTraceResult, never, void, void>('wap/exportTrace');

/** `wap/exportPlan`: the plan as a launch config for a distributed engine. */
export interface ExportPlanParams extends ModelRef {
  /** One of EXPORT_FORMAT_IDS ('placement' is still accepted as the old name of 'torch-parallelize'). */
  format: string;
}
export interface ExportPlanResult {
  fileName: string;
  content: string;
  description: string;
}
export const ExportPlanRequest = new ProtocolRequestType<ExportPlanParams, ExportPlanResult, never, void, void>('wap/exportPlan');

/**
 * `wap/applyPlanToConfigs`: the edits every WAP quick-fix would make on the open
 * config documents that compare against this model's plan ("Apply to training config").
 */
export interface ApplyPlanToConfigsResult {
  edit: WorkspaceEdit;
  /** URIs of the config documents that would change. */
  changed: string[];
  /** Findings that have no automatic fix, as messages. */
  unfixed: string[];
}
export const ApplyPlanToConfigsRequest = new ProtocolRequestType<ModelRef, ApplyPlanToConfigsResult, never, void, void>(
  'wap/applyPlanToConfigs',
);

/** `wap/clusterPresets`: the built-in clusters, for "WAP: Select Cluster". */
export interface ClusterPresetsResult {
  presets: Array<{ id: string; description: string; gpus: number }>;
  /** The preset an unset `wap.cluster` falls back to when no local GPU is detected. */
  defaultPreset?: string;
}
export const ClusterPresetsRequest = new ProtocolRequestType0<ClusterPresetsResult, never, void, void>('wap/clusterPresets');

/** `wap/status` (server → client): what the status bar shows. */
export interface StatusParams {
  /** Short text, e.g. "4× RTX 4090 · tfjs-node-gpu" or "no GPU · wasm". */
  text: string;
  /** Longer tooltip: cluster source, trust, last error. */
  tooltip: string;
  backend?: string;
  gpus: Array<{ index: number; name: string; memoryGB: number }>;
  /** 'preset:<id>' | 'file:<path>' | 'local' | 'default', as in ClusterSummary.source. */
  clusterSource?: string;
  clusterName?: string;
  trusted: boolean;
  /** Set when the last background job failed; the server stays up. */
  error?: string;
  /** True while a plan or profile runs. */
  busy?: boolean;
}
export const StatusNotification = new NotificationType<StatusParams>('wap/status');

/**
 * `wap/plansStale` (server → client): a setting or the cluster changed, so
 * every plan shown is out of date. Open plan views re-plan on it; the server
 * re-plans in the background for hovers and CodeLenses itself.
 */
export interface PlansStaleParams {
  /** Shown while the view re-plans, e.g. 'settings changed'. */
  reason: string;
}
export const PlansStaleNotification = new NotificationType<PlansStaleParams>('wap/plansStale');

/** `wap/setTrusted` (client → server): workspace trust changed. The initial value is `initializationOptions.trusted`. */
export interface SetTrustedParams {
  trusted: boolean;
}
export const SetTrustedNotification = new NotificationType<SetTrustedParams>('wap/setTrusted');

/** What the client may pass as `initializationOptions`. */
export interface WapInitializationOptions {
  /** Workspace trust; defaults to false (static analysis and analytical planning only). */
  trusted?: boolean;
  /**
   * True for the VS Code extension: CodeLenses then invoke the client's own
   * commands (`wap.parallelizeModel`, `wap.showPlan`), which open the plan view.
   * Other clients get the server-side `wap.server.*` commands.
   */
  clientCommands?: boolean;
  /** Directory for the profiler's measurement cache (default: a folder under the OS temp dir). */
  cacheDir?: string;
  /** The interpreter selected in the Python extension, if any (later changes: `wap/setPython`). */
  python?: string;
  /** The models the user chose for configs, as in `wap/setConfigModels` (later changes: that notification). */
  configModels?: Record<string, string>;
}

// Command ids and the fix-all kind live in ./commands (no runtime imports), so the extension can read them at activation without loading the protocol library.
export { ClientCommands, FIX_ALL_KIND, ServerCommands } from './commands';

/**
 * `wap/setPython` (client → server): the Python interpreter whose installed
 * libraries imports are read from — the one selected in the Python extension,
 * else the `wap.python` setting. Undefined clears the choice (server falls back
 * to `wap.python`, then `WAP_PYTHON`, then `python3`).
 */
export interface SetPythonParams {
  interpreter?: string;
  /** Where the choice came from, for the log and status: 'python-extension' or 'setting'. */
  source?: string;
}
export const SetPythonNotification = new NotificationType<SetPythonParams>('wap/setPython');

/**
 * `wap/setConfigModels` (client → server): the model file the user picked for
 * each training config that no launch script names while `wap.model` is unset
 * (the last step of the order in src/server/configDocs.ts). The client asks
 * with a quick pick when the user takes the config's quick fix, remembers the
 * answer per config, and sends the whole map on every change: config document
 * URI → model file URI. An absent config means "not chosen".
 */
export interface SetConfigModelsParams {
  models: Record<string, string>;
}
export const SetConfigModelsNotification = new NotificationType<SetConfigModelsParams>('wap/setConfigModels');
