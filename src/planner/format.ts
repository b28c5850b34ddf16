/** The CLI's plain-text plan table. */
import type { LengthMixReport, PlanOutcome, PlanSequence, TrainingSetup } from '../protocol/plan';
import { batchText, offloadText, parallelDegreesText, zeroText } from '../protocol/setupText';

const pad = (s: string, w: number): string => (s.length >= w ? s : s + ' '.repeat(w - s.length));
const fmt = (x: number, d = 1): string => (Number.isFinite(x) ? x.toFixed(d) : '-');

function devicesText(ds: number[]): string {
  if (ds.length > 2 && ds.every((d, i) => i === 0 || d === ds[i - 1] + 1)) return `${ds[0]}-${ds[ds.length - 1]}`;
  return ds.join(',');
}

export function formatPlanTable(outcome: PlanOutcome): string {
  const lines: string[] = [];
  const scaling = outcome.scaling.map((s) => `${s.gpus}:${s.feasible ? fmt(s.samplesPerSec, 0) : 'x'}`).join('  ');
  if (!outcome.feasible) {
    lines.push(`${outcome.model} on ${outcome.cluster.name}, ${batchText(outcome)}: no feasible plan`);
    lines.push(`reason: ${outcome.reason}`);
    if (outcome.sequence) lines.push(sequenceLine(outcome.sequence));
    if (outcome.incomplete) lines.push(`model ${outcome.incomplete.summary}`);
    if (scaling) lines.push(`samples/s by GPU count: ${scaling}`);
    return lines.join('\n');
  }
  const r = outcome;
  const p = r.plan;
  const b = r.baselines;
  const vs = (x: number): string => (x > 0 ? `${fmt(p.samplesPerSec / x, 2)}×` : 'n/a');
  lines.push(`${r.model} on ${r.cluster.name} (${r.cluster.source}), ${batchText(r)}, ${r.strategies} strategies, objective ${r.objective}`);
  lines.push(`chosen: ${p.gpus} of ${r.cluster.gpus} GPUs  step ${fmt(p.stepTimeMs, 2)} ms  ${fmt(p.samplesPerSec, 0)} samples/s  ${fmt(p.energyJPerSample, 3)} J/sample  peak ${fmt(Math.max(...p.memoryPerGpuBytes) / 1e9, 2)} GB/GPU`);
  lines.push(`speedup: ${vs(b.singleGpu.samplesPerSec)} vs 1 GPU, ${vs(b.dataParallel.samplesPerSec)} vs pure DP on ${b.dataParallel.gpus}, ${vs(b.owt.samplesPerSec)} vs OWT`);
  if (r.sequence) lines.push(sequenceLine(r.sequence));
  if (p.setup) lines.push(...setupLines(p.setup));
  if (r.lengthMix) lines.push(...lengthMixLines(r.lengthMix));
  if (r.incomplete) lines.push(`model ${r.incomplete.summary} (${r.incomplete.reasons.slice(0, 3).join('; ')}): the plan covers only the layers WAP could read`);
  if (p.pipeline) lines.push(`pipeline: ${p.pipeline.stages} stages, ${p.pipeline.microBatches} micro-batches (${p.pipeline.schedule}), bubble ${fmt(p.pipeline.bubbleFraction * 100, 0)}%`);
  const perStage = p.pipeline?.memoryPerStageBytes;
  if (perStage && perStage.length > 1) {
    // First, last and the fullest stage: a 64-stage list is too long to read, these three differ.
    const fullest = perStage.indexOf(Math.max(...perStage));
    lines.push(`memory per stage: first ${fmt(perStage[0] / 1e9, 2)} GB, last ${fmt(perStage[perStage.length - 1] / 1e9, 2)} GB, fullest stage ${fullest} ${fmt(perStage[fullest] / 1e9, 2)} GB per GPU`);
  }
  lines.push('');
  const header = ['layer', 'line', 'type', 'strategy', 'd×k', 'devices', 'fwd ms', 'bwd ms', 'allreduce ms', 'xfer ms', 'source'];
  const rows = p.layers.map((l) => [
    l.name,
    String(l.line),
    l.type,
    l.strategy + (l.splitDim ? `(${l.splitDim})` : '') + (l.strategy === 'pipeline' ? ` s${l.stage}` : ''),
    `${l.dataDegree}×${l.modelDegree}`,
    devicesText(l.devices),
    fmt(l.forwardMs, 2),
    fmt(l.backwardMs, 2),
    fmt(l.allreduceMs, 2),
    fmt(l.transferMs, 2),
    l.costSource.kind,
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i].length)));
  lines.push(header.map((h, i) => pad(h, widths[i])).join('  '));
  for (const row of rows) lines.push(row.map((c, i) => pad(c, widths[i])).join('  ').trimEnd());
  lines.push('');
  lines.push(`samples/s by GPU count: ${scaling}`);
  lines.push(`search: ${r.search.method}${r.search.exact ? ' (exact)' : ''}, ${r.search.configurationsEvaluated} configurations, ${fmt(r.search.elapsedMs, 0)} ms${r.search.bound ? `; ${r.search.bound}` : ''}`);
  for (const d of r.diagnostics) lines.push(`${d.severity}: ${d.message}`);
  return lines.join('\n');
}

