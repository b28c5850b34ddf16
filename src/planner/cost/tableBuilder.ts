/**
 * Builds the cost tables (tables.ts) for one device group and batch: each
 * layer's configurations costed for compute, model- and data-parallel
 * communication, ZeRO sharding, offload, recompute and memory. Separate from
 * tables.ts so the tables' readers do not pull in the costing code; the
 * per-model part is modelStatic.ts and the edge costs edgeCosts.ts.
 */
import { autocastCastsWeights } from '../../core/autocast';
import type { AnalyzedLayer, AnalyzedModel } from '../../core/ir';
import { samplesRun } from '../../core/oncePerForward';
import type { CostSource } from '../../protocol/plan';
import { analyticalTimes, dequantizeMs, hostUpdateMs, inputBytesPerSample, updateMs } from './compute';
import { computeShare, inputLayout, layerConfigs, outputLayout, paramShare, type LayerConfig, type Layout } from './configs';
import { buildEdgeCosts } from './edgeCosts';
import { frozenHeldBytes, frozenWeightBytes, keptActivations, modelStateBytes, offloadedHostBytes, optimizerStateBytes, precisionBytes, recomputePlan, savedBytesAtPrecision, savedUnderKernel, shardCount } from '../memory/index';
import { modelStatic, safeBytes } from './modelStatic';
import { overlapExtraMs } from './overlap';
import { accumulatesUnsharded, allReducesEachMicroStep, gathersInForward } from '../collectiveTiming';
import { allGatherMs, hostCopyMs, reduceScatterMs } from './shardedCollectives';
import { DEFAULT_HOST_BANDWIDTH_GBS, defaultSetup, type CostTables, type NodeOption, type ShardGroup, type TableOptions, type TableSetup } from './tables';
import { allReduceMs, range, type GroupLink, type Topology } from './topology';

/** An option's compute side: what the ZeRO stage, HSDP and offload leave unchanged. */
type ComputedOption = Pick<NodeOption, 'config' | 'inLayout' | 'outLayout' | 'forwardMs' | 'backwardMs' | 'mpForwardMs' | 'mpBackwardMs' | 'recomputeMs' | 'recomputedBytes'>;

/**
 * One option from its two sides, as a literal: every option then has one shape, where spreading the two objects
 * made a slow one per option (three quarters of a table's build time in a profile).
 */
function withStateCosts(c: ComputedOption, s: Omit<NodeOption, keyof ComputedOption>): NodeOption {
  return {
    config: c.config,
    inLayout: c.inLayout,
    outLayout: c.outLayout,
    forwardMs: c.forwardMs,
    backwardMs: c.backwardMs,
    mpForwardMs: c.mpForwardMs,
    mpBackwardMs: c.mpBackwardMs,
    allreduceBytes: s.allreduceBytes,
    allreduceMs: s.allreduceMs,
    updateMs: s.updateMs,
    gatherBytes: s.gatherBytes,
    gatherMs: s.gatherMs,
    stepGatherBytes: s.stepGatherBytes,
    stepGatherMs: s.stepGatherMs,
    hostUploadMs: s.hostUploadMs,
    hostDownloadMs: s.hostDownloadMs,
    hostBytes: s.hostBytes,
    recomputeMs: c.recomputeMs,
    recomputedBytes: c.recomputedBytes,
    memory: s.memory,
    memoryBytes: s.memoryBytes,
    timeMs: s.timeMs,
  };
}

/** Shared by every analytical layer of every table; the report copies it per layer. */
const ANALYTICAL: CostSource = { kind: 'analytical' };

