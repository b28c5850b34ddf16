/**
 * Loads one tfjs backend inside a worker process. The native packages
 * (tfjs-node-gpu, tfjs-node) are optional and stay outside the bundle: they are
 * required at run time, and a missing one is a clear error, not a crash.
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

export interface LoadedBackend {
  id: BackendId;
  deviceName: string;
  version: string;
}

export function cpuModel(): string {
  return os.cpus()[0]?.model?.trim() || os.arch();
}

function requireOptional(name: string): unknown {
  // Indirect so bundlers leave it alone; the package is external by design.
  const req = eval('require') as NodeRequire;
  return req(name);
}

export async function loadBackend(id: BackendId): Promise<LoadedBackend> {
  switch (id) {
    case 'wasm': {
      setWasmPaths(wasmFolderOrThrow());
      registerWasmGradKernels();
      if (!(await tf.setBackend('wasm'))) throw new Error('the wasm backend failed to initialise');
      await tf.ready();
      const simd = tf.env().getBool('WASM_HAS_SIMD_SUPPORT') ? 'simd' : 'no simd';
      return { id, deviceName: `CPU ${cpuModel()} (wasm ${simd})`, version: `tfjs-backend-wasm ${version_wasm}` };
    }
    case 'cpu': {
      await tf.setBackend('cpu');
      await tf.ready();
      return { id, deviceName: `CPU ${cpuModel()} (tfjs cpu)`, version: `tfjs-core ${tf.version_core}` };
    }
    case 'tfjs-node':
    case 'tfjs-node-gpu': {
      let pkg: { version?: { 'tfjs-node'?: string } };
      try {
        pkg = requireOptional(`@tensorflow/${id}`) as typeof pkg;
      } catch (err) {
        throw new Error(`@tensorflow/${id} is not installed (${(err as Error).message.split('\n')[0]})`);
      }
      await tf.setBackend('tensorflow');
      await tf.ready();
      const ver = pkg.version?.['tfjs-node'] ?? 'unknown';
      const name = id === 'tfjs-node-gpu' ? (process.env.WAP_GPU_NAME ?? `GPU ${process.env.CUDA_VISIBLE_DEVICES ?? '0'}`) : `CPU ${cpuModel()} (libtensorflow)`;
      return { id, deviceName: name, version: `${id} ${ver}${process.env.WAP_GPU_DRIVER ? ` driver ${process.env.WAP_GPU_DRIVER}` : ''}` };
    }
    default:
      throw new Error(`backend '${id}' does not run in the tfjs worker`);
  }
}
