/**
 * Measured costs from a profile file (data only; never the profiler's code).
 * A layer matches by name first, then by signature. With several measured
 * batches the time is fitted as a + b·batch (least squares) so the fixed
 * overhead does not scale; with one batch it scales proportionally.
 */
import type { AnalyzedLayer } from '../../core/ir';
import { layerSignature } from '../../core/signature';
import type { CostSource } from '../../protocol/plan';
import type { LayerMeasurement, ProfileFile } from '../../protocol/profile';

export interface MeasuredCost {
  source: CostSource;
  /** ms for the whole layer on one device at the given batch. */
  at(batch: number): { forwardMs: number; backwardMs: number };
}

/** Repeated measurements at one batch (a profile re-run and merged) are one point, their mean. */
function meanPerBatch(points: Array<[number, number]>): Array<[number, number]> {
  const sums = new Map<number, [number, number]>();
  for (const [b, t] of points) {
    const s = sums.get(b) ?? [0, 0];
    sums.set(b, [s[0] + t, s[1] + 1]);
  }
  return [...sums].map(([b, [sum, count]]) => [b, sum / count]);
}

function fit(measured: Array<[number, number]>): (b: number) => number {
  const points = meanPerBatch(measured);
  if (points.length === 1) {
    const [b0, t0] = points[0];
    return (b) => (t0 * b) / b0;
  }
  const n = points.length;
  const mx = points.reduce((s, p) => s + p[0], 0) / n;
  const my = points.reduce((s, p) => s + p[1], 0) / n;
  let sxy = 0;
  let sxx = 0;
  for (const [x, y] of points) {
    sxy += (x - mx) * (y - my);
    sxx += (x - mx) ** 2;
  }
  const slope = sxx > 0 ? Math.max(0, sxy / sxx) : 0;
  const intercept = Math.max(0, my - slope * mx);
  return (b) => intercept + slope * b;
}

export class ProfileCosts {
  private readonly byName = new Map<string, LayerMeasurement[]>();
  private readonly bySignature = new Map<string, LayerMeasurement[]>();
  private readonly batches = new Set<number>();

  constructor(readonly profile: ProfileFile) {
    for (const m of profile.layers) {
      if (m.status === 'fallback' || !(m.forwardMs >= 0) || !(m.backwardMs >= 0) || !(m.batch > 0)) continue;
      this.batches.add(m.batch);
      for (const [map, key] of [[this.byName, m.layer], [this.bySignature, m.signature]] as const) {
        if (!key) continue;
        const list = map.get(key) ?? [];
        list.push(m);
        map.set(key, list);
      }
    }
  }

  /** By layer name, else by the core's layerSignature at each batch the profile measured. */
  lookup(layer: AnalyzedLayer, dtypeBytes: number): MeasuredCost | undefined {
    let list = this.byName.get(layer.name);
    if (!list) {
      const found: LayerMeasurement[] = [];
      for (const b of this.batches) found.push(...(this.bySignature.get(layerSignature(layer, b, dtypeBytes)) ?? []));
      list = found;
    }
    if (!list || list.length === 0) return undefined;
    // One device's measurements: the first device listed for this layer.
    const device = list[0].device;
    const mine = list.filter((m) => m.device === device);
    const dev = this.profile.devices.find((d) => d.index === device);
    const fwd = fit(mine.map((m) => [m.batch, m.forwardMs]));
    const bwd = fit(mine.map((m) => [m.batch, m.backwardMs]));
    const batches = [...new Set(mine.map((m) => m.batch))];
    const source: CostSource = { kind: 'measured', backend: dev?.backend, device: dev?.name };
    if (batches.length === 1) source.measuredBatch = batches[0];
    return { source, at: (b) => ({ forwardMs: fwd(b), backwardMs: bwd(b) }) };
  }
}

/** Checks the header; returns a message when the file cannot be used. */
export function profileProblem(p: unknown): string | undefined {
  if (typeof p !== 'object' || p === null) return 'profile is not a JSON object';
  const o = p as Record<string, unknown>;
  if (o.format !== 'wap-profile') return "profile.format must be 'wap-profile'";
  if (typeof o.version !== 'number' || o.version > 1) return `profile.version ${String(o.version)} is newer than this planner reads (1)`;
  if (!Array.isArray(o.layers)) return 'profile.layers must be an array';
  if (!Array.isArray(o.devices)) return 'profile.devices must be an array';
  return undefined;
}
