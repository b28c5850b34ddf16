/**
 * Validation of a plan against a real run: calibrate the local devices, plan
 * the model's data-parallel configuration on them, then run a few training
 * steps with torchrun and compare per phase. Used by `wap validate` and the
 * server's "Validate Plan" request; spawns processes, so trusted callers only.
 */
import { totalmem } from 'node:os';
import type { AnalyzedModel } from '../core/ir';
import { fullWidthOptimizer, planModel } from '../planner/index';
import type { OptimizerKind, PlanReport } from '../protocol/plan';
import type { LinkCalibration, ProfileFile } from '../protocol/profile';
import type { PhaseComparison, ValidationReport } from '../protocol/validate';
import {
  describeDevices,
  parseDevices,
  probePython,
  profileModel,
  resolvePython,
  runDistributed,
  threadsPerProcess,
  UntrustedError,
  type CancelToken,
  type DistributedMeasurement,
} from '../profiler/index';
import { calibratedCluster, measuredTflops } from './calibratedCluster';

export interface ValidateOptions {
  /** 'cpu:N' or 'cuda:0,1,…'. */
  devices: string;
  /** Global batch over all ranks. */
  batch: number;
  python?: string;
  optimizer?: OptimizerKind;
  cacheDir: string;
  trusted: boolean;
  warmup?: number;
  steps?: number;
  /** Bound on the torchrun job (default 10 min). */
  timeoutMs?: number;
  cancel?: CancelToken;
  file?: string;
  onStage?: (stage: string) => void;
}

/** All-reduce sizes for the link fit: latency-bound to bandwidth-bound. */
const ALLREDUCE_BYTES = [16 << 10, 256 << 10, 4 << 20, 16 << 20];

/** torch ≥ 2.2 has FSDP and DTensor's parallelize_module in the shape validation would need. */
function hasModernDistributed(version: string): boolean {
  const [maj, min] = version.split('.').map((x) => parseInt(x, 10));
  return maj! > 2 || (maj === 2 && min! >= 2);
}