const gbText = (b: number): string => `${(b / 1e9).toFixed(2)} GB`;

function sequenceLine(s: PlanSequence): string {
  return `sequence: ${s.tokens} tokens per sample (${s.source})`;
}

/** How gradient accumulation synced (TrainingSetup.gradientAccumulationSync), in words for the setup's ZeRO stage. */
const ACCUMULATION_SYNC_TEXT: Record<NonNullable<TrainingSetup['gradientAccumulationSync']>, (zero: number) => string> = {
  unsharded: () => 'accumulated unsharded, reduce-scattered once',
  'every-micro-step': (zero) => (zero >= 2 ? 'reduce-scattered every micro-step' : 'all-reduced every micro-step'),
  once: () => 'accumulated locally, synced once per step',
};

/** Two lines: the training setup (precision and why, degrees, memory savers, MFU) and memory per GPU by holder. */
export function setupLines(s: TrainingSetup): string[] {
  const savers = [
    zeroText(s, true),
    ...(s.gradientSync === 'serial' ? [`gradients synced with nothing beside them (${s.gradientSyncReason})`] : []),
    ...(s.gradientAccumulationSync ? [`gradients ${ACCUMULATION_SYNC_TEXT[s.gradientAccumulationSync](s.zeroStage)} (${s.gradientAccumulationSyncReason})`] : []),
    `recompute ${s.recompute}`,
    `micro-batch ${s.microBatch} × ${s.gradientAccumulation} accumulation${s.gradientAccumulation === 1 ? '' : ' steps'}`,
    ...(offloadText(s) ? [offloadText(s)!] : []),
  ];
  const degrees = parallelDegreesText(s, false);
  const m = s.memoryPerGpu;
  return [
    `setup: ${s.precision} (${s.precisionReason})${s.ampStyle ? `, ${s.ampStyle} (${s.ampStyleReason})` : ''}, ${degrees}, ${savers.join(', ')}, MFU ${fmt(s.mfu * 100, 1)}%`,
    `memory/GPU: weights ${gbText(m.weights)}, gradients ${gbText(m.gradients)}, optimizer ${gbText(m.optimizer)}, activations ${gbText(m.activations)}, workspace ${gbText(m.workspace)} = ${gbText(m.total)}${s.hostMemoryPerGpu !== undefined ? `; offloaded to host memory ${gbText(s.hostMemoryPerGpu)}` : ''}`,
  ];
}

/** The throughput on the data's own lengths, and what it rests on. */
export function lengthMixLines(m: LengthMixReport): string[] {
  const groups = m.groups.map((g) => `${g.tokens}:${fmt(g.share * 100, 0)}%`).join(' ');
  return [
    `lengths${m.source ? ` (${m.source})` : ''}: mean ${fmt(m.meanTokens, 0)} tokens, run at ${fmt(m.meanPaddedTokens, 0)} (${fmt(m.paddingFraction * 100, 0)}% padding), ${m.batching}${m.truncatedFraction > 0 ? `; ${fmt(m.truncatedFraction * 100, 1)}% truncated` : ''}`,
    `on these lengths: step ${fmt(m.stepTimeMs, 2)} ms  ${fmt(m.samplesPerSec, 0)} samples/s  ${fmt(m.tokensPerSec, 0)} tokens/s (${fmt(m.speedup, 2)}× the padded plan); batches at ${groups}`,
    ...m.notes.map((n) => `note: ${n}`),
  ];
}
