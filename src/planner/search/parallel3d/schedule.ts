/**
 * Replays a 3D plan as events: the pipeline schedule (1F1B, or interleaved
 * 1F1B with v model chunks per stage, in Megatron-LM's order) run as a
 * dependency simulation on one data-parallel replica, then each stage's
 * gradient sync and optimizer step. Data-parallel and context-parallel
 * replicas run the same schedule in lockstep, so one replica represents
 * them (compressed replay): the timeline stays a few thousand events even on
 * thousands of GPUs, and is thinned further to stay under EVENT_CAP.
 */
import type { TimelineEvent, TimelineKind, ZeroStage } from '../../../protocol/plan';
import { syncsSerially } from '../../collectiveTiming';
import type { Config3D, Links, StageTimes } from './estimate';
import { nextForwardExposedMs } from './gradientSync';
import { overlapExtraMs } from '../../cost/overlap';

/** The webview draws ~20k events in about a tenth of a second (webview bench). */
export const EVENT_CAP = 20_000;

export interface ReplayInput {
  config: Config3D;
  /** Every stage's times for one micro-batch (all its chunks). */
  stages: StageTimes[];
  /** Point-to-point time of one boundary activation, ms. */
  hopMs: number;
  links: Links;
  /** Gradient sync per stage (whole, before overlap). */
  gradSyncMs: number[];
  /**
   * ZeRO-2/3 traffic left exposed per micro-batch (ZeRO-3's gathers, the earlier micro-batches' reduce-scatters), and
   * parameter offload's PCIe copies.
   */
  shardedPerMicroMs: number[];
  updateMs: number[];
  /** ZeRO-1/2: the updated weights' all-gather after each stage's optimizer step (estimate.ts gradSync), ms; 0 otherwise. */
  afterStepMs: number[];
  /** The ZeRO stages whose gradient sync runs with nothing beside it (PlanOptions.serialSyncStages). */
  serialSyncStages?: readonly ZeroStage[];
  /** The same gather run beside each stage's first forward instead (a stage in forwardGatherStages), ms; 0 otherwise. */
  nextForwardMs: number[];
  /** Bytes of each stage's gradient sync, and of its updated weights gathered after the step, for the events. */
  gradBytes: number[];
  weightBytes: number[];
  hopBytes: number;
}

export interface ReplayResult {
  stepMs: number;
  /** Compute-busy ms per stage (every GPU of a stage is equally busy). */
  busyMs: number[];
  events: TimelineEvent[];
  /** Stages whose events are in the timeline (all of them unless thinned). */
  stagesShown: number[];
  /** Whether per-op communication events were left out to respect EVENT_CAP. */
  commFolded: boolean;
}

interface Op {
  fwd: boolean;
  chunk: number;
  micro: number;
}

/** Megatron-LM's order of forward and backward chunks on stage s (schedules.py, interleaved and non-interleaved). */
export function stageOrder(s: number, P: number, V: number, M: number): Op[] {
  const total = M * V;
  const at = (k: number, fwd: boolean): Op => {
    if (V === 1) return { fwd, chunk: 0, micro: k };
    const inGroup = Math.floor((k % (P * V)) / P);
    return { fwd, chunk: fwd ? inGroup : V - 1 - inGroup, micro: Math.floor(k / (P * V)) * P + (k % P) };
  };
  const warmup = V === 1 ? Math.min(P - s - 1, M) : Math.min((P - s - 1) * 2 + (V - 1) * P, total);
  const out: Op[] = [];
  for (let k = 0; k < warmup; k++) out.push(at(k, true));
  for (let i = 0; i < total - warmup; i++) {
    out.push(at(warmup + i, true));
    out.push(at(i, false));
  }
  for (let i = total - warmup; i < total; i++) out.push(at(i, false));
  return out;
}

