/** Where the wasm backend's binaries live, found without loading tfjs (the parent stays light). */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';

const WASM_FILE = 'tfjs-backend-wasm.wasm';

/**
 * Beside the bundle (dist/, where the build copies them) or the package's own
 * dist/ when running from source. Node's emscripten loader reads
 * `prefix + fileName` from disk, so the result is a folder path ending in '/'.
 */
export function findWasmFolder(): string | undefined {
  const candidates = [__dirname, join(__dirname, '..', '..', 'dist'), join(__dirname, '..', '..', '..', 'dist')];
  try {
    candidates.push(dirname(require.resolve('@tensorflow/tfjs-backend-wasm')));
  } catch {
    /* not resolvable from a bundle: the folders above cover that */
  }
  for (const dir of candidates) if (existsSync(join(dir, WASM_FILE))) return join(dir, '/');
  return undefined;
}

export function wasmFolderOrThrow(): string {
  const dir = findWasmFolder();
  if (!dir) throw new Error(`cannot find ${WASM_FILE} beside ${__dirname} or in node_modules`);
  return dir;
}
