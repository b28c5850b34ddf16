/**
 * `os.path` as a training script uses it to find its data: `os.path.join('data', dataset, 'meta.pkl')` and
 * `os.path.exists(meta_path)`, read against the script's folder as `open` reads paths (scriptExec.ts; the run starts
 * there). nanoGPT sizes its vocabulary from `meta.pkl` when the dataset's preparation wrote one, else 50304: with the
 * test left undecided, the first branch was guessed, `pickle.load` of it was unknown, and the GPT of the shipped
 * train.py had no vocabulary. A path whose parts WAP does not know stays unknown.
 */
import { statSync } from 'node:fs';
import { dirname, isAbsolute, join, posix } from 'node:path';
import type { Interp } from './interpreter';
import { FALSE, TRUE, UNKNOWN, str, type Value } from './values';

const QUERIES: Readonly<Record<string, (stat: ReturnType<typeof statSync> | undefined) => boolean>> = {
  'os.path.exists': (s) => s !== undefined,
  'os.path.isfile': (s) => s?.isFile() ?? false,
  'os.path.isdir': (s) => s?.isDirectory() ?? false,
};

/** The value of an os.path call WAP can know, or undefined for another path. */
export function callOsPath(interp: Interp, path: string, args: Value[]): Value | undefined {
  if (path === 'os.path.join') {
    if (args.length === 0 || args.some((a) => a.k !== 'str')) return UNKNOWN;
    return str(posix.join(...args.map((a) => (a as { v: string }).v)));
  }
  const query = QUERIES[path];
  if (!query) return undefined;
  const target = args[0];
  if (target?.k !== 'str' || !interp.file) return UNKNOWN;
  const file = isAbsolute(target.v) ? target.v : join(dirname(interp.file), target.v);
  // An open editor's unsaved file exists for the run as much as a saved one.
  if (interp.loader?.options.overrides?.has(file)) return path === 'os.path.isdir' ? FALSE : TRUE;
  let stat: ReturnType<typeof statSync> | undefined;
  try {
    stat = statSync(file);
  } catch {
    stat = undefined;
  }
  return query(stat) ? TRUE : FALSE;
}
