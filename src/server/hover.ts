/**
 * Hover Markdown for a layer: its planned strategy and devices, times with
 * their source, sizes, memory and the reason, or, before the first plan, the
 * analysis (shapes, params, FLOPs).
 */
import { basename } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { AnalyzedLayer, AnalyzedModel } from '../core/ir';
import type { LayerPlan, PlanReport } from '../protocol/plan';
import { batchText } from '../protocol/setupText';
import { ClientCommands } from '../protocol/lsp';
import { describeLayerStrategy, formatBytes, formatCount, formatFlops, formatMs, formatShape, lengthMixSummary, memorySummary, incompleteHoverLine, planLensTitle, setupSummary } from './format';
import type { DocLayerHit, ModelDocument, PlanEntry } from './modelDocs';

/** The size a model-parallel split divides: out features, out channels or heads. */
export function splitSize(layer: AnalyzedLayer, splitDim: LayerPlan['splitDim'], layout: AnalyzedModel['layout'] = 'channels_first'): number | undefined {
  const attrs = layer.attrs as Record<string, unknown>;
  const num = (v: unknown) => (typeof v === 'number' ? v : undefined);
  switch (splitDim) {
    case 'outputs':
      return num(attrs.outFeatures) ?? layer.outputShape?.[layer.outputShape.length - 1];
    case 'channels':
      // Channels are dim 0 of (C,H,W) and the last dim of (H,W,C).
      return num(attrs.outChannels) ?? (layer.outputShape ? layer.outputShape[layout === 'channels_last' ? layer.outputShape.length - 1 : 0] : undefined);
    case 'heads':
      return num(attrs.numHeads);
    case 'inputs':
      return num(attrs.inFeatures) ?? num(attrs.inChannels);
    default:
      return undefined;
  }
}

function costSourceText(lp: LayerPlan): string {
  const s = lp.costSource;
  if (s.kind === 'measured') {
    const where = [s.backend, s.device].filter(Boolean).join(' on ');
    return `measured${where ? ` with ${where}` : ''}${s.measuredBatch ? ` (batch ${s.measuredBatch}, scaled)` : ''}`;
  }
  return 'estimated (analytical cost model)';
}

function openPlanLink(uri: string, model: string, label: string, clientCommands: boolean): string {
  if (!clientCommands) return '';
  const args = encodeURIComponent(JSON.stringify([uri, model]));
  return `[${label}](command:${ClientCommands.showPlan}?${args} "Open the WAP plan view")`;
}

function esc(text: string): string {
  return text.replace(/([\\`*_{}[\]<>|])/g, '\\$1');
}

export function layerHoverMarkdown(doc: ModelDocument, hit: DocLayerHit, clientCommands: boolean): string {
  const { model, layer } = hit;
  const planned = doc.layerPlan(model, layer, hit.snapshot);
  const lines: string[] = [];
  lines.push(`**${esc(layer.name)}** · \`${esc(layer.type)}\` · model \`${esc(model.name)}\``);
  lines.push('');
  const incomplete = incompleteHoverLine(model, esc);
  if (incomplete) lines.push(incomplete, '');
  if (hit.instances.length > 1) lines.push(instancesLine(doc, hit), '');
  if (hit.otherModels.length) lines.push(`_Also built for ${hit.otherModels.map((m) => `\`${esc(m)}\``).join(', ')}; this hover shows \`${esc(model.name)}\`._`, '');
  const w = layer.workload;
  if (planned) {
    const { plan: lp, entry } = planned;
    const report = entry.outcome as PlanReport;
    lines.push(`**Strategy:** ${describeLayerStrategy(lp, splitSize(layer, lp.splitDim, model.layout))}`);
    lines.push('');
    lines.push(`- forward ${formatMs(lp.forwardMs)} · backward ${formatMs(lp.backwardMs)} per iteration — ${costSourceText(lp)}`);
    lines.push(`- params ${formatCount(lp.params)} · activation ${formatBytes(lp.activationBytes)} per iteration (${formatBytes(w.activationBytes)} per sample)`);
    // Under ZeRO the gradients go to their shard's owner: a reduce-scatter, not an all-reduce.
    const zero = report.plan.setup?.zeroStage ?? 0;
    const synced = zero >= 1 && lp.allreduceBytes > 0 ? `reduce-scattered (ZeRO-${zero})` : 'all-reduced';
    lines.push(lp.allreduceBytes > 0 ? `- gradients ${synced}: ${formatBytes(lp.allreduceBytes)} (${formatMs(lp.allreduceMs)})` : '- gradients all-reduced: none');
    if (lp.transferMs > 0) lines.push(`- re-layout into this layer: ${formatMs(lp.transferMs)}`);
    lines.push(`- memory per GPU: ${formatBytes(lp.memoryBytesPerGpu)}`);
    lines.push('');
    lines.push(`**Why:** ${esc(lp.reason)}`);
    if (lp.alternative) {
      const a = lp.alternative;
      const alt = a.strategy === 'data' ? `data parallel ×${a.dataDegree}` : a.strategy === 'model' ? `model parallel ×${a.modelDegree}` : `${a.strategy} data ×${a.dataDegree} · model ×${a.modelDegree}`;
      lines.push(`(best alternative: ${alt}, ${formatMs(a.costMs)})`);
    }
    lines.push('');
    lines.push(`_Plan: ${esc(planLensTitle(report))} · ${esc(batchText(report))} · ${esc(report.cluster.name)} (${esc(entry.clusterNote)})_`);
    if (report.plan.setup) lines.push('', `_Setup: ${esc(setupSummary(report.plan.setup))}_`);
    if (report.lengthMix) lines.push('', `_On the data's lengths: ${esc(lengthMixSummary(report.lengthMix))}_`);
  } else {
    lines.push(`- output ${formatShape(layer.outputShape)} ← input ${layer.inputShapes.map((s) => formatShape(s)).join(', ') || '—'}`);
    const quantized = w.quantized && layer.quantizedWeights ? `, ${layer.quantizedWeights.format.toUpperCase()} in ${formatBytes(w.quantized.bytes)}` : '';
    lines.push(`- params ${formatCount(w.params)}${w.frozenParams ? ` (+${formatCount(w.frozenParams)} frozen${quantized})` : ''}${w.nonTrainable ? ` (+${formatCount(w.nonTrainable)} non-trainable)` : ''}`);
    lines.push(`- forward ${formatFlops(w.forwardFlops)} · backward ${formatFlops(w.backwardFlops)} per sample`);
    lines.push(`- activation ${formatBytes(w.activationBytes)} per sample · gradients ${formatBytes(w.weightGradBytes)}`);
    lines.push('');
    const fileErrors = doc.analysis?.diagnostics.some((d) => d.severity === 'error') ?? false;
    lines.push(fileErrors ? '_Not planned while the file has errors._' : doc.plans.has(model.name) ? '_Changed since the last plan: re-planning…_' : '_Not planned yet._');
  }
  const link = openPlanLink(doc.uri, model.name, planned ? 'Open plan view' : 'Parallelize model', clientCommands);
  if (hit.stale) lines.push('', '_The file has errors right now: this is the last good analysis of this unchanged layer._');
  if (link) lines.push('', link);
  return lines.join('\n');
}

