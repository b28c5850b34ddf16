/** Exact search for chains: dynamic programming over (layer, configuration), as OptCNN does. */
import type { CostTables } from '../cost/tables';
import { drain, type Steps } from '../steps';

export type NodeCost = (layer: number, option: number) => number;

export interface SearchResult {
  choice: Int32Array;
  cost: number;
  exact: boolean;
  method: 'chain-dp' | 'dag-dp' | 'local-search' | 'brute-force';
  bound?: string;
  evaluated: number;
}

/** A chain: every edge runs i−1 → i and there are L−1 of them. */
export function isChain(t: CostTables): boolean {
  if (t.edges.length !== t.layers.length - 1) return false;
  return t.edges.every((e) => e.to === e.from + 1) && t.inEdges.every((ins, i) => ins.length === (i === 0 ? 0 : 1));
}

export function chainSearch(t: CostTables, nodeCost: NodeCost): SearchResult {
  return drain(chainSearchSteps(t, nodeCost));
}

/** chainSearch with a checkpoint after each layer. */
export function* chainSearchSteps(t: CostTables, nodeCost: NodeCost): Steps<SearchResult> {
  const L = t.layers.length;
  const back: Int32Array[] = [];
  let prev = Float64Array.from(t.options[0].map((_, o) => nodeCost(0, o)));
  let evaluated = prev.length;
  const NL = t.layouts.length;
  for (let i = 1; i < L; i++) {
    const e = t.inEdges[i][0];
    const C = t.options[i].length;
    const P = prev.length;
    const cur = new Float64Array(C);
    const arg = new Int32Array(C);
    const M = t.edgeLayoutCost(e);
    const outL = t.outLayouts[i - 1];
    const inL = t.inLayouts[i];
    for (let o = 0; o < C; o++) {
      let best = Infinity;
      let bi = 0;
      const b = inL[o];
      for (let p = 0; p < P; p++) {
        // Same numbers as t.edgeCost(e, p, o), read straight from the layout-pair matrix.
        const v = prev[p] + M[outL[p] * NL + b];
        if (v < best) {
          best = v;
          bi = p;
        }
      }
      cur[o] = best + nodeCost(i, o);
      arg[o] = bi;
    }
    evaluated += C * P;
    back.push(arg);
    prev = cur;
    yield;
  }
  let last = 0;
  for (let o = 1; o < prev.length; o++) if (prev[o] < prev[last]) last = o;
  const choice = new Int32Array(L);
  choice[L - 1] = last;
  for (let i = L - 1; i >= 1; i--) choice[i - 1] = back[i - 1][choice[i]];
  return { choice, cost: prev[last], exact: true, method: 'chain-dp', evaluated };
}
