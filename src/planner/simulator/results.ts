/** Turns a simulated run into step time, energy per sample and protocol timeline events. */
import type { TimelineEvent } from '../../protocol/plan';
import type { Topology } from '../cost/topology';
import { isComputeKind, type SimRun } from './engine';

export interface RunSummary {
  stepTimeMs: number;
  energyJPerSample: number;
  /** Busy ms per logical device used. */
  busyMs: number[];
}

/**
 * Energy per sample = Σ over the GPUs the plan uses of busy·powerW +
 * idle·idlePowerW, over the samples of one step. A GPU is busy while it
 * computes or takes part in a collective (NCCL kernels occupy it too).
 */
export function summarizeRun(run: SimRun, devices: readonly number[], topo: Topology, batch: number): RunSummary {
  const step = run.makespanMs;
  // Group intervals by device set (plans use a handful of distinct sets), then merge per device.
  const bySet = new Map<readonly number[], Array<[number, number]>>();
  run.tasks.forEach((t, i) => {
    if (t.durationMs <= 0) return;
    let list = bySet.get(t.devices);
    if (!list) bySet.set(t.devices, (list = []));
    list.push([run.start[i], run.end[i]]);
  });
  const sets = [...bySet.entries()].map(([ds, list]) => ({ members: new Set(ds), list }));
  const cache = new Map<string, number>();
  const busyMs = devices.map((d) => {
    const mine = sets.filter((s) => s.members.has(d));
    const key = mine.map((s) => sets.indexOf(s)).join(',');
    const hit = cache.get(key);
    if (hit !== undefined) return hit;
    const list = mine.flatMap((s) => s.list).sort((a, b) => a[0] - b[0]);
    let total = 0;
    let curS = 0;
    let curE = -Infinity;
    for (const [s, e] of list) {
      if (s > curE) {
        if (curE > curS) total += curE - curS;
        curS = s;
        curE = e;
      } else curE = Math.max(curE, e);
    }
    if (curE > curS) total += curE - curS;
    const busy = Math.min(step, total);
    cache.set(key, busy);
    return busy;
  });
  let joules = 0;
  devices.forEach((d, i) => {
    const g = topo.gpus[d];
    joules += (busyMs[i] * g.powerW + (step - busyMs[i]) * g.idlePowerW) / 1000;
  });
  return { stepTimeMs: step, energyJPerSample: batch > 0 ? joules / batch : 0, busyMs };
}

const round = (x: number): number => Math.round(x * 1e6) / 1e6;

/** Compute tasks give one event per device lane; communication one event on its link lane. */
export function toTimeline(run: SimRun): TimelineEvent[] {
  const out: TimelineEvent[] = [];
  run.tasks.forEach((t, i) => {
    if (t.durationMs <= 0) return;
    const base = {
      kind: t.kind,
      layer: t.layer,
      startMs: round(run.start[i]),
      endMs: round(Math.min(run.end[i], run.makespanMs)),
      ...(t.bytes !== undefined ? { bytes: t.bytes } : {}),
      ...(t.microBatch !== undefined ? { microBatch: t.microBatch } : {}),
      ...(run.critical[i] ? { critical: true } : {}),
    };
    const compute = isComputeKind(t.kind);
    if (compute) {
      for (const d of t.devices) out.push({ ...base, device: d, lane: `gpu:${d}`, ...(t.devices.length > 1 ? { devices: t.devices } : {}) });
    } else {
      out.push({ ...base, device: Math.min(...t.devices), lane: t.resources[0], devices: t.devices });
    }
  });
  return out;
}
