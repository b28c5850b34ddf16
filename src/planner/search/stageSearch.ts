/**
 * Per-layer hybrid configurations inside one pipeline stage: the stage's
 * layers [lo, hi) cut out of tables built on the stage's device group, then
 * the ordinary chain/DAG search with its memory fitting. Edges that cross the
 * stage boundary are dropped here; the pipeline costs them as the
 * point-to-point transfer between stages.
 */
import type { CostTables } from '../cost/tables';
import { range } from '../cost/topology';
import type { Steps } from '../steps';
import { searchTablesSteps, type FittedSearch } from './search';

/** A view of t holding only layers [lo, hi) and the edges between them, re-indexed from 0. */
export function restrictTables(t: CostTables, lo: number, hi: number): CostTables {
  const keep: number[] = [];
  t.edges.forEach((e, i) => {
    if (e.from >= lo && e.to < hi && e.from < hi && e.to >= lo) keep.push(i);
  });
  const edges = keep.map((i) => ({ ...t.edges[i], from: t.edges[i].from - lo, to: t.edges[i].to - lo }));
  const inEdges: number[][] = range(0, hi - lo).map(() => []);
  const outEdges: number[][] = range(0, hi - lo).map(() => []);
  edges.forEach((e, i) => {
    inEdges[e.to].push(i);
    outEdges[e.from].push(i);
  });
  return {
    ...t,
    layers: t.layers.slice(lo, hi),
    options: t.options.slice(lo, hi),
    sources: t.sources.slice(lo, hi),
    hasProducer: t.hasProducer.slice(lo, hi),
    inLayouts: t.inLayouts.slice(lo, hi),
    outLayouts: t.outLayouts.slice(lo, hi),
    edges,
    inEdges,
    outEdges,
    edgeCost: (e, fo, to) => t.edgeCost(keep[e], fo, to),
    edgeCostParts: (e, fo, to) => t.edgeCostParts(keep[e], fo, to),
    edgeLayoutCost: (e) => t.edgeLayoutCost(keep[e]),
  };
}

export interface StageSearch {
  /** Option index per layer of the whole model; only [lo, hi) is meaningful. */
  choice: Int32Array;
  search: FittedSearch;
}

/** Searches the stage's layers of t (tables built on the stage's devices) under a per-GPU memory cap. */
export function* searchStageSteps(t: CostTables, lo: number, hi: number, usableBytes: number, budgetMs: number): Steps<StageSearch> {
  const search = yield* searchTablesSteps(restrictTables(t, lo, hi), usableBytes, budgetMs);
  const choice = new Int32Array(t.layers.length);
  choice.set(search.choice, lo);
  return { choice, search };
}
