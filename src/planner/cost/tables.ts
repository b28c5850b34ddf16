/**
 * Cost tables for one device group and batch: per layer, every configuration
 * with its compute, communication and memory; per edge, the layout-change
 * cost between any two configurations. The search sees only these numbers
 * (node cost + edge cost, additive as in OptCNN); the simulator reuses the
 * components to lay out a timeline.
 */
import { autocastCastsWeights } from '../../core/autocast';
import type { AnalyzedLayer, AnalyzedModel } from '../../core/ir';
import type { CostSource, OptimizerKind, StrategyMode } from '../../protocol/plan';
import { analyticalTimes, inputBytesPerSample, updateMs, type AttentionKernel } from './compute';
import { computeShare, inputLayout, layerConfigs, outputLayout, paramShare, type LayerConfig, type Layout } from './configs';
import { redistribution } from './layout';
import { keptActivations, modelStateBytes, optimizerStateCopies, precisionBytes, recomputePlan, savedBytesAtPrecision, savedUnderKernel, shardCount, type MemorySetup, type RecomputePlan } from '../memory/index';
import type { ProfileCosts } from './profileCosts';
import { allGatherMs, hostCopyMs, reduceScatterMs } from './shardedCollectives';
import { allReduceMs, range, type GroupLink, type Topology } from './topology';

/** The training setup a table is costed under: precision and memory savers, plus gradient accumulation. */
export interface TableSetup extends MemorySetup {
  /** Micro-steps per iteration (gradient accumulation); each runs batch/(d·microSteps) samples per GPU. */
  microSteps: number;
}

export function defaultSetup(optimizer: OptimizerKind): TableSetup {
  return { precision: 'fp32', optimizer, zeroStage: 0, hybridShard: false, recompute: 'none', cpuOffload: false, microSteps: 1 };
}

/**
 * PCIe 3.0 x16 achieved host↔GPU rate (≈ 80% of 15.75 GB/s, PCI Express Base Specification 3.0), for GPUs
 * whose spec gives no hostBandwidthGBs: the slowest bus such a GPU is likely on.
 */
export const DEFAULT_HOST_BANDWIDTH_GBS = 12;

/** How a data-parallel group shards ZeRO state: over `shards` GPUs on `shardLink`, replicated `replicas` times (HSDP). */
export interface ShardGroup {
  shards: number;
  shardLink: GroupLink;
  replicas: number;
  replicaLink: GroupLink;
}

export interface NodeOption {
  config: LayerConfig;
  inLayout: number;
  outLayout: number;
  forwardMs: number;
  backwardMs: number;
  /** Model-parallel collectives inside the layer (Megatron f/g, input-grad reduction). */
  mpForwardMs: number;
  mpBackwardMs: number;
  allreduceBytes: number;
  allreduceMs: number;
  updateMs: number;
  /** ZeRO-3: parameters all-gathered before the forward and again before the backward (bytes per pass, ms per iteration per pass). */
  gatherBytes: number;
  gatherMs: number;
  /** Forward work recomputed before the backward (activation recompute), ms per iteration. */
  recomputeMs: number;
  /** Activation bytes the recompute brings back to life while this layer's backward runs (one micro-batch). */
  recomputedBytes: number;
  /** Model-state and activation bytes per GPU; memoryBytes is their sum. */
  memory: { weights: number; gradients: number; optimizer: number; activations: number };
  memoryBytes: number;
  /** Surrogate cost the search minimises: everything above, serialised. */
  timeMs: number;
}

export interface PlanEdge {
  from: number;
  to: number;
  /** Whole-batch tensor bytes on this edge. */
  bytes: number;
}

export interface TableOptions {
  mode: StrategyMode;
  optimizer: OptimizerKind;
  profile?: ProfileCosts;
  /** Micro-batches whose activations are alive at once (pipelines); 1 otherwise. */
  activationCopies?: number;
  /** Cost only layers [from, to) (a pipeline stage); the others get no options and must not be read. */
  layerRange?: readonly [number, number];
  /** Force these configurations (baselines): return undefined to use the mode's list. */
  configsFor?: (layer: AnalyzedLayer, n: number) => LayerConfig[] | undefined;
  /** Precision and memory savers (default: fp32, nothing saved, no accumulation). */
  setup?: TableSetup;
  /** How attention runs (fused unless the plan says otherwise). */
  attention?: AttentionKernel;
  /** How conv activations are stored at run time (default: the model's layout, PyTorch NCHW, Keras NHWC). */
  memoryFormat?: 'channels_first' | 'channels_last';
}

