/**
 * A plain accelerate training loop (accelerate's *_no_trainer.py shape): its argparse names the Trainer's options
 * with defaults of its own, so a launch's `--per_device_train_batch_size 32` is read with the script's accumulation
 * default (4), not the Trainer's (1); `Accelerator(mixed_precision="bf16")` is the run's precision, under autocast.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { initConfigReaders, launchedArguments, launchedSetupHint, readConfigSetups, withLaunchedSetup } from '../../src/configs';
import { analyzeSource, initFrontends } from '../../src/frontends';
import { planModel, resolveCluster } from '../../src/planner/index';
import { disk } from '../configs/helpers';

const PROJECT = join(__dirname, '..', 'fixtures', 'accelerate-script');
const script = join(PROJECT, 'train.py');

before(async () => {
  await initFrontends();
  await initConfigReaders();
});

test('the launch’s micro-batch × the script’s own accumulation default × the launch’s 8 processes; bf16 under autocast from the Accelerator', async () => {
  const args = launchedArguments(script, disk);
  assert.ok(args && 'words' in args, JSON.stringify(args));
  const r = await analyzeSource(script, readFileSync(script, 'utf8'), { scriptArguments: { words: args.words, source: args.source } }, { workspaceFolders: [PROJECT] });
  const model = r.models[0]!;
  assert.equal(model.name, 'Net');
  assert.deepEqual(model.runBatch, { samples: 128, perProcess: true, source: 'train.py: --per_device_train_batch_size 32 from run.sh × gradient_accumulation_steps 4 (the parser\'s default) per process', perForward: { samples: 32, said: "train.py's --per_device_train_batch_size 32 from run.sh" } });
  assert.deepEqual(model.runPrecision, { precision: 'bf16', holding: 'autocast', source: 'train.py:25 (Accelerator mixed_precision="bf16")' });
  // The launch states the replicas, not a batch made of the Trainer's defaults.
  const hint = launchedSetupHint(script, disk);
  assert.equal(hint.batch, undefined, JSON.stringify(hint.batch));
  assert.deepEqual(hint.replicas, { count: 8, source: 'as run.sh launches train.py' });
  const plan = planModel(model, resolveCluster('a100x8', {}), withLaunchedSetup({ batch: 128, batchAssumed: true, objective: 'throughput', strategies: 'dp', optimizer: 'adam' }, hint));
  assert.deepEqual([plan.batch, plan.batchAssumed], [1024, undefined]);
  assert.ok(plan.feasible && plan.plan.setup);
  if (plan.feasible) assert.deepEqual([plan.plan.setup!.precision, plan.plan.setup!.ampStyle], ['bf16', 'autocast']);
});

test('run.sh’s --per_device_train_batch_size is not read as the Trainer’s for a script that never names TrainingArguments', () => {
  const run = join(PROJECT, 'run.sh');
  const text = readFileSync(run, 'utf8');
  assert.deepEqual(readConfigSetups(run, text, disk).map((s) => s.label), []);
  // A launch whose script WAP cannot read is taken at its word.
  assert.deepEqual(readConfigSetups(run, text).map((s) => s.label), ['Hugging Face Trainer command line']);
});
