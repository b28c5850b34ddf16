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

/**
 * Where a relative path the script computes starts: its own folder, where `open` looks first too (runDirectory.ts,
 * which also looks above it for a file that exists; a computed folder has no file to look for).
 */
export const scriptFolderOf = (interp: Interp): string | undefined => (interp.file ? dirname(interp.file) : undefined);

/** Path arithmetic on known strings, as os.path does it on POSIX; undefined for a call that is no such arithmetic. */
function pathArithmetic(interp: Interp, path: string, args: Value[]): Value | undefined {
  const words = args.map((a) => (a.k === 'str' ? a.v : undefined));
  const known = words.every((w) => w !== undefined) ? (words as string[]) : undefined;
  const one = known?.[0];
  switch (path) {
    case 'os.path.join':
      return known && known.length ? str(posix.join(...known)) : UNKNOWN;
    case 'os.path.dirname':
      return one !== undefined ? str(posix.dirname(one) === '.' && !one.includes('/') ? '' : posix.dirname(one)) : UNKNOWN;
    case 'os.path.basename':
      return one !== undefined ? str(posix.basename(one)) : UNKNOWN;
    case 'os.path.normpath':
      return one !== undefined ? str(posix.normalize(one)) : UNKNOWN;
    case 'os.path.abspath':
    case 'os.path.realpath': {
      const base = scriptFolderOf(interp);
      if (one === undefined || (!posix.isAbsolute(one) && !base)) return UNKNOWN;
      return str(posix.isAbsolute(one) ? posix.normalize(one) : posix.join(base!, one));
    }
    default:
      return undefined;
  }
}

/** The value of an os.path call WAP can know, or undefined for another path. */
export function callOsPath(interp: Interp, path: string, args: Value[]): Value | undefined {
  const arithmetic = pathArithmetic(interp, path, args);
  if (arithmetic) return arithmetic;
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