export function buildCostTables(model: AnalyzedModel, topo: Topology, devices: number[], batch: number, opts: TableOptions): CostTables {
  const n = devices.length;
  const layers = model.layers;
  const dtype = model.dtypeBytes || 4;
  const gpu = topo.slowest(devices);
  const link = topo.link(devices);
  const copies = opts.activationCopies ?? 1;
  const setup = opts.setup ?? defaultSetup(opts.optimizer);
  // The update kernel's state traffic; priced at fp32 width for full-width optimizers, whatever the precision.
  const stateBytes = optimizerStateBytes(setup.optimizer, 4);
  const bytes = precisionBytes(setup.precision, setup.ampStyle);
  // The catalogue counts activations at the model's dtype; the setup's precision rescales them.
  const actScale = bytes.activation / dtype;
  const A = Math.max(1, setup.microSteps);
  // FSDP's no_sync (setup.unshardedAccumulationStages): the micro-steps before the last keep full gradients, unreduced.
  const unshardedAccumulation = accumulatesUnsharded(setup.unshardedAccumulationStages, setup.zeroStage, A);
  const stateSetup = unshardedAccumulation ? { ...setup, unshardedGradients: true } : setup;
  // DDP without no_sync (setup.allReduceEachMicroStepStages): every micro-step's backward all-reduces the gradients.
  const allReduceEach = allReducesEachMicroStep(setup.allReduceEachMicroStepStages, setup.zeroStage, A);
  const recompute = setup.recompute !== 'none' ? recomputePlan(model) : undefined;
  const hostGBs = gpu.hostBandwidthGBs ?? DEFAULT_HOST_BANDWIDTH_GBS;
  const hostShare = topo.hostShare(devices);
  // What parameter offload's weights would take on the GPU (their host share), made once rather than per option.
  const setupOnGpu = { ...setup, paramOffload: false };

  // Numeric keys: these run for every option of every layer and count, where template strings showed in profiles.
  const groupLinks = new Map<number, GroupLink>();
  const groupLink = (kind: 'data' | 'model', c: LayerConfig): GroupLink => {
    const key = (c.d * (n + 1) + c.k) * 2 + (kind === 'data' ? 1 : 0);
    let best = groupLinks.get(key);
    if (best) return best;
    const groups = kind === 'data' ? range(0, c.k).map((ki) => range(ki, c.d, c.k)) : range(0, c.d).map((di) => range(di * c.k, c.k));
    for (const g of groups) {
      const l = topo.link(g.map((i) => devices[i]));
      if (!best || l.bytesPerMs < best.bytesPerMs) best = l;
    }
    groupLinks.set(key, best!);
    return best!;
  };

  const layouts: Layout[] = [];
  const layoutIndex = new Map<number, number>();
  const layoutOf = (l: Layout): number => {
    const key = (l.d * (n + 1) + l.k) * 2 + (l.sharded ? 1 : 0);
    let i = layoutIndex.get(key);
    if (i === undefined) {
      i = layouts.length;
      layouts.push(l);
      layoutIndex.set(key, i);
    }
    return i;
  };

  const shardGroups = new Map<number, ShardGroup>();
  const shardGroup = (c: LayerConfig): ShardGroup => {
    const key = c.d * (n + 1) + c.k;
    let g = shardGroups.get(key);
    if (g) return g;
    const data = range(0, c.d, c.k).map((i) => devices[i]);
    const node = topo.gpus[data[0]].node;
    const local = data.filter((d) => topo.gpus[d].node === node);
    const shards = shardCount(c.d, local.length, setup.hybridShard);
    const dataLink = groupLink('data', c);
    g = setup.hybridShard && shards < c.d
      ? { shards, shardLink: topo.link(local.slice(0, shards)), replicas: c.d / shards, replicaLink: dataLink }
      : { shards: c.d, shardLink: dataLink, replicas: 1, replicaLink: dataLink };
    shardGroups.set(key, g);
    return g;
  };

  const reused = opts.sameComputeAs;
  if (reused && sameCompute(reused, model, topo, devices, batch, opts)) {
    // Repeated layers share one options array: re-price each array once, keeping the sharing.
    const repriced = new Map<NodeOption[], NodeOption[]>();
    const options = reused.options.map((layerOptions, li) => {
      let out = repriced.get(layerOptions);
      if (!out) repriced.set(layerOptions, (out = layerOptions.map((o) => withStateCosts(o, stateCosts(layers[li], o, o.memory.activations)))));
      return out;
    });
    return { ...reused, options, setup, shardGroup, builtFrom: reused.builtFrom };
  }

  const shared = modelStatic(model, batch);
  const { inEdges, outEdges, hasProducer, layerKey } = shared;
  let edges = actScale === 1 ? shared.edges : shared.scaledEdges.get(actScale);
  if (!edges) shared.scaledEdges.set(actScale, (edges = shared.edges.map((e) => ({ ...e, bytes: e.bytes * actScale }))));

  const sources: CostSource[] = [];
  // Repeated blocks (ResNet stages, transformer layers) have identical layers: cost them once.
  const memo: Array<NodeOption[] | undefined> = [];
  const [lo, hi] = opts.layerRange ?? [0, layers.length];
  const options = layers.map((layer, li): NodeOption[] => {
    if (li < lo || li >= hi) {
      sources.push(ANALYTICAL);
      return [];
    }
    const measured = opts.profile?.lookup(layer, dtype);
    sources.push(measured?.source ?? ANALYTICAL);
    // Under full recompute identical layers differ by their place in a segment (first: keeps its input; inside; outside).
    const place = recompute && setup.recompute === 'full' ? (recompute.segmentOf[li] < 0 ? 0 : recompute.segmentStart[li] ? 1 : 2) : 0;
    const key = measured || opts.configsFor ? -1 : layerKey[li] * 3 + place;
    const hit = key >= 0 ? memo[key] : undefined;
    if (hit) return hit;
    const made = costLayer(layer, li, measured);
    if (key >= 0) memo[key] = made;
    return made;
  });

  function costLayer(layer: AnalyzedLayer, li: number, measured: ReturnType<NonNullable<TableOptions['profile']>['lookup']>): NodeOption[] {
    const w = layer.workload;
    let configs = opts.configsFor?.(layer, n) ?? layerConfigs(layer, n, opts.mode, model.layout);
    configs = configs.filter((c) => c.d <= batch);
    if (configs.length === 0) configs = [{ d: 1, k: n, split: n === 1 ? 'none' : 'rep' }];
    const inBytes = inputBytesPerSample(layer, bytes.activation);
    const kept = keptActivations(layer, li, setup.recompute, recompute ?? recomputePlan(model), dtype, inputBytesPerSample(layer, dtype), opts.attention);
    const savedWithoutRecompute = savedUnderKernel(layer, opts.attention, dtype);
    return configs.map((c) => {
      // Gradient accumulation: A micro-steps of batch/(d·A) samples each per iteration. A batch that does not split
      // evenly over d replicas (128 over 5) is as slow as its largest share: ⌈128/5⌉ = 26 samples, not 25.6.
      const samples = Math.ceil(Math.ceil(batch / c.d) / A);
      const share = computeShare(c);
      const pShare = paramShare(c);
      let t;
      if (measured) {
        // A profile times the layer at each batch it measured; work done once per forward runs as at one sample (core/oncePerForward.ts).
        const m = measured.at(samplesRun(layer, samples));
        // A trial times the layer trained; frozen, its backward is none or the input gradient alone.
        const kept = w.backward === 'none' ? 0 : w.backward === 'input-gradient' ? (w.inputGradientShare ?? 1) : 1;
        // A trial runs the layer unquantized (the worker loads no bitsandbytes): the dequantization is added as estimated.
        const dequant = dequantizeMs(w, pShare, bytes.activation, gpu) * A;
        t = { forwardMs: m.forwardMs * share * A + dequant, backwardMs: m.backwardMs * share * A * kept + (kept > 0 ? dequant : 0) };
      } else {
        const one = analyticalTimes(layer, gpu, samples, share, pShare, bytes.activation, setup.precision, { attention: opts.attention, memoryFormat: opts.memoryFormat ?? model.layout, autocast: setup.ampStyle === 'autocast', tf32Convolutions: opts.tf32Convolutions });
        t = { forwardMs: one.forwardMs * A, backwardMs: one.backwardMs * A };
      }
      let mpF = 0;
      let mpB = 0;
      const runs = samplesRun(layer, samples);
      if (c.k > 1) {
        const ml = groupLink('model', c);
        const outAR = A * allReduceMs(runs * safeBytes(w.activationBytes) * actScale, c.k, ml);
        const inAR = hasProducer[li] ? A * allReduceMs(runs * inBytes, c.k, ml) : 0;
        if (c.split === 'out') mpB = inAR;
        else if (c.split === 'in') mpF = outAR;
        else if (c.split === 'heads') {
          mpF = outAR;
          mpB = inAR;
        }
      }
      const actShare = c.split === 'shard' || c.split === 'in' ? 1 / c.k : 1;
      // Float activations follow the precision; int64 indices and bool masks keep their size.
      const keptBytes = savedBytesAtPrecision(kept.savedBytesPerSample, kept.fixedBytesPerSample, actScale);
      // Work done once per forward (core/oncePerForward.ts) keeps one forward's tensors, whatever the micro-batch.
      const activations = keptBytes * runs * actShare * copies;
      const savedBytes = savedBytesAtPrecision(savedWithoutRecompute.saved, savedWithoutRecompute.fixed, actScale);
      const recomputedBytes = kept.recomputeFraction > 0 ? Math.max(0, savedBytes - keptBytes) * runs * actShare : 0;
      const recomputeMs = kept.recomputeFraction * (t.forwardMs + mpF);
      const computed: ComputedOption = {
        config: c,
        inLayout: layoutOf(inputLayout(c)),
        outLayout: layoutOf(outputLayout(c)),
        forwardMs: t.forwardMs,
        backwardMs: t.backwardMs,
        mpForwardMs: mpF,
        mpBackwardMs: mpB,
        recomputeMs,
        recomputedBytes,
      };
      return withStateCosts(computed, stateCosts(layer, computed, activations));
    });
  }

  /**
   * What the setup's ZeRO stage, HSDP and offload make of one option whose compute is costed: gradient sync,
   * weight gathers, host copies, the optimizer update and the model state held. Kept apart from the compute so that
   * a table differing only in these (the ladder's ZeRO stages at one accumulation and recompute) re-prices them alone.
   */
  function stateCosts(layer: AnalyzedLayer, o: ComputedOption, activations: number): Omit<NodeOption, keyof ComputedOption> {
    const c = o.config;
    const w = layer.workload;
    const pShare = paramShare(c);
    const paramsHere = safeBytes(w.params) * pShare;
    const sg = c.d > 1 ? shardGroup(c) : undefined;
    const zero = sg ? setup.zeroStage : 0;
    // FSDP's reduce_dtype=float32 reduce-scatters sharded gradients at 4 bytes whatever their own dtype.
    const arBytes = paramsHere * (zero >= 1 && setup.gradientReduceInFp32 ? 4 : bytes.gradient);
    // ZeRO-2/3 keep only their gradient shard, so every micro-step reduces; DP and ZeRO-1 accumulate locally and sync
    // once, as ZeRO-2/3 do under FSDP's no_sync, holding the full gradients until then (stateSetup).
    const syncs = zero >= 2 && !unshardedAccumulation ? A : 1;
    let arMs = 0;
    let gatherBytes = 0;
    let gatherMs = 0;
    // Frozen parameters hold weights only; ZeRO-3 shards and gathers them with the rest.
    const frozenHere = safeBytes(w.frozenParams ?? 0) * pShare;
    const quantizedHere = w.quantized ? { params: w.quantized.params * pShare, bytes: w.quantized.bytes * pShare } : undefined;
    const unitBytes = paramsHere * bytes.weight + frozenHeldBytes(frozenHere, bytes.weight, quantizedHere);
    let stepGatherBytes = 0;
    let stepGatherMs = 0;
    if (sg && zero >= 1) {
      // Every sharded stage reduce-scatters gradients to their owners (HSDP: then all-reduces each shard across the replicas).
      arMs = syncs * (reduceScatterMs(arBytes, sg.shards, sg.shardLink) + allReduceMs(arBytes / sg.shards, sg.replicas, sg.replicaLink));
      if (zero === 3) {
        gatherBytes = unitBytes;
        gatherMs = A * allGatherMs(gatherBytes, sg.shards, sg.shardLink);
      } else {
        // ZeRO-1/2 keep whole weights: each owner's updated slice is all-gathered once per iteration (frozen weights
        // never change, so only the trained ones), after the step or behind the next forward (setup.forwardGatherStages).
        stepGatherBytes = paramsHere * bytes.weight;
        stepGatherMs = allGatherMs(stepGatherBytes, sg.shards, sg.shardLink);
      }
    } else if (sg) {
      arMs = syncs * allReduceMs(arBytes, c.d, groupLink('data', c));
    }
    // DDP without no_sync: the micro-steps before the last all-reduce too. Under ZeroRedundancyOptimizer (ZeRO-1) DDP
    // still all-reduces each backward; only the last micro-step's sync is the sharded one priced above.
    if (sg && allReduceEach) arMs += (A - 1) * allReduceMs(arBytes, c.d, groupLink('data', c));
    const optShards = sg && zero >= 1 ? sg.shards : 1;
    // Parameter offload: every pass fetches this GPU's weight shard from host memory (then all-gathers it under
    // ZeRO-3), and every micro-step sends its reduced gradient shard down, where the CPU optimizer steps it
    // (ZeRO-Infinity, Rajbhandari et al. SC 2021 §5; FSDP CPUOffload). The updated weights stay on the host.
    let hostUploadMs = 0;
    if (setup.paramOffload) {
      const weightShards = sg && zero === 3 ? sg.shards : 1;
      gatherBytes = unitBytes;
      hostUploadMs = A * hostCopyMs(unitBytes / weightShards, hostGBs);
    }
    // Any offload (ZeRO-Offload too) sends each micro-step's reduced gradient shard down as the backward makes it;
    // under no_sync only the last micro-step's, once reduced (FSDP1 no_sync: "only offloaded right after the eventual sync").
    const hostDownloadMs = setup.cpuOffload ? (zero >= 2 && unshardedAccumulation ? 1 : A) * hostCopyMs(arBytes / optShards, hostGBs) : 0;
    // Offload: the CPU steps the optimizer shard after the backward; optimizer-only offload then sends the updated
    // 16-bit weights up over PCIe (parameter offload fetches them in the next passes).
    const cpuStep = setup.cpuOffload ? (hostUpdateMs(paramsHere / optShards, stateBytes, gpu, hostShare) ?? 0) : 0;
    const upd = setup.paramOffload
      ? cpuStep
      : setup.cpuOffload
        ? hostCopyMs((paramsHere / optShards) * bytes.weight, hostGBs) + cpuStep
        : updateMs(paramsHere / optShards, stateBytes, gpu, 4);
    const castHere = autocastCastsWeights(layer.op) ? paramsHere : 0;
    const states = modelStateBytes(paramsHere, stateSetup, sg ? sg.shards : 1, castHere);
    const buffers = safeBytes(w.nonTrainable) * dtype * pShare;
    const frozenWeights = frozenWeightBytes(frozenHere, setup, sg ? sg.shards : 1, quantizedHere);
    const frozenOnGpu = setup.paramOffload ? frozenWeightBytes(frozenHere, setupOnGpu, sg ? sg.shards : 1, quantizedHere) : frozenWeights;
    const hostBytes = offloadedHostBytes(paramsHere, setup, sg ? sg.shards : 1, frozenOnGpu, castHere);
    const memory = { weights: states.weights + buffers + frozenWeights, gradients: states.gradients, optimizer: states.optimizer, activations };
    // Gathered in the next forward, the weights cost what the layer's first micro-step forward does not hide (cost/overlap.ts).
    const stepGatherCost = gathersInForward(setup.forwardGatherStages, zero) ? overlapExtraMs(stepGatherMs, o.forwardMs / A) : stepGatherMs;
    return {
      allreduceBytes: c.d > 1 ? arBytes : 0,
      allreduceMs: arMs,
      updateMs: upd,
      gatherBytes,
      gatherMs,
      stepGatherBytes,
      stepGatherMs,
      hostUploadMs,
      hostDownloadMs,
      hostBytes,
      memory,
      memoryBytes: memory.weights + memory.gradients + memory.optimizer + memory.activations,
      timeMs: o.forwardMs + o.backwardMs + o.mpForwardMs + o.mpBackwardMs + arMs + upd + stepGatherCost + 2 * (gatherMs + hostUploadMs) + hostDownloadMs + o.recomputeMs,
    };
  }

  const { pairFraction, pairSources, pairLink, edgeCost, edgeCostParts, edgeLayoutCost, inLayouts, outLayouts } = buildEdgeCosts(layouts, link, groupLink, edges, options);

  return {
    devices,
    n,
    batch,
    layers,
    options,
    sources,
    edges,
    inEdges,
    outEdges,
    hasProducer,
    layouts,
    pairFraction,
    pairSources,
    link,
    pairLink,
    edgeCost,
    edgeCostParts,
    edgeLayoutCost,
    inLayouts,
    outLayouts,
    dataGroupLink: (c) => groupLink('data', c),
    modelGroupLink: (c) => groupLink('model', c),
    setup,
    shardGroup,
    recompute,
    builtFrom: { topo, options: opts.sameComputeAs ? { ...opts, sameComputeAs: undefined } : opts },
  };
}

