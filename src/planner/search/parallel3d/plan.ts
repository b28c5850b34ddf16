/**
 * Plans a block-stack model (a transformer) with the 3D search: validates the
 * pins, picks the GPU counts worth searching, searches each, simulates the
 * best few at the chosen count and builds the same PlanReport the per-layer
 * planner does (scaling curve, baselines, timeline, setup, pipeline).
 */
import type { AnalyzedLayer, AnalyzedModel } from '../../../core/ir';
import { expertOf } from '../../../core/moe';
import type { AmpStyle, BaselineResult, InfeasiblePlan, PlanDiagnostic, PlanOutcome, Precision, ScalingPoint, TrainingSetup } from '../../../protocol/plan';
import type { PlanOptions } from '../../../protocol/planOptions';
import { gpuMemoryBytes, hostMemoryBytes, type ClusterSpec } from '../../cluster/spec';
import { chooseAmpStyle, FRAGMENTATION_FRACTION } from '../../memory/index';
import { DEFAULT_HOST_BANDWIDTH_GBS } from '../../cost/tables';
import { modelFlopsPerSample } from '../../cost/modelFlops';
import { bubbleFraction, chooseByObjective, feasibleReport, fitDiagnostics, infeasible, samplesPerSec, type ReportBase } from '../../assemble';
import { activationBytes, gradientBytes, p2pMs, peakTflops, weightBytes } from './adapters';
import { blockShape, type BlockStructure } from './blocks';
import { costsFor, degreesOf, estimate, linksFor, memoryPerStage, hostShareOf, stageTime, type EstimateContext } from './estimate';
import { gradSync } from './gradientSync';
import { shardsOf } from './sharding';
import { layerPlans3d, describe3d, fitsThrough } from './report';
import { replay, type ReplayResult } from './schedule';
import { configsOn, search3dSteps, type Scored } from './search';
import { candidateCounts, fullyPinnedCount, pinProblem, type SpaceContext } from './space';
import { acceptedCounts, refusedCount } from '../../runGpuCounts';
import { withCollectiveTimings } from '../../collectiveTiming';
import { noSyncSavingNote } from '../../ddpAccumulationSync';

export interface Plan3DInput {
  model: AnalyzedModel;
  structure: BlockStructure;
  cluster: ClusterSpec;
  options: PlanOptions;
  diagnostics: PlanDiagnostic[];
  clusterInfo: InfeasiblePlan['cluster'];
  started: number;
}

/** Why the 3D search cannot model this cluster (it assumes identical GPUs and equal nodes), or undefined. */
export function clusterProblem(cluster: ClusterSpec): string | undefined {
  const g = cluster.gpus[0];
  if (cluster.gpus.some((x) => x.name !== g.name || x.tflops !== g.tflops || x.memoryGB !== g.memoryGB)) return 'the cluster mixes GPU models';
  if (cluster.gpus.length % cluster.nodes !== 0) return 'nodes hold different numbers of GPUs';
  const per = cluster.gpus.length / cluster.nodes;
  if (cluster.gpus.some((x, i) => x.node !== Math.floor(i / per))) return 'nodes hold different numbers of GPUs';
  return undefined;
}

export { bubbleFraction };

const sps = samplesPerSec;

/** The 16-bit style the plan trains with, and why (memory/precision.ts chooseAmpStyle); undefined at fp32/tf32. */
function ampOf(options: PlanOptions, precision: Precision): { ampStyle: AmpStyle; ampStyleReason: string } | undefined {
  const amp = chooseAmpStyle(precision, options.ampStyle, options.ampStyleSource);
  return amp ? { ampStyle: amp.style, ampStyleReason: amp.reason } : undefined;
}

