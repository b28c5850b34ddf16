/**
 * Discrete-event core: each resource (a device's compute stream 'gpu:i', a
 * link channel 'link:<name>') runs its tasks in issue order, as CUDA streams
 * and NCCL communicators do. A task starts when its dependencies and all its
 * resources are free. Compute beside a collective on its GPU runs slower
 * (cost/overlap.ts). The critical path is traced back from the task that
 * ends last through whichever predecessor (dependency or stream) released it.
 */
import type { TimelineKind } from '../../protocol/plan';
import { computeEndMs } from '../cost/overlap';
import { drain, type Steps } from '../steps';

export interface SimTask {
  kind: TimelineKind;
  layer: string;
  /** 'gpu:i' lanes for compute, one 'link:…' lane for communication. */
  resources: string[];
  /** Logical devices taking part. */
  devices: number[];
  durationMs: number;
  deps: number[];
  bytes?: number;
  microBatch?: number;
}

export interface SimRun {
  tasks: SimTask[];
  start: Float64Array;
  end: Float64Array;
  critical: Uint8Array;
  makespanMs: number;
}

export class Engine {
  readonly tasks: SimTask[] = [];

  add(task: SimTask): number {
    this.tasks.push(task);
    return this.tasks.length - 1;
  }

  run(): SimRun {
    return drain(this.runSteps());
  }

  /** run() with a checkpoint every few thousand tasks (pipelines with many micro-batches have tens of thousands). */
  *runSteps(): Steps<SimRun> {
    const N = this.tasks.length;
    const start = new Float64Array(N);
    const end = new Float64Array(N);
    // Each task's stream predecessors (the previous task on each of its resources), CSR-style.
    const streamFrom = new Int32Array(N + 1);
    const streamPrev: number[] = [];
    const lastOn = new Map<string, number>();
    // Collectives in flight per device, for compute beside them (cost/overlap.ts). Compute groups are identical or
    // disjoint, so a group is looked up by its first device, and only those devices keep spans.
    const groupHeads = new Set<number>();
    for (const t of this.tasks) if (isComputeKind(t.kind) && t.devices.length > 0) groupHeads.add(t.devices[0]!);
    const commSpans = new Map<number, Array<[number, number]>>();
    for (let i = 0; i < N; i++) {
      const t = this.tasks[i];
      let s = 0;
      for (const d of t.deps) {
        if (d >= i || d < 0) throw new Error(`simulator: task ${i} depends on task ${d}, not an earlier one`);
        if (end[d] > s) s = end[d];
      }
      streamFrom[i] = streamPrev.length;
      for (const r of t.resources) {
        const prev = lastOn.get(r);
        if (prev !== undefined) {
          streamPrev.push(prev);
          if (end[prev] > s) s = end[prev];
        }
        lastOn.set(r, i);
      }
      start[i] = s;
      if (isComputeKind(t.kind)) {
        const spans = t.devices.length > 0 ? commSpans.get(t.devices[0]!) : undefined;
        if (spans) {
          // Stream order: later compute on this group starts later still, so spans already over are dropped.
          let keep = 0;
          for (const span of spans) if (span[1] > s) spans[keep++] = span;
          spans.length = keep;
        }
        end[i] = spans && spans.length > 0 ? computeEndMs(s, t.durationMs, spans) : s + Math.max(0, t.durationMs);
      } else {
        end[i] = s + Math.max(0, t.durationMs);
        if (end[i] > s) {
          for (const d of t.devices) {
            if (!groupHeads.has(d)) continue;
            let spans = commSpans.get(d);
            if (!spans) commSpans.set(d, (spans = []));
            spans.push([s, end[i]]);
          }
        }
      }
      if ((i & 4095) === 4095) yield;
    }
    streamFrom[N] = streamPrev.length;
    let last = -1;
    let makespan = 0;
    for (let i = 0; i < N; i++) {
      if (end[i] >= makespan) {
        makespan = end[i];
        last = i;
      }
    }
    const critical = criticalPath(this.tasks, start, end, last, (i) => streamPrev.slice(streamFrom[i], streamFrom[i + 1]));
    return { tasks: this.tasks, start, end, critical, makespanMs: makespan };
  }
}

/**
 * The chain of tasks whose durations add up to the makespan: from the task
 * that ends last, step back each time to the predecessor (a dependency, or the
 * previous task on one of its streams) that ends exactly when this task starts
 * (within a rounding epsilon), i.e. the one that held it back. Dependencies are
 * preferred on ties: a transfer or all-reduce the task waited on explains the
 * wait better than the stream it shares. Start times are maxima of those ends,
 * so a task that starts after 0 always has such a predecessor and the chain
 * has no gaps; should one ever be missing, the latest-ending predecessor is
 * taken and the gap is a wait on the path.
 */
export function criticalPath(tasks: readonly SimTask[], start: Float64Array, end: Float64Array, last: number, streamPrev: (task: number) => readonly number[]): Uint8Array {
  const critical = new Uint8Array(tasks.length);
  for (let i = last; i >= 0; ) {
    critical[i] = 1;
    const eps = 1e-9 * Math.max(1, start[i]);
    if (start[i] <= eps) break;
    const candidates = [...tasks[i].deps, ...streamPrev(i)];
    let next = candidates.find((c) => Math.abs(end[c] - start[i]) <= eps) ?? -1;
    if (next < 0) for (const c of candidates) if (next < 0 || end[c] > end[next]) next = c;
    i = next;
  }
  return critical;
}

const groupKeys = new WeakMap<readonly number[], string[]>();

/**
 * The compute resource of a device group. Plans only ever use identical or
 * disjoint compute groups (all n devices, or pipeline stages), so one
 * resource per group is exact and keeps the engine O(tasks), not O(tasks·n).
 */
export function gpuLanes(devices: readonly number[]): string[] {
  let k = groupKeys.get(devices);
  if (!k) {
    k = [`gpus:${devices.join(',')}`];
    groupKeys.set(devices, k);
  }
  return k;
}

export function isComputeKind(kind: TimelineKind): boolean {
  return kind === 'forward' || kind === 'backward' || kind === 'update' || kind === 'recompute';
}
