/**
 * `wap validate` / the "WAP: Validate Plan" command: a plan's predicted step
 * next to a real multi-process run of its data-parallel configuration.
 */

export type ValidationPhase = 'compute' | 'allreduce' | 'step';

export interface PhaseComparison {
  phase: ValidationPhase;
  /** What the phase covers, for the table. */
  label: string;
  predictedMs: number;
  measuredMs: number;
  /** predicted ÷ measured. */
  ratio: number;
}

export interface ValidationReport {
  model: string;
  file?: string;
  /** Global batch (all ranks). */
  batch: number;
  /** e.g. 'cpu:2' or 'cuda:0,1'. */
  devices: string;
  /** e.g. '2 CPU processes (gloo)'. */
  devicesDescription: string;
  processBackend: 'gloo' | 'nccl';
  torchVersion: string;
  python: string;
  predictedStepMs: number;
  measuredStepMs: number;
  /** predicted ÷ measured for the whole step. */
  ratio: number;
  phases: PhaseComparison[];
  /** Where the prediction's cluster came from (calibration numbers). */
  calibration: { tflops: number; allreduceAlphaUs: number; allreduceBandwidthGBs: number; memoryBandwidthGBs: number; threadsPerProcess: number };
  /** Parts of the plan that could not be validated here, and why. */
  notValidated: string[];
  warnings: string[];
  warmup: number;
  steps: number;
}

export interface ValidatePlanParams {
  uri: string;
  /** Model name; absent = the model at/near `line`, else the first. */
  model?: string;
  line?: number;
  /** 'cpu:N' or 'cuda:0,1,…' (default: the local GPUs, else cpu:2). */
  devices?: string;
}
