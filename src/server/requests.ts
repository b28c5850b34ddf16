/**
 * The custom requests (`wap/plan`, `wap/profile`, `wap/models`, exports) and
 * the server-side commands. Each resolves a model reference, runs the core,
 * planner or profiler, and converts; errors become ResponseErrors with a
 * one-line message, never a crashed server.
 */
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ErrorCodes, LSPErrorCodes, ResponseError, type CancellationToken, type Connection, type WorkDoneProgressReporter } from 'vscode-languageserver';
import type { AnalyzedModel } from '../core/ir';
import { toChromeTrace } from '../planner';
import { detectLocalGpus, profileModel } from '../profiler';
import type { ValidationReport } from '../protocol/validate';
import { validatePlan } from '../validate/validatePlan';
import { exportPlan } from '../configs';
import type { PlanReport } from '../protocol/plan';
import type { BackendId } from '../protocol/profile';
import type {
  ValidateParams,
  ApplyPlanToConfigsResult,
  ExportPlanParams,
  ExportPlanResult,
  ExportTraceResult,
  ModelRef,
  ModelsResult,
  PlanParams,
  PlanResult,
  ProfileParams,
  ProfileResult,
} from '../protocol/lsp';
import type { ConfigDocuments } from './configDocs';
import type { DocumentStore } from './documentStore';
import { fileNameOf } from './documentStore';
import type { Environment } from './environment';
import { planLensTitle } from './format';
import type { ModelDocument } from './modelDocs';
import { isCancelled, type PlanService } from './planService';
import { toLspRange } from './positions';
import { toPlanOptions, type SettingsCache } from './settings';
import { withTrainingHints } from './trainingHints';

export class RequestHandlers {
  constructor(
    private readonly connection: Connection,
    private readonly store: DocumentStore,
    private readonly plans: PlanService,
    private readonly configs: ConfigDocuments,
    private readonly settings: SettingsCache,
    private readonly env: Environment,
    private readonly cacheDir: string = join(tmpdir(), 'wap-profile-cache'),
  ) {}

  /** The document and model a request names; opens the file from disk when the client has not. */
  async resolve(ref: ModelRef): Promise<{ doc: ModelDocument; model: AnalyzedModel }> {
    if (!ref || typeof ref.uri !== 'string') throw new ResponseError(ErrorCodes.InvalidParams, 'wap: a document uri is required');
    let doc = this.store.get(ref.uri);
    if (!doc) {
      let text: string;
      try {
        text = readFileSync(fileNameOf(ref.uri), 'utf8');
      } catch {
        throw new ResponseError(ErrorCodes.InvalidParams, `wap: ${ref.uri} is neither open nor readable`);
      }
      doc = this.store.open(ref.uri, text, 0, true);
      if (!doc) throw new ResponseError(ErrorCodes.InvalidParams, `wap: ${ref.uri} is not a model file (Python, TS/JS or JSON)`);
    }
    await this.store.current(doc);
    const model = doc.findModel(ref.model);
    if (!model) {
      const names = doc.models.map((m) => m.name);
      throw new ResponseError(ErrorCodes.InvalidParams, ref.model ? `wap: no model '${ref.model}' in this file (found: ${names.join(', ') || 'none'})` : 'wap: no model found in this file');
    }
    return { doc, model };
  }

  async plan(params: PlanParams, token: CancellationToken, progress: WorkDoneProgressReporter): Promise<PlanResult> {
    const { doc, model } = await this.resolve(params);
    // A model named by the user (plan view, Parallelize on a model) is the one hovers on shared lines describe.
    if (params.model) doc.focusedModel = model.name;
    if (params.reuse && !params.controls) {
      const entry = doc.plans.get(model.name);
      if (entry && (await this.plans.isCurrent(doc, model))) return { outcome: entry.outcome, model: model.name, controls: entry.controls, maxGpus: entry.maxGpus };
    }
    progress.begin(`Planning ${model.name}`, 0, undefined, true);
    try {
      return await this.plans.plan(doc, model, {
        overrides: params.controls,
        cancel: token,
        onProgress: (done, total) => progress.report(total > 0 ? Math.round((100 * done) / total) : 0, `${done}/${total} configurations`),
      });
    } catch (err) {
      throw asResponseError(err, `planning ${model.name}`);
    } finally {
      progress.done();
    }
  }

  async validate(params: ValidateParams, token: CancellationToken, progress: WorkDoneProgressReporter): Promise<ValidationReport> {
    if (!this.env.trusted) {
      throw new ResponseError(ErrorCodes.InvalidRequest, 'wap: validating runs training processes with torchrun, which is disabled in an untrusted workspace. Trust the workspace to validate.');
    }
    const { doc, model } = await this.resolve(params);
    const settings = await this.settings.get(doc.uri);
    const gpus = (await detectLocalGpus()).length;
    const devices = params.devices ?? (gpus > 1 ? `cuda:${Array.from({ length: gpus }, (_, i) => i).join(',')}` : 'cpu:2');
    // The model's plan's options: its batch (the panel's, wap.batchSize, or the launch's) and optimizer.
    const planned = withTrainingHints(toPlanOptions(settings, doc.overrides.get(model.name) ?? {}), doc.uri);
    const batch = planned.batch;
    progress.begin(`Validating ${model.name} on ${devices}`, undefined, 'calibrating', true);
    try {
      const { report } = await this.env.track(() =>
        validatePlan(model, {
          devices,
          batch,
          python: pythonSetting(settings),
          optimizer: planned.optimizer,
          cacheDir: this.cacheDir,
          trusted: this.env.trusted,
          cancel: token,
          file: fileNameOf(doc.uri),
          onStage: (stage) => progress.report(stage),
        }),
      );
      return report;
    } catch (err) {
      if (token.isCancellationRequested) throw new ResponseError(LSPErrorCodes.RequestCancelled, 'wap: validation cancelled');
      throw asResponseError(err, `validating ${model.name}`);
    } finally {
      progress.done();
    }
  }

