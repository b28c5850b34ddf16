/**
 * A Lightning run's batch is the DataLoader trainer.fit trains on (runLoaderBatch.ts): its batch_size per process,
 * times the Trainer's accumulate_grad_batches, and the Trainer's devices as the replicas. Real files: a project in
 * Lightning's documented layout (a LightningModule and a LightningDataModule, trained by a Trainer in code and by
 * LightningCLI with a config), and the AlexNet example that hands trainer.fit a loader. A plain loop's batch is the
 * loader it steps backward over, or the one next() draws from (minGPT's Trainer).
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
const MINGPT = join(__dirname, '..', 'fixtures', 'mingpt');
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

test('minGPT’s Trainer draws its batches with next() from a DataLoader of config.batch_size: 64 per process, said with where', async () => {
  const file = join(MINGPT, 'projects', 'chargpt', 'chargpt.py');
  const r = await analyzeSource(file, readFileSync(file, 'utf8'), {}, { workspaceFolders: [MINGPT] });
  const model = r.models[0]!;
  assert.equal(model.name, 'GPT');
  assert.deepEqual(model.runBatch, {
    samples: 64, perProcess: true,
    source: 'chargpt.py: DataLoader batch_size 64 (trainer.py:33) drawn by next() at trainer.py:37 per process',
    perForward: { samples: 64, said: "chargpt.py's DataLoader batch_size 64 (trainer.py:33) drawn by next() at trainer.py:37" },
  });
  // With no launch beside it, the plan multiplies it by the GPUs it may use and says so.
  const plan = planModel(model, resolveCluster('a100x8', {}), ASSUMED);
  assert.equal(plan.batch, 64 * 8);
});

test('a plain loop’s batch is the loader it steps backward over, not the evaluation loader it only iterates', async () => {
  const file = join(PROJECT, 'plain_loop.py');
  const text = (evalBatch: number, secondTrain = '') => [
    'import torch',
    'import torch.nn as nn',
    'from torch.utils.data import DataLoader, TensorDataset',
    '',
    'def main():',
    '    model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 10))',
    '    data = TensorDataset(torch.randn(1000, 32), torch.randint(0, 10, (1000,)))',
    '    train = DataLoader(data, batch_size=48, shuffle=True)',
    `    valid = DataLoader(data, batch_size=${evalBatch})`,
    '    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)',
    '    for epoch in range(3):',
    '        for x, y in train:',
    '            loss = nn.functional.cross_entropy(model(x), y)',
    '            opt.zero_grad()',
    '            loss.backward()',
    '            opt.step()',
    '        with torch.no_grad():',
    '            for x, y in valid:',
    '                model(x)',
    secondTrain,
    '',
    'if __name__ == "__main__":',
    '    main()',
    '',
  ].join('\n');
  const model = await read(file, text(256));
  assert.equal(model.runBatch?.samples, 48);
  assert.equal(model.runBatch?.perProcess, true);
  assert.match(model.runBatch!.source, /^plain_loop\.py: DataLoader batch_size 48 \(plain_loop\.py:8\) the training loop at plain_loop\.py:12 iterates per process$/);
  // Two training loops over loaders of different batches: which one is the run is the user's to say.
  const two = await read(file, text(256, '    for x, y in valid:\n        model(x).sum().backward()\n        opt.step()'));
  assert.equal(two.runBatch, undefined);
});

