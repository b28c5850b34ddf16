/**
 * Communication calibration: fits the α-β model time = α + bytes/β to measured
 * host↔device copies (least squares), and turns nvidia-smi's topology matrix
 * into nominal device↔device links. On CPU-only backends the copy is a memcpy:
 * recorded as 'host-memory', never as a device link. A cluster spec overrides both later: that is
 * the planner's business; here we only record what we saw and where it came from.
 */
import type { LinkCalibration } from '../protocol/profile';
import { parseTopology } from './gpus';

/** Least-squares fit of ms = a + b·bytes; α in µs, bandwidth in GB/s. */
export function fitAlphaBeta(points: Array<{ bytes: number; ms: number }>): { alphaUs: number; bandwidthGBs: number } {
  const n = points.length;
  if (n < 2) throw new Error('need at least two copy sizes to fit α and β');
  const mx = points.reduce((s, p) => s + p.bytes, 0) / n;
  const my = points.reduce((s, p) => s + p.ms, 0) / n;
  let sxy = 0;
  let sxx = 0;
  for (const p of points) {
    sxy += (p.bytes - mx) * (p.ms - my);
    sxx += (p.bytes - mx) ** 2;
  }
  const slope = sxx > 0 ? sxy / sxx : 0; // ms per byte
  const intercept = my - slope * mx;
  return {
    alphaUs: Math.max(0, intercept * 1000),
    bandwidthGBs: slope > 0 ? 1 / (slope * 1e-3) / 1e9 : Number.POSITIVE_INFINITY,
  };
}

export const COPY_SIZES_BYTES = [4 << 10, 64 << 10, 1 << 20, 4 << 20, 16 << 20];

/**
 * On a CPU-only backend (wasm, cpu, tfjs-node on CPU, torch without CUDA) the
 * "upload + read-back" is a memcpy inside one process (measured at thousands of
 * GB/s), not a link between devices, so it is recorded as 'host-memory' and no
 * planner should read it as host↔device bandwidth.
 */
export function hostMemoryLink(device: number, deviceName: string, points: Array<{ bytes: number; ms: number }>): LinkCalibration {
  return { ...hostDeviceLink(device, deviceName, points), name: `host memory copy on ${deviceName} (CPU backend, not a device link)`, kind: 'host-memory' };
}

/** Host↔GPU copies: a real link (PCIe or NVLink-C2C) a plan can use. */
export function hostDeviceLink(device: number, deviceName: string, points: Array<{ bytes: number; ms: number }>): LinkCalibration {
  const fit = fitAlphaBeta(points);
  return {
    name: `host↔${deviceName}`,
    kind: 'host-device',
    devices: [device],
    alphaUs: round(fit.alphaUs),
    bandwidthGBs: Number.isFinite(fit.bandwidthGBs) ? round(fit.bandwidthGBs) : 1e6,
    source: 'measured',
  };
}

/** Device↔device links from `nvidia-smi topo -m`, mapped to profile device indices by GPU index. */
export function topologyLinks(topo: string, deviceOfGpu: (gpu: number) => number | undefined): LinkCalibration[] {
  return parseTopology(topo).flatMap((l) => {
    const a = deviceOfGpu(l.a);
    const b = deviceOfGpu(l.b);
    if (a === undefined || b === undefined) return [];
    return [{ name: `GPU${l.a}↔GPU${l.b} (${l.kind})`, kind: 'device-device', devices: [a, b], alphaUs: l.alphaUs, bandwidthGBs: l.bandwidthGBs, source: 'nvidia-smi' }];
  });
}

const round = (x: number) => Math.round(x * 1000) / 1000;