/** The degree space and the cost context of a model on a cluster (shared by the planner, tests and benches). */
export function searchContext(model: AnalyzedModel, structure: BlockStructure, cluster: ClusterSpec, options: PlanOptions): { space: SpaceContext; ctx: EstimateContext; peak: { tflops: number; fallback: boolean } } {
  const shape = blockShape(structure);
  const gpusPerNode = cluster.gpus.length / cluster.nodes;
  const space: SpaceContext = { structure, shape, batch: options.batch, gpusPerNode, clusterGpus: cluster.gpus.length, pins: options.pins ?? {}, ...(options.frameworkLimits ? { limits: options.frameworkLimits } : {}), mode: options.strategies, ...(options.microBatches ? { microBatches: options.microBatches } : {}) };
  const gpu = cluster.gpus[0];
  const precision: Precision = options.precision ?? 'fp32';
  const amp = ampOf(options, precision);
  const peak = peakTflops(gpu, precision);
  const deviceBytes = gpuMemoryBytes(gpu);
  const ctx: EstimateContext = {
    structure,
    shape,
    cluster,
    gpu,
    gpusPerNode,
    precision,
    ...(amp ? { ampStyle: amp.ampStyle } : {}),
    optimizer: options.optimizer,
    ...(options.forwardGatherStages ? { forwardGatherStages: options.forwardGatherStages } : {}),
    ...(options.serialSyncStages ? { serialSyncStages: options.serialSyncStages } : {}),
    ...(options.unshardedAccumulationStages ? { unshardedAccumulationStages: options.unshardedAccumulationStages } : {}),
    ...(options.allReduceEachMicroStepStages ? { allReduceEachMicroStepStages: options.allReduceEachMicroStepStages } : {}),
    modelDtypeBytes: model.dtypeBytes,
    usableBytes: deviceBytes * (1 - FRAGMENTATION_FRACTION),
    deviceBytes,
    ...(hostMemoryBytes(cluster.gpus) !== undefined ? { hostBytesPerGpu: hostMemoryBytes(cluster.gpus) } : {}),
    ...(options.attentionKernel ? { attention: options.attentionKernel } : {}),
    ...(options.tokenDispatcher ? { tokenDispatcher: options.tokenDispatcher } : {}),
    ...(options.gradientReduceInFp32 ? { gradientReduceInFp32: true } : {}),
    cache: new Map(),
  };
  return { space, ctx, peak };
}

