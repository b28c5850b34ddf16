/**
 * A per-layer plan may mix configurations (OWT: convolutions data parallel, classifier model parallel). The setup's
 * one DP × TP pair is the configuration holding most parameters; the others are listed, not hidden.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { analyzeSource } from '../../src/frontends/index';
import { planModel, resolveCluster } from '../../src/planner/index';
import { setupLines } from '../../src/planner/format';
import { parallelDegreesText } from '../../src/protocol/setupText';

const root = new URL('../..', import.meta.url).pathname;

test('AlexNet hybrid on 4 PCIe GPUs: TP 4 holds the classifier’s parameters, and the data-parallel features are listed beside it', async () => {
  const file = 'examples/pytorch/alexnet.py';
  const model = (await analyzeSource(file, readFileSync(join(root, file), 'utf8'))).models[0]!;
  const out = planModel(model, resolveCluster('pcie4'), { batch: 128, objective: 'throughput', strategies: 'hybrid', optimizer: 'momentum', gpus: 4 });
  assert.ok(out.feasible);
  const layers = out.plan.layers;
  const byDegrees = new Map<string, { layers: number; params: number }>();
  for (const l of layers) {
    const key = `${l.dataDegree}x${l.modelDegree}`;
    const g = byDegrees.get(key) ?? { layers: 0, params: 0 };
    g.layers++;
    g.params += model.layers.find((m) => m.name === l.name)!.workload.params;
    byDegrees.set(key, g);
  }
  assert.ok(byDegrees.size > 1, `a mixed plan: ${[...byDegrees.keys()].join(' ')}`);
  const [main, ...rest] = [...byDegrees.entries()].sort((a, b) => b[1].params - a[1].params);
  const s = out.plan.setup!;
  assert.equal(`${s.dataParallel}x${s.tensorParallel}`, main![0], 'the configuration holding most parameters');
  assert.deepEqual(
    s.otherDegrees?.map((o) => `${o.dataParallel}x${o.tensorParallel}:${o.layers}`),
    rest.map(([k, g]) => `${k}:${g.layers}`),
  );
  assert.equal(s.otherDegrees!.reduce((a, o) => a + o.layers, 0) + byDegrees.get(main![0])!.layers, layers.length);
  const other = s.otherDegrees![0]!;
  assert.match(setupLines(s)[0]!, new RegExp(`DP ${s.dataParallel} × TP ${s.tensorParallel} × PP 1 × CP 1 \\(most parameters; also DP ${other.dataParallel} × TP ${other.tensorParallel} on ${other.layers} layers\\)`));
  // One configuration everywhere: nothing else to say.
  const dp = planModel(model, resolveCluster('pcie4'), { batch: 128, objective: 'throughput', strategies: 'dp', optimizer: 'momentum', gpus: 4 });
  assert.ok(dp.feasible);
  assert.equal(dp.plan.setup!.otherDegrees, undefined);
  assert.equal(parallelDegreesText(dp.plan.setup!, true), `DP ${dp.plan.setup!.dataParallel} × TP 1 × PP 1`);
});
