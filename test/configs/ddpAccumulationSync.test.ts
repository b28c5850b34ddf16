/**
 * Whether a plain DDP script's accumulation all-reduces on every micro-step (configs/torchScriptAccumulation.ts): DDP's
 * reducer syncs every backward run while require_backward_grad_sync is True (torch nn/parallel/distributed.py), so a
 * loop that accumulates without `no_sync()` or nanoGPT's `model.require_backward_grad_sync = (…)` pays A all-reduces
 * per optimizer step. Read from real script files (test/fixtures/ddp-accumulation/), carried into the plan options the
 * way the framework's other timings are, and priced: the plan says which way and why, and what no_sync() would save.
 */
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { initConfigReaders, pinnedOptions, readConfigSetups, withStatedFramework } from '../../src/configs';
import { frameworkHint, withFrameworkFrom } from '../../src/configs/frameworkHint';
import { analyzeSource } from '../../src/frontends/index';
import { planModel, resolveCluster } from '../../src/planner/index';
import type { PlanReport } from '../../src/protocol/plan';
import type { PlanOptions } from '../../src/protocol/planOptions';

before(() => initConfigReaders());

const DIR = 'test/fixtures/ddp-accumulation';
const NO_NO_SYNC = join(DIR, 'train_ddp.py');
const WITH_NO_SYNC = join(DIR, 'train_ddp_no_sync.py');
const NANOGPT = join(DIR, 'nanogpt_train.py');
const textOf = (file: string): string => readFileSync(file, 'utf8');
const read = (file: string, text = textOf(file)) => readConfigSetups(file, text)[0]!;
/** The 1-based line of the first line of `text` that contains `what`. */
const lineOf = (text: string, what: string): number => text.split('\n').findIndex((l) => l.includes(what)) + 1;
const BASE: PlanOptions = { batch: 1024, objective: 'throughput', strategies: 'dp', optimizer: 'momentum', precision: 'bf16', gpus: 8 };

test('a DDP loop that accumulates without no_sync (train_ddp.py) all-reduces every micro-step; with `with model.no_sync():` or nanoGPT\'s require_backward_grad_sync, once', () => {
  const plain = read(NO_NO_SYNC);
  assert.equal(plain.label, 'PyTorch DDP script');
  assert.deepEqual([plain.zeroStage?.value, plain.microBatch?.value, plain.gradientAccumulation?.value], [0, 32, 4]);
  assert.deepEqual(plain.microStepAllReduce?.stages, [0, 1]);
  const text = textOf(NO_NO_SYNC);
  const counted = lineOf(text, 'loss = criterion(model(images), targets) / gradient_accumulation_steps');
  assert.equal(plain.microStepAllReduce!.why, `the loop accumulates over gradient_accumulation_steps (line ${counted}) but never enters model.no_sync() nor sets require_backward_grad_sync: DDP all-reduces on every micro-step's backward (line ${lineOf(text, 'loss.backward()')})`);

  const paused = read(WITH_NO_SYNC);
  assert.deepEqual([paused.microBatch?.value, paused.gradientAccumulation?.value], [32, 4]);
  assert.deepEqual(paused.microStepAllReduce?.stages, []);
  assert.match(paused.microStepAllReduce!.why, new RegExp(`^line ${lineOf(textOf(WITH_NO_SYNC), 'with model.no_sync():')} enters no_sync\\(\\): the micro-steps before the last accumulate locally`));

  // nanoGPT's train.py: the accumulation is the configurator's to change (no literal), the sync paused all the same.
  const nanogpt = read(NANOGPT);
  assert.equal(nanogpt.gradientAccumulation, undefined);
  assert.deepEqual(nanogpt.microStepAllReduce?.stages, []);
  assert.match(nanogpt.microStepAllReduce!.why, new RegExp(`^line ${lineOf(textOf(NANOGPT), 'model.require_backward_grad_sync =')} sets model\\.require_backward_grad_sync: `));
});

