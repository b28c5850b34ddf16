/**
 * Model documents: the latest analysis of each open file, an index from lines
 * to layers for fast hovers, and the plans that outlive a half-typed edit.
 *
 * A plan is kept per model name together with the signature of every layer at
 * planning time. After an edit, a layer whose signature is unchanged still
 * shows its planned strategy, even while the file does not parse cleanly; a
 * changed layer shows its fresh analysis until the background re-plan lands.
 */
import type { Remedy } from './remedies';
import type { Position, Range } from 'vscode-languageserver';
import type { AnalysisResult, AnalyzedLayer, AnalyzedModel } from '../core/ir';
import { stableStringify } from '../core/signature';
import type { LayerPlan, PlanOutcome } from '../protocol/plan';
import type { PlanControls } from '../protocol/webview';
import type { ProfileFile } from '../protocol/profile';
import { rangeContains, toLspRange } from './positions';

export interface PlanEntry {
  outcome: PlanOutcome;
  /** Layer name → signature when this plan was made. */
  signatures: Map<string, string>;
  /** Model structure + options + cluster + profile: equal keys need no re-plan. */
  key: string;
  controls: PlanControls;
  maxGpus: number;
  clusterNote: string;
  plannedAt: number;
  /** The document version whose analysis was planned: an older plan finishing late must not replace a newer one. */
  analyzedVersion: number;
  /** For an infeasible plan: what the user can change so that one fits (found after the plan is published). */
  remedies?: Remedy[];
}

export interface LayerHit {
  layer: AnalyzedLayer;
  model: AnalyzedModel;
  range: Range;
  kind: 'definition' | 'call';
}

/** What a hover shows for a position: the chosen layer, its siblings built by the same line, and other models built from it. */
export interface LayerLookup extends LayerHit {
  /** Every layer of the chosen model defined by this very range (a loop or a block class builds many), in model order. */
  instances: AnalyzedLayer[];
  /** Other models of the file that build a layer here (e.g. vgg11 and vgg16 from one class). */
  otherModels: string[];
}

/** Ranks models for a position several models share: higher wins. */
export type ModelPreference = (model: AnalyzedModel) => number;

/**
 * Identity of a layer for "is its last plan still valid after an edit": what it is and what it is fed,
 * not where it sits. Unlike the core's layerSignature (a cost-cache key) it includes the written type and
 * the input count; attrs go through the core's key-order-independent stringify.
 */
export function layerFingerprint(layer: AnalyzedLayer): string {
  return `${layer.type}|${layer.op}|${stableStringify(layer.attrs)}|${JSON.stringify(layer.inputShapes)}|${layer.inputs.length}`;
}

export function modelStructureKey(model: AnalyzedModel): string {
  return `${model.name}|${JSON.stringify(model.input)}|${model.layers.map((l) => `${l.name}:${layerFingerprint(l)}:${l.inputs.join(',')}`).join(';')}`;
}

export function hasErrors(model: AnalyzedModel): boolean {
  return model.layers.length === 0 || model.diagnostics.some((d) => d.severity === 'error');
}

/** One analysis of one text: the line index and layer signatures hovers need. */
export class Snapshot {
  readonly lineIndex = new Map<number, LayerHit[]>();
  readonly signatures = new Map<string, Map<string, string>>();
  readonly clean: boolean;
  private lines: string[] | undefined;

  constructor(
    readonly text: string,
    readonly analysis: AnalysisResult,
  ) {
    for (const model of analysis.models) {
      const sigs = new Map<string, string>();
      for (const layer of model.layers) {
        sigs.set(layer.name, layerFingerprint(layer));
        // Layers defined in an imported module have their lines in that file, not this one.
        if (!layer.range.file) this.index(layer, model, toLspRange(layer.range), 'definition');
        if (layer.callRange && !layer.callRange.file) this.index(layer, model, toLspRange(layer.callRange), 'call');
      }
      this.signatures.set(model.name, sigs);
    }
    this.clean = analysis.models.length > 0 && !analysis.diagnostics.some((d) => d.severity === 'error') && !analysis.models.some(hasErrors);
  }

