/**
 * Reading Python sources from disk for import resolution, never executing
 * them. Texts are cached per path and modification time, so re-analysing a
 * training script costs one `stat` per imported file; open editor documents
 * override what is on disk (the user's unsaved text is what they mean).
 */
import { readFileSync, statSync } from 'node:fs';

export interface SourceText {
  path: string;
  text: string;
  /** Modification time on disk; -1 for an editor override. */
  mtimeMs: number;
  /** Changes whenever `text` changes: caches keyed on it are per file version. */
  version: string;
}

/** Files larger than this are not model code (generated tables, vendored bundles). */
const MAX_SOURCE_BYTES = 4 << 20;

interface Cached {
  mtimeMs: number;
  size: number;
  source: SourceText;
}

const texts = new Map<string, Cached>();
const MAX_CACHED = 2_000;

/** Stat results are reused for this long: one analysis asks about the same folder many times. */
const STAT_TTL_MS = 1_000;
const stats = new Map<string, { at: number; kind: 'file' | 'dir' | 'none'; mtimeMs: number; size: number }>();

export function statKind(path: string): 'file' | 'dir' | 'none' {
  return statOf(path).kind;
}

function statOf(path: string): { kind: 'file' | 'dir' | 'none'; mtimeMs: number; size: number } {
  const now = Date.now();
  const hit = stats.get(path);
  if (hit && now - hit.at < STAT_TTL_MS) return hit;
  let entry: { at: number; kind: 'file' | 'dir' | 'none'; mtimeMs: number; size: number };
  try {
    const s = statSync(path);
    entry = { at: now, kind: s.isFile() ? 'file' : s.isDirectory() ? 'dir' : 'none', mtimeMs: s.mtimeMs, size: s.size };
  } catch {
    entry = { at: now, kind: 'none', mtimeMs: 0, size: 0 };
  }
  if (stats.size > 20_000) stats.clear();
  stats.set(path, entry);
  return entry;
}

/** Forgets cached stats (the server calls this when the editor reports changed files). */
export function forgetFileStats(paths?: readonly string[]): void {
  if (!paths) stats.clear();
  else for (const p of paths) stats.delete(p);
}

/**
 * The text of a Python source, from `overrides` (open documents) or disk.
 * Undefined when it cannot be read; `why` says why.
 */
export function readSource(path: string, overrides?: ReadonlyMap<string, string>): SourceText | { why: string } {
  const override = overrides?.get(path);
  if (override !== undefined) return { path, text: override, mtimeMs: -1, version: 'open:' + hashText(override) };
  const s = statOf(path);
  if (s.kind !== 'file') return { why: `${path} does not exist` };
  if (s.size > MAX_SOURCE_BYTES) return { why: `${path} is larger than ${MAX_SOURCE_BYTES >> 20} MiB` };
  const hit = texts.get(path);
  if (hit && hit.mtimeMs === s.mtimeMs && hit.size === s.size) return hit.source;
  try {
    const text = readFileSync(path, 'utf8');
    const source: SourceText = { path, text, mtimeMs: s.mtimeMs, version: `disk:${s.mtimeMs}:${s.size}` };
    if (texts.size >= MAX_CACHED) texts.delete(texts.keys().next().value as string);
    texts.set(path, { mtimeMs: s.mtimeMs, size: s.size, source });
    return source;
  } catch (e) {
    return { why: `${path} could not be read (${e instanceof Error ? e.message : String(e)})` };
  }
}

/** FNV-1a over the text: a cheap version stamp for editor overrides. */
function hashText(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return (h >>> 0).toString(36) + ':' + text.length;
}
