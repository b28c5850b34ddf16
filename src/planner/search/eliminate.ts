/**
 * DAG search by node and edge elimination (OptCNN): a node with one in-edge
 * and one out-edge folds into a new edge whose cost matrix takes the best
 * configuration of the node for every pair of neighbour configurations;
 * parallel edges add up. Series-parallel graphs (ResNet blocks, transformer
 * residuals, Inception branches) reduce to source → sink exactly; what is
 * left otherwise goes to a bounded local search, whose bound is reported.
 */
import type { CostTables } from '../cost/tables';
import type { NodeCost, SearchResult } from './chain';
import { localSearchSteps } from './localSearch';
import { drain, type Steps } from '../steps';

interface Edge {
  a: number;
  b: number;
  M: Float64Array;
}

interface Elimination {
  v: number;
  u: number;
  w: number;
  arg: Int32Array;
}

export function eliminationSearch(t: CostTables, nodeCost: NodeCost, budgetMs = 300): SearchResult {
  return drain(eliminationSearchSteps(t, nodeCost, budgetMs));
}

/** eliminationSearch with a checkpoint after each elimination step and each local-search pass. */
export function* eliminationSearchSteps(t: CostTables, nodeCost: NodeCost, budgetMs = 300): Steps<SearchResult> {
  const L = t.layers.length;
  const S = L;
  const T = L + 1;
  const size = (v: number): number => (v >= L ? 1 : t.options[v].length);
  const nodeVec: Float64Array[] = [];
  for (let v = 0; v < L; v++) nodeVec.push(Float64Array.from(t.options[v].map((_, o) => nodeCost(v, o))));
  nodeVec.push(new Float64Array(1), new Float64Array(1));

  const edges = new Map<number, Edge>();
  const byPair = new Map<number, number>();
  const pairKey = (a: number, b: number): number => a * (L + 2) + b;
  const ins: Array<Set<number>> = Array.from({ length: L + 2 }, () => new Set());
  const outs: Array<Set<number>> = Array.from({ length: L + 2 }, () => new Set());
  let nextId = 0;
  let evaluated = 0;
  const addEdge = (a: number, b: number, M: Float64Array): void => {
    const key = pairKey(a, b);
    const existing = byPair.get(key);
    if (existing !== undefined) {
      const E = edges.get(existing)!;
      for (let i = 0; i < M.length; i++) E.M[i] += M[i];
      return;
    }
    const id = nextId++;
    edges.set(id, { a, b, M });
    byPair.set(key, id);
    outs[a].add(id);
    ins[b].add(id);
  };
  const removeEdge = (id: number): Edge => {
    const E = edges.get(id)!;
    edges.delete(id);
    byPair.delete(pairKey(E.a, E.b));
    outs[E.a].delete(id);
    ins[E.b].delete(id);
    return E;
  };

  t.edges.forEach((e, ei) => {
    const Ca = size(e.from);
    const Cb = size(e.to);
    const M = new Float64Array(Ca * Cb);
    const LM = t.edgeLayoutCost(ei);
    const NL = t.layouts.length;
    const outL = t.outLayouts[e.from];
    const inL = t.inLayouts[e.to];
    for (let x = 0; x < Ca; x++) for (let y = 0; y < Cb; y++) M[x * Cb + y] = LM[outL[x] * NL + inL[y]];
    evaluated += Ca * Cb;
    addEdge(e.from, e.to, M);
  });
  for (let v = 0; v < L; v++) {
    if (ins[v].size === 0) addEdge(S, v, new Float64Array(size(v)));
    if (outs[v].size === 0) addEdge(v, T, new Float64Array(size(v)));
  }

  const alive = new Set<number>(Array.from({ length: L }, (_, i) => i));
  const log: Elimination[] = [];
  const queue = [...alive];
  while (queue.length > 0) {
    const v = queue.pop()!;
    if (!alive.has(v) || ins[v].size !== 1 || outs[v].size !== 1) continue;
    const e1 = removeEdge([...ins[v]][0]);
    const e2 = removeEdge([...outs[v]][0]);
    const u = e1.a;
    const w = e2.b;
    const Cu = size(u);
    const Cv = size(v);
    const Cw = size(w);
    const M = new Float64Array(Cu * Cw);
    const arg = new Int32Array(Cu * Cw);
    const N = nodeVec[v];
    for (let x = 0; x < Cu; x++) {
      for (let z = 0; z < Cw; z++) {
        let best = Infinity;
        let bi = 0;
        for (let y = 0; y < Cv; y++) {
          const c = e1.M[x * Cv + y] + N[y] + e2.M[y * Cw + z];
          if (c < best) {
            best = c;
            bi = y;
          }
        }
        M[x * Cw + z] = best;
        arg[x * Cw + z] = bi;
      }
    }
    evaluated += Cu * Cv * Cw;
    alive.delete(v);
    log.push({ v, u, w, arg });
    addEdge(u, w, M);
    if (u < L) queue.push(u);
    if (w < L) queue.push(w);
    yield;
  }

  const choice = new Int32Array(L + 2);
  let exact = true;
  let bound: string | undefined;
  let method: SearchResult['method'] = 'dag-dp';
  if (alive.size > 0) {
    const rest = [...alive];
    const remaining = [...edges.values()];
    const ls = yield* localSearchSteps(rest, remaining, nodeVec, size, budgetMs);
    for (const [v, o] of ls.choice) choice[v] = o;
    evaluated += ls.evaluated;
    exact = false;
    method = 'local-search';
    bound = `${rest.length} of ${L} layers not series-parallel: local search stopped after ${ls.passes} passes (limit ${ls.passLimit}, ${budgetMs} ms); cost within ${(ls.gap * 100).toFixed(1)}% of a proven lower bound`;
  }
  for (let i = log.length - 1; i >= 0; i--) {
    const { v, u, w, arg } = log[i];
    choice[v] = arg[choice[u] * size(w) + choice[w]];
  }
  let cost = 0;
  for (const E of edges.values()) cost += E.M[choice[E.a] * size(E.b) + choice[E.b]];
  for (const v of alive) cost += nodeVec[v][choice[v]];
  return { choice: choice.slice(0, L), cost, exact, method, bound, evaluated };
}
