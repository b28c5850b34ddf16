/**
 * planModel: for every GPU count n = 1..N find the best plan (the scaling
 * curve), pick n by the objective, and report the plan, baselines and the
 * simulated timeline. The loop is a generator: it yields [done, total] after
 * each count and undefined at the searches' checkpoints, so the async entry
 * point can report progress, yield to the event loop every ~20 ms of work and
 * honour cancellation within one such slice.
 */
import { expertsKernelLine, withExpertsKernel } from './expertsKernelOverride';
import { withCollectiveTimings } from './collectiveTiming';
import { autocastModel } from '../core/autocast';
import { describeIncomplete } from '../core/completeness';
import { planCaveats } from '../core/planCaveats';
import { withAdvice } from './advice';
import { withCodeMicroBatchNote } from './codeMicroBatch';
import { withUnshardedAccumulationNotes } from './unshardedAccumulation';
import { noSyncSavingNote, syncOnceStepMs } from './ddpAccumulationSync';
import type { AnalyzedModel } from '../core/ir';
import type { BaselineResult, IncompleteModelInfo, InfeasiblePlan, PlanDiagnostic, PlanOutcome, ScalingPoint } from '../protocol/plan';
import type { PlanOptions } from '../protocol/planOptions';
import type { ProfileFile } from '../protocol/profile';
import type { ClusterSpec } from './cluster/spec';
import { attentionKernelOf } from './cost/compute';
import { ProfileCosts, profileProblem } from './cost/profileCosts';
import { range, Topology } from './cost/topology';
import { gemmCeilingNote } from './cost/gemmCeiling';
import { optimizerLine, withPlannedOptimizer } from './optimizerChoice';
import { withCodeBatch } from './codeBatch';
import { withCodePrecision } from './codePrecision';
import { frozenParametersLine } from './frozenLine';
import { memoryFormatLine } from './memoryFormatLine';
import { tf32Convolutions } from './tf32Convolutions';
import { evaluateCountSteps, type Candidate, type CountResult, type EvalContext } from './evaluate';
import { defaultSetup, type TableSetup } from './cost/tables';
import { chooseAmpStyle, choosePrecisionFor, CONTEXT_BYTES, hasAttentionScores, peakTflops, PrecisionError, type PrecisionChoice } from './memory/index';
import { layerPlans, summaryOf } from './report';
import { repeatedTransformer } from './search/parallel3d/blocks';
import { clusterProblem, plan3dSteps } from './search/parallel3d/plan';
import { trainingSetup, unevenSplitNote } from './setupReport';
import { bubbleFraction, chooseByObjective, feasibleReport, fitDiagnostics, infeasible, mixedGpuNote, samplesPerSec as spsOf, type ReportBase } from './assemble';
import { toTimeline } from './simulator/results';
import { refusedCount, runGpuCountsLine } from './runGpuCounts';

export interface PlanExtras {
  profile?: ProfileFile;
}

export interface AsyncPlanExtras extends PlanExtras {
  cancel?: { readonly isCancellationRequested: boolean };
  onProgress?: (done: number, total: number) => void;
}

function clusterSummary(cluster: ClusterSpec) {
  return { name: cluster.name, gpus: cluster.gpus.length, nodes: cluster.nodes, gpuNames: [...new Set(cluster.gpus.map((g) => g.name))], source: cluster.source };
}

function baseline(c: Candidate | undefined, n: number, batch: number, why: string): BaselineResult {
  if (!c) return { gpus: n, feasible: false, reason: why, samplesPerSec: 0, stepTimeMs: 0, energyJPerSample: 0 };
  return {
    gpus: n,
    feasible: c.fits,
    ...(c.fits ? {} : { reason: c.reason }),
    samplesPerSec: c.fits ? throughput(c, batch) : 0,
    stepTimeMs: c.summary.stepTimeMs,
    energyJPerSample: c.summary.energyJPerSample,
  };
}

function throughput(c: Candidate, batch: number): number {
  return spsOf(batch, c.summary.stepTimeMs);
}

