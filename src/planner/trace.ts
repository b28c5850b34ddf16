/**
 * Chrome Trace Event JSON (opens in Perfetto / chrome://tracing): one process
 * per GPU and one for the links, complete ('X') events in microseconds.
 */
import type { PlanReport } from '../protocol/plan';

interface TraceEvent {
  name: string;
  cat?: string;
  ph: 'X' | 'M';
  ts?: number;
  dur?: number;
  pid: number;
  tid: number;
  args?: Record<string, unknown>;
}

export function toChromeTrace(report: PlanReport): { traceEvents: TraceEvent[]; displayTimeUnit: 'ms'; otherData: Record<string, unknown> } {
  const events: TraceEvent[] = [];
  const lanes = new Map<string, { pid: number; tid: number }>();
  const LINK_PID = 100000;
  const laneOf = (lane: string): { pid: number; tid: number } => {
    let l = lanes.get(lane);
    if (l) return l;
    if (lane.startsWith('gpu:')) {
      const g = Number(lane.slice(4));
      l = { pid: g, tid: 0 };
      events.push({ name: 'process_name', ph: 'M', pid: g, tid: 0, args: { name: `GPU ${g}` } }, { name: 'thread_name', ph: 'M', pid: g, tid: 0, args: { name: 'compute' } });
    } else {
      const tid = [...lanes.keys()].filter((k) => !k.startsWith('gpu:')).length + 1;
      l = { pid: LINK_PID, tid };
      if (tid === 1) events.push({ name: 'process_name', ph: 'M', pid: LINK_PID, tid: 0, args: { name: 'links' } });
      events.push({ name: 'thread_name', ph: 'M', pid: LINK_PID, tid, args: { name: lane.replace(/^link:/, '') } });
    }
    lanes.set(lane, l);
    return l;
  };
  for (const e of report.timeline) {
    const { pid, tid } = laneOf(e.lane);
    const args: Record<string, unknown> = { device: e.device };
    if (e.devices) args.devices = e.devices;
    if (e.bytes !== undefined) args.bytes = e.bytes;
    if (e.microBatch !== undefined) args.microBatch = e.microBatch;
    if (e.critical) args.critical = true;
    events.push({
      name: `${e.kind} ${e.layer}`,
      cat: e.critical ? `${e.kind},critical` : e.kind,
      ph: 'X',
      ts: Math.round(e.startMs * 1000 * 1000) / 1000,
      dur: Math.round((e.endMs - e.startMs) * 1000 * 1000) / 1000,
      pid,
      tid,
      args,
    });
  }
  return {
    traceEvents: events,
    displayTimeUnit: 'ms',
    otherData: { model: report.model, batch: report.batch, gpus: report.plan.gpus, stepTimeMs: report.plan.stepTimeMs, cluster: report.cluster.name },
  };
}
