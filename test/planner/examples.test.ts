import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { analyzeSource } from '../../src/frontends/index';
import { planModel, resolveCluster } from '../../src/planner/index';

const root = new URL('../..', import.meta.url).pathname;

async function example(file: string) {
  const r = await analyzeSource(file, readFileSync(join(root, file), 'utf8'));
  assert.ok(r.models.length > 0, `no model in ${file}`);
  return r.models[0];
}

for (const file of ['examples/pytorch/alexnet.py', 'examples/pytorch/vgg.py']) {
  test(`real example ${file}: hybrid on pcie4 → DP convs, MP large FCs; never slower than baselines`, async () => {
    const model = await example(file);
    const out = planModel(model, resolveCluster('pcie4', {}), { batch: 128, objective: 'throughput', strategies: 'hybrid', optimizer: 'momentum' });
    assert.ok(out.feasible);
    const convs = out.plan.layers.filter((l) => /conv/i.test(l.type));
    const bigFc = out.plan.layers.filter((l) => /linear/i.test(l.type) && l.params > 10e6);
    assert.ok(convs.length >= 5 && bigFc.length >= 2);
    assert.ok(convs.every((l) => l.strategy === 'data'));
    assert.ok(bigFc.every((l) => l.strategy === 'model' || l.strategy === 'hybrid'));
    for (const b of Object.values(out.baselines)) assert.ok(out.plan.samplesPerSec >= b.samplesPerSec);
  });
}

test('real example: dp mode AlexNet at batch 128 on pcie4 uses fewer than 4 GPUs', async () => {
  const out = planModel(await example('examples/pytorch/alexnet.py'), resolveCluster('pcie4', {}), { batch: 128, objective: 'throughput', strategies: 'dp', optimizer: 'momentum' });
  assert.ok(out.feasible && out.plan.gpus < 4);
});

function wap(args: string[]) {
  return spawnSync(process.execPath, ['--import', 'tsx', join(root, 'src/cli/main.ts'), 'plan', ...args], { cwd: root, encoding: 'utf8', timeout: 60000 });
}

test('wap plan CLI: --json, --trace, bad flags and bad cluster files', () => {
  const dir = mkdtempSync(join(tmpdir(), 'wap-plan-'));
  const trace = join(dir, 'trace.json');
  const ok = wap(['examples/pytorch/alexnet.py', '--cluster', 'pcie4', '--batch', '128', '--json', '--trace', trace]);
  assert.equal(ok.status, 0, ok.stderr);
  const outcome = JSON.parse(ok.stdout);
  assert.equal(outcome.model, 'alexnet');
  assert.equal(outcome.cluster.gpus, 4);
  assert.ok(outcome.plan.layers[0].line > 0);
  const t = JSON.parse(readFileSync(trace, 'utf8'));
  assert.ok(t.traceEvents.length > 10);

  const badBatch = wap(['examples/pytorch/alexnet.py', '--batch', '0']);
  assert.equal(badBatch.status, 2);
  assert.match(badBatch.stderr.trim(), /^wap: --batch expects a positive integer, got '0'$/);

  const spec = join(dir, 'bad.json');
  writeFileSync(spec, JSON.stringify({ nodes: 1, gpusPerNode: 2, gpu: { tflops: -3, memoryGB: 12, memoryBandwidthGBs: 500 }, intraNode: { bandwidthGBs: 10 } }));
  const badSpec = wap(['examples/pytorch/alexnet.py', '--cluster', spec]);
  assert.equal(badSpec.status, 2);
  assert.match(badSpec.stderr, /gpu\.tflops must be a positive number/);
  assert.equal(badSpec.stderr.trim().split('\n').length, 1);

  // VGG-16 at batch 512 fits one TITAN Xp only through memory savers; with them pinned off nothing fits.
  const saved = wap(['examples/pytorch/vgg.py', '--cluster', 'pcie4', '--gpus', '1', '--batch', '512']);
  assert.equal(saved.status, 0, saved.stderr);
  assert.match(saved.stdout, /fits only through/);
  const infeasible = wap(['examples/pytorch/vgg.py', '--cluster', 'pcie4', '--gpus', '1', '--batch', '512', '--recompute', 'none', '--micro-batch', '512']);
  assert.equal(infeasible.status, 1, infeasible.stderr);
  assert.match(infeasible.stdout, /reason: nothing fits on 1 GPU/);
});
