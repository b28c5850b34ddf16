/**
 * The WAP paper's headline (Shin et al., ICASSP 2019, Table 2): AlexNet at
 * minibatch 128 on 4× TITAN Xp over PCIe trained at 2,560 img/s on one GPU
 * and 1,473 img/s data-parallel on four, so one GPU was the right choice.
 * The default preset must reproduce that decision and both numbers.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { analyzeSource } from '../../src/frontends/index';
import { planModel, resolveCluster } from '../../src/planner/index';

const root = new URL('../..', import.meta.url).pathname;

test('WAP Table 2: --strategies dp on AlexNet b128 picks 1 GPU; 1 GPU within ±15% of 2560, 4-GPU DP within ±25% of 1473', async () => {
  const file = 'examples/pytorch/alexnet.py';
  const model = (await analyzeSource(file, readFileSync(join(root, file), 'utf8'))).models[0];
  const cluster = resolveCluster(undefined);
  assert.equal(cluster.source, 'default');
  assert.equal(cluster.intraNode.p2p, false, 'the paper box has no PCIe peer-to-peer');
  const out = planModel(model, cluster, { batch: 128, objective: 'throughput', strategies: 'dp', optimizer: 'momentum' });
  assert.ok(out.feasible);
  assert.equal(out.plan.gpus, 1, `picked ${out.plan.gpus}: ${out.scaling.map((s) => `${s.gpus}:${Math.round(s.samplesPerSec)}`).join(' ')}`);
  const one = out.scaling[0].samplesPerSec;
  const four = out.scaling[3].samplesPerSec;
  assert.ok(Math.abs(one / 2560 - 1) <= 0.15, `1 GPU ${one.toFixed(0)} img/s vs 2560`);
  assert.ok(Math.abs(four / 1473 - 1) <= 0.25, `4-GPU DP ${four.toFixed(0)} img/s vs 1473`);
  assert.equal(out.baselines.dataParallel.gpus, 4);
  assert.ok(Math.abs(out.baselines.dataParallel.samplesPerSec - four) < 1e-6);
});
