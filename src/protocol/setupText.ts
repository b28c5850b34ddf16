/**
 * The parallel degrees of a plan's training setup as text, one way for the CLI table, the hover and the plan view.
 * Pure string code: the webview bundles it too.
 */
import type { PlanOutcome, TrainingSetup } from './plan';

/**
 * "DP 8 × TP 2+SP × PP 4(×2 virtual) × CP 1"; virtual stages only when there are some, and `compact` leaves out
 * CP when it is 1. A per-layer plan that mixes configurations says so: "… (most parameters; also DP 4 × TP 1 on 16 layers)".
 */
export function parallelDegreesText(s: TrainingSetup, compact: boolean): string {
  const pp = `PP ${s.pipelineStages}${s.virtualStages > 1 ? `(×${s.virtualStages} virtual)` : ''}`;
  const cp = !compact || s.contextParallel > 1 ? ` × CP ${s.contextParallel}` : '';
  // Experts split over fewer ranks than the attention: said beside EP, as Megatron's folding writes it.
  const etp = s.expertTensorParallel !== undefined && s.expertTensorParallel !== s.tensorParallel ? ` (experts TP ${s.expertTensorParallel})` : '';
  const ep = s.expertParallel > 1 || etp ? ` × EP ${s.expertParallel}${etp}` : '';
  const main = `DP ${s.dataParallel} × TP ${s.tensorParallel}${s.sequenceParallel ? '+SP' : ''} × ${pp}${cp}${ep}`;
  const others = (s.otherDegrees ?? []).map((o) => `DP ${o.dataParallel} × TP ${o.tensorParallel} on ${o.layers} layer${o.layers === 1 ? '' : 's'}`);
  return others.length ? `${main} (most parameters; also ${others.join(', ')})` : main;
}

/**
 * "ZeRO-1 HSDP (updated weights gathered in the next forward)": the stage, and for ZeRO-1/2 when the weights each rank
 * updated are gathered, with why when `why` (the CLI's line, which has the room).
 */
export function zeroText(s: Pick<TrainingSetup, 'zeroStage' | 'hybridShard' | 'weightGather' | 'weightGatherReason'>, why = false): string {
  const when = s.weightGather === 'next-forward' ? 'in the next forward' : 'after the step';
  const gather = s.weightGather ? ` (updated weights gathered ${when}${why && s.weightGatherReason ? `: ${s.weightGatherReason}` : ''})` : '';
  return `ZeRO-${s.zeroStage}${s.hybridShard ? ' HSDP' : ''}${gather}`;
}

/** What a plan keeps in host memory, for the same three views; undefined when nothing is offloaded. */
export function offloadText(s: Pick<TrainingSetup, 'cpuOffload' | 'paramOffload'>): string | undefined {
  if (s.paramOffload) return 'parameters, gradients and optimizer offloaded to CPU (slow)';
  return s.cpuOffload ? 'optimizer offloaded to CPU (slow)' : undefined;
}

/** "batch 32 (run.sh's …: micro-batch 4 × data-parallel 8)", "batch 128 (assumed: …)": the global batch and who chose it, for the same three views. */
export function batchText(o: Pick<PlanOutcome, 'batch' | 'batchSource' | 'batchAssumed'>): string {
  if (o.batchAssumed) return `batch ${o.batch} (assumed${o.batchSource ? `; ${o.batchSource}` : ': no launch or training config beside the model states one'})`;
  return o.batchSource ? `batch ${o.batch} (${o.batchSource})` : `batch ${o.batch}`;
}
