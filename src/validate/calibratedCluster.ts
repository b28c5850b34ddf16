/**
 * The cluster a validation predicts on: the local devices as measured, not a
 * datasheet. Per-layer times come from a torch profile taken with the same
 * thread count each rank gets; this spec supplies what the planner needs
 * besides them: a FLOP rate for layers without a measurement (the rate the
 * measured layers achieved), the memory bandwidth one rank gets while all
 * ranks stream (optimizer update), and the link, fitted from all-reduces of
 * several sizes on the same ranks.
 *
 * A measured all-reduce of `bytes` over p ranks takes α_fit + bytes/β_fit.
 * The planner models a ring all-reduce as 2(p−1)/p · bytes/bw + 2(p−1)·α
 * (Patarasuk & Yuan, "Bandwidth optimal all-reduce algorithms", JPDC 2009),
 * so the link is bw = β_fit · 2(p−1)/p and α = α_fit / (2(p−1)).
 */
import type { AnalyzedModel } from '../core/ir';
import { gpuMemoryBytes, type ClusterSpec } from '../planner/index';
import type { ProfileFile } from '../protocol/profile';
import { fitAlphaBeta } from '../profiler/calibration';

export interface ClusterCalibration {
  tflops: number;
  allreduceAlphaUs: number;
  allreduceBandwidthGBs: number;
  memoryBandwidthGBs: number;
  linkBandwidthGBs: number;
  linkLatencyUs: number;
}

/** FLOP/s the profile's measured layers achieved (forward + backward FLOPs over their time). */
export function measuredTflops(model: AnalyzedModel, profile: ProfileFile): number {
  const byName = new Map(model.layers.map((l) => [l.name, l]));
  let flops = 0;
  let ms = 0;
  for (const m of profile.layers) {
    const l = byName.get(m.layer);
    if (!l || m.status === 'fallback' || m.device !== profile.layers[0]?.device) continue;
    flops += (l.workload.forwardFlops + l.workload.backwardFlops) * m.batch;
    ms += m.forwardMs + m.backwardMs;
  }
  if (!(flops > 0 && ms > 0)) throw new Error('the calibration profile measured no layer with FLOPs; cannot derive a compute rate');
  return flops / (ms * 1e-3) / 1e12;
}

export function calibratedCluster(
  name: string,
  processes: number,
  memoryBytesPerProcess: number,
  tflops: number,
  allreducePoints: Array<{ bytes: number; ms: number }>,
  memoryBandwidthGBs: number,
): { cluster: ClusterSpec; calibration: ClusterCalibration } {
  const fit = fitAlphaBeta(allreducePoints);
  const p = Math.max(2, processes);
  const linkBandwidthGBs = Number.isFinite(fit.bandwidthGBs) ? (fit.bandwidthGBs * 2 * (p - 1)) / p : 1e6;
  const linkLatencyUs = fit.alphaUs / (2 * (p - 1));
  const link = { bandwidthGBs: linkBandwidthGBs, latencyUs: linkLatencyUs, name: 'measured-allreduce' };
  const gpus = Array.from({ length: processes }, (_, index) => ({
    index,
    node: 0,
    name,
    tflops,
    // CPU processes train in fp32: no other precision has a measured rate, so none is offered.
    peakTflops: { fp32: tflops },
    // A spec's memoryGB is binary (planner/cluster/spec.ts gpuMemoryBytes): the planner sees exactly these bytes.
    memoryGB: memoryBytesPerProcess / gpuMemoryBytes({ memoryGB: 1 }),
    memoryBandwidthGBs,
    // Energy is not validated: no power figures for a CPU process.
    powerW: 0,
    idlePowerW: 0,
  }));
  return {
    cluster: { name: `${processes}× ${name} (calibrated)`, source: 'calibrated', nodes: 1, gpus, intraNode: link, interNode: link },
    calibration: { tflops, allreduceAlphaUs: fit.alphaUs, allreduceBandwidthGBs: fit.bandwidthGBs, memoryBandwidthGBs, linkBandwidthGBs, linkLatencyUs },
  };
}