function* planSteps(model: AnalyzedModel, cluster: ClusterSpec, options: PlanOptions, extras: PlanExtras): Generator<[number, number] | void, PlanOutcome, void> {
  const planned = withPlannedOptimizer(model, withCodePrecision(model, withCodeBatch(model, cluster.gpus.length, options)));
  const searched = yield* withUnshardedAccumulationNotes(yield* searchSteps(model, cluster, planned, extras), planned, (o) => searchSteps(model, cluster, o, extras));
  return withCodeMicroBatchNote(model, planned, withAdvice(model, searched));
}

function* searchSteps(model: AnalyzedModel, cluster: ClusterSpec, options: PlanOptions, extras: PlanExtras): Generator<[number, number] | void, PlanOutcome, void> {
  const started = Date.now();
  const diagnostics: PlanDiagnostic[] = [];
  const topo = new Topology(cluster);
  const batch = options.batch;
  const clusterInfo = clusterSummary(cluster);
  const incomplete = incompleteInfo(model);
  if (incomplete) diagnostics.push({ severity: 'warning', message: `${model.name} is ${incomplete.summary}; the plan covers only the layers WAP could read` });
  // A line is the planned file's: a caveat from an imported module says its file in the message instead.
  for (const d of planCaveats(model.diagnostics)) diagnostics.push({ severity: d.severity, message: d.file ? `${d.file}:${d.line}: ${d.message}` : d.message, ...(d.file ? {} : { line: d.line }) });
  const sequence = model.sequence ? { tokens: model.sequence.length, source: model.sequence.source } : undefined;
  const base: ReportBase = { model: model.name, options, cluster: clusterInfo, diagnostics, ...(incomplete ? { incomplete } : {}), ...(sequence ? { sequence } : {}) };
  const fail = (reason: string, scaling: ScalingPoint[] = []): InfeasiblePlan => infeasible(base, reason, scaling);
  if (!(Number.isInteger(batch) && batch >= 1)) return fail(`batch must be a positive integer (got ${batch})`);
  if (model.layers.length === 0) return fail(`model '${model.name}' has no layers to plan`);
  let N = Math.min(topo.size, options.maxGpus ?? Infinity);
  if (options.gpus !== undefined) {
    if (!(Number.isInteger(options.gpus) && options.gpus >= 1)) return fail(`gpus must be a positive integer (got ${options.gpus})`);
    if (options.gpus > topo.size) return fail(`--gpus ${options.gpus} asks for more GPUs than cluster '${cluster.name}' has (${topo.size})`);
    N = Math.max(N, options.gpus);
  }
  if (!(N >= 1)) return fail('maxGpus must be at least 1');
  const countsLine = runGpuCountsLine(model.processCountRules, N);
  if (countsLine) diagnostics.push({ severity: 'info', message: countsLine });

  let profile: ProfileCosts | undefined;
  if (extras.profile) {
    const problem = profileProblem(extras.profile);
    if (problem) diagnostics.push({ severity: 'warning', message: `profile ignored: ${problem}` });
    else {
      profile = new ProfileCosts(extras.profile);
      const names = new Set(extras.profile.devices.map((d) => d.name));
      const target = topo.gpus[0].name;
      if (![...names].some((n) => n.includes(target) || target.includes(n))) {
        diagnostics.push({ severity: 'warning', message: `profile was measured on ${[...names].join(', ') || 'an unknown device'}, not ${target}: measured times are used as they are` });
      }
    }
  }
  if (model.sequence?.assumed) diagnostics.push({ severity: 'info', message: `${model.sequence.length} tokens per sample is assumed (${model.sequence.source.replace(/^assumed: /, '')}); pass --seq-len to set it` });
  else if (model.inputAssumed) diagnostics.push({ severity: 'info', message: `input shape ${model.input.join('×')} is assumed; pass --input to set it` });
  const pinProblem = badPin(options);
  if (pinProblem) return fail(pinProblem);
  if (options.pins?.recompute === 'selective' && !hasAttentionScores(model, options.attentionKernel)) {
    const why = model.layers.some((l) => attentionKernelOf(l) !== undefined) ? 'the fused attention kernel keeps no attention scores (FlashAttention rebuilds them in its backward)' : 'the model has no attention scores';
    diagnostics.push({ severity: 'info', message: `selective recompute drops nothing here: ${why}; it plans as no recompute` });
  }
  let precision: PrecisionChoice;
  try {
    precision = choosePrecisionFor(topo.gpus.slice(0, N), options.precision, options.precisionSource);
    if (!options.precision && options.precisionUnsettled) precision = { ...precision, reason: `${precision.reason}; ${options.precisionUnsettled}` };
    // Every GPU the plan may use needs a peak for it; a defaulted one is said, with its source, as is a GEMM ceiling below the usual.
    const said = new Set<string>();
    for (const g of topo.gpus.slice(0, N)) {
      const peak = peakTflops(g, precision.precision);
      if (peak.defaultedFrom && !said.has(peak.defaultedFrom)) {
        said.add(peak.defaultedFrom);
        diagnostics.push({ severity: 'info', message: peak.defaultedFrom });
      }
      const ceiling = gemmCeilingNote(g, precision.precision);
      if (ceiling && !said.has(ceiling)) {
        said.add(ceiling);
        diagnostics.push({ severity: 'info', message: ceiling });
      }
    }
  } catch (e) {
    // A precision the training code or its config chose names where it came from: that is what to change.
    if (e instanceof PrecisionError) return fail(options.precision && options.precisionSource ? `${e.message} (${options.precision} is from ${options.precisionSource})` : e.message);
    throw e;
  }
  if (model.totals.params > 0) diagnostics.push({ severity: 'info', message: optimizerLine(model, options) });
  const frozen = frozenParametersLine(model);
  if (frozen) diagnostics.push({ severity: 'info', message: frozen });
  if (options.pins?.recompute && options.recomputeFromCode) {
    diagnostics.push({ severity: 'info', message: `recompute ${options.pins.recompute}: the code switches gradient checkpointing on (${options.recomputeSource}), so the plan keeps it; --recompute auto (the wap.recompute setting: auto) lets WAP choose` });
  }
  if (options.attentionSource && options.attentionKernel) {
    const how = options.attentionKernel === 'unfused' ? 'eager attention: the scores and probabilities of every head go through memory, and the probabilities are kept for the backward' : 'a fused attention kernel: no score matrix in memory';
    diagnostics.push({ severity: 'info', message: `attention ${options.attentionKernel}: the code asks transformers for it (${options.attentionSource}), so the plan prices ${how}; --attention fused|unfused overrides` });
  }
  if (options.gradientReduceInFp32) {
    diagnostics.push({ severity: 'info', message: `sharded gradients reduce-scattered in fp32 (${options.gradientReduceSource ?? 'the plan options'}): 4 bytes a parameter through each reduce-scatter, whatever the training precision` });
  }
  if (options.expertsKernel) {
    // The framework's experts kernel, not the one the model's code would run (expertsKernelOverride.ts).
    const grouped = options.expertsKernel === 'grouped';
    const line = expertsKernelLine(model, grouped, options.expertsKernelSource ?? 'the plan options');
    model = withExpertsKernel(model, grouped);
    if (line) diagnostics.push({ severity: 'info', message: line });
  }
  for (const d of model.diagnostics) if (d.carriesToPlan) diagnostics.push({ severity: d.severity === 'error' ? 'warning' : d.severity, message: d.message });
  const layout = memoryFormatLine(model, options, precision.precision);
  if (layout) diagnostics.push({ severity: 'info', message: layout });
  const amp = chooseAmpStyle(precision.precision, options.ampStyle, options.ampStyleSource);
  if (amp) precision = { ...precision, amp };
  if (amp?.style === 'autocast') {
    // Autocast decides each op's dtype, not the plan: the searches price the model as autocast runs it.
    const cast = autocastModel(model, precision.precision === 'fp16' ? 'fp16' : 'bf16');
    model = cast.model;
    diagnostics.push({ severity: 'info', message: `autocast: ${cast.fp32Layers} layers run in fp32 (norms, softmax, embeddings, and the ops their fp32 outputs promote), and ${cast.insertedCasts} casts convert inputs for the ops autocast runs in ${precision.precision}` });
  }
  // Structure decides the search: a stack of repeated transformer blocks gets the DP×TP×PP×CP search, the rest the per-layer one.
  const structure = repeatedTransformer(model);
  const clusterWhy = structure ? clusterProblem(cluster) : undefined;
  if (structure && clusterWhy) diagnostics.push({ severity: 'info', message: `the block-stack search needs identical GPUs in equal nodes (${clusterWhy}); the per-layer search plans this model` });
  if (structure && !clusterWhy) {
    if (extras.profile) diagnostics.push({ severity: 'warning', message: 'the block-stack search costs layers analytically; the measured profile is not used for this model' });
    const outcome = yield* plan3dSteps({ model, structure, cluster, options: { ...options, maxGpus: N, precision: precision.precision, precisionSource: precision.reason }, diagnostics, clusterInfo, started });
    // Either search's report says when the model it planned is known to be incomplete.
    return { ...outcome, ...(incomplete ? { incomplete } : {}), ...(sequence ? { sequence } : {}) };
  }
  // Degree pins belong to the DP×TP×PP×CP search, which plans only stacks of repeated transformer blocks: say so rather than ignore them silently.
  for (const [pin, value] of Object.entries(options.pins ?? {})) {
    // A model-parallel degree pinned off (TP 1, no sequence parallel: what a DDP or Lightning config states) is what
    // this search does anyway; a data-parallel pin is not.
    if (HONOURED_PINS.has(pin) || (pin !== 'dataParallel' && (value === 1 || value === false))) continue;
    diagnostics.push({ severity: 'warning', message: `pin ${pin}=${value} is not honoured by the per-layer search (only models made of repeated transformer blocks get the DP×TP×PP×CP search); the plan ignores it` });
  }
  const baseSetup: TableSetup = { ...defaultSetup(options.optimizer), precision: precision.precision, ...(amp ? { ampStyle: amp.style } : {}), ...(options.forwardGatherStages ? { forwardGatherStages: options.forwardGatherStages } : {}), ...(options.serialSyncStages ? { serialSyncStages: options.serialSyncStages } : {}), ...(options.unshardedAccumulationStages ? { unshardedAccumulationStages: options.unshardedAccumulationStages } : {}), ...(options.allReduceEachMicroStepStages ? { allReduceEachMicroStepStages: options.allReduceEachMicroStepStages } : {}), ...(options.gradientReduceInFp32 ? { gradientReduceInFp32: true } : {}) };
  for (const l of model.layers) {
    if (!l.outputShape) diagnostics.push({ severity: 'warning', message: `layer '${l.name}' has no inferred shape; it is costed as free`, layer: l.name, line: l.range.line });
  }

  const tf32 = tf32Convolutions(model, precision.precision, topo.gpus.slice(0, N));
  if (tf32.line) diagnostics.push({ severity: 'info', message: tf32.line });
  if (tf32.flopShare) precision = { ...precision, tf32FlopShare: tf32.flopShare };
  const ctx: EvalContext = { model, topo, options, tableOptions: { mode: options.strategies, optimizer: options.optimizer, profile, ...(options.attentionKernel ? { attention: options.attentionKernel } : {}), ...(options.memoryFormat ? { memoryFormat: options.memoryFormat } : {}), ...(tf32.on ? { tf32Convolutions: true } : {}) }, searchBudgetMs: 300, baseSetup };
  const samplesPerSec = (c: Candidate): number => throughput(c, batch);
  const results: CountResult[] = [];
  let evaluated = 0;
  for (let n = 1; n <= N; n++) {
    const refused = refusedCount(model.processCountRules, n);
    const r: CountResult = refused ? { n, reason: refused, evaluated: 0 } : yield* evaluateCountSteps(ctx, n, n === N);
    evaluated += r.evaluated;
    results.push(r);
    yield [n, N];
  }
  const scaling: ScalingPoint[] = results.map((r) => {
    const ok = r.best && r.best.fits;
    return {
      gpus: r.n,
      feasible: !!ok,
      ...(ok ? {} : { reason: r.reason ?? `no plan on ${r.n} GPUs` }),
      ...(refusedCount(model.processCountRules, r.n) ? { refusedByScript: true as const } : {}),
      samplesPerSec: ok ? samplesPerSec(r.best!) : 0,
      stepTimeMs: r.best ? r.best.summary.stepTimeMs : 0,
      energyJPerSample: r.best ? r.best.summary.energyJPerSample : 0,
      ...(r.best ? { summary: summaryOf(r.best) } : {}),
    };
  });
  const feasible = results.filter((r) => r.best?.fits);
  let chosen: CountResult | undefined;
  if (options.gpus !== undefined) {
    chosen = results[options.gpus - 1];
    if (!chosen.best?.fits) return fail(chosen.reason ?? `no plan fits on ${options.gpus} GPUs`, scaling);
  } else if (feasible.length === 0) {
    const last = results[results.length - 1];
    return fail(last.reason ?? `nothing fits on up to ${N} GPUs`, scaling);
  } else chosen = chooseByObjective(feasible, (r) => samplesPerSec(r.best!), options);
  const c = chosen!.best!;
  const setup = withCollectiveTimings(trainingSetup(c, model, topo, batch, precision, chosen!.fitsThrough), options);
  if (chosen!.fasterThanFirst) diagnostics.push({ severity: 'info', message: chosen!.fasterThanFirst });
  fitDiagnostics(setup, diagnostics, { gpu: topo.slowest(range(0, c.n)), share: topo.hostShare(range(0, c.n)) }, hostCopyCost(c));
  // A DDP loop all-reducing every micro-step: what no_sync() would save, the same choice re-simulated syncing once.
  const noSync = c.tables && c.choice && !c.pipeline ? noSyncSavingNote(setup, c.summary.stepTimeMs, () => syncOnceStepMs(c.tables!, c.choice!)) : undefined;
  if (noSync) diagnostics.push(noSync);
  const uneven = c.pipeline ? undefined : unevenSplitNote(batch, setup.dataParallel);
  if (uneven) diagnostics.push({ severity: 'info', message: uneven });
  const mixed = mixedGpuNote(topo.gpus.slice(0, c.n));
  if (mixed) diagnostics.push({ severity: 'info', message: mixed });
  const last = results[results.length - 1];
  // The baselines on all N GPUs are runs the script may refuse too.
  const lastRefused = refusedCount(model.processCountRules, N);
  if (results[0].best && !results[0].best.fits) diagnostics.push({ severity: 'info', message: `the model does not fit on one GPU: ${results[0].best.reason}` });
  const layers = layerPlans(c, topo, options.strategies);
  const timeline = toTimeline(yield* c.replaySteps());
  const costSources: Record<string, number> = {};
  for (const l of layers) costSources[l.costSource.kind] = (costSources[l.costSource.kind] ?? 0) + 1;
  return feasibleReport(base, {
    plan: {
      gpus: c.n,
      stepTimeMs: c.summary.stepTimeMs,
      samplesPerSec: samplesPerSec(c),
      energyJPerSample: c.summary.energyJPerSample,
      // The per-layer searches compare memory against what is usable besides the CUDA context; the plan reports what
      // the GPU holds (as the block-stack search and the breakdown's total do, and as nvidia-smi would show).
      memoryPerGpuBytes: c.memoryPerGpu.map((m) => m + CONTEXT_BYTES),
      layers,
      setup,
      ...(c.pipeline
        ? { pipeline: { stages: c.pipeline.stages.length, microBatches: c.pipeline.microBatches, schedule: c.pipeline.schedule, bubbleFraction: bubbleFraction(c.pipeline.stages.length, 1, c.pipeline.microBatches), layersPerStage: c.pipeline.stages.map((st) => st.layers.length) } }
        : {}),
    },
    baselines: {
      singleGpu: baseline(results[0].dp, 1, batch, 'no single-GPU data-parallel plan'),
      dataParallel: baseline(last.dp, N, batch, lastRefused ?? `pure data parallelism is impossible on ${N} GPUs at batch ${batch}`),
      owt: baseline(last.owt, N, batch, lastRefused ?? 'no OWT plan'),
    },
    scaling,
    timeline,
    search: {
      method: chosen!.search?.method ?? 'chain-dp',
      exact: chosen!.search ? chosen!.search.exact : true,
      ...(chosen!.search?.bound ? { bound: chosen!.search.bound } : {}),
      configurationsEvaluated: evaluated,
      elapsedMs: Date.now() - started,
    },
    costSources,
  });
}