/** With emit false only the timing is simulated (ranking the search's best few); the winner is replayed with events. */
export function replay(input: ReplayInput, emit = true): ReplayResult {
  const c = input.config;
  const P = c.pp;
  const V = c.v;
  const M = c.microBatches;
  const perStage = c.n / P;
  const idx = (s: number, ch: number, m: number) => (s * V + ch) * M + m;
  const fEnd = new Float64Array(P * V * M).fill(NaN);
  const bEnd = new Float64Array(P * V * M).fill(NaN);
  const orders = Array.from({ length: P }, (_, s) => stageOrder(s, P, V, M));
  const ptr = new Int32Array(P);
  const free = new Float64Array(P);
  const busy = new Float64Array(P);
  const lastBackwardStart = new Float64Array(P);
  const hop = P > 1 ? input.hopMs : 0;
  const opsTotal = 2 * M * V * P;
  const perOpEvents = 1 + (c.recompute !== 'none' ? 1 : 0) + (c.tp > 1 ? 1 : 0) + (P > 1 ? 1 : 0);
  const commFolded = opsTotal * perOpEvents > EVENT_CAP;
  const perOp = commFolded ? 1 + (c.recompute !== 'none' ? 1 : 0) : perOpEvents;
  // Too many events even without per-op communication: show every stride-th stage (always the first and last).
  const stagesAllowed = Math.max(1, Math.floor(EVENT_CAP / (2 * M * V * perOp + 3)));
  const stride = stagesAllowed >= P ? 1 : Math.ceil(P / stagesAllowed);
  const shown = new Set<number>();
  for (let s = 0; s < P; s += stride) shown.add(s);
  shown.add(P - 1);
  const events: TimelineEvent[] = [];
  const tpGroup = (s: number) => Array.from({ length: c.tp }, (_, i) => s * perStage + i);
  const tpGroups = Array.from({ length: P }, (_, s) => tpGroup(s));
  const push = (s: number, kind: TimelineKind, startMs: number, endMs: number, layer: string, micro: number, extra: Partial<TimelineEvent> = {}) => {
    if (!emit || !shown.has(s) || endMs <= startMs) return;
    const device = s * perStage;
    events.push({ device, kind, layer, startMs, endMs, lane: `gpu:${device}`, devices: tpGroups[s], microBatch: micro, ...extra });
  };
  // Per operation: the one whose end released it (stage order or the dependency through a transfer), and its events.
  const opsPerStage = 2 * M * V;
  const opOf = (s: number, k: number) => s * opsPerStage + k;
  const fOp = new Int32Array(P * V * M).fill(-1);
  const bOp = new Int32Array(P * V * M).fill(-1);
  const pred = new Int32Array(opsTotal).fill(-1);
  const viaTransfer = new Uint8Array(opsTotal);
  const opEvents: number[][] = new Array(opsTotal);
  const transferEvent = new Int32Array(opsTotal).fill(-1);
  const lastOp = new Int32Array(P).fill(-1);
  const lastBackwardOp = new Int32Array(P).fill(-1);
  const mark = (): number => events.length;
  let scheduled = 0;
  while (scheduled < opsTotal) {
    let progress = false;
    for (let s = 0; s < P; s++) {
      const st = input.stages[s];
      for (;;) {
        const op = orders[s][ptr[s]];
        if (!op) break;
        let dep = 0;
        let depOp = -1;
        let hopped = true;
        if (op.fwd) {
          if (s > 0) depOp = fOp[idx(s - 1, op.chunk, op.micro)];
          else if (op.chunk > 0) depOp = fOp[idx(P - 1, op.chunk - 1, op.micro)];
          if (s > 0) dep = fEnd[idx(s - 1, op.chunk, op.micro)] + hop;
          else if (op.chunk > 0) dep = fEnd[idx(P - 1, op.chunk - 1, op.micro)] + hop;
        } else if (s < P - 1) {
          dep = bEnd[idx(s + 1, op.chunk, op.micro)] + hop;
          depOp = bOp[idx(s + 1, op.chunk, op.micro)];
        } else if (op.chunk < V - 1) {
          dep = bEnd[idx(0, op.chunk + 1, op.micro)] + hop;
          depOp = bOp[idx(0, op.chunk + 1, op.micro)];
        } else {
          dep = fEnd[idx(s, op.chunk, op.micro)];
          depOp = fOp[idx(s, op.chunk, op.micro)];
          hopped = false;
        }
        if (Number.isNaN(dep)) break;
        const start = Math.max(free[s], dep);
        const id = opOf(s, ptr[s]);
        if (lastOp[s] >= 0 && free[s] >= dep) pred[id] = lastOp[s];
        else if (depOp >= 0) {
          pred[id] = depOp;
          viaTransfer[id] = hopped && hop > 0 ? 1 : 0;
        }
        const first = mark();
        const tpShare = st.tpMs / 2 / V;
        const label = `stage ${s}${V > 1 ? ` chunk ${op.chunk}` : ''}`;
        let end: number;
        if (op.fwd) {
          // The iteration's first forward on the stage runs beside the gather of the weights the last step updated.
          const gather = op.micro === 0 && op.chunk === 0 ? input.nextForwardMs[s] : 0;
          const compute = st.forwardMs / V + input.shardedPerMicroMs[s] / 2 + nextForwardExposedMs(gather, st, c);
          if (gather > 0) push(s, 'allgather', start, start + gather, `stage ${s} updated weights (ZeRO-${c.zero}, in the forward)`, op.micro, { lane: input.links.dp.lane, bytes: input.weightBytes[s] });
          end = start + compute + tpShare;
          fEnd[idx(s, op.chunk, op.micro)] = end;
          fOp[idx(s, op.chunk, op.micro)] = id;
          push(s, 'forward', start, start + compute, label, op.micro);
          busy[s] += compute;
        } else {
          const re = st.recomputeMs / V;
          const compute = st.backwardMs / V + input.shardedPerMicroMs[s] / 2;
          lastBackwardStart[s] = start;
          lastBackwardOp[s] = id;
          push(s, 'recompute', start, start + re, label, op.micro);
          push(s, 'backward', start + re, start + re + compute, label, op.micro);
          end = start + re + compute + tpShare;
          bEnd[idx(s, op.chunk, op.micro)] = end;
          bOp[idx(s, op.chunk, op.micro)] = id;
          busy[s] += re + compute;
        }
        if (!commFolded && tpShare > 0) push(s, c.sp ? 'allgather' : 'allreduce', end - tpShare, end, `${label} tensor-parallel`, op.micro, { lane: input.links.tp.lane, bytes: 0 });
        opEvents[id] = Array.from({ length: mark() - first }, (_, i) => first + i);
        if (!commFolded && hop > 0 && ((op.fwd && (s < P - 1 || op.chunk < V - 1)) || (!op.fwd && (s > 0 || op.chunk > 0)))) {
          const to = op.fwd ? (s + 1) % P : (s - 1 + P) % P;
          const at = mark();
          push(s, 'transfer', end, end + hop, `${label} → stage ${to}`, op.micro, { lane: input.links.pp.lane, bytes: input.hopBytes, devices: [s * perStage, to * perStage] });
          if (mark() > at) transferEvent[id] = at;
        }
        lastOp[s] = id;
        free[s] = end;
        ptr[s]++;
        scheduled++;
        progress = true;
      }
    }
    if (!progress) throw new Error(`pipeline schedule stalled at ${scheduled} of ${opsTotal} operations (pp ${P}, v ${V}, ${M} micro-batches)`);
  }
  let stepMs = 0;
  let endStage = 0;
  const syncEvents: number[][] = [];
  const updateEvent: number[] = [];
  const afterStepEvent: number[] = [];
  const syncCritical: boolean[] = [];
  for (let s = 0; s < P; s++) {
    // Gradient buckets start with the last backward and may outlast it; the backward runs slower beside them. A
    // framework that syncs with nothing beside it (DeepSpeed without overlap) starts after the backward.
    const serial = syncsSerially(input.serialSyncStages, c.zero);
    const syncStart = serial ? free[s] : lastBackwardStart[s];
    const syncEnd = serial ? free[s] + input.gradSyncMs[s] : free[s] + overlapExtraMs(input.gradSyncMs[s], free[s] - syncStart);
    const syncFirst = mark();
    syncCritical.push(syncStart + input.gradSyncMs[s] > free[s]);
    if (input.gradSyncMs[s] > 0) {
      // Sharded (ZeRO ≥ 1), the gradients are reduce-scattered to their owners.
      push(s, c.zero >= 1 ? 'reducescatter' : 'allreduce', syncStart, syncEnd, `stage ${s} gradients (data parallel ×${c.dp * c.cp})`, -1, { lane: input.links.dp.lane, bytes: input.gradBytes[s] });
    }
    syncEvents.push(Array.from({ length: mark() - syncFirst }, (_, i) => syncFirst + i));
    updateEvent.push(mark());
    const updateEnd = syncEnd + input.updateMs[s];
    push(s, 'update', syncEnd, updateEnd, input.config.paramOffload ? `stage ${s} optimizer (on the CPU: parameters and gradients offloaded)` : input.config.offload ? `stage ${s} optimizer (on the CPU, then weights up over PCIe)` : `stage ${s} optimizer`, -1);
    busy[s] += input.updateMs[s];
    const stageEnd = updateEnd + input.afterStepMs[s];
    // ZeRO-1/2: the owners' updated weights, gathered before the next step can start.
    afterStepEvent.push(input.afterStepMs[s] > 0 ? mark() : -1);
    if (input.afterStepMs[s] > 0) push(s, 'allgather', updateEnd, stageEnd, `stage ${s} updated weights (ZeRO-${c.zero})`, -1, { lane: input.links.dp.lane, bytes: input.weightBytes[s] });
    if (stageEnd > stepMs) {
      stepMs = stageEnd;
      endStage = s;
    }
  }
  if (emit && !commFolded && shown.size === P) {
    // The critical path, walked back from the step's last event: one chain with no waits, crossing stages through transfers.
    const chain: number[] = [];
    const add = (i: number) => {
      if (i >= 0 && i < events.length) chain.push(i);
    };
    add(afterStepEvent[endStage]);
    add(updateEvent[endStage]);
    let op = lastOp[endStage];
    // When the gradient sync outlasts the last backward, the path runs through the sync, which began with that backward.
    let skipOwn = false;
    if (syncCritical[endStage] && syncEvents[endStage].length > 0) {
      for (const i of [...syncEvents[endStage]].reverse()) add(i);
      op = lastBackwardOp[endStage];
      skipOwn = true;
    }
    while (op >= 0) {
      if (!skipOwn) for (const i of [...opEvents[op]].reverse()) add(i);
      skipOwn = false;
      const before = pred[op];
      if (before >= 0 && viaTransfer[op]) add(transferEvent[before]);
      op = before;
    }
    for (const i of chain) events[i].critical = true;
  }
  for (const e of events) if (e.microBatch === -1) delete e.microBatch;
  return { stepMs, busyMs: [...busy], events, stagesShown: [...shown].sort((a, b) => a - b), commFolded };
}
