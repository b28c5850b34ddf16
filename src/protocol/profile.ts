/**
 * The profile file: what `wap profile` writes and `wap plan --profile` reads.
 * The planner depends on this *data* only, never on the profiler's code.
 * Versioned: a reader rejects a newer major version with a clear message.
 */

export const PROFILE_FORMAT = 'wap-profile';
export const PROFILE_VERSION = 1;

export type BackendId = 'tfjs-node-gpu' | 'tfjs-node' | 'wasm' | 'cpu' | 'torch';

export interface MeasuredDevice {
  /** Index within the profile's device list; matches `LayerMeasurement.device`. */
  index: number;
  /** e.g. 'NVIDIA H200', 'CPU (wasm simd)'. */
  name: string;
  backend: BackendId;
  /** Driver / library version string, part of the cache key. */
  version: string;
  memoryBytes?: number;
}

export interface LayerMeasurement {
  /** Layer name as in the IR (`features.0`). */
  layer: string;
  /** Stable signature of op + attrs + input shapes: equal signatures share measurements. */
  signature: string;
  device: number;
  batch: number;
  /** Medians over repetitions, ms. */
  forwardMs: number;
  backwardMs: number;
  /** Spread: (p90 − p10) / median, or the backend's equivalent; for trust. */
  forwardSpread: number;
  backwardSpread: number;
  repetitions: number;
  peakMemoryBytes?: number;
  /** 'measured' | 'cached' | 'fallback' (trial failed; analytical estimate used, see `error`). */
  status: 'measured' | 'cached' | 'fallback';
  error?: string;
}

/** α-β model of one link: time(bytes) = alpha + bytes / (betaGBs · 1e9) seconds. */
export interface LinkCalibration {
  name: string;
  /** 'host-device' | 'device-device' | 'inter-node' | 'host-memory' (a memcpy measured on a CPU-only backend: not a link) */
  kind: string;
  devices: number[];
  alphaUs: number;
  bandwidthGBs: number;
  /** 'measured' | 'nvidia-smi' | 'cluster-spec' */
  source: string;
}

export interface ProfileFile {
  format: typeof PROFILE_FORMAT;
  version: number;
  createdAt: string;
  model: string;
  file?: string;
  dtype: 'float32';
  devices: MeasuredDevice[];
  layers: LayerMeasurement[];
  links: LinkCalibration[];
  /** Whole-step time measured on the same backend, when `--fidelity` ran; used to report fidelity. */
  wholeStep?: { device: number; batch: number; ms: number };
  /** The Python interpreter and torch version that measured (torch backend, `wap validate`). */
  python?: { interpreter: string; executable?: string; torchVersion?: string };
  warnings: string[];
}