  get textLines(): string[] {
    return (this.lines ??= this.text.split('\n'));
  }

  private index(layer: AnalyzedLayer, model: AnalyzedModel, range: Range, kind: LayerHit['kind']): void {
    for (let line = range.start.line; line <= range.end.line; line++) {
      let hits = this.lineIndex.get(line);
      if (!hits) this.lineIndex.set(line, (hits = []));
      hits.push({ layer, model, range, kind });
    }
  }

  /**
   * The layer under the cursor: a range that contains the position (innermost first), else the layer
   * defined on that line. Several models (or loop iterations) may share that range: the preferred model
   * wins, then the first layer of it in model order.
   */
  layerAt(position: Position, prefer: ModelPreference = () => 0): LayerLookup | undefined {
    const hits = this.lineIndex.get(position.line);
    if (!hits?.length) return undefined;
    let best: LayerHit[] = [];
    let bestSize = Infinity;
    for (const h of hits) {
      if (!rangeContains(h.range, position)) continue;
      const size = (h.range.end.line - h.range.start.line) * 10_000 + (h.range.end.character - h.range.start.character);
      if (size < bestSize) {
        best = [h];
        bestSize = size;
      } else if (size === bestSize) best.push(h);
    }
    if (best.length === 0) {
      // Anywhere on a definition's first line still counts as that layer ("hover on a layer's line").
      const onLine = hits.filter((h) => h.range.start.line === position.line);
      const definitions = onLine.filter((h) => h.kind === 'definition');
      best = definitions.length ? definitions : onLine;
      if (best.length === 0) return undefined;
      const first = best[0].range;
      best = best.filter((h) => sameRange(h.range, first));
    }
    let chosen = best[0];
    for (const h of best) if (prefer(h.model) > prefer(chosen.model)) chosen = h;
    const instances = best.filter((h) => h.model === chosen.model).map((h) => h.layer);
    const otherModels = [...new Set(best.filter((h) => h.model !== chosen.model).map((h) => h.model.name))];
    return { ...chosen, instances, otherModels };
  }
}

function sameRange(a: Range, b: Range): boolean {
  return a.start.line === b.start.line && a.start.character === b.start.character && a.end.line === b.end.line && a.end.character === b.end.character;
}

/**
 * Maps lines of the current text to the last good text around one edited
 * region: equal leading lines map to themselves, equal trailing lines shift by
 * the length difference, lines inside the edit have no counterpart.
 */
export function mapLineToOld(oldLines: string[], newLines: string[], line: number): number | undefined {
  let prefix = 0;
  const max = Math.min(oldLines.length, newLines.length);
  while (prefix < max && oldLines[prefix] === newLines[prefix]) prefix++;
  if (line < prefix) return line;
  let suffix = 0;
  while (suffix < max - prefix && oldLines[oldLines.length - 1 - suffix] === newLines[newLines.length - 1 - suffix]) suffix++;
  if (line >= newLines.length - suffix) return line - (newLines.length - oldLines.length);
  return undefined;
}

export interface DocLayerHit extends LayerLookup {
  snapshot: Snapshot;
  /** True when the layer comes from the last good analysis because the current text does not parse. */
  stale: boolean;
}

export class ModelDocument {
  text: string;
  version: number;
  current: Snapshot | undefined;
  /** The most recent analysis without errors: hovers fall back to it while the file is half-typed. */
  lastGood: Snapshot | undefined;
  analyzedVersion = -1;
  /** Last analysis time in ms, for the benchmark and the log. */
  analysisMs = 0;
  readonly plans = new Map<string, PlanEntry>();
  readonly overrides = new Map<string, Partial<PlanControls>>();
  readonly profiles = new Map<string, ProfileFile>();
  /** Set by the planner: lets a newer edit cancel an outdated background plan. */
  backgroundCancel: { isCancellationRequested: boolean } | undefined;
  pendingTimer: ReturnType<typeof setTimeout> | undefined;
  /** Files the last analysis read to follow imports: a change to one re-analyses this document. */
  importedFiles = new Set<string>();
  /** The last analysis imported installed libraries (re-analysed when the interpreter's sys.path changes). */
  wantsLibraries = false;

