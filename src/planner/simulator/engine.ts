/**
 * Discrete-event core: each resource (a device's compute stream 'gpu:i', a
 * link channel 'link:<name>') runs its tasks in issue order, as CUDA streams
 * and NCCL communicators do. A task starts when its dependencies and all its
 * resources are free. The critical path is traced back from the last task
 * through whichever predecessor (dependency or stream) released it.
 */
import type { TimelineKind } from '../../protocol/plan';

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
    const N = this.tasks.length;
    const start = new Float64Array(N);
    const end = new Float64Array(N);
    const released = new Int32Array(N).fill(-1);
    const lastOn = new Map<string, number>();
    for (let i = 0; i < N; i++) {
      const t = this.tasks[i];
      let s = 0;
      let by = -1;
      for (const d of t.deps) {
        if (d >= i || d < 0) throw new Error(`simulator: task ${i} depends on task ${d}, not an earlier one`);
        if (end[d] >= s) {
          s = end[d];
          by = d;
        }
      }
      for (const r of t.resources) {
        const prev = lastOn.get(r);
        if (prev !== undefined && end[prev] > s) {
          s = end[prev];
          by = prev;
        }
        lastOn.set(r, i);
      }
      start[i] = s;
      end[i] = s + Math.max(0, t.durationMs);
      released[i] = by;
    }
    let last = -1;
    let makespan = 0;
    for (let i = 0; i < N; i++) {
      if (end[i] >= makespan) {
        makespan = end[i];
        last = i;
      }
    }
    const critical = new Uint8Array(N);
    for (let i = last; i >= 0; i = released[i]) critical[i] = 1;
    return { tasks: this.tasks, start, end, critical, makespanMs: makespan };
  }
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
  return kind === 'forward' || kind === 'backward' || kind === 'update';
}
