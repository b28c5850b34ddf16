/** Byte-level diffing for round-trip tests, independent of the code under test. */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FileAccess } from '../../src/configs';

export const root = join(__dirname, '..', '..');
export const readExample = (rel: string): string => readFileSync(join(root, rel), 'utf8');

/** The disk as the CLI gives it to the config readers: a file that is not there reads as undefined. */
export const disk: FileAccess = {
  read: (p) => {
    try {
      return readFileSync(p, 'utf8');
    } catch {
      return undefined;
    }
  },
  list: (dir) => {
    try {
      return readdirSync(dir);
    } catch {
      return [];
    }
  },
};

/** A fresh folder `name` under `parent` holding these files (paths relative to it); returns its path. */
export function writeFolder(parent: string, name: string, files: Record<string, string>): string {
  const dir = join(parent, name);
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(join(dir, rel, '..'), { recursive: true });
    writeFileSync(join(dir, rel), text);
  }
  return dir;
}

export interface LineChange {
  line: number;
  before: string;
  after: string;
  /** The line text before and after the changed characters (both sides identical). */
  prefix: string;
  suffix: string;
}

/**
 * Compares two texts line by line (the edits under test never add or remove
 * lines) and returns, per changed line, exactly which characters changed.
 */
export function changedSpans(before: string, after: string): LineChange[] {
  const a = before.split('\n');
  const b = after.split('\n');
  if (a.length !== b.length) throw new Error(`line count changed: ${a.length} → ${b.length}`);
  const out: LineChange[] = [];
  for (let i = 0; i < a.length; i++) {
    const x = a[i]!;
    const y = b[i]!;
    if (x === y) continue;
    let p = 0;
    while (p < x.length && p < y.length && x[p] === y[p]) p++;
    let s = 0;
    while (s < x.length - p && s < y.length - p && x[x.length - 1 - s] === y[y.length - 1 - s]) s++;
    out.push({ line: i + 1, before: x.slice(p, x.length - s), after: y.slice(p, y.length - s), prefix: x.slice(0, p), suffix: x.slice(x.length - s) });
  }
  return out;
}