  constructor(
    readonly uri: string,
    readonly fileName: string,
    text: string,
    version: number,
    /** Hidden documents (read from disk for `wap.model`) get no diagnostics. */
    readonly hidden = false,
  ) {
    this.text = text;
    this.version = version;
  }

  get dirty(): boolean {
    return this.analyzedVersion !== this.version;
  }

  get analysis(): AnalysisResult | undefined {
    return this.current?.analysis;
  }

  get models(): AnalyzedModel[] {
    return this.current?.analysis.models ?? [];
  }

  setAnalysis(result: AnalysisResult, version: number, ms: number, text: string): void {
    this.current = new Snapshot(text, result);
    if (this.current.clean) this.lastGood = this.current;
    this.analyzedVersion = version;
    this.analysisMs = ms;
    // Plans of models that vanished stay: a half-typed file may bring them back unchanged.
  }

  /** The layer under the cursor in the current analysis, else (while the text has errors) in the last good one when that line is unchanged. */
  /** The model the user last asked about by name (plan view, Parallelize): hovers on shared lines show it. */
  focusedModel: string | undefined;

  /** Prefer the model the user is looking at, then the one planned most recently. */
  private readonly preference: ModelPreference = (model) => (model.name === this.focusedModel ? 2e15 : 0) + (this.plans.get(model.name)?.plannedAt ?? 0);

  layerAt(position: Position): DocLayerHit | undefined {
    const cur = this.current;
    if (!cur) return undefined;
    const hit = cur.layerAt(position, this.preference);
    if (hit) return { ...hit, snapshot: cur, stale: false };
    const good = this.lastGood;
    if (!good || good === cur || cur.clean) return undefined;
    const oldLine = mapLineToOld(good.textLines, cur.textLines, position.line);
    if (oldLine === undefined) return undefined;
    const old = good.layerAt({ line: oldLine, character: position.character }, this.preference);
    if (!old) return undefined;
    const shift = position.line - oldLine;
    const range = { start: { line: old.range.start.line + shift, character: old.range.start.character }, end: { line: old.range.end.line + shift, character: old.range.end.character } };
    return { ...old, range, snapshot: good, stale: true };
  }

  modelAt(position: Position): AnalyzedModel | undefined {
    const hit = this.layerAt(position);
    if (hit) return hit.model;
    return this.models.find((m) => rangeContains(toLspRange(m.range), position) || toLspRange(m.range).start.line === position.line);
  }

  findModel(name?: string): AnalyzedModel | undefined {
    const models = this.models;
    return name ? models.find((m) => m.name === name) : models[0];
  }

  /** The planned strategy of a layer, only when the layer is unchanged since that plan. */
  layerPlan(model: AnalyzedModel, layer: AnalyzedLayer, snapshot: Snapshot | undefined = this.current): { plan: LayerPlan; entry: PlanEntry } | undefined {
    const entry = this.plans.get(model.name);
    if (!entry || !entry.outcome.feasible) return undefined;
    const sig = snapshot?.signatures.get(model.name)?.get(layer.name) ?? layerFingerprint(layer);
    if (entry.signatures.get(layer.name) !== sig) return undefined;
    const plan = entry.outcome.plan.layers.find((l) => l.name === layer.name);
    return plan ? { plan, entry } : undefined;
  }

  /**
   * Layer signatures of this very model object. Looked up by identity, not by
   * name: a plan that started before an edit must record the layers it planned,
   * not those of the newer analysis that replaced `current` meanwhile.
   */
  signaturesOf(model: AnalyzedModel): Map<string, string> {
    const snapshot = [this.current, this.lastGood].find((s) => s?.analysis.models.includes(model));
    return snapshot?.signatures.get(model.name) ?? new Map(model.layers.map((l) => [l.name, layerFingerprint(l)]));
  }
}