/** Under parameter offload, the PCIe copies a step makes (every pass's weights up, the gradients down), for the warning. */
function hostCopyCost(c: Candidate): string | undefined {
  if (!c.setup.paramOffload || !c.tables || !c.choice) return undefined;
  let ms = 0;
  for (let i = 0; i < c.tables.layers.length; i++) {
    const o = c.tables.options[i][c.choice[i]];
    ms += 2 * o.hostUploadMs + o.hostDownloadMs;
  }
  return `${ms.toFixed(1)} ms of PCIe copies per step, partly hidden behind compute`;
}

/** Pins this planner honours itself (the rest are the DP×TP×PP×CP search's). */
const HONOURED_PINS = new Set(['zeroStage', 'hybridShard', 'recompute', 'microBatch', 'cpuOffload', 'paramOffload']);

/** Pins that cannot hold whatever the search does: an infeasible result naming the pin. */
function badPin(options: PlanOptions): string | undefined {
  const p = options.pins ?? {};
  if (p.zeroStage !== undefined && ![0, 1, 2, 3].includes(p.zeroStage)) return `pin zeroStage=${p.zeroStage}: ZeRO stages are 0, 1, 2 and 3`;
  if (p.recompute !== undefined && !['none', 'selective', 'full'].includes(p.recompute)) return `pin recompute=${p.recompute}: use none, selective or full`;
  if (p.microBatch !== undefined && !(Number.isInteger(p.microBatch) && p.microBatch >= 1)) return `pin microBatch=${p.microBatch}: a micro-batch is a positive whole number of samples`;
  if (p.paramOffload && (p.pipelineStages ?? 1) > 1) return `pins paramOffload=true and pipelineStages=${p.pipelineStages}: parameter offload runs without a pipeline (DeepSpeed's offload_param needs ZeRO-3, which its pipeline engine refuses)`;
  if (p.paramOffload && p.cpuOffload === false) return 'pins paramOffload=true and cpuOffload=false: parameter offload steps the optimizer on the CPU, so its state is offloaded too';
  if (p.microBatch !== undefined && p.microBatch > options.batch) return `pin microBatch=${p.microBatch} is larger than the batch of ${options.batch}`;
  return undefined;
}

