/**
 * Candidates for one GPU count: the searched plan for the mode, plain data
 * parallelism, OWT (at the full count, as a baseline), and pipelines in 'all'
 * mode. Each is simulated; the fastest plan that fits in memory wins. Taking
 * the simulator's word over the search's additive estimate is what lets the
 * chosen plan never lose to a baseline.
 */
import type { AnalyzedModel } from '../core/ir';
import type { MemoryBreakdown } from '../protocol/plan';
import type { PlanOptions } from '../protocol/planOptions';
import { hostMemoryBytes } from './cluster/spec';
import { divisors, opClass, outFeatures, type LayerConfig } from './cost/configs';
import { CONTEXT_BYTES, gb, usableBytes } from './cost/memory';
import type { CostTables, TableOptions, TableSetup } from './cost/tables';
import { buildCostTables, computeKeyOf } from './cost/tableBuilder';
import { range, type Topology } from './cost/topology';
import { assignmentBreakdown, assignmentHostBytes } from './memory/assignment';
import { hasAttentionScores } from './memory/index';
import { buildPipelinePlanSteps, dataParallelStages, usesHybridStages, type PipelinePlan } from './search/pipelinePlan';
import { searchTablesSteps, type FittedSearch } from './search/search';
import { describeSavers, setupKey, setupLadder, walkLadder } from './search/setupLadder';
import type { SimRun } from './simulator/engine';
import { simulateIterationSteps } from './simulator/iteration';
import { simulatePipelineSteps } from './simulator/pipeline';
import { summarizeRun, type RunSummary } from './simulator/results';
import { drain, type Steps } from './steps';

export type CandidateKind = 'search' | 'dp' | 'owt' | 'pipeline';

export interface Candidate {
  kind: CandidateKind;
  n: number;
  tables?: CostTables;
  choice?: Int32Array;
  pipeline?: PipelinePlan;
  search?: FittedSearch;
  /**
   * Re-runs the (deterministic) simulation for the timeline. Runs are not kept:
   * every count's task lists alive at once were most of the planner's memory and GC time.
   */
  replay(): SimRun;
  /** replay() with the simulator's checkpoints. */
  replaySteps(): Steps<SimRun>;
  summary: RunSummary;
  memoryPerGpu: number[];
  fits: boolean;
  reason?: string;
  /** The training setup this candidate was costed under. */
  setup: TableSetup;
  /** Memory per GPU of its most loaded GPU, by what holds it. */
  memory: MemoryBreakdown;
  /** Host memory per GPU its offload fills (absent without offload). */
  hostBytes?: number;
}

export interface CountResult {
  n: number;
  best?: Candidate;
  dp?: Candidate;
  owt?: Candidate;
  /** Why nothing fits, when nothing does. */
  reason?: string;
  /** The search that ran at this count (absent in dp mode or on one GPU). */
  search?: FittedSearch;
  evaluated: number;
  /** When the best plan fits only through memory savers: which, and what they cost against the first setup tried. */
  fitsThrough?: string;
  /** When the first setup tried fits but another is faster (ZeRO-1 over ZeRO-0): which, and by how much. */
  fasterThanFirst?: string;
}

export interface EvalContext {
  model: AnalyzedModel;
  topo: Topology;
  options: PlanOptions;
  tableOptions: TableOptions;
  searchBudgetMs: number;
  /** Precision and optimizer; the memory savers are searched (or pinned) per GPU count. */
  baseSetup: TableSetup;
}

function* simulateTables(ctx: EvalContext, kind: CandidateKind, t: CostTables, choice: Int32Array, search?: FittedSearch): Steps<Candidate> {
  const replaySteps = () => simulateIterationSteps(t, choice);
  const run = yield* replaySteps();
  yield;
  const summary = summarizeRun(run, t.devices, ctx.topo, t.batch);
  const memory = assignmentBreakdown(t, choice);
  // The context is part of usableBytes' margin already.
  const mem = memory.total - CONTEXT_BYTES;
  const cap = usableBytes(ctx.topo.minMemoryBytes(t.devices));
  const host = t.setup.cpuOffload ? assignmentHostBytes(t, choice) : 0;
  const hostCap = hostCapBytes(ctx.topo, t.devices);
  const hostFits = hostCap === undefined || host <= hostCap;
  const fits = mem <= cap && hostFits;
  return {
    setup: t.setup,
    memory,
    ...(host > 0 ? { hostBytes: host } : {}),
    kind,
    n: t.n,
    tables: t,
    choice,
    search,
    replay: () => drain(replaySteps()),
    replaySteps,
    summary,
    memoryPerGpu: t.devices.map(() => mem),
    fits,
    reason: fits ? undefined : !hostFits ? hostOverflow(host, hostCap!) : `needs ${gb(mem)} per GPU, more than the ${gb(cap)} usable of ${gb(ctx.topo.minMemoryBytes(t.devices))}`,
  };
}

