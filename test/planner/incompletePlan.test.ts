/**
 * A plan of a model known to be incomplete says so, whichever search made it:
 * the per-layer search (CNNs) and the DP×TP×PP×CP search (repeated blocks).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { planModel, resolveCluster } from '../../src/planner/index';
import type { AnalyzedModel } from '../../src/core/ir';
import { gptModel } from './gptSpec';
import { alexnet } from './fixtures';

const markIncomplete = (m: AnalyzedModel): AnalyzedModel => ({ ...m, completeness: { complete: false, opaqueLayers: 1, unshapedLayers: 0, reasons: ['a block WAP could not read'] } });

for (const [what, model, cluster] of [
  ['per-layer search', alexnet(), 'pcie4'],
  ['DP×TP×PP×CP search', gptModel({ layers: 8, hidden: 1024, heads: 16, seq: 1024 }), 'h100x8'],
] as const) {
  test(`${what}: an incomplete model's plan carries 'incomplete' and a warning`, () => {
    const complete = planModel(model, resolveCluster(cluster, {}), { batch: 32, objective: 'throughput', strategies: 'all', optimizer: 'adam' });
    assert.ok(complete.feasible);
    assert.equal(complete.incomplete, undefined);
    const out = planModel(markIncomplete(model), resolveCluster(cluster, {}), { batch: 32, objective: 'throughput', strategies: 'all', optimizer: 'adam' });
    assert.ok(out.feasible);
    assert.match(out.incomplete?.summary ?? '', /incomplete: 1 layer opaque/);
    assert.ok(out.diagnostics.some((d) => /covers only the layers WAP could read/.test(d.message)));
    if (what === 'DP×TP×PP×CP search') assert.equal(out.search.method, 'parallel3d');
  });
}
