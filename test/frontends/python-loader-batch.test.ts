/**
 * A Lightning run's batch is the DataLoader trainer.fit trains on (runLoaderBatch.ts): its batch_size per process,
 * times the Trainer's accumulate_grad_batches, and the Trainer's devices as the replicas. Real files: a project in
 * Lightning's documented layout (a LightningModule and a LightningDataModule, trained by a Trainer in code and by
 * LightningCLI with a config), and the AlexNet example that hands trainer.fit a loader.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { initConfigReaders, launchedSetupHint, withLaunchedSetup } from '../../src/configs';
import type { AnalyzeOptions } from '../../src/core/ir';
import { analyzeSource, initFrontends } from '../../src/frontends';
import { planModel, resolveCluster } from '../../src/planner/index';
import type { PlanOptions } from '../../src/protocol/planOptions';
import { disk } from '../configs/helpers';

const PROJECT = join(__dirname, '..', 'fixtures', 'lightning-datamodule');
const ASSUMED: PlanOptions = { batch: 128, batchAssumed: true, objective: 'throughput', strategies: 'dp', optimizer: 'adam' };

before(async () => {
  await initFrontends();
  await initConfigReaders();
});

const read = async (file: string, text = readFileSync(file, 'utf8'), options: AnalyzeOptions = {}) => {
  const r = await analyzeSource(file, text, options, { workspaceFolders: [join(file, '..')] });
  assert.ok(r.models[0], JSON.stringify(r.diagnostics.map((d) => d.message)));
  return r.models[0];
};

test('trainer.fit(model, datamodule=…): the datamodule’s train loader × accumulate_grad_batches per process, × the Trainer’s devices', async () => {
  const file = join(PROJECT, 'fit.py');
  const model = await read(file);
  assert.deepEqual(model.runBatch, { samples: 64, perProcess: true, source: 'fit.py: DataLoader batch_size 32 (model.py:37) given to trainer.fit at line 10 × accumulate_grad_batches 2 per process', perForward: { samples: 32, said: "fit.py's DataLoader batch_size 32 (model.py:37) given to trainer.fit at line 10" } });
  // The Trainer in the file is the launch: its 4 devices are the replicas.
  const plan = planModel(model, resolveCluster('a100x8', {}), withLaunchedSetup(ASSUMED, launchedSetupHint(file, disk)));
  assert.deepEqual([plan.batch, plan.batchAssumed], [256, undefined]);
  assert.match(plan.batchSource!, /per process × 4 data-parallel replicas \(fit\.py's Lightning Trainer\)$/);
  // The validation loader's bigger batch is not the training batch, and without accumulate_grad_batches one step is one batch.
  const plain = await read(file, readFileSync(file, 'utf8').replace(', accumulate_grad_batches=2', '').replace('2 micro-steps accumulated per optimizer step', 'one batch a step'));
  assert.equal(plain.runBatch?.samples, 32);
  // A loader whose batches a sampler makes states none, rather than torch's default of 1.
  const own = (loader: string) => `import lightning as L\nfrom torch.utils.data import DataLoader\nfrom model import LitClassifier\ntrainer = L.Trainer(devices=2)\ntrainer.fit(LitClassifier(), train_dataloaders=${loader})\n`;
  assert.equal((await read(join(PROJECT, 'inline.py'), own('DataLoader(dataset, batch_sampler=sampler)'))).runBatch, undefined);
  assert.equal((await read(join(PROJECT, 'inline.py'), own('DataLoader(dataset)'))).runBatch?.samples, 1, "torch's default batch_size is 1");
  // Keyword arguments spread from a dict WAP reads count; from one it cannot, nothing is read.
  assert.equal((await read(join(PROJECT, 'inline.py'), own('DataLoader(dataset, **dict(batch_size=12, shuffle=True))'))).runBatch?.samples, 12);
  assert.equal((await read(join(PROJECT, 'inline.py'), own('DataLoader(dataset, **loader_kwargs)'))).runBatch, undefined);
});

test('LightningCLI builds the datamodule from the config’s data: section, and trains on its loader', async () => {
  const file = join(PROJECT, 'cli.py');
  const model = await read(file, undefined, { scriptArguments: { words: ['fit', '--config', 'cli.yaml'], source: 'run.sh' } });
  assert.deepEqual(model.runBatch, { samples: 48, perProcess: true, source: 'cli.py: DataLoader batch_size 48 (model.py:37) given to LightningCLI at line 8 per process', perForward: { samples: 48, said: "cli.py's DataLoader batch_size 48 (model.py:37) given to LightningCLI at line 8" } });
  // --data.batch_size on the command line wins over the config, as jsonargparse reads it.
  const given = await read(file, undefined, { scriptArguments: { words: ['fit', '--config', 'cli.yaml', '--data.batch_size', '24'], source: 'run.sh' } });
  assert.equal(given.runBatch?.samples, 24);
});

test('a loader handed to trainer.fit directly: the AlexNet example’s 16 per process', async () => {
  const model = await read(join(__dirname, '..', '..', 'examples', 'pytorch', 'train_lightning.py'));
  assert.deepEqual([model.runBatch?.samples, model.runBatch?.perProcess], [16, true]);
  assert.match(model.runBatch!.source, /^train_lightning\.py: DataLoader batch_size 16 \(train_lightning\.py:35\) given to trainer\.fit at line 48 per process$/);
});