  async profile(params: ProfileParams, token: CancellationToken, progress: WorkDoneProgressReporter): Promise<ProfileResult> {
    if (!this.env.trusted) {
      throw new ResponseError(ErrorCodes.InvalidRequest, 'wap: profiling runs trials in a worker process, which is disabled in an untrusted workspace. Trust the workspace to profile; analytical plans still work.');
    }
    const { doc, model } = await this.resolve(params);
    const settings = await this.settings.get(doc.uri);
    const backend = (params.backend ?? (settings.profile.backend === 'auto' ? undefined : settings.profile.backend)) as BackendId | undefined;
    const batch = withTrainingHints(toPlanOptions(settings, doc.overrides.get(model.name) ?? {}), doc.uri).batch;
    progress.begin(`Profiling ${model.name}`, 0, `${model.layers.length} layers`, true);
    try {
      const profile = await this.env.track(() =>
        profileModel(model, {
          backend,
          batch,
          cacheDir: this.cacheDir,
          trusted: this.env.trusted,
          cancel: token,
          // `wap.python` / the Python extension's interpreter (engineer imports adds it to WapSettings); read structurally so either order of merge compiles.
          python: pythonSetting(settings),
          onProgress: (e) => progress.report(e.total > 0 ? Math.round((100 * e.done) / e.total) : 0, `${e.layer}${e.cached ? ' (cached)' : ''} · ${e.done}/${e.total}`),
        }),
      );
      if (token.isCancellationRequested) throw new ResponseError(LSPErrorCodes.RequestCancelled, 'wap: profiling cancelled');
      doc.profiles.set(model.name, profile);
      progress.report(100, 'Planning with the measurements');
      const planned = await this.plans.plan(doc, model, { cancel: token });
      const device = profile.devices[0];
      return {
        ...planned,
        measuredLayers: profile.layers.filter((l) => l.status !== 'fallback').length,
        backend: device?.backend ?? backend ?? 'unknown',
        device: device?.name,
        warnings: profile.warnings,
      };
    } catch (err) {
      throw asResponseError(err, `profiling ${model.name}`);
    } finally {
      progress.done();
    }
  }

  /** `wap.parallelizeModel` measures first when `wap.profile.enabled` and the workspace is trusted. */
  async profileEnabled(uri: string): Promise<boolean> {
    return this.env.trusted && (await this.settings.get(uri)).profile.enabled;
  }

  async models(uri: string): Promise<ModelsResult> {
    const doc = this.store.get(uri);
    if (!doc) return { models: [] };
    await this.store.current(doc);
    return {
      analysisMs: doc.analysisMs,
      models: doc.models.map((m) => {
        const entry = doc.plans.get(m.name);
        return { name: m.name, framework: m.framework, range: toLspRange(m.range), layers: m.layers.length, params: m.totals.params, planSummary: entry ? planLensTitle(entry.outcome) : undefined };
      }),
    };
  }

  /** The plan of the model as it is now, as a report; plans first when the recorded one is missing or of an older text. */
  private async report(ref: ModelRef): Promise<{ model: string; report: PlanReport }> {
    const { doc, model } = await this.resolve(ref);
    const recorded = doc.plans.get(model.name);
    const outcome = recorded && (await this.plans.isCurrent(doc, model)) ? recorded.outcome : (await this.plans.plan(doc, model)).outcome;
    if (!outcome.feasible) throw new ResponseError(ErrorCodes.InvalidRequest, `wap: ${model.name} has no feasible plan: ${outcome.reason}`);
    return { model: model.name, report: outcome };
  }

  async exportTrace(ref: ModelRef): Promise<ExportTraceResult> {
    const { model, report } = await this.report(ref);
    return { model, trace: toChromeTrace(report) };
  }

  async exportPlan(params: ExportPlanParams): Promise<ExportPlanResult> {
    const { report } = await this.report(params);
    try {
      return exportPlan(report, params.format as Parameters<typeof exportPlan>[1]);
    } catch (err) {
      throw asResponseError(err, `exporting as ${params.format}`);
    }
  }

  /** Every open config's fixes against the plan of the model `ref` names, not the plan each config would otherwise compare against. */
  async applyPlanToConfigs(ref: ModelRef): Promise<ApplyPlanToConfigsResult> {
    const { report } = await this.report(ref);
    const changes: Record<string, import('vscode-languageserver').TextEdit[]> = {};
    const unfixed: string[] = [];
    for (const uri of this.configs.configUris()) {
      const against = this.configs.againstPlan(uri, report);
      if (!against) continue;
      if (against.edits.length) changes[uri] = against.edits;
      unfixed.push(...against.unfixed.map((m) => `${fileNameOf(uri).split(/[\\/]/).pop()}: ${m}`));
    }
    return { edit: { changes }, changed: Object.keys(changes), unfixed };
  }
}

/** Cancellation and user errors keep their message; anything else is logged with its stack. */
export function asResponseError(err: unknown, context: string): ResponseError<void> {
  if (err instanceof ResponseError) return err;
  if (isCancelled(err)) return new ResponseError(LSPErrorCodes.RequestCancelled, `wap: ${context} cancelled`);
  const message = err instanceof Error ? err.message : String(err);
  return new ResponseError(ErrorCodes.InternalError, `wap: ${context} failed: ${message}`);
}

/** The interpreter the editor chose, when the settings carry one. */
function pythonSetting(settings: object): string | undefined {
  const py = (settings as { python?: unknown }).python;
  return typeof py === 'string' && py.trim() ? py.trim() : undefined;
}
