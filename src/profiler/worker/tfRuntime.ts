/**
 * The one tf namespace a worker builds and times layers with.
 *
 * For wasm and cpu it is the tfjs-core bundled into the worker. For tfjs-node
 * and tfjs-node-gpu it is the namespace the native package itself exports: the
 * package brings its own tfjs-core and registers its 'tensorflow' backend and
 * kernels there, so ops go through that copy, whatever the bundled core's
 * version is. Everything that makes tensors imports `tf` from here (a live
 * binding, set once by `useRuntime`), never the bundled core's ops directly.
 */
import type * as TfCore from '@tensorflow/tfjs-core';
import type { RuntimeInfo } from './messages';

export type { RuntimeInfo };

export type TfNamespace = typeof TfCore;

// Assigned before the first trial; a trial before init fails loudly (see useRuntime's callers).
export let tf: TfNamespace = undefined as unknown as TfNamespace;
let info: RuntimeInfo | undefined;

export function useRuntime(ns: TfNamespace, source: string, bundled: TfNamespace): RuntimeInfo {
  tf = ns;
  info = {
    activeBackend: ns.getBackend(),
    source,
    isBundledCore: ns === bundled,
    coreVersion: String((ns as { version_core?: unknown }).version_core ?? 'unknown'),
  };
  return info;
}

export function runtimeInfo(): RuntimeInfo | undefined {
  return info;
}