export interface CostTables {
  devices: number[];
  n: number;
  batch: number;
  layers: AnalyzedLayer[];
  options: NodeOption[][];
  sources: CostSource[];
  edges: PlanEdge[];
  /** Edge indices into each layer / out of each layer. */
  inEdges: number[][];
  outEdges: number[][];
  /** True when a layer reads another layer's output (so input gradients are needed). */
  hasProducer: boolean[];
  layouts: Layout[];
  /** Per layout pair (a·L + b): forward + backward redistribution fraction and peer count. */
  pairFraction: Float64Array;
  pairSources: Float64Array;
  link: GroupLink;
  /**
   * Per layout pair (a·L + b): the link the redistribution runs on. A change
   * that keeps the batch split (same d, hence same k) stays inside each
   * contiguous model group, often one node, so it need not pay the
   * inter-node link the whole group spans.
   */
  pairLink: GroupLink[];
  edgeCost(edge: number, fromOption: number, toOption: number): number;
  /**
   * Layout-pair cost of moving this edge's tensor (L×L, a·L + b, 0 on the
   * diagonal); edgeCost(e, p, o) = edgeLayoutCost(e)[outLayouts[from][p]·L + inLayouts[to][o]].
   * Shared by edges of equal size, so the searches' inner loops read typed arrays only.
   */
  edgeLayoutCost(edge: number): Float64Array;
  /** Per layer, each option's input / output layout index. */
  inLayouts: Int32Array[];
  outLayouts: Int32Array[];
  /** The same cost split into the forward move of the tensor and the backward move of its gradient. */
  edgeCostParts(edge: number, fromOption: number, toOption: number): [number, number];
  dataGroupLink(c: LayerConfig): GroupLink;
  modelGroupLink(c: LayerConfig): GroupLink;
  /** The setup these costs assume. */
  setup: TableSetup;
  /** ZeRO sharding of a configuration's data-parallel group. */
  shardGroup(c: LayerConfig): ShardGroup;
  /** Full-recompute segments, when the setup recomputes. */
  recompute?: RecomputePlan;
}

function w0(layer: AnalyzedLayer): number[] {
  const w = layer.workload;
  return [w.params, w.nonTrainable, w.forwardFlops, w.backwardFlops, w.activationBytes, w.savedActivationBytes, w.weightGradBytes];
}

/** Layers without a computable shape still take part, at zero cost (a diagnostic says why elsewhere). */
function safeBytes(x: number | undefined): number {
  return Number.isFinite(x) && (x as number) > 0 ? (x as number) : 0;
}

/**
 * What a model's tables share for every GPU count and device group: the
 * edges, which layers have producers, and a key per layer that is equal for
 * identical layers (repeated blocks). Built once per model and batch instead
 * of once per count: the JSON keys were a third of the table-building time.
 */
interface ModelStatic {
  edges: PlanEdge[];
  inEdges: number[][];
  outEdges: number[][];
  hasProducer: boolean[];
  /** Identical layers share a key id; -1 never happens (every layer gets one). */
  layerKey: Int32Array;
  /** The edges with their bytes rescaled to a precision's activation size, by scale. */
  scaledEdges: Map<number, PlanEdge[]>;
}

const staticCache = new WeakMap<AnalyzedModel, Map<number, ModelStatic>>();

