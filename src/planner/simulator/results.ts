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
  // Group tasks by device set, by content: pipelines build a fresh array per transfer.
  const setOf = new Map<string, number>();
  const members: Array<readonly number[]> = [];
  const taskSet = new Int32Array(run.tasks.length);
  const setSize: number[] = [];
  // Most tasks share one array object: look that up first, and join only new arrays.
  const byRef = new Map<readonly number[], number>();
  run.tasks.forEach((t, i) => {
    if (t.durationMs <= 0) {
      taskSet[i] = -1;
      return;
    }
    let id = byRef.get(t.devices);
    if (id === undefined) {
      const key = t.devices.join(',');
      id = setOf.get(key);
      if (id === undefined) {
        setOf.set(key, (id = members.length));
        members.push(t.devices);
        setSize.push(0);
      }
      byRef.set(t.devices, id);
    }
    taskSet[i] = id;
    setSize[id]++;
  });
  const cache = new Map<string, number>();
  const busyMs = devices.map((d) => {
    const mine: number[] = [];
    for (let s = 0; s < members.length; s++) if (members[s].includes(d)) mine.push(s);
    const key = mine.join(',');
    const hit = cache.get(key);
    if (hit !== undefined) return hit;
    const busy = Math.min(step, unionLength(run, taskSet, mine, setSize));
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

/**
 * Total length of the union of the tasks' intervals in these sets: a sweep
 * over sorted starts and sorted ends (typed-array sorts, no pair objects).
 * Touching intervals merge, as one busy stretch.
 */
function unionLength(run: SimRun, taskSet: Int32Array, sets: number[], setSize: number[]): number {
  let count = 0;
  for (const s of sets) count += setSize[s];
  if (count === 0) return 0;
  const wanted = new Uint8Array(setSize.length);
  for (const s of sets) wanted[s] = 1;
  const starts = new Float64Array(count);
  const ends = new Float64Array(count);
  let k = 0;
  for (let i = 0; i < taskSet.length; i++) {
    const s = taskSet[i];
    if (s < 0 || !wanted[s]) continue;
    starts[k] = run.start[i];
    ends[k] = run.end[i];
    k++;
  }
  starts.sort();
  ends.sort();
  let total = 0;
  let active = 0;
  let from = 0;
  let i = 0;
  for (let j = 0; j < count; j++) {
    while (i < count && starts[i] <= ends[j]) {
      if (active === 0) from = starts[i];
      active++;
      i++;
    }
    active--;
    if (active === 0 && ends[j] > from) total += ends[j] - from;
  }
  return total;
}

const round = (x: number): number => Math.round(x * 1e6) / 1e6;

/** Compute tasks give one event per device lane; communication one event on its link lane. */
export function toTimeline(run: SimRun): TimelineEvent[] {
  const out: TimelineEvent[] = [];
  const tasks = run.tasks;
  for (let i = 0; i < tasks.length; i++) {
    const t = tasks[i];
    if (t.durationMs <= 0) continue;
    const startMs = round(run.start[i]);
    const endMs = round(Math.min(run.end[i], run.makespanMs));
    const critical = run.critical[i] === 1;
    // Property order as before (kind, layer, times, optional bytes/microBatch/critical, device, lane, devices): JSON output stays byte-identical.
    const event = (device: number, lane: string, devices: number[] | undefined, flagged: boolean): TimelineEvent => {
      const e = { kind: t.kind, layer: t.layer, startMs, endMs } as TimelineEvent;
      if (t.bytes !== undefined) e.bytes = t.bytes;
      if (t.microBatch !== undefined) e.microBatch = t.microBatch;
      if (flagged) e.critical = true;
      e.device = device;
      e.lane = lane;
      if (devices) e.devices = devices;
      return e;
    };
    let low = t.devices[0];
    for (const d of t.devices) if (d < low) low = d;
    if (isComputeKind(t.kind)) {
      // A group computing in lockstep is one task on one path: flag it on its lowest GPU's
      // lane only, so the path reads as one GPU's chain (plus the links it waits on), not n copies.
      const shared = t.devices.length > 1 ? t.devices : undefined;
      for (const d of t.devices) out.push(event(d, `gpu:${d}`, shared, critical && d === low));
    } else {
      out.push(event(low, t.resources[0], t.devices, critical));
    }
  }
  return out;
}