test('the ways research code writes it: a no_sync() chosen per step, a flag only ever set True, MAE\'s accum_iter from argparse, no accumulation, ZeroRedundancyOptimizer', () => {
  const text = textOf(NO_NO_SYNC);
  const loop = '            loss = criterion(model(images), targets) / gradient_accumulation_steps\n            loss.backward()\n';
  // `model.no_sync() if … else nullcontext()`: the context is picked per micro-step, the sync paused on the earlier ones.
  const chosen = text.replace(loop, `            sync = (step + 1) % gradient_accumulation_steps == 0\n            with (contextlib.nullcontext() if sync else model.no_sync()):\n${loop.replace(/^ {12}/gm, '                ')}`).replace('import argparse\n', 'import argparse\nimport contextlib\n');
  assert.notEqual(chosen, text);
  assert.deepEqual(read('train.py', chosen).microStepAllReduce?.stages, []);
  // Setting the flag True only resumes what DDP does anyway: every micro-step still all-reduces.
  const resumed = text.replace(loop, `            model.require_backward_grad_sync = True\n${loop}`);
  assert.deepEqual(read('train.py', resumed).microStepAllReduce?.stages, [0, 1]);
  // MAE's engine: the count from argparse, the step every accum_iter batches. No literal accumulation, still DDP's sync each time.
  const mae = text.replace(/gradient_accumulation_steps = 4\n/, '').replaceAll('gradient_accumulation_steps', 'args.accum_iter').replace("    args = parser.parse_args()\n", "    parser.add_argument('--accum_iter', type=int, default=1)\n    args = parser.parse_args()\n");
  const maeSetup = read('main_pretrain.py', mae);
  assert.equal(maeSetup.gradientAccumulation, undefined);
  assert.deepEqual(maeSetup.microStepAllReduce?.stages, [0, 1]);
  assert.match(maeSetup.microStepAllReduce!.why, /accumulates over accum_iter/);
  // A loop that steps every batch accumulates nothing: nothing said, the planner's default stands.
  const stepping = text.replace('            if (step + 1) % gradient_accumulation_steps == 0:\n                optimizer.step()\n                optimizer.zero_grad(set_to_none=True)\n', '            optimizer.step()\n            optimizer.zero_grad(set_to_none=True)\n').replaceAll(' / gradient_accumulation_steps', '');
  assert.equal(read('train.py', stepping).microStepAllReduce, undefined);
  // DDP with ZeroRedundancyOptimizer (ZeRO-1): DDP's reducer all-reduces every backward all the same.
  const zero1 = text.replace('torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, weight_decay=1e-4)', 'ZeroRedundancyOptimizer(model.parameters(), optimizer_class=torch.optim.SGD, lr=args.lr, momentum=0.9)').replace('import torchvision\n', 'import torchvision\nfrom torch.distributed.optim import ZeroRedundancyOptimizer\n');
  const zero1Setup = read('train.py', zero1);
  assert.deepEqual([zero1Setup.zeroStage?.value, zero1Setup.microStepAllReduce?.stages], [1, [0, 1]]);
});

