/**
 * A training script's asserts on its process count (runProcessCounts.ts) keep the plan to the GPU counts the script
 * runs on (planner/runGpuCounts.ts). The scripts are the nanoGPT-layout fixture with the assert nanoGPT makes before
 * it splits its accumulation, the token-budget assert of llm.c and build-nanogpt written into it, and AlexNet's
 * example with a batch the processes must share evenly, for the per-layer search.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, test } from 'node:test';
import type { AnalyzedModel } from '../../src/core/ir';
import { analyzeSource, initFrontends } from '../../src/frontends';
import { planModel, resolveCluster } from '../../src/planner/index';
import type { PlanOutcome } from '../../src/protocol/plan';
import type { PlanOptions } from '../../src/protocol/planOptions';
import { NANOGPT } from './nanogptTruth';

const script = join(NANOGPT, 'configured_train.py');
const written = readFileSync(script, 'utf8');
const SPLIT = '    gradient_accumulation_steps //= ddp_world_size\n';
const ALEXNET = join(__dirname, '..', '..', 'examples', 'pytorch', 'alexnet.py');

before(async () => {
  await initFrontends();
});

const analyzed = async (file: string, text: string, folder: string, words: string[] = []) => {
  const r = await analyzeSource(file, text, words.length > 0 ? { scriptArguments: { words, source: 'run.sh' } } : {}, { workspaceFolders: [folder] });
  const model = r.models.find((m) => m.name === 'model' || m.name === 'net') ?? r.models[0];
  assert.ok(model, JSON.stringify(r.diagnostics.map((d) => d.message)));
  return { model, diagnostics: [...r.diagnostics, ...model.diagnostics] };
};
const nanogpt = (text: string) => analyzed(script, text, NANOGPT, ['config/small.py']);

const options: PlanOptions = { batch: 128, batchAssumed: true, objective: 'throughput', strategies: 'all', optimizer: 'adam' };
const plan = (model: AnalyzedModel, cluster: string, extra: Partial<PlanOptions> = {}): PlanOutcome => planModel(model, resolveCluster(cluster, {}), { ...options, ...extra });
const curve = (p: PlanOutcome) => p.scaling.map((s) => [s.gpus, s.feasible]);

test('nanoGPT’s assert that its accumulation divides over the processes keeps the plan to 1, 2 and 4 GPUs', async () => {
  const { model } = await nanogpt(written.replace(SPLIT, `    assert gradient_accumulation_steps % ddp_world_size == 0\n${SPLIT}`));
  const said = 'configured_train.py:35 asserts `gradient_accumulation_steps % ddp_world_size == 0` (gradient_accumulation_steps 4)';
  assert.deepEqual(model.processCountRules, [{ dividend: 4, factor: 1, said }]);
  const p = plan(model, 'a100x8');
  assert.ok(p.feasible);
  assert.equal(p.plan.gpus, 4);
  assert.deepEqual(curve(p), [[1, true], [2, true], [3, false], [4, true], [5, false], [6, false], [7, false], [8, false]]);
  assert.equal(p.scaling[7].reason, `the script stops on 8 GPUs: ${said}, and 4 is not a multiple of 8`);
  assert.ok(p.diagnostics.some((d) => d.severity === 'info' && d.message === `${said}: the script runs on only 1, 2 and 4 GPUs of the 8 available, so the plan considers those alone`));
  // The data-parallel baseline on all 8 is a run the script refuses, and says so.
  assert.equal(p.baselines.dataParallel.feasible, false);
  assert.match(p.baselines.dataParallel.reason!, /^the script stops on 8 GPUs/);
  // --gpus 3 is an infeasible plan that names the assert, not a plan the user cannot launch.
  const three = plan(model, 'a100x8', { gpus: 3 });
  assert.equal(three.feasible, false);
  assert.equal(three.reason, `the script stops on 3 GPUs: ${said}, and 4 is not a multiple of 3`);
  // The accumulation the command line sets is the one asserted.
  const forty = (await analyzed(script, written.replace(SPLIT, `    assert gradient_accumulation_steps % ddp_world_size == 0\n${SPLIT}`), NANOGPT, ['config/small.py', '--gradient_accumulation_steps=40'])).model;
  assert.deepEqual(curve(plan(forty, 'a100x8')).filter(([, ok]) => ok).map(([n]) => n), [1, 2, 4, 5, 8]);
  // On 64 GPUs the block-stack search samples counts (powers of two, node multiples): every count the script
  // accepts is searched as well, and no other.
  const a100 = { name: 'A100-SXM4-80GB', sms: 108, tflops: 19.5, peakTflops: { fp32: 19.5, tf32: 156, bf16: 312, fp16: 312 }, memoryGB: 80, memoryBandwidthGBs: 2039, powerW: 400 };
  const eightNodes = { name: '8 nodes of 8x A100', nodes: 8, gpusPerNode: 8, gpu: a100, intraNode: { bandwidthGBs: 300, latencyUs: 3, name: 'nvlink' }, interNode: { bandwidthGBs: 25, latencyUs: 5, name: 'ib' } };
  const wide = planModel(forty, resolveCluster(eightNodes, {}), options);
  assert.deepEqual(wide.scaling.filter((s) => s.feasible).map((s) => s.gpus), [1, 2, 4, 5, 8, 10, 20, 40]);
  assert.ok(wide.scaling.filter((s) => !s.feasible).every((s) => s.refusedByScript), JSON.stringify(wide.scaling.filter((s) => !s.feasible)));
});

test('a token budget asserted over B × T × the world size (llm.c, build-nanogpt) allows the counts that divide it', async () => {
  const budget = written
    .replace('gradient_accumulation_steps = 4\n', 'total_batch_size = 16384\nB = 16\nT = 256\n')
    .replace(SPLIT, '    pass\nelse:\n    ddp_world_size = 1\n')
    .replace('model_args = dict(', 'tokens_per_fwdbwd = B * T * ddp_world_size\nassert total_batch_size % tokens_per_fwdbwd == 0\ngradient_accumulation_steps = total_batch_size // tokens_per_fwdbwd\nmodel_args = dict(');
  const { model } = await nanogpt(budget);
  assert.equal(model.processCountRules?.length, 1);
  assert.deepEqual([model.processCountRules![0].dividend, model.processCountRules![0].factor], [16384, 4096]);
  const p = plan(model, 'a100x8');
  assert.deepEqual(curve(p).filter(([, ok]) => ok).map(([n]) => n), [1, 2, 4]);
  assert.equal(p.scaling[7].reason, `the script stops on 8 GPUs: ${model.processCountRules![0].said}, and 16384 is not a multiple of 4096 × 8 = 32768`);
  // A budget no process count divides leaves nothing to plan, and the plan says why.
  const none = await nanogpt(budget.replace('total_batch_size = 16384', 'total_batch_size = 1000'));
  const refused = plan(none.model, 'a100x8');
  assert.equal(refused.feasible, false);
  assert.match(refused.feasible ? "" : refused.reason, /^the script stops on \d GPUs?: configured_train\.py:\d+ asserts `total_batch_size % tokens_per_fwdbwd == 0`/);
  assert.ok(refused.diagnostics.some((d) => /the script runs on no GPU count of the 8 available/.test(d.message)));
});

test('the per-layer search keeps to the counts too: AlexNet whose 90 samples the processes share evenly', async () => {
  const text = readFileSync(ALEXNET, 'utf8').replace('    net = alexnet(num_classes=1000)\n', '    import os\n    world_size = int(os.environ.get("WORLD_SIZE", 1))\n    batch_size = 90\n    assert batch_size % world_size == 0, "the batch must split evenly"\n    net = alexnet(num_classes=1000)\n');
  const { model } = await analyzed(ALEXNET, text, join(ALEXNET, '..'));
  assert.deepEqual(model.processCountRules?.map((r) => [r.dividend, r.factor]), [[90, 1]]);
  const p = plan(model, 'pcie4', { batch: 90 });
  assert.ok(p.feasible);
  assert.equal(p.search.method === 'parallel3d', false);
  assert.deepEqual(curve(p).map(([n]) => n), [1, 2, 3, 4]);
  assert.equal(p.scaling[3].feasible, false);
  assert.match(p.scaling[3].reason!, /^the script stops on 4 GPUs: alexnet\.py:\d+ asserts `batch_size % world_size == 0` \(batch_size 90\), and 90 is not a multiple of 4$/);
  assert.notEqual(p.plan.gpus, 4);
  const four = plan(model, 'pcie4', { batch: 90, gpus: 4 });
  assert.match(four.feasible ? 'a plan on 4 GPUs' : four.reason, /^the script stops on 4 GPUs/);
});

test('an assert whose numbers cannot be read is said, and limits nothing', async () => {
  const text = written.replace(SPLIT, `    assert gradient_accumulation_steps % ddp_world_size == 0\n${SPLIT}`).replace("gradient_accumulation_steps = 4\n", "gradient_accumulation_steps = int(os.environ['ACCUM'])\n");
  const { model, diagnostics } = await nanogpt(text);
  assert.equal(model.processCountRules, undefined);
  const said = diagnostics.filter((d) => d.code === 'process-count-unread');
  assert.equal(said.length, 1);
  assert.match(said[0].message, /`gradient_accumulation_steps % ddp_world_size == 0` limits the GPU counts this script runs on, but WAP could not read its numbers/);
  assert.ok(plan(model, 'a100x8').scaling.every((s) => s.feasible));
});