function modelStatic(model: AnalyzedModel, batch: number): ModelStatic {
  let byBatch = staticCache.get(model);
  if (!byBatch) staticCache.set(model, (byBatch = new Map()));
  const hit = byBatch.get(batch);
  if (hit) return hit;
  const layers = model.layers;
  const index = new Map(layers.map((l, i) => [l.id, i]));
  const edges: PlanEdge[] = [];
  const inEdges: number[][] = layers.map(() => []);
  const outEdges: number[][] = layers.map(() => []);
  const hasProducer = layers.map(() => false);
  layers.forEach((layer, to) => {
    for (const id of new Set(layer.inputs)) {
      const from = index.get(id);
      if (from === undefined || from >= to) continue;
      hasProducer[to] = true;
      const e = edges.length;
      edges.push({ from, to, bytes: safeBytes(layers[from].workload.activationBytes) * batch });
      inEdges[to].push(e);
      outEdges[from].push(e);
    }
  });
  const keyIds = new Map<string, number>();
  const layerKey = new Int32Array(layers.length);
  layers.forEach((layer, li) => {
    const key = `${layer.op}|${JSON.stringify(layer.attrs)}|${JSON.stringify(layer.inputShapes)}|${JSON.stringify(layer.outputShape)}|${JSON.stringify(w0(layer))}|${hasProducer[li]}`;
    let id = keyIds.get(key);
    if (id === undefined) keyIds.set(key, (id = keyIds.size));
    layerKey[li] = id;
  });
  const made = { edges, inEdges, outEdges, hasProducer, layerKey, scaledEdges: new Map<number, PlanEdge[]>() };
  byBatch.set(batch, made);
  return made;
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
  const stateCopies = optimizerStateCopies(setup.optimizer);
  const bytes = precisionBytes(setup.precision, setup.ampStyle);
  // The catalogue counts activations at the model's dtype; the setup's precision rescales them.
  const actScale = bytes.activation / dtype;
  const A = Math.max(1, setup.microSteps);
  const recompute = setup.recompute !== 'none' ? recomputePlan(model) : undefined;
  const hostGBs = gpu.hostBandwidthGBs ?? DEFAULT_HOST_BANDWIDTH_GBS;

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
      // Gradient accumulation: A micro-steps of batch/(d·A) samples each per iteration.
      const samples = batch / c.d / A;
      const share = computeShare(c);
      const pShare = paramShare(c);
      let t;
      if (measured) {
        const m = measured.at(samples);
        t = { forwardMs: m.forwardMs * share * A, backwardMs: m.backwardMs * share * A };
      } else {
        const one = analyticalTimes(layer, gpu, samples, share, pShare, bytes.activation, setup.precision, { attention: opts.attention, memoryFormat: opts.memoryFormat ?? model.layout, autocast: setup.ampStyle === 'autocast' });
        t = { forwardMs: one.forwardMs * A, backwardMs: one.backwardMs * A };
      }
      let mpF = 0;
      let mpB = 0;
      if (c.k > 1) {
        const ml = groupLink('model', c);
        const outAR = A * allReduceMs(samples * safeBytes(w.activationBytes) * actScale, c.k, ml);
        const inAR = hasProducer[li] ? A * allReduceMs(samples * inBytes, c.k, ml) : 0;
        if (c.split === 'out') mpB = inAR;
        else if (c.split === 'in') mpF = outAR;
        else if (c.split === 'heads') {
          mpF = outAR;
          mpB = inAR;
        }
      }
      const paramsHere = safeBytes(w.params) * pShare;
      const arBytes = paramsHere * bytes.gradient;
      const sg = c.d > 1 ? shardGroup(c) : undefined;
      const zero = sg ? setup.zeroStage : 0;
      // ZeRO-2/3 keep only their gradient shard, so every micro-step reduces; DP and ZeRO-1 accumulate locally and sync once.
      const syncs = zero >= 2 ? A : 1;
      let arMs = 0;
      let gatherBytes = 0;
      let gatherMs = 0;
      if (sg && zero === 3) {
        gatherBytes = paramsHere * bytes.weight;
        gatherMs = A * allGatherMs(gatherBytes, sg.shards, sg.shardLink);
        arMs = syncs * (reduceScatterMs(arBytes, sg.shards, sg.shardLink) + allReduceMs(arBytes / sg.shards, sg.replicas, sg.replicaLink));
      } else if (sg) {
        arMs = syncs * allReduceMs(arBytes, c.d, groupLink('data', c));
      }
      const optShards = sg && zero >= 1 ? sg.shards : 1;
      // Offload: gradients down and updated 16-bit weights up over PCIe; the CPU Adam itself overlaps (ZeRO-Offload's DPU) and is not costed.
      const upd = setup.cpuOffload
        ? hostCopyMs((paramsHere / optShards) * (bytes.gradient + bytes.weight), hostGBs)
        : updateMs(paramsHere / optShards, stateCopies, gpu, 4);
      const actShare = c.split === 'shard' || c.split === 'in' ? 1 / c.k : 1;
      const states = modelStateBytes(paramsHere, setup, sg ? sg.shards : 1, autocastCastsWeights(layer.op) ? paramsHere : 0);
      // Float activations follow the precision; int64 indices and bool masks keep their size.
      const keptBytes = savedBytesAtPrecision(kept.savedBytesPerSample, kept.fixedBytesPerSample, actScale);
      const activations = keptBytes * samples * actShare * copies;
      const savedBytes = savedBytesAtPrecision(savedWithoutRecompute.saved, savedWithoutRecompute.fixed, actScale);
      const recomputedBytes = kept.recomputeFraction > 0 ? Math.max(0, savedBytes - keptBytes) * samples * actShare : 0;
      const buffers = safeBytes(w.nonTrainable) * dtype * pShare;
      const memory = { weights: states.weights + buffers, gradients: states.gradients, optimizer: states.optimizer, activations };
      const memoryBytes = memory.weights + memory.gradients + memory.optimizer + memory.activations;
      const recomputeMs = kept.recomputeFraction * (t.forwardMs + mpF);
      return {
        config: c,
        inLayout: layoutOf(inputLayout(c)),
        outLayout: layoutOf(outputLayout(c)),
        forwardMs: t.forwardMs,
        backwardMs: t.backwardMs,
        mpForwardMs: mpF,
        mpBackwardMs: mpB,
        allreduceBytes: c.d > 1 ? arBytes : 0,
        allreduceMs: arMs,
        updateMs: upd,
        gatherBytes,
        gatherMs,
        recomputeMs,
        recomputedBytes,
        memory,
        memoryBytes,
        timeMs: t.forwardMs + t.backwardMs + mpF + mpB + arMs + upd + 2 * gatherMs + recomputeMs,
      };
    });
  }

  const L = layouts.length;
  const pairFraction = new Float64Array(L * L);
  const pairSources = new Float64Array(L * L);
  const fwdFraction = new Float64Array(L * L);
  const fwdSources = new Float64Array(L * L);
  const pairLink: GroupLink[] = new Array(L * L).fill(link);
  for (let a = 0; a < L; a++) {
    for (let b = 0; b < L; b++) {
      if (a === b) continue;
      const { d, k } = layouts[a];
      if (k > 1 && layouts[b].d === d) pairLink[a * L + b] = groupLink('model', { d, k, split: 'out' });
      const f = redistribution(layouts[a], layouts[b]);
      const r = redistribution(layouts[b], layouts[a]);
      fwdFraction[a * L + b] = f.fraction;
      fwdSources[a * L + b] = f.sources;
      pairFraction[a * L + b] = f.fraction + r.fraction;
      pairSources[a * L + b] = f.sources + r.sources;
    }
  }

  const byBytes = new Map<number, Float64Array>();
  const edgeMatrix: Array<Float64Array | undefined> = new Array(edges.length);
  const edgeLayoutCost = (e: number): Float64Array => {
    let m = edgeMatrix[e];
    if (m) return m;
    const bytes = edges[e].bytes;
    m = byBytes.get(bytes);
    if (!m) {
      m = new Float64Array(L * L);
      for (let p = 0; p < L * L; p++) if (p % (L + 1) !== 0) m[p] = (bytes * pairFraction[p]) / pairLink[p].bytesPerMs + pairSources[p] * pairLink[p].alphaMs;
      byBytes.set(bytes, m);
    }
    edgeMatrix[e] = m;
    return m;
  };
  const memoLayouts = new Map<NodeOption[], [Int32Array, Int32Array]>();
  const inLayouts: Int32Array[] = [];
  const outLayouts: Int32Array[] = [];
  for (const opts of options) {
    let pair = memoLayouts.get(opts);
    if (!pair) {
      pair = [Int32Array.from(opts, (o) => o.inLayout), Int32Array.from(opts, (o) => o.outLayout)];
      memoLayouts.set(opts, pair);
    }
    inLayouts.push(pair[0]);
    outLayouts.push(pair[1]);
  }

  const edgeCost = (e: number, fo: number, to: number): number => {
    const edge = edges[e];
    const a = outLayouts[edge.from][fo];
    const b = inLayouts[edge.to][to];
    if (a === b) return 0;
    return edgeLayoutCost(e)[a * L + b];
  };

  const edgeCostParts = (e: number, fo: number, to: number): [number, number] => {
    const edge = edges[e];
    const a = options[edge.from][fo].outLayout;
    const b = options[edge.to][to].inLayout;
    if (a === b) return [0, 0];
    const p = a * L + b;
    const fwd = fwdFraction[p] > 0 ? (edge.bytes * fwdFraction[p]) / pairLink[p].bytesPerMs + fwdSources[p] * pairLink[p].alphaMs : 0;
    return [fwd, edgeCost(e, fo, to) - fwd];
  };

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
  };
}

/** Sum of node and edge costs of an assignment (option index per layer): what the search minimises. */
export function assignmentCost(t: CostTables, choice: ArrayLike<number>, nodeCost?: (layer: number, option: number) => number): number {
  let s = 0;
  for (let i = 0; i < t.layers.length; i++) s += nodeCost ? nodeCost(i, choice[i]) : t.options[i][choice[i]].timeMs;
  for (let e = 0; e < t.edges.length; e++) s += t.edgeCost(e, choice[t.edges[e].from], choice[t.edges[e].to]);
  return s;
}

/** Peak memory per device of an assignment (every layer occupies every device of the group). */
export function assignmentMemory(t: CostTables, choice: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < t.layers.length; i++) s += t.options[i][choice[i]].memoryBytes;
  return s;
}
