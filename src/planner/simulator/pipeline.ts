/**
 * Pipelined iteration: consecutive layer groups (stages) on device groups,
 * micro-batches scheduled 1F1B (or GPipe), boundary activations sent between
 * stages, each stage's gradients all-reduced across its data-parallel group
 * after its last backward, then the update.
 */
import type { LayerConfig } from '../cost/configs';
import type { CostTables, NodeOption } from '../cost/tables';
import { allReduceMs, type Topology } from '../cost/topology';
import { drain, type Steps } from '../steps';
import { Engine, gpuLanes, type SimRun } from './engine';

export interface PipelineStage {
  layers: number[];
  devices: number[];
  tables: CostTables;
  /** Bytes per sample leaving this stage for later stages. */
  boundaryBytesPerSample: number;
  /** Option index per model layer (hybrid stages); absent: option 0, data parallel over the stage. */
  choice?: Int32Array;
}

export function stageOption(st: PipelineStage, layer: number): NodeOption {
  return st.tables.options[layer][st.choice ? st.choice[layer] : 0];
}

interface StageCost {
  f: number;
  b: number;
  /** Forward work recomputed before each micro-batch's backward (activation recompute). */
  r: number;
  upd: number;
  /** Gradient all-reduces, one per data-parallel degree used in the stage. */
  allreduces: Array<{ bytes: number; config: LayerConfig }>;
}

/** Per micro-batch compute (with model-parallel collectives and layout changes inside the stage), all-reduces and update. */
function stageCost(st: PipelineStage): StageCost {
  let f = 0;
  let b = 0;
  let r = 0;
  let upd = 0;
  const byDegree = new Map<number, { bytes: number; config: LayerConfig }>();
  const inStage = new Set(st.layers);
  const pick = (l: number) => (st.choice ? st.choice[l] : 0);
  for (const l of st.layers) {
    const o = stageOption(st, l);
    f += o.forwardMs + o.mpForwardMs;
    b += o.backwardMs + o.mpBackwardMs;
    r += o.recomputeMs;
    // Offloaded, the stage's gradients go down to the CPU optimizer once, after its last backward.
    upd += o.updateMs + o.hostDownloadMs;
    if (o.allreduceBytes > 0) {
      const g = byDegree.get(o.config.d) ?? { bytes: 0, config: o.config };
      g.bytes += o.allreduceBytes;
      byDegree.set(o.config.d, g);
    }
    if (!st.choice) continue;
    for (const e of st.tables.inEdges[l]) {
      const from = st.tables.edges[e].from;
      if (!inStage.has(from)) continue;
      const [fw, bw] = st.tables.edgeCostParts(e, pick(from), pick(l));
      f += fw;
      b += bw;
    }
  }
  return { f, b, r, upd, allreduces: [...byDegree.values()] };
}

export type Schedule = '1f1b' | 'gpipe';

function stageOrder(s: number, S: number, M: number, schedule: Schedule): Array<['F' | 'B', number]> {
  if (schedule === 'gpipe') return [...Array.from({ length: M }, (_, m) => ['F', m] as ['F', number]), ...Array.from({ length: M }, (_, m) => ['B', m] as ['B', number])];
  const warm = Math.min(S - s - 1, M);
  const ops: Array<['F' | 'B', number]> = [];
  for (let m = 0; m < warm; m++) ops.push(['F', m]);
  for (let i = 0; i < M - warm; i++) ops.push(['F', warm + i], ['B', i]);
  for (let m = M - warm; m < M; m++) ops.push(['B', m]);
  return ops;
}

export function simulatePipeline(stages: PipelineStage[], topo: Topology, microBatch: number, M: number, schedule: Schedule): SimRun {
  return drain(simulatePipelineSteps(stages, topo, microBatch, M, schedule));
}