export async function validatePlan(model: AnalyzedModel, options: ValidateOptions): Promise<{ report: ValidationReport; profile: ProfileFile; plan: PlanReport }> {
  if (!options.trusted) throw new UntrustedError();
  const devices = parseDevices(options.devices);
  if (options.batch % devices.count !== 0) throw new Error(`batch ${options.batch} does not split evenly over ${devices.count} ranks`);
  const batchPerRank = options.batch / devices.count;
  const python = resolvePython(options.python);
  const info = await probePython(python);
  if (!info.ok) throw new Error(`cannot validate: ${info.reason}`);
  if (!info.torchVersion) throw new Error(`cannot validate: ${python} cannot import torch (${info.torchReason}); choose an interpreter with torch (--python)`);
  if (devices.kind === 'cuda') {
    const missing = devices.cuda.filter((i) => i >= info.cudaDevices.length);
    if (missing.length) throw new Error(`cannot validate on cuda:${devices.cuda.join(',')}: torch in ${python} sees ${info.cudaDevices.length} CUDA device(s)`);
  }
  const threads = threadsPerProcess(devices);
  // The worker builds torch.optim optimizers only (bitsandbytes' CUDA kernels are not assumed): an 8-bit one is
  // run, and predicted, as its full-width counterpart, and the report says so.
  const optimizer = fullWidthOptimizer(options.optimizer ?? 'sgd');

  // 1. Calibration: each layer alone at the per-rank batch, with the threads a rank gets.
  options.onStage?.(`profiling ${model.layers.length} layers with torch (${threads} thread${threads > 1 ? 's' : ''} per process)`);
  const profile = await profileModel(model, {
    backend: 'torch',
    batch: batchPerRank,
    cacheDir: options.cacheDir,
    trusted: true,
    python,
    threads: devices.kind === 'cpu' ? threads : undefined,
    cancel: options.cancel,
    file: options.file,
  });

  // 2. The real run (its first phase calibrates the all-reduce and memory bandwidth).
  options.onStage?.(`running ${options.steps ?? 5} data-parallel steps on ${describeDevices(devices)} with torchrun`);
  const measured: DistributedMeasurement = await runDistributed(model, {
    python,
    devices,
    batchPerRank,
    optimizer,
    warmup: options.warmup ?? 2,
    steps: options.steps ?? 5,
    timeoutMs: options.timeoutMs ?? 600_000,
    cancel: options.cancel,
    calibrationBytes: ALLREDUCE_BYTES,
  });

  // 3. The prediction on a cluster of these devices as calibrated.
  const processName = devices.kind === 'cpu' ? `CPU process (torch ${info.torchVersion}, ${threads} thread${threads > 1 ? 's' : ''})` : measured.deviceName;
  const memoryPerProcess = devices.kind === 'cpu' ? totalmem() / devices.count : (profile.devices[0]?.memoryBytes ?? totalmem());
  const { cluster, calibration } = calibratedCluster(processName, devices.count, memoryPerProcess, measuredTflops(model, profile), measured.allreducePoints, measured.memoryBandwidthGBs);
  const outcome = planModel(model, cluster, { batch: options.batch, objective: 'throughput', strategies: 'dp', optimizer, gpus: devices.count }, { profile });
  if (!outcome.feasible) throw new Error(`the planner found no feasible data-parallel plan on ${describeDevices(devices)}: ${outcome.reason}`);
  const plan = outcome;

  const predictedCompute = plan.plan.layers.reduce((s, l) => s + l.forwardMs + l.backwardMs, 0);
  const predictedAllreduce = plan.plan.layers.reduce((s, l) => s + l.allreduceMs, 0);
  const phase = (p: PhaseComparison['phase'], label: string, predictedMs: number, measuredMs: number): PhaseComparison => ({ phase: p, label, predictedMs, measuredMs, ratio: predictedMs / measuredMs });
  const phases = [
    phase('compute', 'forward + backward', predictedCompute, measured.computeMs),
    phase('allreduce', 'gradient all-reduce (layer by layer)', predictedAllreduce, measured.allreduceMs),
    phase('step', `whole step (DDP, ${optimizer} update)`, plan.plan.stepTimeMs, measured.stepMs),
  ];
  const notValidated = hasModernDistributed(info.torchVersion)
    ? ['ZeRO/FSDP and tensor-parallel plans: not run by this version of wap validate (data parallelism only)']
    : [`ZeRO/FSDP and tensor-parallel plans need torch ≥ 2.2 (FSDP, DTensor parallelize_module); torch ${info.torchVersion} in ${python} validates the data-parallel configuration only`];
  if (optimizer !== (options.optimizer ?? 'sgd')) notValidated.push(`${options.optimizer} (8-bit optimizer state, bitsandbytes): run and predicted as ${optimizer}, the torch optimizer it quantizes`);
  const warnings = [...profile.warnings];
  if (measured.teardownKilled) warnings.push(measured.teardownKilled);
  const fallbacks = profile.layers.filter((l) => l.status === 'fallback');
  if (fallbacks.length) warnings.push(`${fallbacks.length} layer(s) could not be timed alone and use the analytical estimate: ${fallbacks.map((l) => l.layer).join(', ')}`);

  // What --save-profile keeps: the per-layer times plus the measured step and all-reduce link.
  const link: LinkCalibration = {
    name: `all-reduce over ${describeDevices(devices)}`,
    kind: devices.kind === 'cpu' ? 'inter-process' : 'device-device',
    devices: Array.from({ length: devices.count }, (_, i) => i),
    alphaUs: round(calibration.linkLatencyUs),
    bandwidthGBs: round(calibration.linkBandwidthGBs),
    source: 'measured',
  };
  const saved: ProfileFile = { ...profile, links: [...profile.links, link], wholeStep: { device: 0, batch: batchPerRank, ms: measured.stepMs } };

  const report: ValidationReport = {
    model: model.name,
    file: options.file,
    batch: options.batch,
    devices: options.devices,
    devicesDescription: describeDevices(devices),
    processBackend: devices.kind === 'cpu' ? 'gloo' : 'nccl',
    torchVersion: measured.torchVersion,
    python: info.executable ?? python,
    predictedStepMs: plan.plan.stepTimeMs,
    measuredStepMs: measured.stepMs,
    ratio: plan.plan.stepTimeMs / measured.stepMs,
    phases,
    calibration: {
      tflops: calibration.tflops,
      allreduceAlphaUs: calibration.allreduceAlphaUs,
      allreduceBandwidthGBs: calibration.allreduceBandwidthGBs,
      memoryBandwidthGBs: calibration.memoryBandwidthGBs,
      threadsPerProcess: threads,
    },
    notValidated,
    warnings,
    warmup: measured.warmup,
    steps: measured.steps,
  };
  return { report, profile: saved, plan };
}

const round = (x: number) => Math.round(x * 1000) / 1000;