/** Setup fields the compute side of a table depends on; the rest (ZeRO stage, HSDP, offload, optimizer) it does not. */
const COMPUTE_SETUP_KEYS = ['precision', 'ampStyle', 'recompute', 'microSteps'] as const;

/** Setups with one key here can lend each other their tables' compute (TableOptions.sameComputeAs). */
export function computeKeyOf(setup: TableSetup): string {
  return COMPUTE_SETUP_KEYS.map((k) => setup[k] ?? '').join('|');
}

/** Whether `t` was costed from the same inputs as a table for `opts`, but for its setup's state-sharding fields. */
function sameCompute(t: CostTables, model: AnalyzedModel, topo: Topology, devices: number[], batch: number, opts: TableOptions): boolean {
  const was = t.builtFrom.options;
  if (t.layers !== model.layers || t.builtFrom.topo !== topo || t.batch !== batch || t.devices.length !== devices.length || t.devices.some((d, i) => d !== devices[i])) return false;
  if (opts.configsFor || was.configsFor || opts.layerRange || was.layerRange) return false;
  const keys = new Set([...Object.keys(was), ...Object.keys(opts)] as Array<keyof TableOptions>);
  for (const k of keys) if (k !== 'setup' && k !== 'sameComputeAs' && k !== 'optimizer' && was[k] !== opts[k]) return false;
  return computeKeyOf(was.setup ?? defaultSetup(was.optimizer)) === computeKeyOf(opts.setup ?? defaultSetup(opts.optimizer));
}
