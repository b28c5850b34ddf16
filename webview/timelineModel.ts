/**
 * Timeline data prepared for drawing: events grouped into lanes (one per GPU,
 * then one per link), sorted by start with typed arrays for binary search,
 * per-lane busy time (union of intervals) and hit-testing. Pure functions, no DOM.
 */
import { bisectLeft } from 'd3-array';
import type { TimelineEvent, TimelineKind } from '../src/protocol/plan';

export interface Lane {
  id: string;
  label: string;
  kind: 'gpu' | 'link';
  events: TimelineEvent[];
  starts: Float64Array;
  ends: Float64Array;
  /** Longest event in the lane: how far left of a window an overlapping event can start. */
  maxDurMs: number;
  busyMs: number;
  counts: Record<TimelineKind, number>;
}

export interface TimelineModel {
  lanes: Lane[];
  endMs: number;
  eventCount: number;
  criticalCount: number;
}

const COMPUTE: ReadonlySet<TimelineKind> = new Set(['forward', 'backward', 'update', 'recompute']);
export const isCompute = (e: TimelineEvent): boolean => COMPUTE.has(e.kind);

export function emptyCounts(): Record<TimelineKind, number> {
  return { forward: 0, backward: 0, allreduce: 0, transfer: 0, update: 0, recompute: 0, allgather: 0, reducescatter: 0, alltoall: 0 };
}

function laneOrder(id: string): [number, number, string] {
  const gpu = /^gpu:(\d+)$/.exec(id);
  if (gpu) return [0, Number(gpu[1]), id];
  return [id.startsWith('link:') ? 1 : 2, 0, id];
}

function laneLabel(id: string): string {
  const gpu = /^gpu:(\d+)$/.exec(id);
  if (gpu) return `GPU ${gpu[1]}`;
  return id.startsWith('link:') ? `link ${id.slice(5)}` : id;
}

function unionLength(starts: Float64Array, ends: Float64Array): number {
  let total = 0;
  let curS = -Infinity;
  let curE = -Infinity;
  for (let i = 0; i < starts.length; i++) {
    if (starts[i] > curE) {
      if (curE > curS) total += curE - curS;
      curS = starts[i];
      curE = ends[i];
    } else if (ends[i] > curE) curE = ends[i];
  }
  if (curE > curS) total += curE - curS;
  return total;
}

function isSortedByStart(events: TimelineEvent[]): boolean {
  for (let i = 1; i < events.length; i++) if (events[i].startMs < events[i - 1].startMs) return false;
  return true;
}

export function buildTimeline(events: TimelineEvent[], gpus: number, stepTimeMs: number): TimelineModel {
  const byLane = new Map<string, TimelineEvent[]>();
  for (let g = 0; g < gpus; g++) byLane.set(`gpu:${g}`, []);
  let endMs = stepTimeMs > 0 ? stepTimeMs : 0;
  let criticalCount = 0;
  for (const e of events) {
    const id = e.lane || `gpu:${e.device}`;
    let list = byLane.get(id);
    if (!list) byLane.set(id, (list = []));
    list.push(e);
    if (e.endMs > endMs) endMs = e.endMs;
    if (e.critical) criticalCount++;
  }
  const ids = [...byLane.keys()].sort((a, b) => {
    const [ka, na, sa] = laneOrder(a);
    const [kb, nb, sb] = laneOrder(b);
    return ka - kb || na - nb || sa.localeCompare(sb);
  });
  const lanes = ids.map((id): Lane => {
    const evs = byLane.get(id)!;
    // The simulator emits each lane in start order; sort (stable) only when it did not.
    if (!isSortedByStart(evs)) evs.sort((a, b) => a.startMs - b.startMs);
    const starts = new Float64Array(evs.length);
    const ends = new Float64Array(evs.length);
    const counts = emptyCounts();
    let maxDurMs = 0;
    evs.forEach((e, i) => {
      starts[i] = e.startMs;
      ends[i] = e.endMs;
      counts[e.kind] = (counts[e.kind] ?? 0) + 1;
      if (e.endMs - e.startMs > maxDurMs) maxDurMs = e.endMs - e.startMs;
    });
    return { id, label: laneLabel(id), kind: id.startsWith('gpu:') ? 'gpu' : 'link', events: evs, starts, ends, maxDurMs, busyMs: unionLength(starts, ends), counts };
  });
  return { lanes, endMs, eventCount: events.length, criticalCount };
}

/** Index range [lo, hi) of a lane's events that may overlap the window [t0, t1]. */
export function visibleRange(lane: Lane, t0: number, t1: number): [number, number] {
  const lo = bisectLeft(lane.starts, t0 - lane.maxDurMs);
  const hi = bisectLeft(lane.starts, t1 + 1e-9 * Math.max(1, Math.abs(t1)));
  return [lo, Math.max(lo, hi)];
}

/** The event in `lane` under time t (within tolMs), nearest first. */
export function hitTest(lane: Lane, t: number, tolMs: number): TimelineEvent | undefined {
  const [lo, hi] = visibleRange(lane, t - tolMs, t + tolMs);
  let best: TimelineEvent | undefined;
  let bestDist = Infinity;
  for (let i = lo; i < hi; i++) {
    const s = lane.starts[i];
    const e = lane.ends[i];
    const d = t < s ? s - t : t > e ? t - e : 0;
    if (d <= tolMs && d < bestDist) {
      best = lane.events[i];
      bestDist = d;
      if (d === 0) break;
    }
  }
  return best;
}
