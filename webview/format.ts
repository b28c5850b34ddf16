/** Number formatting shared by every view, tooltip and text table. */
import type { MemoryBreakdown, TrainingSetup } from '../src/protocol/plan';
import { offloadText, parallelDegreesText, zeroText } from '../src/protocol/setupText';

export function fmtMs(ms: number): string {
  if (!Number.isFinite(ms)) return '–';
  if (ms === 0) return '0 ms';
  const a = Math.abs(ms);
  if (a >= 1000) return `${(ms / 1000).toFixed(a >= 10000 ? 1 : 2)} s`;
  if (a >= 100) return `${ms.toFixed(0)} ms`;
  if (a >= 10) return `${ms.toFixed(1)} ms`;
  if (a >= 0.01) return `${ms.toFixed(2)} ms`;
  return `${(ms * 1000).toFixed(1)} µs`;
}

export function fmtBytes(bytes: number): string {
  if (!Number.isFinite(bytes)) return '–';
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let v = bytes;
  let i = 0;
  while (Math.abs(v) >= 1000 && i < units.length - 1) {
    v /= 1000;
    i++;
  }
  return `${i === 0 ? v.toFixed(0) : v.toFixed(v >= 100 ? 0 : 1)} ${units[i]}`;
}

export function fmtCount(n: number): string {
  if (!Number.isFinite(n)) return '–';
  const a = Math.abs(n);
  if (a >= 1e9) return `${(n / 1e9).toFixed(2)} B`;
  if (a >= 1e6) return `${(n / 1e6).toFixed(2)} M`;
  if (a >= 1e4) return `${(n / 1e3).toFixed(1)} k`;
  return n.toLocaleString('en-US');
}

export function fmtRate(samplesPerSec: number): string {
  if (!Number.isFinite(samplesPerSec)) return '–';
  return `${samplesPerSec >= 100 ? samplesPerSec.toFixed(0) : samplesPerSec.toFixed(1)} samples/s`;
}

export function fmtJoules(j: number): string {
  if (!Number.isFinite(j)) return '–';
  if (j >= 1) return `${j.toFixed(2)} J`;
  return `${(j * 1000).toFixed(1)} mJ`;
}

export function fmtDevices(devices: number[]): string {
  if (devices.length === 0) return 'none';
  const sorted = [...devices].sort((a, b) => a - b);
  const contiguous = sorted.every((d, i) => i === 0 || d === sorted[i - 1] + 1);
  if (contiguous && sorted.length > 2) return `GPU ${sorted[0]}–${sorted[sorted.length - 1]}`;
  return `GPU ${sorted.join(', ')}`;
}

/** The plan's training setup in one compact line: precision, degrees, memory savers. */
export function fmtSetup(s: TrainingSetup): string {
  const parts = [
    s.ampStyle ? `${s.precision} ${s.ampStyle}` : s.precision,
    parallelDegreesText(s, true),
    zeroText(s),
    `recompute ${s.recompute}`,
    `micro-batch ${s.microBatch} × ${s.gradientAccumulation}`,
  ];
  const offload = offloadText(s);
  if (offload) parts.push(offload);
  return parts.join(' · ');
}

/** Memory per GPU by holder: "weights 1.2 GB · grads … · optimizer … · activations … · workspace …". */
export function fmtMemoryBreakdown(m: MemoryBreakdown): string {
  return `weights ${fmtBytes(m.weights)} · grads ${fmtBytes(m.gradients)} · optimizer ${fmtBytes(m.optimizer)} · activations ${fmtBytes(m.activations)} · workspace ${fmtBytes(m.workspace)}`;
}