/** simulatePipeline with a checkpoint every couple of thousand tasks laid out, and the engine's own. */
export function* simulatePipelineSteps(stages: PipelineStage[], topo: Topology, microBatch: number, M: number, schedule: Schedule): Steps<SimRun> {
  const S = stages.length;
  const eng = new Engine();
  const label = stages.map((st) => `stage ${stages.indexOf(st)} (${st.tables.layers[st.layers[0]].name}…${st.tables.layers[st.layers[st.layers.length - 1]].name})`);
  const cost = stages.map(stageCost);
  const sendMs = (s: number): { ms: number; lane: string; bytes: number } => {
    const a = stages[s].devices;
    const b = stages[s + 1].devices;
    const link = topo.link([a[0], b[0]]);
    const bytes = stages[s].boundaryBytesPerSample * microBatch;
    const pairs = Math.min(a.length, b.length);
    // Point-to-point between neighbouring stages: its own channel, so one boundary never queues behind another.
    return { ms: link.alphaMs + bytes / pairs / link.bytesPerMs, lane: `${link.lane}-stage${s}-${s + 1}`, bytes };
  };
  const fDone: number[][] = stages.map(() => []);
  const bDone: number[][] = stages.map(() => []);
  const orders = stages.map((_, s) => stageOrder(s, S, M, schedule));
  const pos = stages.map(() => 0);
  const lastB: number[] = stages.map(() => -1);
  let pauseAt = 2048;
  let progressed = true;
  while (progressed) {
    progressed = false;
    for (let s = 0; s < S; s++) {
      while (pos[s] < orders[s].length) {
        const [kind, m] = orders[s][pos[s]];
        const dep = kind === 'F' ? (s === 0 ? undefined : fDone[s - 1][m]) : s === S - 1 ? fDone[s][m] : bDone[s + 1][m];
        if (dep === undefined && !(kind === 'F' && s === 0)) break;
        const deps = dep === undefined ? [] : [dep];
        const st = stages[s];
        if (kind === 'B' && cost[s].r > 0) deps.push(eng.add({ kind: 'recompute', layer: label[s], resources: gpuLanes(st.devices), devices: st.devices, durationMs: cost[s].r, deps: [...deps], microBatch: m }));
        const id = eng.add({ kind: kind === 'F' ? 'forward' : 'backward', layer: label[s], resources: gpuLanes(st.devices), devices: st.devices, durationMs: kind === 'F' ? cost[s].f : cost[s].b, deps, microBatch: m });
        if (kind === 'F' && s < S - 1) {
          const x = sendMs(s);
          fDone[s][m] = eng.add({ kind: 'transfer', layer: label[s], resources: [x.lane], devices: [...st.devices, ...stages[s + 1].devices], durationMs: x.ms, deps: [id], bytes: x.bytes, microBatch: m });
        } else if (kind === 'F') fDone[s][m] = id;
        if (kind === 'B' && s > 0) {
          const x = sendMs(s - 1);
          bDone[s][m] = eng.add({ kind: 'transfer', layer: label[s], resources: [x.lane], devices: [...stages[s - 1].devices, ...st.devices], durationMs: x.ms, deps: [id], bytes: x.bytes, microBatch: m });
        } else if (kind === 'B') bDone[s][m] = id;
        if (kind === 'B') lastB[s] = id;
        pos[s]++;
        progressed = true;
        if (eng.tasks.length >= pauseAt) {
          pauseAt += 2048;
          yield;
        }
      }
    }
  }
  if (pos.some((p, s) => p < orders[s].length)) throw new Error('pipeline schedule deadlocked');
  stages.forEach((st, s) => {
    const c = cost[s];
    const deps = [lastB[s]];
    for (const g of c.allreduces) {
      if (g.config.d < 2) continue;
      const link = st.tables.dataGroupLink(g.config);
      deps.push(eng.add({ kind: 'allreduce', layer: label[s], resources: [link.lane], devices: st.devices, durationMs: allReduceMs(g.bytes, g.config.d, link), deps: [lastB[s]], bytes: g.bytes }));
    }
    eng.add({ kind: 'update', layer: label[s], resources: gpuLanes(st.devices), devices: st.devices, durationMs: c.upd, deps });
  });
  return yield* eng.runSteps();
}
