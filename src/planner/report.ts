/** Per-layer plan entries (strategy, devices, costs, one-sentence reason) for the report. */
import type { AnalyzedLayer } from '../core/ir';
import type { LayerPlan, StrategyKind } from '../protocol/plan';
import { describeConfig, type LayerConfig } from './cost/configs';
import { mb } from './cost/memory';
import type { CostTables, NodeOption } from './cost/tables';
import type { Topology } from './cost/topology';
import type { Candidate } from './evaluate';
import { stageOption } from './simulator/pipeline';

export function strategyOf(c: LayerConfig): StrategyKind {
  if (c.k > 1) return c.d > 1 ? 'hybrid' : 'model';
  return 'data';
}

function splitDimOf(layer: AnalyzedLayer, c: LayerConfig): LayerPlan['splitDim'] {
  if (c.k === 1) return undefined;
  switch (c.split) {
    case 'out':
      return layer.op === 'conv' ? 'channels' : 'outputs';
    case 'in':
      return 'inputs';
    case 'heads':
      return 'heads';
    case 'shard':
      return layer.outputShape && layer.outputShape.length >= 2 ? 'channels' : 'outputs';
    default:
      return undefined;
  }
}

const f2 = (x: number): string => (x >= 10 ? x.toFixed(1) : x.toFixed(2));

function localCost(t: CostTables, choice: Int32Array, i: number, o: number): number {
  let s = t.options[i][o].timeMs;
  for (const e of t.inEdges[i]) s += t.edgeCost(e, choice[t.edges[e].from], o);
  for (const e of t.outEdges[i]) s += t.edgeCost(e, o, choice[t.edges[e].to]);
  return s;
}

function exchangeMs(t: CostTables, choice: Int32Array, i: number, o: number): number {
  const opt = t.options[i][o];
  return localCost(t, choice, i, o) - opt.timeMs + opt.mpForwardMs + opt.mpBackwardMs;
}

function explain(t: CostTables, choice: Int32Array, i: number, mode: string): { reason: string; alternative?: LayerPlan['alternative'] } {
  const o = choice[i];
  const chosen = t.options[i][o];
  const mine = localCost(t, choice, i, o);
  let alt: { o: number; cost: number } | undefined;
  t.options[i].forEach((_, a) => {
    if (a === o) return;
    const c = localCost(t, choice, i, a);
    if (!alt || c < alt.cost) alt = { o: a, cost: c };
  });
  if (!alt) return { reason: `${describeConfig(chosen.config)}: the only configuration ${mode === 'dp' ? 'in dp mode' : ''} on ${t.n} GPU${t.n > 1 ? 's' : ''}`.replace('  ', ' ') };
  const other: NodeOption = t.options[i][alt.o];
  const alternative = { strategy: strategyOf(other.config), dataDegree: other.config.d, modelDegree: other.config.k, costMs: alt.cost };
  let reason: string;
  if (chosen.config.k > 1 && other.config.k === 1 && other.allreduceMs > 0) {
    reason = `all-reduce of ${mb(other.allreduceBytes)} would take ${f2(other.allreduceMs)} ms under data parallelism; ${describeConfig(chosen.config)} exchanges activations in ${f2(exchangeMs(t, choice, i, o))} ms`;
  } else if (chosen.config.k === 1 && other.config.k > 1 && exchangeMs(t, choice, i, alt.o) > chosen.allreduceMs) {
    reason = `data parallel: gradient all-reduce ${f2(chosen.allreduceMs)} ms (${mb(chosen.allreduceBytes)}) costs less than the ${f2(exchangeMs(t, choice, i, alt.o))} ms of activation exchange under ${describeConfig(other.config)}`;
  } else {
    reason = `${describeConfig(chosen.config)} ${f2(mine)} ms vs ${describeConfig(other.config)} ${f2(alt.cost)} ms (compute + communication around this layer)`;
  }
  return { reason, alternative };
}

