/**
 * Batch options a script does not take as one process's. pytorch/examples' imagenet/main.py divides -b by
 * `ngpus_per_node = torch.cuda.device_count()`: -b is one node's batch (its help says so), and the world is
 * `ngpus_per_node * args.world_size` nodes. WAP took the split as over all processes, so `-b 256 --world-size 2` on two
 * nodes of 8 was planned at 256 (16 a GPU) where the run trains 512 (32 a GPU). The fixture test/fixtures/imagenet
 * has that script's shape. The DDP tutorial's `--batch_size` (test/fixtures/ddp-tutorial-series) has no type=, so
 * `--batch_size 32` hands its DataLoader the string '32', which torch refuses; WAP planned an assumed batch with no word.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, test } from 'node:test';
import type { AnalyzeOptions } from '../../src/core/ir';
import { analyzeSource, initFrontends } from '../../src/frontends';
import { planModel, resolveCluster } from '../../src/planner/index';

const PYTHON = '/usr/bin/python3';
const imagenet = join(__dirname, '..', 'fixtures', 'imagenet', 'main.py');
const tutorial = join(__dirname, '..', 'fixtures', 'ddp-tutorial-series', 'multigpu_torchrun.py');

before(async () => {
  await initFrontends();
});

const read = async (file: string, words: string[], text = readFileSync(file, 'utf8')) => {
  const options: AnalyzeOptions = { scriptArguments: { words, source: 'run.sh' } };
  const r = await analyzeSource(file, text, options, { workspaceFolders: [join(file, '..')] });
  assert.ok(r.models[0], JSON.stringify(r.diagnostics.map((d) => d.message)));
  return r.models[0];
};

const TWO_NODES = ['-b', '256', '--dist-url', 'tcp://10.0.0.1:23456', '--multiprocessing-distributed', '--world-size', '2', '--rank', '0'];

test('a batch divided by one node’s GPU count is one node’s: the global batch is it × the nodes the script computes its world from', async () => {
  const model = await read(imagenet, TWO_NODES);
  assert.deepEqual([model.runBatch?.samples, model.runBatch?.perProcess], [512, false]);
  assert.equal(
    model.runBatch!.source,
    'main.py: --batch_size 256 from run.sh, `args.batch_size = int(args.batch_size / ngpus_per_node)` at line 37 divides it among the GPUs of one node (`ngpus_per_node = torch.cuda.device_count()` at line 21) × args.world_size 2 nodes (`args.world_size = ngpus_per_node * args.world_size` at main.py:24)',
  );
  // Two nodes of 8 GPUs: 32 samples a GPU, as the script's processes each take 256 / 8.
  const plan = planModel(model, resolveCluster('h100x16-2node', {}), { batch: 128, batchAssumed: true, objective: 'throughput', strategies: 'dp', optimizer: 'sgd' });
  assert.ok(plan.feasible, plan.feasible ? '' : plan.reason);
  assert.deepEqual([plan.batch, plan.batchAssumed], [512, undefined]);
  assert.equal(plan.plan.gpus, 16);
  assert.equal(plan.plan.setup?.microBatch, 32);
});

test('without a node count the batch is one node’s and says so; a divisor counting all processes stays the global batch', async () => {
  const alone = await read(imagenet, []);
  assert.equal(alone.runBatch?.samples, 256);
  assert.match(alone.runBatch!.source, /divides it among the GPUs of one node \(`ngpus_per_node = torch\.cuda\.device_count\(\)` at line 21\): one node's batch, as the script states no node count WAP could read/);
  // torchrun's LOCAL_WORLD_SIZE is one node's processes by its own name.
  const text = readFileSync(imagenet, 'utf8');
  const local = text.replace('ngpus_per_node = torch.cuda.device_count()', 'ngpus_per_node = int(os.environ["LOCAL_WORLD_SIZE"])').replace('import argparse', 'import argparse\nimport os');
  const byEnv = await read(imagenet, TWO_NODES, local);
  assert.equal(byEnv.runBatch?.samples, 512);
  assert.match(byEnv.runBatch!.source, /`ngpus_per_node = int\(os\.environ\["LOCAL_WORLD_SIZE"\]\)` at line 22/);
  // dist.get_world_size() counts every process: the number divided is the whole run's, as before.
  const world = text.replace('int(args.batch_size / ngpus_per_node)', 'int(args.batch_size / dist.get_world_size())');
  const global = await read(imagenet, TWO_NODES, world);
  assert.deepEqual([global.runBatch?.samples, global.runBatch?.perProcess], [256, false]);
  assert.match(global.runBatch!.source, /batch_size split over the processes by the script$/);
});

test('a number given to an option declared without type= is a string: said as a warning plans repeat, never read as the batch', async () => {
  // torch's own answer to what the script does with it.
  const truth = spawnSync(PYTHON, ['-c', "import torch\ntry:\n    torch.utils.data.DataLoader(list(range(4)), batch_size='32')\nexcept ValueError as e:\n    print('ValueError')"], { encoding: 'utf8', timeout: 60_000 });
  assert.equal(truth.status, 0, `${PYTHON} needs torch: ${truth.stderr}`);
  assert.equal(truth.stdout.trim(), 'ValueError');
  const given = await read(tutorial, ['50', '10', '--batch_size', '32']);
  const warning = given.diagnostics.find((d) => d.code === 'script-arguments-untyped');
  assert.ok(warning?.carriesToPlan, JSON.stringify(given.diagnostics.map((d) => d.message)));
  assert.equal(warning.severity, 'warning');
  assert.equal(warning.message, "--batch_size is declared without type=: argparse hands the script the '32' run.sh passes as a string (its default 32 is a number), and a DataLoader given batch_size='32' raises ValueError; WAP reads no number from it. Declare it with type=int");
  assert.equal(given.runBatch, undefined);
  const plan = planModel(given, resolveCluster('a100x8', {}), { batch: 128, batchAssumed: true, objective: 'throughput', strategies: 'dp', optimizer: 'sgd' });
  assert.ok(plan.diagnostics?.some((d) => d.message === warning.message), 'the plan repeats it');
  // Its default (a number) and a typed option are read, with no warning.
  const byDefault = await read(tutorial, ['50', '10']);
  assert.equal(byDefault.diagnostics.find((d) => d.code === 'script-arguments-untyped'), undefined);
  assert.deepEqual([byDefault.runBatch?.samples, byDefault.runBatch?.perProcess], [32, true]);
  const typed = await read(tutorial, ['50', '10', '--batch_size', '32'], readFileSync(tutorial, 'utf8').replace("default=32, help", 'default=32, type=int, help'));
  assert.equal(typed.diagnostics.find((d) => d.code === 'script-arguments-untyped'), undefined);
  assert.equal(typed.runBatch?.samples, 32);
});
