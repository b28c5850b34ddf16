/**
 * The batch a training script trains at, as the run computes it (frontends/python/runBatch.ts), and how the plan uses
 * it (planner/codeBatch.ts). Before, a nanoGPT-style script was planned at a global batch of 128 whatever its
 * `batch_size` and `gradient_accumulation_steps` said, because the config reader reads only literals a script does
 * not rewrite. The nanoGPT-layout fixture (configured_train.py, its configurator and config/small.py) is read with
 * the run's arguments; inline scripts cover the other ways a script states it.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, test } from 'node:test';
import type { AnalyzeOptions } from '../../src/core/ir';
import { analyzeSource, initFrontends } from '../../src/frontends';
import { planModel, resolveCluster } from '../../src/planner/index';
import type { PlanOptions } from '../../src/protocol/planOptions';
import { NANOGPT } from './nanogptTruth';

const script = join(NANOGPT, 'configured_train.py');
const written = readFileSync(script, 'utf8');

before(async () => {
  await initFrontends();
});

const trained = async (text: string, words: string[] = [], file = script) => {
  const options: AnalyzeOptions = words.length > 0 ? { scriptArguments: { words, source: 'run.sh' } } : {};
  const r = await analyzeSource(file, text, options, { workspaceFolders: [NANOGPT] });
  const model = r.models.find((m) => m.name === 'model') ?? r.models[0];
  assert.ok(model, JSON.stringify(r.diagnostics.map((d) => d.message)));
  return model;
};

test('nanoGPT’s accumulation, split over the processes, makes batch_size × gradient_accumulation_steps the global batch', async () => {
  const model = await trained(written, ['config/small.py']);
  assert.deepEqual(model.runBatch, {
    samples: 64, perProcess: false,
    source: 'configured_train.py: batch_size 16 × gradient_accumulation_steps 4, gradient_accumulation_steps split over the processes by the script',
    // One process's forward is the batch_size as it is: only the accumulation is split.
    perForward: { samples: 16, said: "configured_train.py's batch_size 16" },
  });
  // Its length is the run's block_size, stated by the run rather than assumed.
  assert.deepEqual(model.sequence, { input: model.sequence?.input, length: 128, source: 'block_size 128 in configured_train.py', assumed: false });
  // --batch_size=32 on the command line goes through the configurator.
  assert.equal((await trained(written, ['config/small.py', '--batch_size=32'])).runBatch?.samples, 128);
  // The plan trains at it, says where it came from, and no longer calls it assumed.
  const plan = planModel(model, resolveCluster('a100x8', {}), { batch: 128, batchAssumed: true, objective: 'throughput', strategies: 'dp', optimizer: 'adam' });
  assert.equal(plan.batch, 64);
  assert.equal(plan.batchAssumed, undefined);
  assert.equal(plan.batchSource, model.runBatch!.source);
});

test('without the split, the product is what each process trains on a step', async () => {
  const perProcess = await trained(written.replace('    gradient_accumulation_steps //= ddp_world_size\n', ''), ['config/small.py']);
  assert.deepEqual([perProcess.runBatch?.samples, perProcess.runBatch?.perProcess], [64, true]);
  assert.match(perProcess.runBatch!.source, /^configured_train\.py: batch_size 16 × gradient_accumulation_steps 4 per process$/);
  const options: PlanOptions = { batch: 128, batchAssumed: true, objective: 'throughput', strategies: 'dp', optimizer: 'adam' };
  const cluster = resolveCluster('a100x8', {});
  // The launch's replicas multiply it, stated.
  const launched = planModel(perProcess, cluster, { ...options, launchReplicas: { count: 4, source: 'as run.sh launches configured_train.py' } });
  assert.deepEqual([launched.batch, launched.batchAssumed], [256, undefined]);
  assert.match(launched.batchSource!, /per process × 4 data-parallel replicas \(as run\.sh launches configured_train\.py\)$/);
  // No launch: one process per GPU the plan may use, and still assumed.
  const alone = planModel(perProcess, cluster, { ...options, maxGpus: 2 });
  assert.deepEqual([alone.batch, alone.batchAssumed], [128, true]);
  assert.match(alone.batchSource!, /one per GPU of the 2 the plan may use/);
  // A batch someone chose wins; launches that disagree stay the user's to settle.
  const flagged = planModel(perProcess, cluster, { ...options, batch: 48, batchAssumed: undefined, batchSource: '--batch' });
  assert.deepEqual([flagged.batch, flagged.batchSource], [48, '--batch']);
  const disagree = planModel(perProcess, cluster, { ...options, batchSource: 'the launches that train the model state different global batches (a.sh 8, b.sh 16)' });
  assert.deepEqual([disagree.batch, disagree.batchAssumed], [128, true]);
});

test('a batch split inside a worker WAP does not run (the ImageNet example’s mp.spawn) is still one node’s, said so', async () => {
  const text = [
    'import argparse',
    'import torch',
    'from torch import nn',
    'parser = argparse.ArgumentParser()',
    "parser.add_argument('-b', '--batch-size', default=256, type=int)",
    'args = parser.parse_args()',
    'model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 10))',
    'optimizer = torch.optim.SGD(model.parameters(), lr=0.1)',
    'def main_worker(gpu, ngpus_per_node, args):',
    '    args.batch_size = int(args.batch_size / ngpus_per_node)',
  ].join('\n');
  const model = await trained(text, [], join(NANOGPT, 'imagenet_style.py'));
  assert.deepEqual([model.runBatch?.samples, model.runBatch?.perProcess], [256, false]);
  // ngpus_per_node counts one node's GPUs: without a node count in the script, the batch is one node's, and says so.
  assert.match(model.runBatch!.source, /^imagenet_style\.py: batch_size 256 \(the parser's default\), `args\.batch_size = int\(args\.batch_size \/ ngpus_per_node\)` at line 10 divides it among the GPUs of one node \(ngpus_per_node, one node's by its name\): one node's batch, as the script states no node count/);
  const given = await trained(text, ['--batch-size', '512'], join(NANOGPT, 'imagenet_style.py'));
  assert.match(given.runBatch!.source, /^imagenet_style\.py: --batch_size 512 from run\.sh,/);
});

test('TrainingArguments as the run builds it: a keyword it leaves out is transformers’ default', async () => {
  const text = [
    'from torch import nn',
    'from transformers import Trainer, TrainingArguments',
    'steps = 4',
    'model = nn.Sequential(nn.Linear(16, 16), nn.ReLU())',
    "args = TrainingArguments(output_dir='out', gradient_accumulation_steps=steps)",
    'Trainer(model=model, args=args).train()',
  ].join('\n');
  const model = await trained(text, [], join(NANOGPT, 'hf_style.py'));
  assert.deepEqual(model.runBatch, { samples: 32, perProcess: true, source: "hf_style.py: per_device_train_batch_size 8 (transformers' default) × gradient_accumulation_steps 4 per process", perForward: { samples: 8, said: "hf_style.py's per_device_train_batch_size 8 (transformers' default)" } });
  // Keywords hidden in a splat are not guessed.
  const splat = await trained(text.replace('gradient_accumulation_steps=steps', '**settings'), [], join(NANOGPT, 'hf_style.py'));
  assert.equal(splat.runBatch, undefined);
});

test('no batch where the script accumulates under a name WAP does not read, or trains nothing', async () => {
  const renamed = await trained(written.replace(/gradient_accumulation_steps/g, 'accum_iter'), ['config/small.py']);
  assert.equal(renamed.runBatch, undefined);
  const untrained = await trained('from torch import nn\nbatch_size = 64\nmodel = nn.Sequential(nn.Linear(8, 8), nn.ReLU())\n', [], join(NANOGPT, 'untrained.py'));
  assert.equal(untrained.runBatch, undefined);
});

test('a budget the script divides into accumulation steps is the global batch: tokens over T (build-nanogpt, llm.c), or samples', async () => {
  const SPLIT = '    gradient_accumulation_steps //= ddp_world_size\n';
  // build-nanogpt's shape: a token budget, B and T, and the accumulation computed over the processes.
  const tokens = written
    .replace('gradient_accumulation_steps = 4\n', 'total_batch_size = 32768\nB = 16\nT = 512\n')
    .replace(SPLIT, '')
    .replace('model_args = dict(', 'gradient_accumulation_steps = total_batch_size // (B * T * ddp_world_size)\nmodel_args = dict(');
  const model = await trained(tokens, ['config/small.py']);
  assert.deepEqual(model.runBatch, {
    samples: 64, perProcess: false,
    source: 'configured_train.py: total_batch_size 32768 tokens ÷ T 512 per sample, gradient_accumulation_steps = `total_batch_size // (B * T * ddp_world_size)` at line 41 splits it over the processes',
  });
  // Its T is what the run's block_size in the config says it is not: the config's 128 is read first, and stays.
  assert.equal(model.sequence?.length, 128);
  const plan = planModel(model, resolveCluster('a100x8', {}), { batch: 128, batchAssumed: true, objective: 'throughput', strategies: 'dp', optimizer: 'adam' });
  assert.deepEqual([plan.batch, plan.batchAssumed, plan.batchSource], [64, undefined, model.runBatch!.source]);
  // llm.c's shape: the divisor is named a line before, its factors are the parser's options.
  const named = tokens.replace('gradient_accumulation_steps = total_batch_size // (B * T * ddp_world_size)', 'tokens_per_fwdbwd = B * T * ddp_world_size\ngradient_accumulation_steps = total_batch_size // tokens_per_fwdbwd');
  assert.equal((await trained(named, ['config/small.py'])).runBatch?.samples, 64);
  // A budget in samples (Megatron's global_batch_size over micro_batch_size × world size) is the batch as it is.
  const samples = tokens.replace('total_batch_size = 32768', 'global_batch_size = 96').replace('total_batch_size // (B * T * ddp_world_size)', 'global_batch_size // (B * ddp_world_size)');
  assert.equal((await trained(samples, ['config/small.py'])).runBatch?.samples, 96);
  // A factor WAP cannot name leaves the batch unread rather than guessed.
  const unnamed = tokens.replace('(B * T * ddp_world_size)', '(B * T * k * ddp_world_size)').replace('B = 16\n', 'B = 16\nk = 2\n');
  assert.equal((await trained(unnamed, ['config/small.py'])).runBatch, undefined);
});