/** Host memory each rank of `devices` may fill with offloaded state, bytes; undefined when the spec does not say. */
function hostCapBytes(topo: Topology, devices: readonly number[]): number | undefined {
  const perGpu = hostMemoryBytes(devices.map((d) => topo.gpus[d]!));
  return perGpu === undefined ? undefined : perGpu * topo.hostShare(devices);
}

/** Why an offload plan does not fit: the host memory its GPUs' ranks would fill. */
export function hostOverflow(host: number, hostCap: number): string {
  return `offloads ${gb(host)} per GPU to host memory, more than the ${gb(hostCap)} of the node's RAM each rank has (hostMemoryGB)`;
}

/** The most loaded stage's breakdown. */
function pipelineBreakdown(p: PipelinePlan): MemoryBreakdown {
  let worst: MemoryBreakdown | undefined;
  for (const st of p.stages) {
    const m = assignmentBreakdown(st.tables, st.choice ?? new Int32Array(st.tables.layers.length), st.layers);
    if (!worst || m.total > worst.total) worst = m;
  }
  return worst!;
}

/** OWT ("one weird trick"): data parallel convolutions, model-parallel fully-connected layers. */
export function owtConfigs(model: AnalyzedModel, n: number): (layer: AnalyzedModel['layers'][number]) => LayerConfig[] {
  const firstLinear = model.layers.findIndex((l) => l.op === 'linear');
  const pos = new Map(model.layers.map((l, i) => [l.id, i]));
  return (layer) => {
    const i = pos.get(layer.id) ?? 0;
    if (n === 1 || firstLinear < 0 || i < firstLinear) return [{ d: n, k: 1, split: 'none' }];
    // A layer with fewer outputs than GPUs cannot give each one a slice of them (a regression head's Linear(20, 1)):
    // it splits its inputs where it has enough, and is replicated otherwise.
    if (layer.op === 'linear') {
      if (outFeatures(layer, model.layout) >= n) return [{ d: 1, k: n, split: 'out' }];
      const inputs = layer.inputShapes[0]?.at(-1) ?? 0;
      return [{ d: 1, k: n, split: inputs >= n ? 'in' : 'rep' }];
    }
    return [{ d: 1, k: n, split: opClass(layer) === 'shardable' ? 'shard' : 'rep' }];
  };
}

function better(a: Candidate | undefined, b: Candidate): Candidate {
  if (!a) return b;
  if (a.fits !== b.fits) return a.fits ? a : b;
  if (!a.fits) return Math.max(...b.memoryPerGpu) < Math.max(...a.memoryPerGpu) ? b : a;
  return b.summary.stepTimeMs < a.summary.stepTimeMs ? b : a;
}

/**
 * Micro-batch counts tried for S stages of m GPUs: S, 2S, 4S, 8S and the most
 * the batch allows (one sample per GPU per micro-batch). The 1F1B bubble
 * (S−1)/(M+S−1) shrinks with M while per-layer launch costs and per-message
 * latency grow, so the simulator picks.
 */
export function microBatchCounts(S: number, m: number, batch: number): number[] {
  const most = Math.floor(batch / m);
  const out = [S, 2 * S, 4 * S, 8 * S].filter((M) => M <= most && batch % M === 0);
  if (most >= S && batch % most === 0 && !out.includes(most)) out.push(most);
  return out.length > 0 ? out : [S];
}

/**
 * Time budget of one pipeline stage's search when it falls back to local
 * search (DAG stages): there are up to S stages × several micro-batch counts
 * × every divisor S of every count, so each gets a small slice.
 */
const STAGE_SEARCH_MS = 10;

export function evaluateCount(ctx: EvalContext, n: number, includeOwt: boolean): CountResult {
  return drain(evaluateCountSteps(ctx, n, includeOwt));
}