export function* plan3dSteps(input: Plan3DInput): Generator<[number, number] | void, PlanOutcome, void> {
  const { model, structure, cluster, options, diagnostics, clusterInfo } = input;
  const batch = options.batch;
  const base: ReportBase = { model: model.name, options, cluster: clusterInfo, diagnostics };
  const fail = (reason: string, scaling: ScalingPoint[] = []): InfeasiblePlan => infeasible(base, reason, scaling);
  const pins = options.pins ?? {};
  const { space, ctx, peak } = searchContext(model, structure, cluster, options);
  const { gpusPerNode } = space;
  const gpu = cluster.gpus[0];
  const precision = ctx.precision;
  const problem = pinProblem(space);
  if (problem) return fail(problem);
  yield;
  if (peak.fallback) diagnostics.push({ severity: 'warning', message: `the cluster spec has no ${precision} peak for ${gpu.name}; compute is costed at its fp32 peak (${gpu.tflops} TFLOP/s), bytes at ${precision}` });
  const N = Math.min(cluster.gpus.length, options.maxGpus ?? Infinity);
  const pinnedCount = fullyPinnedCount(pins);
  let counts: number[];
  const unit = [pins.dataParallel, pins.tensorParallel, pins.pipelineStages, pins.contextParallel].reduce<number>((a, b) => a * (b ?? 1), 1);
  if (pinnedCount !== undefined) {
    if (options.gpus !== undefined && pinnedCount !== options.gpus) return fail(`dp × tp × pp × cp = ${pins.dataParallel} × ${pins.tensorParallel} × ${pins.pipelineStages} × ${pins.contextParallel} = ${pinnedCount}, not the ${options.gpus} GPUs of --gpus`);
    counts = [pinnedCount];
  } else {
    counts = candidateCounts(N, gpusPerNode, unit);
    if (options.gpus !== undefined) {
      if (options.gpus % unit !== 0) return fail(`the pinned degrees need a multiple of ${unit} GPUs, not --gpus ${options.gpus}`);
      // The scaling curve around the forced count, plus the count itself.
      counts = [...new Set([...counts.filter((n) => n <= options.gpus!), options.gpus])].sort((a, b) => a - b);
    }
    if (counts.length === 0) return fail(`the pinned degrees need a multiple of ${unit} GPUs; at most ${N} are available`);
  }
  // Counts the training script refuses are not searched; they stay on the curve, refused, with the assert as why.
  // Those it accepts are all searched, where sampling the counts of a large cluster would skip them.
  const accepted = pinnedCount === undefined && options.gpus === undefined ? acceptedCounts(model.processCountRules, N) : undefined;
  if (accepted) counts = [...new Set([...counts, ...accepted.filter((n) => n % unit === 0)])].sort((a, b) => a - b);
  const refused = counts.flatMap((n) => {
    const reason = refusedCount(model.processCountRules, n);
    return reason ? [{ gpus: n, feasible: false, reason, refusedByScript: true as const, samplesPerSec: 0, stepTimeMs: 0, energyJPerSample: 0 }] : [];
  });
  const forcedRefusal = refused.find((r) => r.gpus === (options.gpus ?? pinnedCount));
  if (forcedRefusal) return fail(forcedRefusal.reason, refused);
  counts = counts.filter((n) => !refused.some((r) => r.gpus === n));
  if (counts.length === 0) return fail(refused[refused.length - 1]?.reason ?? `no GPU count up to ${N} to search`, refused);
  const result = yield* search3dSteps(ctx, space, counts);
  const searched: ScalingPoint[] = result.counts.map((r) => {
    const best = r.top[0];
    return best
      ? { gpus: r.n, feasible: true, samplesPerSec: sps(batch, best.est.stepMs), stepTimeMs: best.est.stepMs, energyJPerSample: 0, summary: describe3d(best.config) }
      : { gpus: r.n, feasible: false, reason: r.reason ?? `no plan on ${r.n} GPUs`, samplesPerSec: 0, stepTimeMs: 0, energyJPerSample: 0 };
  });
  const scaling = [...searched, ...refused].sort((a, b) => a.gpus - b.gpus);
  const feasible = result.counts.filter((r) => r.top.length > 0);
  const forced = options.gpus ?? pinnedCount;
  let chosen = forced !== undefined ? result.counts.find((r) => r.n === forced) : undefined;
  if (chosen && chosen.top.length === 0) return fail(chosen.reason ?? `no plan fits on ${chosen.n} GPUs`, scaling);
  if (!chosen) {
    if (feasible.length === 0) return fail(result.counts[result.counts.length - 1]?.reason ?? `nothing fits on up to ${N} GPUs`, scaling);
    chosen = chooseByObjective(feasible, (r) => sps(batch, r.top[0].est.stepMs), options)!;
  }
  // The simulator has the last word among the search's best few.
  let winner: { scored: Scored; run: ReplayResult } | undefined;
  for (const scored of chosen.top) {
    const run = replayOf(ctx, scored, false);
    yield;
    if (!winner || run.stepMs < winner.run.stepMs) winner = { scored, run };
  }
  const scored = winner!.scored;
  const run = replayOf(ctx, scored, true);
  yield;
  const c = scored.config;
  const stepMs = run.stepMs;
  // Each replayed stage stands for its n/pp GPUs: busy at full power, idle at idle power for the rest of the step.
  const energyOf = (r: ReplayResult, cfg: Scored['config']): number => {
    let joules = 0;
    for (const b of r.busyMs) joules += ((cfg.n / cfg.pp) * (b * gpu.powerW + Math.max(0, r.stepMs - b) * gpu.idlePowerW)) / 1000;
    return joules / batch;
  };
  const energyJPerSample = energyOf(run, c);
  const point = scaling.find((p) => p.gpus === c.n);
  if (point) Object.assign(point, { stepTimeMs: stepMs, samplesPerSec: sps(batch, stepMs), energyJPerSample });
  const flops = modelFlopsPerSample(model) * batch;
  const mfu = stepMs > 0 ? flops / (stepMs / 1000) / (c.n * peak.tflops * 1e12) : 0;
  if (run.commFolded) diagnostics.push({ severity: 'info', message: 'the timeline folds tensor-parallel and pipeline transfers into the compute bars to stay under 20,000 events' });
  if (run.stagesShown.length < c.pp) diagnostics.push({ severity: 'info', message: `the timeline shows ${run.stagesShown.length} of ${c.pp} pipeline stages (every ${run.stagesShown[1] - run.stagesShown[0]}th and the last); the others run the same schedule` });
  if (ctx.shape.experts > 0) diagnostics.push({ severity: 'info', message: BALANCED_ROUTING });
  diagnostics.push({ severity: 'info', message: `planned as ${structure.repeats} repeated blocks of ${structure.period} layers (${(structure.flopsCovered * 100).toFixed(0)}% of the FLOPs), searched as data × tensor × pipeline × context parallel; the timeline replays one data-parallel replica` });
  const through = fitsThrough(ctx, scored);
  const baselineAt = function* (n: number, restrict: Partial<typeof pins>, why: string): Generator<void, BaselineResult, void> {
    const refusal = refusedCount(model.processCountRules, n);
    if (refusal) return { gpus: n, feasible: false, reason: refusal, samplesPerSec: 0, stepTimeMs: 0, energyJPerSample: 0 };
    const sub: SpaceContext = { ...space, pins: { ...pins, ...restrict } };
    let best: Scored | undefined;
    let k = 0;
    for (const cfg of configsOn(sub, n)) {
      const est = estimate(ctx, cfg);
      if (est.fits && (!best || est.stepMs < best.est.stepMs)) best = { config: cfg, est };
      if (++k % 250 === 0) yield;
    }
    if (!best) return { gpus: n, feasible: false, reason: why, samplesPerSec: 0, stepTimeMs: 0, energyJPerSample: 0 };
    // Simulated like the plan, so plan and baselines compare on the same footing.
    const replay = replayOf(ctx, best, false);
    return { gpus: n, feasible: true, samplesPerSec: sps(batch, replay.stepMs), stepTimeMs: replay.stepMs, energyJPerSample: energyOf(replay, best.config) };
  };
  const singleGpu = yield* baselineAt(1, { tensorParallel: 1, pipelineStages: 1, contextParallel: 1, dataParallel: 1 }, `the model does not fit on one ${gpu.name}`);
  const dataParallel = yield* baselineAt(N, { tensorParallel: 1, pipelineStages: 1, contextParallel: 1, dataParallel: undefined }, `pure data parallelism does not fit or divide batch ${batch} on ${N} GPUs`);
  const layers = layerPlans3d(ctx, scored, model);
  // Per stage: the first holds the embedding and the most micro-batches in flight, the last the head; setup.memoryPerGpu is the fullest.
  const stageTotals = memoryPerStage(ctx, c, costsFor(ctx, degreesOf(c), linksFor(ctx, c))).map((m) => m.total);
  yield;
  const setup: TrainingSetup = withCollectiveTimings({
    precision,
    precisionReason: options.precisionSource ?? (options.precision ? '--precision' : 'the GPUs\' default precision'),
    ...(ampOf(options, precision) ?? {}),
    zeroStage: c.zero,
    hybridShard: !!c.hsdp,
    ...(c.zero > 0 ? { shardGroup: shardsOf(ctx, c) } : {}),
    recompute: c.recompute,
    cpuOffload: !!c.offload,
    paramOffload: !!c.paramOffload,
    microBatch: c.mb,
    gradientAccumulation: c.microBatches,
    dataParallel: c.dp,
    tensorParallel: c.tp,
    pipelineStages: c.pp,
    virtualStages: c.v,
    contextParallel: c.cp,
    expertParallel: c.ep,
    ...(ctx.shape.experts > 0 ? { expertTensorParallel: c.etp ?? c.tp, expertsKernel: expertsKernelOf(ctx.structure.block), tokenDispatcher: ctx.tokenDispatcher ?? 'alltoall', tokenDispatcherReason: options.tokenDispatcherSource ?? (options.tokenDispatcher ? 'the plan options' : DEFAULT_DISPATCHER_REASON) } : {}),
    sequenceParallel: c.sp,
    mfu,
    memoryPerGpu: scored.est.memory,
    ...(scored.est.hostBytes > 0 ? { hostMemoryPerGpu: scored.est.hostBytes } : {}),
    ...(through ? { fitsThrough: through } : {}),
  }, options);
  const hostLink = `at the ${gpu.hostBandwidthGBs ?? DEFAULT_HOST_BANDWIDTH_GBS} GB/s host link`;
  // A DDP loop all-reducing every micro-batch: what no_sync() would save, the winner replayed syncing once.
  const noSync = noSyncSavingNote(setup, stepMs, () => replayOf(syncingOnce(ctx), scored, false).stepMs);
  if (noSync) diagnostics.push(noSync);
  fitDiagnostics(setup, diagnostics, { gpu, share: hostShareOf(ctx, c.n) }, c.offload ? `${hostLink}, +${scored.est.updateMs.toFixed(1)} ms per step after the backward and ${scored.est.gradSyncMs.toFixed(1)} ms of copies and gradient sync the compute does not hide` : undefined);
  return feasibleReport(base, {
    plan: {
      gpus: c.n,
      stepTimeMs: stepMs,
      samplesPerSec: sps(batch, stepMs),
      energyJPerSample,
      // Rank order is Megatron's (tensor innermost, pipeline outermost): GPU g sits on stage ⌊g / (n/pp)⌋.
      memoryPerGpuBytes: Array.from({ length: c.n }, (_, g) => stageTotals[Math.floor(g / (c.n / c.pp))]),
      layers,
      ...(c.pp > 1
        ? { pipeline: { stages: c.pp, microBatches: c.microBatches, schedule: c.v > 1 ? ('interleaved-1f1b' as const) : ('1f1b' as const), bubbleFraction: bubbleFraction(c.pp, c.v, c.microBatches), layersPerStage: c.blocksPerStage, virtualStages: c.v, memoryPerStageBytes: stageTotals } }
        : {}),
      setup,
    },
    baselines: {
      singleGpu,
      dataParallel,
      owt: { gpus: N, feasible: false, reason: 'OWT (data-parallel convolutions, model-parallel classifier) is a baseline for per-layer plans; this model is a stack of repeated blocks', samplesPerSec: 0, stepTimeMs: 0, energyJPerSample: 0 },
    },
    scaling,
    timeline: run.events,
    search: { method: 'parallel3d', exact: true, bound: `GPU counts ${counts.join(', ')}; ${result.prunedByMemory} of ${result.evaluated} configurations pruned by memory before timing`, configurationsEvaluated: result.evaluated, elapsedMs: Date.now() - input.started },
    costSources: { analytical: model.layers.length },
  });
}

