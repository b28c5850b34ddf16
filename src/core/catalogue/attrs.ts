/**
 * Defensive readers for canonical attrs. Frontends partially evaluate user
 * code, so any attr may be missing or of the wrong type: readers throw
 * AttrError with a message that names the attr, which becomes a diagnostic.
 */
import type { AttrValue, Attrs, Layout, Shape } from '../ir';
import type { Padding } from '../ops';
import { AttrError } from './types';

function isInt(v: unknown): v is number {
  return typeof v === 'number' && Number.isInteger(v);
}

export function fail(message: string): never {
  throw new AttrError(message);
}

export function optNum(attrs: Attrs, key: string): number | undefined {
  const v = attrs[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isFinite(v)) fail(`attribute '${key}' must be a number, got ${show(v)}`);
  return v;
}

export function num(attrs: Attrs, key: string, fallback?: number): number {
  const v = optNum(attrs, key);
  if (v !== undefined) return v;
  if (fallback !== undefined) return fallback;
  return fail(`attribute '${key}' is missing`);
}

export function optInt(attrs: Attrs, key: string): number | undefined {
  const v = optNum(attrs, key);
  if (v !== undefined && !isInt(v)) fail(`attribute '${key}' must be an integer, got ${v}`);
  return v;
}

export function int(attrs: Attrs, key: string, fallback?: number): number {
  const v = optInt(attrs, key);
  if (v !== undefined) return v;
  if (fallback !== undefined) return fallback;
  return fail(`attribute '${key}' is missing`);
}

export function posInt(attrs: Attrs, key: string, fallback?: number): number {
  const v = int(attrs, key, fallback);
  if (v <= 0) fail(`attribute '${key}' must be positive, got ${v}`);
  return v;
}

export function bool(attrs: Attrs, key: string, fallback: boolean): boolean {
  const v = attrs[key];
  if (v === undefined || v === null) return fallback;
  if (typeof v !== 'boolean') fail(`attribute '${key}' must be true or false, got ${show(v)}`);
  return v;
}

export function optStr(attrs: Attrs, key: string): string | undefined {
  const v = attrs[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') fail(`attribute '${key}' must be a string, got ${show(v)}`);
  return v;
}

/** A list of integers; a scalar is expanded to `length` copies (frontends should already expand, this is a safety net). */
export function optIntList(attrs: Attrs, key: string, length?: number): number[] | undefined {
  const v = attrs[key];
  if (v === undefined || v === null) return undefined;
  if (isInt(v) && length !== undefined) return new Array<number>(length).fill(v);
  if (!Array.isArray(v) || !v.every(isInt)) fail(`attribute '${key}' must be a list of integers, got ${show(v)}`);
  const list = v as number[];
  if (length !== undefined && list.length === 1 && length > 1) return new Array<number>(length).fill(list[0]);
  if (length !== undefined && list.length !== length) fail(`attribute '${key}' has ${list.length} entries, expected ${length}`);
  return [...list];
}

export function intList(attrs: Attrs, key: string, length?: number, fallback?: number[]): number[] {
  const v = optIntList(attrs, key, length);
  if (v !== undefined) return v;
  if (fallback !== undefined) return fallback;
  return fail(`attribute '${key}' is missing`);
}

/** Canonical padding: 'same' | 'valid' | [[before, after], …] per spatial dim (a flat list of per-dim symmetric pads is accepted too). */
export function padding(attrs: Attrs, rank: number, fallback: Padding = 'valid'): Padding {
  const v = attrs.padding;
  if (v === undefined || v === null) return fallback;
  if (typeof v === 'string') {
    const s = v.toLowerCase();
    if (s === 'same' || s === 'valid') return s;
    fail(`padding '${v}' is not 'same', 'valid' or a list of pads`);
  }
  if (isInt(v)) return Array.from({ length: rank }, () => [v, v] as [number, number]);
  if (Array.isArray(v)) {
    const pairs = v.map((p): [number, number] => {
      if (isInt(p)) return [p, p];
      if (Array.isArray(p) && p.length === 2 && isInt(p[0]) && isInt(p[1])) return [p[0], p[1]];
      return fail(`padding entry ${show(p)} is not an integer or a [before, after] pair`);
    });
    if (pairs.length === 1 && rank > 1) return new Array(rank).fill(pairs[0]);
    if (pairs.length !== rank) fail(`padding has ${pairs.length} entries, expected ${rank}`);
    if (pairs.some(([a, b]) => a < 0 || b < 0)) fail('padding must not be negative');
    return pairs;
  }
  return fail(`padding ${show(v)} is not understood`);
}

/** Normalises an axis that includes the batch dim (may be negative) for a tensor of `rankWithBatch` dims. */
export function normAxis(axis: number, rankWithBatch: number, what = 'axis'): number {
  const a = axis < 0 ? axis + rankWithBatch : axis;
  if (!Number.isInteger(a) || a < 0 || a >= rankWithBatch) fail(`${what} ${axis} is out of range for a tensor of ${rankWithBatch} dims (batch included)`);
  return a;
}

/** Index into a batch-less shape for an axis written with batch; refuses the batch axis itself. */
export function featureAxis(axis: number, shape: Shape, what = 'axis'): number {
  const a = normAxis(axis, shape.length + 1, what);
  if (a === 0) fail(`${what} ${axis} is the batch dimension`);
  return a - 1;
}

/** Splits an image-like shape into channels and spatial dims per layout. */
export function splitChannels(shape: Shape, layout: Layout, rank: number, what: string): { channels: number; spatial: number[] } {
  if (shape.length !== rank + 1) {
    fail(`${what} expects ${rank + 1}-D input per sample (${layout === 'channels_first' ? 'C, spatial…' : 'spatial…, C'}), got [${shape.join(', ')}]`);
  }
  return layout === 'channels_first'
    ? { channels: shape[0], spatial: shape.slice(1) }
    : { channels: shape[rank], spatial: shape.slice(0, rank) };
}

export function joinChannels(channels: number, spatial: number[], layout: Layout): number[] {
  return layout === 'channels_first' ? [channels, ...spatial] : [...spatial, channels];
}

export function showShape(s: Shape | undefined): string {
  return s ? `[${s.join(', ')}]` : 'unknown';
}

export function show(v: AttrValue | undefined): string {
  try {
    return JSON.stringify(v) ?? String(v);
  } catch {
    return String(v);
  }
}

export function requireInputs(shapes: Shape[], min: number, max: number, what: string): void {
  if (shapes.length < min || shapes.length > max) {
    const want = min === max ? `${min}` : max === Infinity ? `at least ${min}` : `${min}–${max}`;
    fail(`${what} takes ${want} input${min === 1 && max === 1 ? '' : 's'}, got ${shapes.length}`);
  }
}
