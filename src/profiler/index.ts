/**
 * The profiler's public surface. This room owns every tfjs import and every
 * child process in WAP; the parent-side modules here load no tfjs at all.
 */
export { detectLocalGpus, readGpuTopology, type LocalGpu } from './gpus';
export { availableBackends, chooseBackend, type BackendStatus } from './backends';
export { profileModel, UntrustedError, type ProfileOptions, type ProgressEvent } from './profileModel';
export { loadProfile, writeProfile, ProfileFormatError } from './profileFile';
export { Cancelled, type CancelToken } from './workerClient';
export { fitAlphaBeta } from './calibration';
export { resolvePython, probePython, forgetPythonProbes, type PythonInfo } from './pythonEnv';
export { runDistributed, parseDevices, describeDevices, threadsPerProcess, type DeviceSet, type DistributedMeasurement } from './validate/runDistributed';