/** The context priced with one gradient sync per step (DDP under no_sync), its block costs shared. */
function syncingOnce(ctx: EstimateContext): EstimateContext {
  const { allReduceEachMicroStepStages: _each, ...once } = ctx;
  return once;
}

/** Event replay of one configuration: every stage timed, the schedule simulated. */
export function replayOf(ctx: EstimateContext, scored: Scored, emit: boolean): ReplayResult {
  const c = scored.config;
  const links = linksFor(ctx, c);
  const costs = costsFor(ctx, degreesOf(c), links);
  const stages = Array.from({ length: c.pp }, (_, s) => stageTime(ctx, c, costs, links, s));
  const hopBytes = (c.mb * ctx.shape.seq * ctx.shape.hidden * activationBytes(ctx.precision)) / (c.cp * c.tp);
  const syncs = stages.map((st) => gradSync(ctx, c, st, links));
  const maxParams = stages.reduce((a, st) => Math.max(a, st.params), 0);
  return replay({
    config: c,
    stages,
    hopMs: p2pMs(hopBytes, links.pp),
    hopBytes,
    links,
    gradSyncMs: syncs.map((s) => s.totalMs),
    shardedPerMicroMs: syncs.map((s) => s.shardedMs / c.microBatches),
    updateMs: stages.map((st) => (scored.est.updateMs * st.params) / Math.max(1, maxParams)),
    afterStepMs: syncs.map((s) => s.afterStepMs),
    nextForwardMs: syncs.map((s) => s.nextForwardMs),
    ...(ctx.serialSyncStages ? { serialSyncStages: ctx.serialSyncStages } : {}),
    gradBytes: stages.map((st) => st.params * gradientBytes(ctx.precision, ctx.ampStyle)),
    weightBytes: stages.map((st) => st.params * weightBytes(ctx.precision, ctx.ampStyle)),
  }, emit);
}

/** How the block's experts were priced (core/moe.ts ExpertAttrs.grouped, after a framework's override): grouped when any is. */
function expertsKernelOf(block: readonly AnalyzedLayer[]): 'grouped' | 'loop' {
  return block.some((l) => expertOf(l)?.grouped === true) ? 'grouped' : 'loop';
}

/** Why a plan without a framework's word prices the all-to-all dispatcher. */
const DEFAULT_DISPATCHER_REASON = 'all-to-all: torchtitan\'s dispatch, and Megatron-LM\'s recommended --moe-token-dispatcher-type with expert parallelism';

/**
 * What an MoE plan assumes of its routing, said on every one: dropless routing lets the busiest expert (and, with
 * expert parallelism, its GPU) set the pace, which no shape-derived factor predicts.
 */
const BALANCED_ROUTING = 'experts priced under balanced routing, each taking T·k/E of the tokens: with dropless routing (Megatron\'s default, transformers\' models) the busiest expert, and under expert parallelism its GPU, sets the pace, not modelled (Megatron-MoE-ModelZoo measures forced balance 1.24x faster than dropless on Qwen3-235B: 295 vs 237 TFLOP/s)';