/** A line that builds several layers (a loop, a block class): how many, which, and their strategies when they differ. */
function instancesLine(doc: ModelDocument, hit: DocLayerHit): string {
  const groups: Array<{ first: string; last: string; what: string; count: number }> = [];
  for (const inst of hit.instances) {
    const planned = doc.layerPlan(hit.model, inst, hit.snapshot);
    const what = planned ? describeLayerStrategy(planned.plan, splitSize(inst, planned.plan.splitDim)) : 'not planned yet';
    const g = groups.at(-1);
    if (g && g.what === what) {
      g.last = inst.name;
      g.count++;
    } else groups.push({ first: inst.name, last: inst.name, what, count: 1 });
  }
  const span = (g: (typeof groups)[number]) => (g.count === 1 ? esc(g.first) : `${esc(g.first)} … ${esc(g.last)} (${g.count})`);
  const head = `**Built ${hit.instances.length}× here:**`;
  if (groups.length === 1) return `${head} ${span(groups[0])}`;
  const shown = groups.slice(0, 6).map((g) => `- ${span(g)}: ${esc(g.what)}`);
  if (groups.length > 6) shown.push(`- … ${groups.length - 6} more groups`);
  return [head, ...shown].join('\n');
}

export function modelHoverMarkdown(doc: ModelDocument, model: AnalyzedModel, clientCommands: boolean): string {
  const entry: PlanEntry | undefined = doc.plans.get(model.name);
  const t = model.totals;
  const lines = [
    `**${esc(model.name)}** · ${model.framework} · ${model.layers.length} layers`,
    '',
    `- input ${formatShape(model.input)}${model.inputAssumed ? ' (assumed)' : ''}`,
    `- params ${formatCount(t.params)} · forward ${formatFlops(t.forwardFlops)} per sample`,
  ];
  const incomplete = incompleteHoverLine(model, esc);
  if (incomplete) lines.push('', incomplete);
  if (entry) lines.push('', `**Plan:** ${esc(planLensTitle(entry.outcome))} (${esc(entry.clusterNote)})`);
  const setup = entry?.outcome.feasible ? entry.outcome.plan.setup : undefined;
  if (setup) {
    lines.push(`- setup: ${esc(setupSummary(setup))}`, `- memory: ${esc(memorySummary(setup.memoryPerGpu))}`);
    if (setup.fitsThrough) lines.push(`- fits only through ${esc(setup.fitsThrough)}`);
  }
  const mix = entry?.outcome.feasible ? entry.outcome.lengthMix : undefined;
  if (mix) lines.push(`- on the data's lengths: ${esc(lengthMixSummary(mix))}`);
  const elsewhere = definedElsewhere(model);
  if (elsewhere.length) lines.push('', `Layers defined in ${elsewhere.join(', ')}`);
  const link = openPlanLink(doc.uri, model.name, entry ? 'Open plan view' : 'Parallelize model', clientCommands);
  if (link) lines.push('', link);
  return lines.join('\n');
}

/** Links to the imported files the model's layers are defined in (`model.py` line of its first layer there). */
function definedElsewhere(model: AnalyzedModel): string[] {
  const firstLine = new Map<string, number>();
  for (const layer of model.layers) {
    const file = layer.range.file;
    if (!file) continue;
    const line = firstLine.get(file);
    if (line === undefined || layer.range.line < line) firstLine.set(file, layer.range.line);
  }
  return [...firstLine].slice(0, 5).map(([file, line]) => `[${esc(basename(file))}:${line}](${pathToFileURL(file).href}#L${line} "${esc(file)}")`);
}
