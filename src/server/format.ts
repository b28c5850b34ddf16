/** Human-readable numbers for hovers, CodeLenses and the status bar. */
import type { LayerPlan, LengthMixReport, MemoryBreakdown, PlanOutcome, StrategyKind, TrainingSetup } from '../protocol/plan';
import { describeIncomplete } from '../core/completeness';
import type { AnalyzedModel } from '../core/ir';
import { offloadText, parallelDegreesText, zeroText } from '../protocol/setupText';

export function formatBytes(bytes: number): string {
  if (!Number.isFinite(bytes)) return '?';
  const abs = Math.abs(bytes);
  if (abs >= 1e9) return `${(bytes / 1e9).toFixed(abs >= 1e10 ? 1 : 2)} GB`;
  if (abs >= 1e6) return `${(bytes / 1e6).toFixed(abs >= 1e7 ? 0 : 1)} MB`;
  if (abs >= 1e3) return `${(bytes / 1e3).toFixed(abs >= 1e4 ? 0 : 1)} kB`;
  return `${Math.round(bytes)} B`;
}

export function formatCount(n: number): string {
  if (!Number.isFinite(n)) return '?';
  if (Math.abs(n) >= 1e9) return `${(n / 1e9).toFixed(2)} G`;
  if (Math.abs(n) >= 1e6) return `${(n / 1e6).toFixed(2)} M`;
  if (Math.abs(n) >= 1e4) return `${(n / 1e3).toFixed(1)} k`;
  return String(Math.round(n));
}

export function formatFlops(n: number): string {
  if (n >= 1e12) return `${(n / 1e12).toFixed(2)} TFLOP`;
  if (n >= 1e9) return `${(n / 1e9).toFixed(2)} GFLOP`;
  if (n >= 1e6) return `${(n / 1e6).toFixed(2)} MFLOP`;
  return `${formatCount(n)} FLOP`;
}

export function formatMs(ms: number): string {
  if (!Number.isFinite(ms)) return '?';
  if (ms >= 100) return `${ms.toFixed(0)} ms`;
  if (ms >= 1) return `${ms.toFixed(2)} ms`;
  return `${(ms * 1000).toFixed(0)} µs`;
}

export function formatShape(shape: readonly number[] | undefined): string {
  if (!shape) return '?';
  return shape.length ? `[${shape.join(', ')}]` : '[] (scalar)';
}

/** GPU 0–3, GPU 0, 2, 5 or GPU 4. Contiguous runs are joined with an en dash. */
export function formatDevices(devices: readonly number[]): string {
  if (devices.length === 0) return 'no GPU';
  const sorted = [...devices].sort((a, b) => a - b);
  const parts: string[] = [];
  let start = sorted[0];
  let prev = sorted[0];
  for (const d of [...sorted.slice(1), Number.NaN]) {
    if (d === prev + 1) {
      prev = d;
      continue;
    }
    parts.push(start === prev ? String(start) : prev === start + 1 ? `${start}, ${prev}` : `${start}–${prev}`);
    start = prev = d;
  }
  return `GPU ${parts.join(', ')}`;
}

const STRATEGY_NAMES: Record<StrategyKind, string> = {
  data: 'data parallel',
  model: 'model parallel',
  hybrid: 'hybrid',
  pipeline: 'pipeline',
};

/** "data parallel ×4 on GPU 0–3", "model parallel ×2 (split 4096 outputs) on GPU 2–3". */
export function describeLayerStrategy(lp: LayerPlan, splitSize?: number): string {
  const split = lp.splitDim ? ` (split ${splitSize !== undefined ? `${splitSize} ` : ''}${lp.splitDim})` : '';
  const where = ` on ${formatDevices(lp.devices)}`;
  const stage = lp.stage > 0 || lp.strategy === 'pipeline' ? `, pipeline stage ${lp.stage}` : '';
  switch (lp.strategy) {
    case 'data':
      return lp.dataDegree <= 1 && lp.devices.length <= 1 ? `single GPU${where}${stage}` : `data parallel ×${lp.dataDegree}${where}${stage}`;
    case 'model':
      return `model parallel ×${lp.modelDegree}${split}${where}${stage}`;
    case 'hybrid':
      return `hybrid: data ×${lp.dataDegree} · model ×${lp.modelDegree}${split}${where}${stage}`;
    case 'pipeline':
      // Stages may split a layer too (tensor parallel inside a stage), so say both degrees when they apply.
      return `pipeline stage ${lp.stage}${lp.dataDegree > 1 ? `, data parallel ×${lp.dataDegree}` : ''}${lp.modelDegree > 1 ? `, model parallel ×${lp.modelDegree}${split}` : ''}${where}`;
    default:
      return `${STRATEGY_NAMES[lp.strategy as StrategyKind] ?? String(lp.strategy)}${where}`;
  }
}