/** evaluateCount with checkpoints between candidates and inside the searches. */
export function* evaluateCountSteps(ctx: EvalContext, n: number, includeOwt: boolean): Steps<CountResult> {
  const { model, topo, options } = ctx;
  const nodes = new Set(range(0, n).map((d) => topo.gpus[d].node));
  const ladder = setupLadder({ n, batch: options.batch, base: ctx.baseSetup, pins: options.pins ?? {}, hasAttention: hasAttentionScores(model, options.attentionKernel), multiNode: nodes.size > 1, ...(options.frameworkLimits ? { limits: options.frameworkLimits } : {}) });
  if ('reason' in ladder) return { n, reason: ladder.reason, evaluated: 0 };
  let evaluated = 0;
  const pipelinesDone = new Set<string>();
  const cap = usableBytes(topo.minMemoryBytes(range(0, n)));
  // The ladder's setups at one accumulation and recompute differ only in what shards or offloads the model state:
  // the first one's tables lend their compute to the others (TableOptions.sameComputeAs).
  const costedCompute = new Map<string, CostTables>();
  const evaluate = function* (setup: TableSetup): Steps<CountResult> {
    const r = yield* evaluateSetupSteps(ctx, n, includeOwt, setup, pipelinesDone, costedCompute);
    evaluated += r.evaluated;
    return r;
  };
  const walk = yield* walkLadder(ladder, cap, evaluate, (r) => {
    const m = r.best?.memory;
    return { fits: r.best?.fits === true, stepTimeMs: r.best?.summary.stepTimeMs, modelStateBytes: m && m.weights + m.gradients + m.optimizer, overBytes: m && m.total - CONTEXT_BYTES - cap };
  });
  const { best, first, last } = walk;
  if (best) {
    if (best !== first && first?.best?.fits) {
      const base = first.best;
      const ms = best.best!.summary.stepTimeMs;
      // Only ZeRO-1 beside ZeRO-0 gets here (setupLadder.ts): the sharded optimizer step saves more than the gather costs.
      best.fasterThanFirst = `${describeSavers(best.best!.setup, base.setup)} chosen for speed, not memory: step ${ms.toFixed(2)} ms against ${base.summary.stepTimeMs.toFixed(2)} ms without it (each GPU steps its shard of the optimizer state, and gathering the updated weights after the step costs less than that saves)`;
    } else if (best !== first && first?.best) {
      const base = first.best;
      const extra = best.best!.summary.stepTimeMs - base.summary.stepTimeMs;
      const savers = `${describeSavers(best.best!.setup, base.setup)}: ${gb(best.best!.memory.total)} per GPU instead of ${gb(base.memory.total)}`;
      // The plan without the savers does not fit, so its step time is hypothetical: a saving step reads as a
      // cost only when it is one, and a faster plan names the slower one it replaces instead of a negative cost.
      best.fitsThrough =
        extra >= 0
          ? `${savers}; step +${extra.toFixed(2)} ms (+${((100 * extra) / Math.max(1e-9, base.summary.stepTimeMs)).toFixed(0)}%) against the same plan without it`
          : `${savers}; step ${best.best!.summary.stepTimeMs.toFixed(2)} ms, faster than the ${base.summary.stepTimeMs.toFixed(2)} ms the same plan without it would take if it fitted`;
    }
    return { ...best, evaluated };
  }
  const tried = first && last && last !== first && last.best ? describeSavers(last.best.setup, first.best?.setup ?? ctx.baseSetup) : '';
  return { ...last!, evaluated, ...(last?.reason && tried ? { reason: `${last.reason} (even with ${tried})` } : {}) };
}

