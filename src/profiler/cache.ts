/**
 * On-disk trial cache. One JSON file per (backend, device, library version), so
 * a damaged file costs only that device's entries. Entries are keyed by layer
 * signature + batch + dtype + layout + what the trial times (see cacheKey).
 * Writes go to a temp file that is renamed over the old one (atomic on POSIX),
 * after merging with what is on disk now, so concurrent writers never tear the
 * file and rarely lose each other's entries.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync, existsSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import type { BackendId } from '../protocol/profile';
import type { TrialTiming } from './worker/messages';

export const CACHE_FORMAT = 'wap-profile-cache';
export const CACHE_VERSION = 1;

export interface CacheIdentity {
  backend: BackendId;
  deviceName: string;
  version: string;
}

export interface CacheEntry extends TrialTiming {
  measuredAt: string;
  /** Set when the worker cannot build this layer: a deterministic verdict, cached so re-runs skip it. */
  unsupported?: string;
}

interface CacheFileShape {
  format: typeof CACHE_FORMAT;
  version: number;
  identity: CacheIdentity;
  entries: Record<string, CacheEntry>;
  /** Other per-device results worth keeping, e.g. copy-calibration points. */
  extras?: Record<string, unknown>;
}

/**
 * `trial` carries what the worker times beyond the layer signature: whether the
 * backward pass also computes the input gradient (not for a layer fed straight
 * by the model input) and the input dtypes. Without them the first layer's
 * cheaper backward would be served for a later layer with the same signature.
 */
export function cacheKey(signature: string, batch: number, dtype: string, layout: string, trial: { needsInputGrad: boolean; inputDtypes?: readonly string[] }): string {
  return `${signature}|batch=${batch}|${dtype}|${layout}|dx=${trial.needsInputGrad ? 1 : 0}|in=${(trial.inputDtypes ?? []).join(',')}`;
}

export function cacheFilePath(dir: string, id: CacheIdentity): string {
  const h = createHash('sha256').update(`${id.backend}\n${id.deviceName}\n${id.version}`).digest('hex').slice(0, 16);
  return join(dir, `${id.backend}-${h}.json`);
}

const isEntry = (e: unknown): e is CacheEntry =>
  !!e && typeof e === 'object' && typeof (e as CacheEntry).forwardMs === 'number' && typeof (e as CacheEntry).backwardMs === 'number';

/** Reads a cache file; `problem` says why it was unusable (then entries is empty). */
function readCacheFile(path: string, id: CacheIdentity): { entries: Map<string, CacheEntry>; extras?: Record<string, unknown>; problem?: string } {
  if (!existsSync(path)) return { entries: new Map() };
  let data: unknown;
  try {
    data = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    return { entries: new Map(), problem: `is corrupt (${(err as Error).message.split('\n')[0]})` };
  }
  const f = data as Partial<CacheFileShape>;
  if (!f || typeof f !== 'object' || f.format !== CACHE_FORMAT) return { entries: new Map(), problem: 'is not a WAP profile cache' };
  if (f.version !== CACHE_VERSION) return { entries: new Map(), problem: `has cache version ${String(f.version)}, expected ${CACHE_VERSION}` };
  const same = f.identity && f.identity.backend === id.backend && f.identity.deviceName === id.deviceName && f.identity.version === id.version;
  if (!same) return { entries: new Map(), problem: 'belongs to another device or library version' };
  const entries = new Map<string, CacheEntry>();
  for (const [k, v] of Object.entries(f.entries ?? {})) if (isEntry(v)) entries.set(k, v);
  const extras = f.extras && typeof f.extras === 'object' ? f.extras : undefined;
  return { entries, extras };
}

export class TrialCache {
  readonly path: string;
  private entries: Map<string, CacheEntry>;
  private extras: Record<string, unknown>;
  /** Set when the file on disk was unusable: it will be rebuilt on the next write. */
  readonly warning?: string;

  constructor(dir: string, private readonly id: CacheIdentity) {
    mkdirSync(dir, { recursive: true });
    this.path = cacheFilePath(dir, id);
    const r = readCacheFile(this.path, id);
    this.entries = r.entries;
    this.extras = { ...r.extras };
    if (r.problem) {
      this.warning = `profile cache ${this.path} ${r.problem}; it was rebuilt from this run's measurements`;
      // Start the rebuilt file now, so a later merge does not trip over the bad one.
      this.writeMerged(false);
    }
  }

  get size(): number {
    return this.entries.size;
  }

  get(key: string): CacheEntry | undefined {
    return this.entries.get(key);
  }

  /** Records one entry and persists it at once: finished layers survive a crash or a cancel. */
  put(key: string, timing: TrialTiming, unsupported?: string): void {
    this.entries.set(key, { ...timing, measuredAt: new Date().toISOString(), ...(unsupported ? { unsupported } : {}) });
    this.writeMerged(true);
  }

  getExtra(key: string): unknown {
    return this.extras[key];
  }

  putExtra(key: string, value: unknown): void {
    this.extras[key] = value;
    this.writeMerged(true);
  }

  private writeMerged(mergeDisk: boolean): void {
    if (mergeDisk) {
      const disk = readCacheFile(this.path, this.id);
      this.extras = { ...disk.extras, ...this.extras };
      // Keep other writers' entries; ours win on the same key.
      for (const [k, v] of disk.entries) if (!this.entries.has(k)) this.entries.set(k, v);
    }
    const body: CacheFileShape = { format: CACHE_FORMAT, version: CACHE_VERSION, identity: this.id, entries: Object.fromEntries(this.entries), extras: this.extras };
    const tmp = `${this.path}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
    try {
      writeFileSync(tmp, JSON.stringify(body));
      renameSync(tmp, this.path);
    } catch (err) {
      try {
        unlinkSync(tmp);
      } catch {
        /* nothing to clean */
      }
      throw err;
    }
  }
}
