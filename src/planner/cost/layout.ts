/**
 * Tensor redistribution between two layouts over the same n devices: for
 * each receiving device, the fraction of the whole tensor it lacks and how
 * many peers it must fetch from. Changing layout costs
 * max_j(missing_j) · bytes / bw + max_j(sources_j) · α (forward), plus the
 * same for the gradient on the way back.
 */
import type { Layout } from './configs';

const EPS = 1e-12;

function overlap(a0: number, a1: number, b0: number, b1: number): number {
  return Math.max(0, Math.min(a1, b1) - Math.max(a0, b0));
}

function countPieces(pieces: number, lo: number, hi: number): number {
  let c = 0;
  for (let i = 0; i < pieces; i++) if (overlap(i / pieces, (i + 1) / pieces, lo, hi) > EPS) c++;
  return c;
}

export interface Redistribution {
  /** Largest fraction of the full tensor any one device receives. */
  fraction: number;
  /** Largest number of peers any one device receives from. */
  sources: number;
}

const cache = new Map<string, Redistribution>();

/** Pure in its two layouts, and the same pairs recur for every GPU count and table: cached. */
export function redistribution(from: Layout, to: Layout): Redistribution {
  const key = `${from.d}x${from.k}${from.sharded ? 's' : 'r'}>${to.d}x${to.k}${to.sharded ? 's' : 'r'}`;
  let hit = cache.get(key);
  if (!hit) {
    hit = computeRedistribution(from, to);
    cache.set(key, hit);
  }
  return hit;
}

function computeRedistribution(from: Layout, to: Layout): Redistribution {
  const n = to.d * to.k;
  let fraction = 0;
  let sources = 0;
  for (let j = 0; j < n; j++) {
    const bi = Math.floor(j / to.k);
    const fi = j % to.k;
    const b0 = bi / to.d;
    const b1 = (bi + 1) / to.d;
    const f0 = to.sharded ? fi / to.k : 0;
    const f1 = to.sharded ? (fi + 1) / to.k : 1;
    const need = (b1 - b0) * (f1 - f0);
    const ai = Math.floor(j / from.k);
    const af = j % from.k;
    const o0 = from.sharded ? af / from.k : 0;
    const o1 = from.sharded ? (af + 1) / from.k : 1;
    const local = overlap(b0, b1, ai / from.d, (ai + 1) / from.d) * overlap(f0, f1, o0, o1);
    const missing = need - local;
    if (missing <= EPS) continue;
    fraction = Math.max(fraction, missing);
    const peers = countPieces(from.d, b0, b1) * (from.sharded ? countPieces(from.k, f0, f1) : 1) - (local > EPS ? 1 : 0);
    sources = Math.max(sources, Math.max(1, peers));
  }
  return { fraction, sources };
}
