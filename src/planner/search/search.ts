/**
 * Memory-aware search over one set of cost tables. Memory per GPU is a sum
 * over layers, so it enters as a Lagrangian penalty λ·bytes: λ = 0 first,
 * then raised until the plan fits, then bisected back towards speed.
 */
import { assignmentMemory, type CostTables } from '../cost/tables';
import { drain, type Steps } from '../steps';
import { chainSearchSteps, isChain, type SearchResult } from './chain';
import { eliminationSearchSteps } from './eliminate';

export interface FittedSearch extends SearchResult {
  memoryBytes: number;
  fits: boolean;
}

export function searchTables(t: CostTables, usableBytes: number, budgetMs = 300): FittedSearch {
  return drain(searchTablesSteps(t, usableBytes, budgetMs));
}

/** searchTables with the checkpoints of the searches it runs. */
export function* searchTablesSteps(t: CostTables, usableBytes: number, budgetMs = 300): Steps<FittedSearch> {
  const chain = isChain(t);
  let evaluated = 0;
  const run = function* (lambda: number): Steps<FittedSearch> {
    const nodeCost = (i: number, o: number) => t.options[i][o].timeMs + lambda * t.options[i][o].memoryBytes;
    const r = chain ? yield* chainSearchSteps(t, nodeCost) : yield* eliminationSearchSteps(t, nodeCost, budgetMs);
    evaluated += r.evaluated;
    const memoryBytes = assignmentMemory(t, r.choice);
    return { ...r, memoryBytes, fits: memoryBytes <= usableBytes };
  };
  const first = yield* run(0);
  if (first.fits) return first;
  // ms per byte: from 1 ms per TB up to 1 ms per byte, ×16 each step.
  let hi = 1e-12;
  let fitted: FittedSearch | undefined;
  let last = first;
  while (hi < 1) {
    last = yield* run(hi);
    if (last.fits) {
      fitted = last;
      break;
    }
    hi *= 16;
  }
  if (!fitted) return { ...last, evaluated };
  let lo = hi / 16;
  for (let i = 0; i < 8; i++) {
    const mid = Math.sqrt(lo * hi);
    const r = yield* run(mid);
    if (r.fits) {
      hi = mid;
      fitted = r;
    } else lo = mid;
  }
  return { ...fitted, evaluated };
}
