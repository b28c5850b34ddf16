/**
 * Loads one tfjs backend inside a worker process and picks the tf namespace the
 * worker measures with (see ../worker/tfRuntime).
 *
 * wasm and cpu run on the bundled tfjs-core. The native packages (tfjs-node,
 * tfjs-node-gpu) are optional and stay outside the bundle: each depends on its
 * own tfjs and exports a complete tf namespace with its 'tensorflow' backend
 * registered, so that namespace, not the bundled core, builds and times the
 * layers. A missing package is a clear error naming where we looked.
 */
import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-core/dist/register_all_gradients';
// The package's node entry is not in its own sideEffects list, so a bare import would be dropped by the
// bundler; the dist/index.js entry is listed and registers the cpu backend and its kernels.
import '@tensorflow/tfjs-backend-cpu/dist/index.js';
import { setWasmPaths, version_wasm } from '@tensorflow/tfjs-backend-wasm';
import * as os from 'node:os';
import type { BackendId } from '../../protocol/profile';
import { registerWasmGradKernels } from './wasmGradKernels';
import { wasmFolderOrThrow } from '../paths';
import { describeLookup, locatePackage, requirePackage } from '../optionalPackage';
import { useRuntime, type RuntimeInfo, type TfNamespace } from '../worker/tfRuntime';

export interface LoadedBackend {
  id: BackendId;
  deviceName: string;
  version: string;
  /** The namespace now in use (also reachable as `tf` from ../worker/tfRuntime). */
  tf: TfNamespace;
  runtime: RuntimeInfo;
}

export function cpuModel(): string {
  return os.cpus()[0]?.model?.trim() || os.arch();
}

const bundled = tf as TfNamespace;

async function loadNative(id: 'tfjs-node' | 'tfjs-node-gpu'): Promise<LoadedBackend> {
  const name = `@tensorflow/${id}`;
  const lookup = locatePackage(name);
  if (!lookup.found) throw new Error(describeLookup(name, lookup, id === 'tfjs-node-gpu' ? 'needs CUDA and libtensorflow' : 'its install downloads libtensorflow'));
  let ns: TfNamespace & { version?: Record<string, string> };
  try {
    ns = requirePackage(lookup.found) as typeof ns;
  } catch (err) {
    throw new Error(`${name} at ${lookup.found.dir} failed to load: ${(err as Error).message.split('\n')[0]}`);
  }
  if (typeof ns?.setBackend !== 'function' || typeof ns.tidy !== 'function') {
    throw new Error(`${name} at ${lookup.found.dir} does not export a tf namespace`);
  }
  // Quiet the package's own banners: the parent owns stdout.
  ns.env().set('IS_TEST', true);
  if (!(await ns.setBackend('tensorflow'))) throw new Error(`${name} at ${lookup.found.dir} did not register the 'tensorflow' backend`);
  await ns.ready();
  const runtime = useRuntime(ns, lookup.found.dir, bundled);
  const ver = ns.version?.['tfjs-node'] ?? lookup.found.version;
  const deviceName = id === 'tfjs-node-gpu' ? (process.env.WAP_GPU_NAME ?? `GPU ${process.env.CUDA_VISIBLE_DEVICES ?? '0'}`) : `CPU ${cpuModel()} (libtensorflow)`;
  const driver = process.env.WAP_GPU_DRIVER ? ` driver ${process.env.WAP_GPU_DRIVER}` : '';
  return { id, deviceName, version: `${id} ${ver}${driver}`, tf: ns, runtime };
}

export async function loadBackend(id: BackendId): Promise<LoadedBackend> {
  // Quiet the "install tfjs-node" banner: the parent owns stdout.
  tf.env().set('IS_TEST', true);
  switch (id) {
    case 'wasm': {
      setWasmPaths(wasmFolderOrThrow());
      registerWasmGradKernels();
      if (!(await tf.setBackend('wasm'))) throw new Error('the wasm backend failed to initialise');
      await tf.ready();
      const runtime = useRuntime(bundled, 'bundled tfjs-core', bundled);
      const simd = tf.env().getBool('WASM_HAS_SIMD_SUPPORT') ? 'simd' : 'no simd';
      return { id, deviceName: `CPU ${cpuModel()} (wasm ${simd})`, version: `tfjs-backend-wasm ${version_wasm}`, tf: bundled, runtime };
    }
    case 'cpu': {
      await tf.setBackend('cpu');
      await tf.ready();
      const runtime = useRuntime(bundled, 'bundled tfjs-core', bundled);
      return { id, deviceName: `CPU ${cpuModel()} (tfjs cpu)`, version: `tfjs-core ${tf.version_core}`, tf: bundled, runtime };
    }
    case 'tfjs-node':
    case 'tfjs-node-gpu':
      return loadNative(id);
    default:
      throw new Error(`backend '${id}' does not run in the tfjs worker`);
  }
}