/** One GPU count under one training setup: the searched plan, plain DP, OWT and (in 'all' mode) pipelines. */
function* evaluateSetupSteps(ctx: EvalContext, n: number, includeOwt: boolean, setup: TableSetup, pipelinesDone: Set<string>, costedCompute: Map<string, CostTables>): Steps<CountResult> {
  const { model, topo, options } = ctx;
  const batch = options.batch;
  const devices = range(0, n);
  let evaluated = 0;
  const tableOptions: TableOptions = { ...ctx.tableOptions, setup };
  const computeKey = computeKeyOf(setup);
  const tables = buildCostTables(model, topo, devices, batch, { ...tableOptions, mode: options.strategies, sameComputeAs: costedCompute.get(computeKey) });
  if (!costedCompute.has(computeKey)) costedCompute.set(computeKey, tables);
  const dpChoice = new Int32Array(model.layers.length);
  const dpValid = tables.options.every((o) => o[0].config.k === 1 && o[0].config.d === n);
  yield;
  const dp = dpValid ? yield* simulateTables(ctx, 'dp', tables, dpChoice) : undefined;
  yield;
  let best: Candidate | undefined = dp;
  let search: FittedSearch | undefined;
  evaluated += model.layers.length;
  if (options.strategies !== 'dp' && n > 1) {
    const s = yield* searchTablesSteps(tables, usableBytes(topo.minMemoryBytes(devices)), ctx.searchBudgetMs);
    evaluated += s.evaluated;
    search = s;
    const same = dp && s.choice.every((o) => o === 0);
    if (!same) best = better(best, yield* simulateTables(ctx, 'search', tables, s.choice, s));
  } else if (!dp) {
    best = yield* simulateTables(ctx, 'search', tables, dpChoice);
  }
  let owt: Candidate | undefined;
  if (includeOwt) {
    const t = buildCostTables(model, topo, devices, batch, { ...tableOptions, mode: 'hybrid', configsFor: owtConfigs(model, n) });
    yield;
    owt = yield* simulateTables(ctx, 'owt', t, new Int32Array(model.layers.length));
    yield;
    if (options.strategies !== 'dp') best = better(best, owt);
  }
  // Pipelines micro-batch already (no extra accumulation) and DeepSpeed refuses ZeRO-2/3 with pipeline
  // parallelism (DeepSpeed pipeline docs), so they run each distinct (precision, ZeRO ≤ 1, recompute) setup once.
  const pipeSetup: TableSetup = { ...setup, zeroStage: setup.zeroStage >= 1 ? 1 : 0, hybridShard: false, microSteps: 1 };
  const pipeKey = setupKey(pipeSetup);
  // Nor does DeepSpeed's pipeline engine take parameter offload, which needs ZeRO-3 (offload_param, DeepSpeed config docs).
  if (options.strategies === 'all' && n > 1 && setup.microSteps === 1 && !setup.paramOffload && !pipelinesDone.has(pipeKey)) {
    pipelinesDone.add(pipeKey);
    const pipeOptions: TableOptions = { ...ctx.tableOptions, setup: pipeSetup };
    for (const S of divisors(n)) {
      if (S < 2) continue;
      const m = n / S;
      // Model-parallel stages can run micro-batches smaller than the stage (down to one sample), where the bubble is smallest.
      const Ms = options.microBatches ? [options.microBatches] : [...new Set([...microBatchCounts(S, m, batch), ...microBatchCounts(S, 1, batch)])].sort((a, b) => a - b);
      for (const M of Ms) {
        const hybridPlan = yield* buildPipelinePlanSteps(model, topo, n, S, M, batch, pipeOptions, '1f1b', STAGE_SEARCH_MS);
        if (!hybridPlan) continue;
        // Both the data-parallel stages (where a micro-batch spreads over the stage) and the searched ones are
        // simulated: the search's additive estimate may mislead.
        const variants: PipelinePlan[] = [];
        if (hybridPlan.microBatch >= m) variants.push(dataParallelStages(hybridPlan, topo));
        if (usesHybridStages(hybridPlan) || variants.length === 0) variants.push(hybridPlan);
        for (const p of variants) {
          const replaySteps = () => simulatePipelineSteps(p.stages, topo, p.microBatch, M, p.schedule);
          evaluated += p.stages.length * model.layers.length;
          const run = yield* replaySteps();
          yield;
          const summary = summarizeRun(run, devices, topo, batch);
          const memory = pipelineBreakdown(p);
          // The stages' sums leave out the recompute workspace; the breakdown has it.
          const cap = usableBytes(topo.minMemoryBytes(devices));
          const workspaceFits = memory.total - CONTEXT_BYTES <= cap;
          // Each stage's GPUs offload their own layers: the fullest stage against each GPU's share of host memory.
          const host = pipeSetup.cpuOffload ? Math.max(...p.stages.map((st) => assignmentHostBytes(st.tables, st.choice ?? new Int32Array(st.tables.layers.length), st.layers))) : 0;
          const hostCap = hostCapBytes(topo, devices);
          const hostFits = hostCap === undefined || host <= hostCap;
          const fits = p.fits && workspaceFits && hostFits;
          const reason = p.reason ?? (!workspaceFits ? `needs ${gb(memory.total - CONTEXT_BYTES)} per GPU with its recompute workspace, more than the ${gb(cap)} usable` : !hostFits ? hostOverflow(host, hostCap!) : undefined);
          const cand: Candidate = { kind: 'pipeline', n, pipeline: p, replay: () => drain(replaySteps()), replaySteps, summary, memoryPerGpu: p.memoryPerGpu, fits, reason, setup: pipeSetup, memory, ...(host > 0 ? { hostBytes: host } : {}) };
          best = better(best, cand);
          yield;
        }
      }
    }
  }
  const reason = best && !best.fits ? `nothing fits on ${n} GPU${n > 1 ? 's' : ''}: the smallest plan ${best.reason}` : undefined;
  return { n, best, dp, owt, reason, evaluated, search };
}
