/**
 * Bounded local search over what elimination could not reduce: coordinate
 * descent from two starts (each node's cheapest option; option 0, i.e. plain
 * data parallel), stopping at a pass or time limit. The lower bound (each node
 * and edge at its own minimum) gives the gap the result can prove. The time
 * limit counts only time spent searching, not time paused at a checkpoint
 * (the async planner lets the event loop run there).
 */
import { drain, type Steps } from '../steps';

interface Edge {
  a: number;
  b: number;
  M: Float64Array;
}

export interface LocalSearchResult {
  choice: Map<number, number>;
  passes: number;
  passLimit: number;
  gap: number;
  evaluated: number;
}

export function localSearch(nodes: number[], edges: Edge[], nodeVec: Float64Array[], size: (v: number) => number, budgetMs: number): LocalSearchResult {
  return drain(localSearchSteps(nodes, edges, nodeVec, size, budgetMs));
}

/** localSearch with a checkpoint after each pass. */
export function* localSearchSteps(nodes: number[], edges: Edge[], nodeVec: Float64Array[], size: (v: number) => number, budgetMs: number): Steps<LocalSearchResult> {
  const passLimit = 50;
  const started = Date.now();
  let paused = 0;
  const searchingMs = (): number => Date.now() - started - paused;
  let evaluated = 0;
  const incident = new Map<number, Edge[]>();
  for (const E of edges) {
    for (const v of [E.a, E.b]) {
      const list = incident.get(v) ?? [];
      list.push(E);
      incident.set(v, list);
    }
  }
  const total = (choice: Map<number, number>): number => {
    let s = 0;
    for (const v of nodes) s += nodeVec[v][choice.get(v)!];
    for (const E of edges) s += E.M[(choice.get(E.a) ?? 0) * size(E.b) + (choice.get(E.b) ?? 0)];
    return s;
  };
  const run = function* (init: (v: number) => number): Steps<{ choice: Map<number, number>; cost: number; passes: number }> {
    const choice = new Map<number, number>(nodes.map((v) => [v, init(v)]));
    let passes = 0;
    let improved = true;
    while (improved && passes < passLimit && searchingMs() < budgetMs) {
      improved = false;
      passes++;
      for (const v of nodes) {
        const local = (o: number): number => {
          let s = nodeVec[v][o];
          for (const E of incident.get(v) ?? []) {
            const x = E.a === v ? o : (choice.get(E.a) ?? 0);
            const y = E.b === v ? o : (choice.get(E.b) ?? 0);
            s += E.M[x * size(E.b) + y];
          }
          return s;
        };
        const cur = choice.get(v)!;
        let best = cur;
        let bestCost = local(cur);
        for (let o = 0; o < size(v); o++) {
          const c = local(o);
          if (c < bestCost - 1e-12) {
            best = o;
            bestCost = c;
          }
        }
        evaluated += size(v);
        if (best !== cur) {
          choice.set(v, best);
          improved = true;
        }
      }
      const pausedAt = Date.now();
      yield;
      paused += Date.now() - pausedAt;
    }
    return { choice, cost: total(choice), passes };
  };
  const cheapest = (v: number): number => {
    let b = 0;
    for (let o = 1; o < size(v); o++) if (nodeVec[v][o] < nodeVec[v][b]) b = o;
    return b;
  };
  const a = yield* run(cheapest);
  const b = yield* run(() => 0);
  const best = a.cost <= b.cost ? a : b;
  let lower = 0;
  for (const v of nodes) lower += Math.min(...nodeVec[v]);
  for (const E of edges) lower += Math.min(...E.M);
  const gap = best.cost > 0 ? Math.max(0, (best.cost - lower) / best.cost) : 0;
  return { choice: best.choice, passes: a.passes + b.passes, passLimit: 2 * passLimit, gap, evaluated };
}