/** The model-level strategy word of a CodeLens: one kind when every layer agrees, else "hybrid". */
export function planStrategyWord(layers: readonly LayerPlan[], pipelined: boolean): string {
  if (pipelined) return 'pipeline';
  const kinds = new Set(layers.map((l) => (l.strategy === 'data' && l.dataDegree <= 1 ? 'single' : l.strategy)));
  if (kinds.size === 1) {
    const [k] = kinds;
    return k === 'single' ? 'single GPU' : STRATEGY_NAMES[k as StrategyKind] ?? k;
  }
  kinds.delete('single');
  return kinds.size === 1 ? STRATEGY_NAMES[[...kinds][0] as StrategyKind] : 'hybrid';
}

/** "4 GPUs · hybrid · 3.1× vs 1 GPU (predicted)", or why nothing fits. */
export function planLensTitle(outcome: PlanOutcome): string {
  if (!outcome.feasible) return `Does not fit: ${outcome.reason}${outcome.incomplete ? ` · ⚠ ${outcome.incomplete.summary}` : ''}`;
  const gpus = outcome.plan.gpus;
  const word = planStrategyWord(outcome.plan.layers, (outcome.plan.pipeline?.stages ?? 1) > 1);
  const single = outcome.baselines.singleGpu;
  const speedup = single.feasible && single.samplesPerSec > 0 ? `${(outcome.plan.samplesPerSec / single.samplesPerSec).toFixed(1)}× vs 1 GPU` : '1 GPU does not fit';
  return `${gpus} GPU${gpus === 1 ? '' : 's'} · ${word} · ${speedup} (predicted)${outcome.incomplete ? ` · ⚠ ${outcome.incomplete.summary}` : ''}`;
}

/** The hover's Markdown warning for a model known to be incomplete (`esc` escapes text for Markdown); undefined when complete. */
export function incompleteHoverLine(model: AnalyzedModel, esc: (text: string) => string): string | undefined {
  const summary = describeIncomplete(model.completeness);
  if (!summary) return undefined;
  const why = model.completeness!.reasons[0];
  return `⚠️ **${esc(summary)}** — params, FLOPs and the plan cover only what WAP could read${why ? `: ${esc(why)}` : ''}`;
}

/** "bf16 (from ds_config.json (bf16.enabled)) · DP 8 × TP 1 × PP 1 · ZeRO-2 · recompute selective · micro-batch 4 × 8 · MFU 41%". */
export function setupSummary(s: TrainingSetup): string {
  const degrees = parallelDegreesText(s, true);
  return [
    `${s.precision} (${s.precisionReason})`,
    ...(s.ampStyle ? [s.ampStyle] : []),
    degrees,
    zeroText(s),
    ...(s.gradientSync === 'serial' ? ['gradient sync after the backward'] : []),
    `recompute ${s.recompute}`,
    `micro-batch ${s.microBatch} × ${s.gradientAccumulation}`,
    ...(offloadText(s) ? [offloadText(s)!] : []),
    `MFU ${(s.mfu * 100).toFixed(1)}%`,
  ].join(' · ');
}

/** "weights 1.2 GB · gradients … · optimizer … · activations … · workspace … = 9.9 GB per GPU". */
export function memorySummary(m: MemoryBreakdown): string {
  return `weights ${formatBytes(m.weights)} · gradients ${formatBytes(m.gradients)} · optimizer ${formatBytes(m.optimizer)} · activations ${formatBytes(m.activations)} · workspace ${formatBytes(m.workspace)} = ${formatBytes(m.total)} per GPU`;
}

/** "mean 256 tokens, 8% padding (batches drawn from 64-token length bins, …): 557 samples/s, 1.84× the padded plan". */
export function lengthMixSummary(m: LengthMixReport): string {
  return `mean ${m.meanTokens.toFixed(0)} tokens, ${(m.paddingFraction * 100).toFixed(0)}% padding (${m.batching}): ${m.samplesPerSec.toFixed(0)} samples/s, ${m.tokensPerSec.toFixed(0)} tokens/s, ${m.speedup.toFixed(2)}× the padded plan`;
}