test('carried into the plan options: as the config compared ("your config") and as the script beside the model', () => {
  const options = withStatedFramework(BASE, read(NO_NO_SYNC), 'train_ddp.py');
  assert.deepEqual(options.allReduceEachMicroStepStages, [0, 1]);
  assert.match(options.allReduceEachMicroStepSource!, /^train_ddp\.py \(the loop accumulates over gradient_accumulation_steps/);
  assert.deepEqual(withStatedFramework(BASE, read(WITH_NO_SYNC), 'train_ddp_no_sync.py').allReduceEachMicroStepStages, []);
  // An explicit option wins where the caller keeps it.
  assert.deepEqual(withStatedFramework({ ...BASE, allReduceEachMicroStepStages: [] }, read(NO_NO_SYNC), 'train_ddp.py', true).allReduceEachMicroStepStages, []);
  // Beside the model: a DDP script names no framework, and says this alone.
  const hint = frameworkHint([{ name: 'train_ddp.py', text: textOf(NO_NO_SYNC) }]);
  assert.deepEqual([hint?.file, hint?.microStepAllReduce?.stages, hint?.weightGather], ['train_ddp.py', [0, 1], undefined]);
  const hinted = withFrameworkFrom(BASE, hint);
  assert.deepEqual(hinted.allReduceEachMicroStepStages, [0, 1]);
  assert.match(hinted.allReduceEachMicroStepSource!, /^train_ddp\.py \(the loop accumulates/);
  assert.deepEqual(withFrameworkFrom({ ...BASE, allReduceEachMicroStepStages: [] }, hint).allReduceEachMicroStepStages, []);
  assert.deepEqual(frameworkHint([{ name: 'train.py', text: textOf(NANOGPT) }])?.microStepAllReduce?.stages, []);
});

test('priced: ResNet-50 planned as train_ddp.py runs it all-reduces every micro-step and says what no_sync() saves; train_ddp_no_sync.py syncs once', async () => {
  const file = 'examples/pytorch/resnet.py';
  const resnet = (await analyzeSource(file, textOf(file))).models.find((m) => m.name === 'resnet50')!;
  const cluster = resolveCluster('a100x8', {});
  const planAs = (script: string): PlanReport => {
    const out = planModel(resnet, cluster, { ...pinnedOptions(BASE, read(script), script), gpus: 8 });
    assert.ok(out.feasible, out.feasible ? '' : out.reason);
    return out;
  };
  const each = planAs(NO_NO_SYNC);
  const once = planAs(WITH_NO_SYNC);
  for (const r of [each, once]) assert.deepEqual([r.plan.setup!.zeroStage, r.plan.setup!.microBatch, r.plan.setup!.gradientAccumulation], [0, 32, 4]);
  assert.equal(each.plan.setup!.gradientAccumulationSync, 'every-micro-step');
  assert.match(each.plan.setup!.gradientAccumulationSyncReason!, /^test\/fixtures\/ddp-accumulation\/train_ddp\.py \(the loop accumulates/);
  assert.equal(once.plan.setup!.gradientAccumulationSync, 'once');
  assert.match(once.plan.setup!.gradientAccumulationSyncReason!, /train_ddp_no_sync\.py \(line \d+ enters no_sync\(\)/);
  const saved = each.plan.stepTimeMs - once.plan.stepTimeMs;
  assert.ok(saved > 0, `${each.plan.stepTimeMs} vs ${once.plan.stepTimeMs} ms`);
  const note = each.diagnostics.find((d) => /micro-steps all-reduces its gradients/.test(d.message));
  assert.ok(note, each.diagnostics.map((d) => d.message).join('\n'));
  assert.match(note.message, new RegExp(`the 3 before the last cost ${saved.toFixed(2)} ms per step`));
  assert.equal(once.diagnostics.find((d) => /micro-steps all-reduces its gradients/.test(d.message)), undefined);
});

test('priced: nanoGPT (examples/pytorch/gpt.py) beside its train.py stays "sync once", said with the line that pauses DDP', async () => {
  const file = 'examples/pytorch/gpt.py';
  const gpt = (await analyzeSource(file, textOf(file))).models.find((m) => m.name === 'model')!;
  const options = withFrameworkFrom({ batch: 64, objective: 'throughput', strategies: 'all', optimizer: 'adam', precision: 'bf16', gpus: 8, pins: { zeroStage: 0, dataParallel: 8, tensorParallel: 1, pipelineStages: 1, contextParallel: 1, microBatch: 1 } }, frameworkHint([{ name: 'train.py', text: textOf(NANOGPT) }]));
  const out = planModel(gpt, resolveCluster('a100x8', {}), options);
  assert.ok(out.feasible, out.feasible ? '' : out.reason);
  assert.equal(out.plan.setup!.gradientAccumulation, 8);
  assert.equal(out.plan.setup!.gradientAccumulationSync, 'once');
  assert.match(out.plan.setup!.gradientAccumulationSyncReason!, /^train\.py \(line \d+ sets model\.require_backward_grad_sync: the micro-steps before the last accumulate locally/);
});