export function planModel(model: AnalyzedModel, cluster: ClusterSpec, options: PlanOptions, extras: PlanExtras = {}): PlanOutcome {
  const it = planSteps(model, cluster, options, extras);
  for (;;) {
    const r = it.next();
    if (r.done) return r.value;
  }
}

function cancelled(): Error {
  const e = new Error('planning cancelled');
  e.name = 'Cancelled';
  return e;
}

/** Work between two turns of the event loop: short enough that a cancel lands within ~100 ms. */
const SLICE_MS = 20;

export async function planModelAsync(model: AnalyzedModel, cluster: ClusterSpec, options: PlanOptions, extras: AsyncPlanExtras = {}): Promise<PlanOutcome> {
  const it = planSteps(model, cluster, options, extras);
  let sliceStart = Date.now();
  for (;;) {
    if (extras.cancel?.isCancellationRequested) throw cancelled();
    const r = it.next();
    if (r.done) return r.value;
    if (r.value) extras.onProgress?.(r.value[0], r.value[1]);
    else if (Date.now() - sliceStart < SLICE_MS) continue;
    await new Promise<void>((resolve) => setImmediate(resolve));
    sliceStart = Date.now();
  }
}

/** The model's completeness as the plan report carries it; undefined for a model read in full. */
function incompleteInfo(model: AnalyzedModel): IncompleteModelInfo | undefined {
  const c = model.completeness;
  const summary = describeIncomplete(c);
  if (!c || !summary) return undefined;
  return { summary, opaqueLayers: c.opaqueLayers, unshapedLayers: c.unshapedLayers, reasons: c.reasons };
}
