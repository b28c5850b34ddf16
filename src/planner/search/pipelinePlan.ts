/**
 * Pipeline candidates ('all' mode): the topological order cut into S
 * contiguous stages of n/S devices each, balanced by a bisection on the
 * largest stage time, with M micro-batches. Stages are data parallel, or,
 * with a stage search budget, each stage's layers get the per-layer hybrid
 * search (data × model degree within the stage's group, Megatron-style
 * tensor parallelism inside a node and the pipeline across nodes).
 */
import type { AnalyzedModel } from '../../core/ir';
import type { TableOptions } from '../cost/tables';
import { buildCostTables } from '../cost/tableBuilder';
import { usableBytes } from '../cost/memory';
import { range, type Topology } from '../cost/topology';
import { stageOption, type PipelineStage, type Schedule } from '../simulator/pipeline';
import { searchStageSteps } from './stageSearch';
import { drain, type Steps } from '../steps';

export interface PipelinePlan {
  stages: PipelineStage[];
  microBatches: number;
  microBatch: number;
  schedule: Schedule;
  memoryPerGpu: number[];
  fits: boolean;
  reason?: string;
  /** True when the stages' layers were searched over hybrid configurations. */
  hybridStages?: boolean;
}

function partition(costs: number[], S: number): number[] {
  const fits = (cap: number): number[] | undefined => {
    const cuts: number[] = [];
    let acc = 0;
    for (let i = 0; i < costs.length; i++) {
      if (acc + costs[i] > cap && acc > 0) {
        cuts.push(i);
        acc = 0;
      }
      acc += costs[i];
    }
    return cuts.length <= S - 1 ? cuts : undefined;
  };
  let lo = Math.max(...costs);
  let hi = costs.reduce((a, b) => a + b, 0);
  for (let i = 0; i < 40 && hi - lo > 1e-9 * hi; i++) {
    const mid = (lo + hi) / 2;
    if (fits(mid)) hi = mid;
    else lo = mid;
  }
  const cuts = fits(hi)!;
  // Every stage needs a layer: split the largest stages until there are S.
  const bounds = [0, ...cuts, costs.length];
  while (bounds.length - 1 < S) {
    let widest = 0;
    for (let i = 1; i < bounds.length - 1; i++) if (bounds[i + 1] - bounds[i] > bounds[widest + 1] - bounds[widest]) widest = i;
    const mid = Math.floor((bounds[widest] + bounds[widest + 1]) / 2);
    bounds.splice(widest + 1, 0, mid);
  }
  return bounds;
}

export function buildPipelinePlan(model: AnalyzedModel, topo: Topology, n: number, S: number, M: number, batch: number, opts: TableOptions, schedule: Schedule = '1f1b', stageSearchMs?: number): PipelinePlan | undefined {
  return drain(buildPipelinePlanSteps(model, topo, n, S, M, batch, opts, schedule, stageSearchMs));
}

/** Memory per GPU of each stage under its chosen options, and whether every stage fits. */
function stageMemory(stages: PipelineStage[], topo: Topology): Pick<PipelinePlan, 'memoryPerGpu' | 'fits' | 'reason'> {
  const memoryPerGpu: number[] = [];
  let fits = true;
  let reason: string | undefined;
  stages.forEach((st, s) => {
    let mem = 0;
    for (const l of st.layers) mem += stageOption(st, l).memoryBytes;
    const cap = usableBytes(topo.minMemoryBytes(st.devices));
    for (const _ of st.devices) memoryPerGpu.push(mem);
    if (mem > cap && fits) {
      fits = false;
      reason = `pipeline stage ${s} needs ${(mem / 1e9).toFixed(1)} GB per GPU, more than the ${(cap / 1e9).toFixed(1)} GB usable`;
    }
  });
  return { memoryPerGpu, fits, reason };
}

/** The same stages with every layer data parallel over its stage (option 0): the plan before the stage search. */
export function dataParallelStages(p: PipelinePlan, topo: Topology): PipelinePlan {
  const stages = p.stages.map(({ choice: _, ...st }) => st);
  return { ...p, stages, ...stageMemory(stages, topo), hybridStages: false };
}

/** True when some stage layer uses another option than plain data parallelism. */
export function usesHybridStages(p: PipelinePlan): boolean {
  return p.stages.some((st) => st.choice !== undefined && st.layers.some((l) => st.choice![l] !== 0));
}

/** buildPipelinePlan with a checkpoint after costing each stage. */
export function* buildPipelinePlanSteps(
  model: AnalyzedModel,
  topo: Topology,
  n: number,
  S: number,
  M: number,
  batch: number,
  opts: TableOptions,
  schedule: Schedule = '1f1b',
  stageSearchMs?: number,
): Steps<PipelinePlan | undefined> {
  const L = model.layers.length;
  const m = n / S;
  const microBatch = batch / M;
  const searched = stageSearchMs !== undefined && m > 1 && opts.mode !== 'dp';
  // Data-parallel stages need a sample per GPU; searched stages may split a smaller micro-batch by model parallelism.
  if (!Number.isInteger(m) || S < 2 || S > L || microBatch < (searched ? 1 : m)) return undefined;
  const probe = buildCostTables(model, topo, range(0, m), microBatch, { ...opts, mode: 'dp' });
  const costs = probe.options.map((o) => o[0].forwardMs + o[0].backwardMs);
  yield;
  const bounds = partition(costs, S);
  const stageOf = new Int32Array(L);
  for (let s = 0; s < S; s++) for (let l = bounds[s]; l < bounds[s + 1]; l++) stageOf[l] = s;
  const stages: PipelineStage[] = [];
  for (let s = 0; s < S; s++) {
    const devices = range(s * m, m);
    const inFlight = schedule === 'gpipe' ? M : Math.min(M, S - s);
    // Only this stage's layers are costed: the other stages' entries are never read.
    const mode = searched ? opts.mode : 'dp';
    const tables = buildCostTables(model, topo, devices, microBatch, { ...opts, mode, activationCopies: inFlight, layerRange: [bounds[s], bounds[s + 1]] });
    const layers = range(bounds[s], bounds[s + 1] - bounds[s]);
    let boundary = 0;
    for (const e of tables.edges) if (stageOf[e.from] <= s && stageOf[e.to] > s) boundary += e.bytes / microBatch;
    const stage: PipelineStage = { layers, devices, tables, boundaryBytesPerSample: boundary };
    if (mode !== 'dp') {
      yield;
      const cap = usableBytes(topo.minMemoryBytes(devices));
      stage.choice = (yield* searchStageSteps(tables, bounds[s], bounds[s + 1], cap, stageSearchMs!)).choice;
    }
    stages.push(stage);
    yield;
  }
  const { memoryPerGpu, fits, reason } = stageMemory(stages, topo);
  return { stages, microBatches: M, microBatch, schedule, memoryPerGpu, fits, reason, hybridStages: searched };
}