export function layerPlans(c: Candidate, topo: Topology, mode: string): LayerPlan[] {
  const physical = (ds: number[]) => ds.map((d) => topo.gpus[d].index);
  if (c.pipeline) {
    const p = c.pipeline;
    const out: LayerPlan[] = [];
    p.stages.forEach((st, s) => {
      for (const i of st.layers) {
        const layer = st.tables.layers[i];
        const o = stageOption(st, i);
        const dim = splitDimOf(layer, o.config);
        // Layout changes from producers in the same stage (hybrid stages), once per micro-batch.
        let transferMs = 0;
        if (st.choice) {
          for (const e of st.tables.inEdges[i]) {
            const from = st.tables.edges[e].from;
            if (from >= st.layers[0]) transferMs += st.tables.edgeCost(e, st.choice[from], st.choice[i]) * p.microBatches;
          }
        }
        out.push({
          name: layer.name,
          line: layer.range.line,
          ...(layer.range.file ? { file: layer.range.file } : {}),
          type: layer.type,
          strategy: 'pipeline',
          dataDegree: o.config.d,
          modelDegree: o.config.k,
          devices: physical(st.devices),
          stage: s,
          ...(dim ? { splitDim: dim } : {}),
          forwardMs: (o.forwardMs + o.mpForwardMs) * p.microBatches,
          backwardMs: (o.backwardMs + o.mpBackwardMs) * p.microBatches,
          allreduceBytes: o.allreduceBytes,
          allreduceMs: o.allreduceMs,
          transferMs,
          memoryBytesPerGpu: o.memoryBytes,
          params: layer.workload.params,
          activationBytes: layer.workload.activationBytes * p.microBatch,
          costSource: { ...st.tables.sources[i] },
          reason: `stage ${s} of ${p.stages.length} on ${st.devices.length} GPU${st.devices.length > 1 ? 's' : ''}${o.config.k > 1 ? ` as ${describeConfig(o.config)}` : ''}, ${p.microBatches} micro-batches of ${p.microBatch} (${p.schedule})`,
        });
      }
    });
    return out;
  }
  const t = c.tables!;
  const choice = c.choice!;
  return t.layers.map((layer, i) => {
    const o = t.options[i][choice[i]];
    let transferMs = 0;
    for (const e of t.inEdges[i]) transferMs += t.edgeCost(e, choice[t.edges[e].from], choice[i]);
    const { reason, alternative } = explain(t, choice, i, mode);
    const plan: LayerPlan = {
      name: layer.name,
      line: layer.range.line,
      ...(layer.range.file ? { file: layer.range.file } : {}),
      type: layer.type,
      strategy: strategyOf(o.config),
      dataDegree: o.config.d,
      modelDegree: o.config.k,
      devices: physical(t.devices),
      stage: 0,
      forwardMs: o.forwardMs + o.mpForwardMs,
      backwardMs: o.backwardMs + o.mpBackwardMs,
      allreduceBytes: o.allreduceBytes,
      allreduceMs: o.allreduceMs,
      transferMs,
      memoryBytesPerGpu: o.memoryBytes,
      params: layer.workload.params,
      activationBytes: layer.workload.activationBytes * (t.batch / o.config.d),
      costSource: { ...t.sources[i] },
      reason,
    };
    const dim = splitDimOf(layer, o.config);
    if (dim) plan.splitDim = dim;
    if (alternative) plan.alternative = alternative;
    return plan;
  });
}

export function summaryOf(c: Candidate): string {
  if (c.pipeline) return `pipeline×${c.pipeline.stages.length}`;
  const t = c.tables!;
  const kinds = new Set<string>();
  t.options.forEach((opts, i) => {
    const k = opts[c.choice![i]].config;
    if (k.d > 1) kinds.add('data');
    if (k.k > 1 && k.split !== 'rep') kinds.add('model');
  });
  return kinds.size ? [...kinds].join('+') : 'single';
}
