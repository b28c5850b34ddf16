/**
 * The parts of a plan report both searches build the same way (the per-layer
 * planner in planner.ts and the block-stack search in search/parallel3d/plan.ts):
 * the header every outcome carries, the infeasible outcome, the choice of GPU
 * count by the objective, the pipeline bubble, and the diagnostics that say a
 * plan fits only through memory savers or offload. Each search fills in its
 * own plan, baselines, timeline and search info.
 */
import type { IncompleteModelInfo, InfeasiblePlan, PlanDiagnostic, PlanReport, PlanSequence, ScalingPoint, TrainingSetup } from '../protocol/plan';
import type { PlanOptions } from '../protocol/planOptions';
import type { GpuSpec } from './cluster/spec';
import { gb } from './cost/memory';

/** What every outcome of one planModel call shares. */
export interface ReportBase {
  model: string;
  options: PlanOptions;
  cluster: InfeasiblePlan['cluster'];
  diagnostics: PlanDiagnostic[];
  incomplete?: IncompleteModelInfo;
  sequence?: PlanSequence;
}

export function samplesPerSec(batch: number, stepMs: number): number {
  return stepMs > 0 && Number.isFinite(stepMs) ? (batch * 1000) / stepMs : 0;
}

/** Who chose the batch, as the options say, for the report. */
function batchOrigin(o: PlanOptions): Pick<PlanReport, 'batchSource' | 'batchAssumed'> {
  return { ...(o.batchSource ? { batchSource: o.batchSource } : {}), ...(o.batchAssumed ? { batchAssumed: true } : {}) };
}

export function infeasible(base: ReportBase, reason: string, scaling: ScalingPoint[] = []): InfeasiblePlan {
  return { feasible: false, ...(base.incomplete ? { incomplete: base.incomplete } : {}), ...(base.sequence ? { sequence: base.sequence } : {}), model: base.model, batch: base.options.batch, ...batchOrigin(base.options), cluster: base.cluster, reason, scaling, diagnostics: base.diagnostics };
}

/** A feasible report: the shared header around the search's own parts. */
export function feasibleReport(base: ReportBase, parts: Pick<PlanReport, 'plan' | 'baselines' | 'scaling' | 'timeline' | 'search' | 'costSources'>): PlanReport {
  const o = base.options;
  return {
    feasible: true,
    ...(base.incomplete ? { incomplete: base.incomplete } : {}),
    ...(base.sequence ? { sequence: base.sequence } : {}),
    model: base.model,
    batch: o.batch,
    ...batchOrigin(o),
    objective: o.objective,
    strategies: o.strategies,
    optimizer: o.optimizer,
    cluster: base.cluster,
    ...parts,
    diagnostics: base.diagnostics,
  };
}

/**
 * The count the objective picks among feasible ones (in increasing n):
 * throughput takes the fastest; efficiency the fewest GPUs within the
 * tolerance (default 5%) of the fastest.
 */
export function chooseByObjective<T>(feasible: readonly T[], sps: (x: T) => number, options: PlanOptions): T | undefined {
  if (feasible.length === 0) return undefined;
  const best = Math.max(...feasible.map(sps));
  const tol = options.objective === 'efficiency' ? (options.efficiencyTolerance ?? 0.05) : 0;
  return feasible.find((x) => sps(x) >= (1 - tol) * best);
}

/**
 * Idle share of the pipeline: bubble (p−1)/v of a micro-batch's time against M
 * micro-batches of work, i.e. Narayanan et al.'s (p−1)/(v·m) as a fraction of
 * the whole pipeline time; (p−1)/(m+p−1) for plain 1F1B (v = 1).
 */
export function bubbleFraction(p: number, v: number, m: number): number {
  return (p - 1) / (v * m + p - 1);
}

/** Says when the plan needs offload (a warning: it is slow) or fits only through ZeRO/recompute (info). */
export function fitDiagnostics(setup: TrainingSetup, diagnostics: PlanDiagnostic[], host: { gpu: Pick<GpuSpec, 'name' | 'hostMemoryBandwidthGBs' | 'hostMemoryGB'>; share: number }, offloadCost?: string): void {
  const why = setup.fitsThrough ? 'nothing fits without it' : 'pinned';
  const { gpu, share } = host;
  const step =
    gpu.hostMemoryBandwidthGBs === undefined
      ? `the CPU-side optimizer step is not modelled (the ${gpu.name}'s spec states no hostMemoryBandwidthGBs)`
      : `the CPU-side optimizer step is priced at ${fmtGB(gpu.hostMemoryBandwidthGBs * share)} GB/s of host DRAM per rank (the node's peak over the ranks on it)`;
  const held = setup.hostMemoryPerGpu !== undefined ? `${gb(setup.hostMemoryPerGpu)} per rank in host memory` : '';
  const room = gpu.hostMemoryGB === undefined ? `${held ? `${held}, ` : ''}not checked against the node's RAM (the spec states no hostMemoryGB)` : `${held ? `${held} of the ` : ''}${fmtGB(gpu.hostMemoryGB * share)} GiB of the node's RAM each rank has`;
  const cpuStep = `${step}; ${room}`;
  if (setup.paramOffload) {
    diagnostics.push({ severity: 'warning', message: `parameters, gradients and optimizer state are offloaded to CPU memory (${why}): every forward and backward fetches the weights over PCIe and every micro-step sends the gradients down${offloadCost ? `, ${offloadCost}` : ''}; ${cpuStep}` });
  } else if (setup.cpuOffload) {
    diagnostics.push({ severity: 'warning', message: `optimizer state is offloaded to CPU memory (${why}): each micro-step moves the gradients down and each step the weights up over PCIe${offloadCost ? `, ${offloadCost}` : ''}; ${cpuStep}` });
  } else if (setup.fitsThrough) diagnostics.push({ severity: 'info', message: `fits only through ${setup.fitsThrough}` });
}

const fmtGB = (v: number): string => String(Number(v.toFixed(1)));

/**
 * On GPUs of different models, data parallelism as DDP, FSDP and DeepSpeed run it gives every rank the same share of
 * the batch, so a step goes at the slowest GPU's pace (the planner costs a mixed group at its slowest): said, so a
 * user knows the faster boards wait, rather than read a sum of their speeds into the plan.
 */
export function mixedGpuNote(gpus: ReadonlyArray<{ name: string; tflops: number; memoryBandwidthGBs: number }>): string | undefined {
  const models = [...new Map(gpus.map((g) => [g.name, g])).values()];
  if (models.length < 2) return undefined;
  const slowest = models.reduce((a, b) => (b.tflops < a.tflops || (b.tflops === a.tflops && b.memoryBandwidthGBs < a.memoryBandwidthGBs) ? b : a));
  const others = models.filter((g) => g !== slowest).map((g) => g.name);
  return `the plan mixes ${models.map((g) => g.name).join(' and ')}: frameworks split the batch evenly over the ranks, so each step runs at the ${slowest.name}'s pace and the ${others.join(', ')} wait for it`;
}

