/**
 * Which backends this machine can profile on, and who measured: the device
 * identity (name + library version) the cache is keyed by. Worked out in the
 * parent without loading tfjs, so a fully cached re-run never starts a worker.
 */
import * as os from 'node:os';
import type { BackendId } from '../protocol/profile';
import { detectLocalGpus, type LocalGpu } from './gpus';
import { findWasmFolder } from './paths';
import wasmPkg from '@tensorflow/tfjs-backend-wasm/package.json';
import corePkg from '@tensorflow/tfjs-core/package.json';
import { describeLookup, locatePackage, type PackageLookup } from './optionalPackage';
import { probePython, resolvePython } from './pythonEnv';

export interface BackendStatus {
  id: BackendId;
  available: boolean;
  reason?: string;
  device?: string;
  /** For an optional package: where it was found ('<name> <version> at <folder> (<how>)'). */
  location?: string;
}

export interface TorchProbe {
  ok: boolean;
  reason?: string;
  version?: string;
  cuda?: string;
  gpus?: string[];
  /** The interpreter as chosen (path or command) and `sys.executable`. */
  python?: string;
  executable?: string;
}

export const ALL_BACKENDS: BackendId[] = ['tfjs-node-gpu', 'tfjs-node', 'wasm', 'cpu', 'torch'];

const cpuName = () => os.cpus()[0]?.model?.trim() || os.arch();

const NATIVE_HINT: Record<'tfjs-node' | 'tfjs-node-gpu', string> = {
  'tfjs-node': 'optional; its install downloads libtensorflow',
  'tfjs-node-gpu': 'optional; needs CUDA and libtensorflow',
};

/** Where the native package is, looked up the same way the worker loads it (./optionalPackage). */
function nativePackage(id: 'tfjs-node' | 'tfjs-node-gpu'): PackageLookup {
  return locatePackage(`@tensorflow/${id}`);
}

function nativeVersionOrThrow(id: 'tfjs-node' | 'tfjs-node-gpu'): string {
  const lookup = nativePackage(id);
  if (!lookup.found) throw new Error(describeLookup(`@tensorflow/${id}`, lookup, NATIVE_HINT[id]));
  return lookup.found.version;
}

/** torch as one interpreter sees it (src/profiler/pythonEnv.ts probes each interpreter once per process). */
export async function probeTorch(python?: string): Promise<TorchProbe> {
  const info = await probePython(resolvePython(python));
  if (!info.ok) return { ok: false, reason: info.reason, python: info.interpreter };
  if (!info.torchVersion) return { ok: false, reason: `${info.interpreter} cannot import torch: ${info.torchReason ?? 'unknown reason'}`, python: info.interpreter, executable: info.executable };
  return { ok: true, version: info.torchVersion, cuda: info.cudaVersion, gpus: info.cudaDevices, python: info.interpreter, executable: info.executable };
}

export async function availableBackends(python?: string): Promise<BackendStatus[]> {
  const [gpus, torch] = await Promise.all([detectLocalGpus(), probeTorch(python)]);
  return ALL_BACKENDS.map((id) => statusOf(id, gpus, torch));
}

function statusOf(id: BackendId, gpus: LocalGpu[], torch: TorchProbe): BackendStatus {
  switch (id) {
    case 'wasm':
      return findWasmFolder()
        ? { id, available: true, device: `CPU ${cpuName()} (wasm)` }
        : { id, available: false, reason: 'tfjs-backend-wasm .wasm files not found' };
    case 'cpu':
      return { id, available: true, device: `CPU ${cpuName()} (tfjs cpu)` };
    case 'tfjs-node':
    case 'tfjs-node-gpu': {
      const name = `@tensorflow/${id}`;
      const lookup = nativePackage(id);
      if (!lookup.found) return { id, available: false, reason: describeLookup(name, lookup, NATIVE_HINT[id]) };
      const location = describeLookup(name, lookup, NATIVE_HINT[id]);
      if (id === 'tfjs-node') return { id, available: true, device: `CPU ${cpuName()} (libtensorflow)`, location };
      return gpus.length
        ? { id, available: true, device: gpus.map((g) => g.name).join(', '), location }
        : { id, available: false, reason: `no NVIDIA GPU found (nvidia-smi); ${location}`, location };
    }
    case 'torch':
      return torch.ok
        ? { id, available: true, device: torch.gpus?.length ? torch.gpus.join(', ') : 'CPU (torch)', location: `torch ${torch.version} in ${torch.executable ?? torch.python}` }
        : { id, available: false, reason: torch.reason ?? 'torch is not importable' };
  }
}

/** Auto choice: native GPU, then torch on CUDA, then native CPU, then wasm, then cpu. */
export async function chooseBackend(python?: string): Promise<BackendId> {
  if (nativePackage('tfjs-node-gpu').found && (await detectLocalGpus()).length) return 'tfjs-node-gpu';
  if ((await detectLocalGpus()).length) {
    const t = await probeTorch(python);
    if (t.ok && t.gpus?.length) return 'torch';
  }
  if (nativePackage('tfjs-node').found) return 'tfjs-node';
  return findWasmFolder() ? 'wasm' : 'cpu';
}

/** One measuring device: what the cache is keyed by and what the profile names. */
export interface DeviceIdentity {
  backend: BackendId;
  deviceName: string;
  version: string;
  memoryBytes?: number;
  /** GPU index for CUDA_VISIBLE_DEVICES, when the backend runs on a GPU. */
  gpu?: number;
}

export async function deviceIdentities(backend: BackendId, python?: string): Promise<DeviceIdentity[]> {
  const mem = os.totalmem();
  switch (backend) {
    case 'wasm':
      return [{ backend, deviceName: `CPU ${cpuName()} (wasm)`, version: `tfjs-backend-wasm ${wasmPkg.version}`, memoryBytes: mem }];
    case 'cpu':
      return [{ backend, deviceName: `CPU ${cpuName()} (tfjs cpu)`, version: `tfjs-core ${corePkg.version}`, memoryBytes: mem }];
    case 'tfjs-node':
      return [{ backend, deviceName: `CPU ${cpuName()} (libtensorflow)`, version: `tfjs-node ${nativeVersionOrThrow('tfjs-node')}`, memoryBytes: mem }];
    case 'tfjs-node-gpu': {
      const gpus = await detectLocalGpus();
      const v = nativeVersionOrThrow('tfjs-node-gpu');
      return gpus.map((g) => ({ backend, deviceName: g.name, version: `tfjs-node-gpu ${v} driver ${g.driver ?? '?'}`, memoryBytes: g.memoryGB * 2 ** 30, gpu: g.index }));
    }
    case 'torch': {
      const t = await probeTorch(python);
      if (!t.ok) throw new Error(`torch backend unavailable: ${t.reason}`);
      const gpus = await detectLocalGpus();
      const ver = `torch ${t.version} cuda ${t.cuda ?? 'none'}`;
      if (!t.gpus?.length) return [{ backend, deviceName: `CPU ${cpuName()} (torch)`, version: ver, memoryBytes: mem }];
      return t.gpus.map((name, i) => ({ backend, deviceName: name, version: `${ver} driver ${gpus[i]?.driver ?? '?'}`, memoryBytes: gpus[i] ? gpus[i].memoryGB * 2 ** 30 : undefined, gpu: i }));
    }
  }
}
