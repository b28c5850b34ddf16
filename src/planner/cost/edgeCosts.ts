/**
 * The edge half of the cost tables: what moving a tensor between two layers'
 * layouts costs (forward and backward), per layout pair and per edge. Separate
 * from the per-layer costing in tableBuilder.ts: it reads only the layouts the
 * layer options use, and it is the hot path of the searches' inner loops.
 */
import type { LayerConfig, Layout } from './configs';
import { redistribution } from './layout';
import type { CostTables, NodeOption, PlanEdge } from './tables';
import type { GroupLink } from './topology';

/** The members of CostTables that price edges. */
export type EdgeCosts = Pick<CostTables, 'pairFraction' | 'pairSources' | 'pairLink' | 'edgeCost' | 'edgeCostParts' | 'edgeLayoutCost' | 'inLayouts' | 'outLayouts'>;

/**
 * Edge costs over the given layouts: `link` spans the whole device group and
 * `groupLink` gives a configuration's model- or data-parallel group link.
 */
export function buildEdgeCosts(
  layouts: Layout[],
  link: GroupLink,
  groupLink: (kind: 'data' | 'model', c: LayerConfig) => GroupLink,
  edges: PlanEdge[],
  options: NodeOption[][],
): EdgeCosts {
  const L = layouts.length;
  const pairFraction = new Float64Array(L * L);
  const pairSources = new Float64Array(L * L);
  const fwdFraction = new Float64Array(L * L);
  const fwdSources = new Float64Array(L * L);
  const pairLink: GroupLink[] = new Array(L * L).fill(link);
  for (let a = 0; a < L; a++) {
    for (let b = 0; b < L; b++) {
      if (a === b) continue;
      const { d, k } = layouts[a];
      if (k > 1 && layouts[b].d === d) pairLink[a * L + b] = groupLink('model', { d, k, split: 'out' });
      const f = redistribution(layouts[a], layouts[b]);
      const r = redistribution(layouts[b], layouts[a]);
      fwdFraction[a * L + b] = f.fraction;
      fwdSources[a * L + b] = f.sources;
      pairFraction[a * L + b] = f.fraction + r.fraction;
      pairSources[a * L + b] = f.sources + r.sources;
    }
  }

  const byBytes = new Map<number, Float64Array>();
  const edgeMatrix: Array<Float64Array | undefined> = new Array(edges.length);
  const edgeLayoutCost = (e: number): Float64Array => {
    let m = edgeMatrix[e];
    if (m) return m;
    const bytes = edges[e].bytes;
    m = byBytes.get(bytes);
    if (!m) {
      m = new Float64Array(L * L);
      for (let p = 0; p < L * L; p++) if (p % (L + 1) !== 0) m[p] = (bytes * pairFraction[p]) / pairLink[p].bytesPerMs + pairSources[p] * pairLink[p].alphaMs;
      byBytes.set(bytes, m);
    }
    edgeMatrix[e] = m;
    return m;
  };
  const memoLayouts = new Map<NodeOption[], [Int32Array, Int32Array]>();
  const inLayouts: Int32Array[] = [];
  const outLayouts: Int32Array[] = [];
  for (const opts of options) {
    let pair = memoLayouts.get(opts);
    if (!pair) {
      pair = [Int32Array.from(opts, (o) => o.inLayout), Int32Array.from(opts, (o) => o.outLayout)];
      memoLayouts.set(opts, pair);
    }
    inLayouts.push(pair[0]);
    outLayouts.push(pair[1]);
  }

  const edgeCost = (e: number, fo: number, to: number): number => {
    const edge = edges[e];
    const a = outLayouts[edge.from][fo];
    const b = inLayouts[edge.to][to];
    if (a === b) return 0;
    return edgeLayoutCost(e)[a * L + b];
  };

  const edgeCostParts = (e: number, fo: number, to: number): [number, number] => {
    const edge = edges[e];
    const a = options[edge.from][fo].outLayout;
    const b = options[edge.to][to].inLayout;
    if (a === b) return [0, 0];
    const p = a * L + b;
    const fwd = fwdFraction[p] > 0 ? (edge.bytes * fwdFraction[p]) / pairLink[p].bytesPerMs + fwdSources[p] * pairLink[p].alphaMs : 0;
    return [fwd, edgeCost(e, fo, to) - fwd];
  };

  return { pairFraction, pairSources, pairLink, edgeCost, edgeCostParts, edgeLayoutCost, inLayouts, outLayouts };
}
