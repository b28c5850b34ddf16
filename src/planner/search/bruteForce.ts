/** Enumerates every assignment: the reference the tests hold the search to (small graphs only). */
import { assignmentCost, type CostTables } from '../cost/tables';
import type { NodeCost, SearchResult } from './chain';

export function bruteForceSearch(t: CostTables, nodeCost?: NodeCost, limit = 2_000_000): SearchResult {
  const L = t.layers.length;
  const sizes = t.options.map((o) => o.length);
  const total = sizes.reduce((a, b) => a * b, 1);
  if (total > limit) throw new Error(`brute force over ${total} assignments exceeds the limit ${limit}`);
  const cur = new Int32Array(L);
  let best = Infinity;
  let bestChoice = new Int32Array(L);
  for (let count = 0; count < total; count++) {
    let r = count;
    for (let i = 0; i < L; i++) {
      cur[i] = r % sizes[i];
      r = Math.floor(r / sizes[i]);
    }
    const c = assignmentCost(t, cur, nodeCost);
    if (c < best) {
      best = c;
      bestChoice = cur.slice();
    }
  }
  return { choice: bestChoice, cost: best, exact: true, method: 'brute-force', evaluated: total };
}
