import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CLUSTER_PRESETS } from '../../src/planner/cluster/presets';
import { Topology } from '../../src/planner/cost/topology';
import { buildPipelinePlan } from '../../src/planner/search/pipelinePlan';
import { simulatePipeline } from '../../src/planner/simulator/pipeline';
import { toTimeline } from '../../src/planner/simulator/results';
import { syntheticChain } from './fixtures';

test('pipeline: balanced stages, 1F1B step time between the bubble bound and bound + transfers', () => {
  const topo = new Topology(CLUSTER_PRESETS.pcie4.spec);
  const model = syntheticChain(16, 2048);
  for (const [S, M, schedule] of [[2, 4, '1f1b'], [4, 8, '1f1b'], [4, 4, 'gpipe']] as const) {
    const p = buildPipelinePlan(model, topo, 4, S, M, 64, { mode: 'dp', optimizer: 'sgd' }, schedule)!;
    assert.equal(p.stages.length, S);
    assert.deepEqual(p.stages.flatMap((s) => s.layers), model.layers.map((_, i) => i));
    const stageMs = p.stages.map((st) => st.layers.reduce((a, l) => a + st.tables.options[l][0].forwardMs + st.tables.options[l][0].backwardMs, 0));
    const run = simulatePipeline(p.stages, topo, p.microBatch, M, schedule);
    const slowest = Math.max(...stageMs);
    // Every hop along the schedule's critical diagonal may wait for one activation/gradient transfer.
    const hop = Math.max(0, ...run.tasks.filter((t) => t.kind === 'transfer').map((t) => t.durationMs));
    const tail = run.tasks.filter((t) => t.kind === 'allreduce' || t.kind === 'update').reduce((a, t) => a + t.durationMs, 0);
    const comm = 2 * (M + S - 1) * hop + tail;
    // Lower bound: the slowest stage runs all M micro-batches and the others' work for one micro-batch must precede/follow.
    assert.ok(run.makespanMs >= M * slowest + stageMs.reduce((a, b) => a + b, 0) - slowest - 1e-9);
    assert.ok(run.makespanMs <= (M + S - 1) * slowest + comm + 1e-9, `${S}/${M}: ${run.makespanMs}`);
    const events = toTimeline(run);
    const lanes = new Map<string, Array<[number, number]>>();
    for (const e of events) {
      if (!e.lane.startsWith('gpu:')) continue;
      const l = lanes.get(e.lane) ?? [];
      l.push([e.startMs, e.endMs]);
      lanes.set(e.lane, l);
    }
    for (const list of lanes.values()) {
      list.sort((a, b) => a[0] - b[0]);
      for (let i = 1; i < list.length; i++) assert.ok(list[i][0] >= list[i - 1][1] - 1e-9);
    }
    assert.equal(events.filter((e) => e.kind === 'forward' && e.lane === 'gpu:0').length, M);
  }
});
