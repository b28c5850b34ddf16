/**
 * Cost tables for one device group and batch: per layer, every configuration
 * with its compute, communication and memory; per edge, the layout-change
 * cost between any two configurations. The search sees only these numbers
 * (node cost + edge cost, additive as in OptCNN); the simulator reuses the
 * components to lay out a timeline.
 */
import type { AnalyzedLayer, AnalyzedModel } from '../../core/ir';
import type { CostSource, OptimizerKind, StrategyMode } from '../../protocol/plan';
import { analyticalTimes, inputBytesPerSample, updateMs } from './compute';
import { computeShare, inputLayout, layerConfigs, outputLayout, paramShare, type LayerConfig, type Layout } from './configs';
import { redistribution } from './layout';
import { optimizerStateCopies } from './memory';
import type { ProfileCosts } from './profileCosts';
import { allReduceMs, range, type GroupLink, type Topology } from './topology';

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
  const made = { edges, inEdges, outEdges, hasProducer, layerKey };
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
  const stateCopies = optimizerStateCopies(opts.optimizer);

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

  const { edges, inEdges, outEdges, hasProducer, layerKey } = modelStatic(model, batch);

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
    const key = measured || opts.configsFor ? -1 : layerKey[li];
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
    const inBytes = inputBytesPerSample(layer, dtype);
    return configs.map((c) => {
      const samples = batch / c.d;
      const share = computeShare(c);
      const pShare = paramShare(c);
      let t;
      if (measured) {
        const m = measured.at(samples);
        t = { forwardMs: m.forwardMs * share, backwardMs: m.backwardMs * share };
      } else {
        t = analyticalTimes(layer, gpu, samples, share, pShare, dtype);
      }
      let mpF = 0;
      let mpB = 0;
      if (c.k > 1) {
        const ml = groupLink('model', c);
        const outAR = allReduceMs(samples * safeBytes(w.activationBytes), c.k, ml);
        const inAR = hasProducer[li] ? allReduceMs(samples * inBytes, c.k, ml) : 0;
        if (c.split === 'out') mpB = inAR;
        else if (c.split === 'in') mpF = outAR;
        else if (c.split === 'heads') {
          mpF = outAR;
          mpB = inAR;
        }
      }
      const arBytes = safeBytes(w.weightGradBytes) * pShare;
      const arMs = c.d > 1 ? allReduceMs(arBytes, c.d, groupLink('data', c)) : 0;
      const paramsHere = safeBytes(w.params) * pShare;
      const upd = updateMs(paramsHere, stateCopies, gpu, dtype);
      const actShare = c.split === 'shard' || c.split === 'in' ? 1 / c.k : 1;
      const memoryBytes =
        paramsHere * dtype * (2 + stateCopies) + safeBytes(w.nonTrainable) * dtype * pShare + safeBytes(w.savedActivationBytes) * samples * actShare * copies;
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
        memoryBytes,
        timeMs: t.forwardMs + t.backwardMs + mpF + mpB + arMs + upd,
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
