/**
 * Messages between the profiler (parent) and a trial worker. The tfjs worker
 * speaks them over fork's IPC channel; the torch worker as JSON lines on stdio.
 * Plain data only.
 */
import type { Attrs, Layout, OpKind } from '../../core/ir';
import type { BackendId, LayerMeasurement } from '../../protocol/profile';

/** One layer, as a worker needs it to build and time it. Shapes exclude batch, in the model's layout. */
export interface TrialSpec {
  id: string;
  name: string;
  op: OpKind;
  attrs: Attrs;
  inputShapes: number[][];
  outputShape?: number[];
  /** Producer ids: for whole-step runs only. */
  inputs: string[];
  layout: Layout;
  /** 'int' marks token-id inputs (embedding). */
  inputDtypes?: Array<'float' | 'int'>;
  /** False when every input is a model input: a training step computes no gradient for those. */
  needsInputGrad: boolean;
}

export interface ModelInputSpec {
  id: string;
  shape: number[];
  dtype: 'float' | 'int';
}

export type ParentMessage =
  | { type: 'init'; backend: BackendId }
  | { type: 'trial'; id: number; spec: TrialSpec; batch: number; warmup: number; repetitions: number }
  | { type: 'copy'; id: number; sizesBytes: number[]; repetitions: number }
  | {
      type: 'wholeStep';
      id: number;
      specs: TrialSpec[];
      inputs: ModelInputSpec[];
      outputs: string[];
      batch: number;
      warmup: number;
      repetitions: number;
    }
  | { type: 'exit' };

/** What one trial measures: the timing fields of a profile's LayerMeasurement. */
export type TrialTiming = Pick<LayerMeasurement, 'forwardMs' | 'backwardMs' | 'forwardSpread' | 'backwardSpread' | 'repetitions' | 'peakMemoryBytes'>;

/** Which tf namespace a tfjs worker measures with: proof that native backends use the package's own. */
export interface RuntimeInfo {
  /** `tf.getBackend()` of the namespace in use, after the backend was set. */
  activeBackend: string;
  /** 'bundled tfjs-core', or the native package's folder. */
  source: string;
  /** True when the namespace is the worker's own bundled tfjs-core. */
  isBundledCore: boolean;
  /** `version_core` of the namespace in use. */
  coreVersion: string;
}

export type WorkerMessage =
  | { type: 'ready'; deviceName: string; version: string; backend: BackendId; runtime?: RuntimeInfo }
  | { type: 'initFailed'; error: string }
  | ({ type: 'result'; id: number } & TrialTiming)
  | { type: 'unsupported'; id: number; reason: string }
  | { type: 'failed'; id: number; error: string }
  | { type: 'copyResult'; id: number; points: Array<{ bytes: number; ms: number }> }
  | { type: 'wholeStepResult'; id: number; ms: number; spread: number };
