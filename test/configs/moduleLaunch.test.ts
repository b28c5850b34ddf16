/**
 * A launch that runs a module (`torchrun … -m scripts.base_train -- --depth=4`), in the layout of karpathy/nanochat's
 * speedrun.sh: the module is scripts/base_train.py from the launch's folder, which is also where its `nanochat`
 * imports resolve, and torchrun's argparse drops the `--` before the script's own arguments. Before, only `.py` words
 * were scripts: `wap config speedrun.sh` said "no launch script names it".
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { configCommand } from '../../src/cli/commands/config';
import { analyzeModelFile } from '../../src/cli/modelLoading';
import { checkConfig, comparedSetup, initConfigReaders, launchArgumentsOfModel, launchedArguments, resolveLaunchedModel } from '../../src/configs';
import { scriptLaunch } from '../../src/configs/launchScripts';
import { initFrontends } from '../../src/frontends';
import { splitCommands } from '../../src/configs/shellWords';
import { capture } from '../cli/helpers';
import { dataParallelPlan } from './fixtures';
import { disk, readExample, root } from './helpers';

const PROJECT = join(root, 'test/fixtures/nanochat-launch');
const LAUNCH = join(PROJECT, 'speedrun.sh');
const TRAIN = join(PROJECT, 'scripts/base_train.py');

before(async () => {
  await initFrontends();
  await initConfigReaders();
});

test('-m names the script as a module under every launcher; a launcher’s own module is not the script', () => {
  const launch = (line: string) => {
    const words = splitCommands(line)[0]!;
    const found = scriptLaunch(words);
    return found && { path: found.path, module: found.module, word: words[found.script]!.raw };
  };
  assert.deepEqual(launch('torchrun --standalone --nproc_per_node=8 -m scripts.base_train -- --depth=20'), { path: 'scripts/base_train.py', module: 'scripts.base_train', word: 'scripts.base_train' });
  assert.deepEqual(launch('python -m scripts.tok_train --max-chars=2000'), { path: 'scripts/tok_train.py', module: 'scripts.tok_train', word: 'scripts.tok_train' });
  assert.deepEqual(launch('python -m torch.distributed.run --nproc_per_node 8 -m pkg.train'), { path: 'pkg/train.py', module: 'pkg.train', word: 'pkg.train' });
  assert.deepEqual(launch('python -m torch.distributed.launch --nproc_per_node 8 train.py'), { path: 'train.py', module: undefined, word: 'train.py' });
});

test('speedrun.sh’s torchrun module launch is followed to scripts/base_train.py, a module not on disk is passed over', () => {
  assert.deepEqual(resolveLaunchedModel(LAUNCH, readExample('test/fixtures/nanochat-launch/speedrun.sh'), disk), {
    file: TRAIN, how: 'speedrun.sh runs with torchrun', launch: LAUNCH, importRoot: PROJECT,
  });
});

test('the model is read with this launch’s arguments, `--` dropped as torchrun’s argparse drops it, its imports from the launch’s folder', async () => {
  const text = readExample('test/fixtures/nanochat-launch/speedrun.sh');
  const launch = launchArgumentsOfModel(LAUNCH, text, { file: TRAIN }, disk);
  assert.deepEqual(launch, { words: ['--depth=4'], source: 'speedrun.sh', importRoot: PROJECT, said: "speedrun.sh's torchrun command: --depth=4" });
  // `wap plan scripts/base_train.py` finds the same launch from the script's side.
  assert.deepEqual(launchedArguments(TRAIN, disk), { words: ['--depth=4'], source: 'speedrun.sh' });
  // depth 4 → n_embd 256: 2 × 4096 × 256 embedding and head + 4 × 8 × 256² MLP weights. (Depth 20 would be 272,629,760.)
  const r = await analyzeModelFile(TRAIN, { launchArguments: { words: launch!.words, source: launch!.source }, importRoot: launch!.importRoot });
  assert.equal(r.models[0]?.totals.params, 2 * 4096 * 256 + 4 * 8 * 256 * 256);
});

test('wap config speedrun.sh compares its model on the 8 processes it starts, and says which command line it read', async () => {
  const r = await capture(() => configCommand.run([LAUNCH, '--cluster', 'h100x8']));
  assert.match(r.err, /comparing with the model in .*scripts\/base_train\.py, found by speedrun\.sh runs with torchrun; read with speedrun\.sh's torchrun command: --depth=4;/);
  assert.match(r.out, /speedrun\.sh: your config \(8 GPUs, as speedrun\.sh launches it\): /);
  assert.doesNotMatch(r.err, /no model for/);
});

test('the stages that share one $NPROC_PER_NODE are one finding at its value, not one per stage', () => {
  const text = 'NPROC_PER_NODE=8\ntorchrun --standalone --nproc_per_node=$NPROC_PER_NODE -m scripts.base_train\ntorchrun --standalone --nproc_per_node=$NPROC_PER_NODE -m scripts.mid_train\n';
  const findings = checkConfig('speedrun.sh', text, dataParallelPlan(2)).findings;
  assert.deepEqual(findings.map((f) => [f.code, text.slice(f.range.start, f.range.end)]), [['gpu-count', '8']]);
});

test('"your config" of a `-m` launch whose script wraps its model itself is anchored at the module the launch names', () => {
  const files: Record<string, string> = {
    '/p/run.sh': '#!/bin/bash\ntorchrun --nproc_per_node 8 -m scripts.train --lr 3e-4\n',
    '/p/scripts/train.py': 'import torch\nfrom torch.nn.parallel import DistributedDataParallel as DDP\nmodel = DDP(torch.nn.Linear(8, 8))\n',
  };
  const io = { read: (p: string) => files[p], list: (d: string) => Object.keys(files).filter((p) => p.startsWith(`${d}/`) && !p.slice(d.length + 1).includes('/')).map((p) => p.slice(d.length + 1)) };
  const setup = comparedSetup('/p/run.sh', files['/p/run.sh']!, io);
  assert.ok(setup, 'the DDP script states a setup');
  assert.equal(files['/p/run.sh']!.slice(setup.anchor.start, setup.anchor.end), 'scripts.train');
  assert.deepEqual([setup.world, setup.worldFrom], [8, 'run.sh']);
});
