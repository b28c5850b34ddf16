/**
 * What pytorch/examples' distributed launch scripts leave to the shell or the machine, in their layout:
 * - FSDP2/run_example.sh runs `torchrun --nproc_per_node=${2:-4} ${1:-example.py}`: without arguments, example.py on
 *   4 processes; read at those defaults, and said (before: "no launch script names it");
 * - ddp-tutorial-series/run_multigpu_torchrun.sh's `--nproc_per_node=gpu` is one process per GPU of the machine
 *   (before: read as nothing, so `wap config` exited 0 with no finding and no "your config");
 * - slurm/sbatch_run.sh spreads 4 processes over 4 machines of one GPU each: the node count is a finding, and
 *   "your config" is the launch's own 4 GPUs (before: no "your config", its script is not on disk).
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { configCommand } from '../../src/cli/commands/config';
import { checkConfig, fixAll, initConfigReaders, resolveLaunchedModel } from '../../src/configs';
import { expandCommand } from '../../src/configs/shellExpansion';
import { findAssignments, splitCommands } from '../../src/configs/shellWords';
import { capture } from '../cli/helpers';
import { dataParallelPlan } from './fixtures';
import { disk, readExample, root } from './helpers';

const DIR = 'test/fixtures/pytorch-distributed';
const FSDP2 = join(root, DIR, 'FSDP2/run_example.sh');
const GPU = join(root, DIR, 'ddp-tutorial-series/run_multigpu_torchrun.sh');
const SBATCH = join(root, DIR, 'ddp-tutorial-series/slurm/sbatch_run.sh');
const MLP = join(root, 'test/configs/data/mlp.py');

/** An in-memory folder, as FileAccess reads it. */
const folder = (files: Record<string, string>) => ({
  read: (path: string) => files[path],
  list: (dir: string) => Object.keys(files).filter((p) => p.startsWith(`${dir}/`) && !p.slice(dir.length + 1).includes('/')).map((p) => p.slice(dir.length + 1)),
});

before(() => initConfigReaders());

test('a whole-word ${N:-default} the script never sets is its default, marked; one the script sets is left alone', () => {
  const text = 'torchrun --nproc_per_node=${2:-4} ${1:-example.py} "${MODE:-fast}"\n';
  const split = splitCommands(text);
  const { words } = expandCommand(split[0]!, new Map(), findAssignments(text, split, false));
  assert.deepEqual(words.slice(2).map((w) => [w.raw, text.slice(w.start, w.end), w.defaultOf]), [['example.py', 'example.py', '${1:-example.py}'], ['fast', 'fast', '${MODE:-fast}']]);
  const set = 'S=train.py\ntorchrun ${S:-other.py}\n';
  const setSplit = splitCommands(set);
  assert.equal(expandCommand(setSplit[1]!, new Map(), findAssignments(set, setSplit, false)).words[1]!.raw, '${S:-other.py}');
});

test('run_example.sh without arguments: example.py on 4 processes, each default said', () => {
  const text = readExample(`${DIR}/FSDP2/run_example.sh`);
  assert.deepEqual(resolveLaunchedModel(FSDP2, text, disk), { file: join(root, DIR, 'FSDP2/example.py'), how: 'run_example.sh runs with torchrun', launch: FSDP2 });
  const findings = checkConfig(FSDP2, text, dataParallelPlan(8)).findings;
  assert.deepEqual(findings.map((f) => [f.severity, f.code]), [['info', 'shell-default'], ['warning', 'gpu-count']]);
  assert.equal(findings[0]!.message, "${2:-4} is read at its default 4: it is run_example.sh's argument 2, so a run may give another");
  assert.equal(text.slice(findings[1]!.range.start, findings[1]!.range.end), '4');
});

test('--nproc_per_node=gpu is one process per GPU of the machine: compared, said, and fixed as a number', () => {
  const text = readExample(`${DIR}/ddp-tutorial-series/run_multigpu_torchrun.sh`);
  const findings = checkConfig(GPU, text, dataParallelPlan(2)).findings;
  assert.deepEqual(findings.map((f) => [f.severity, f.code]), [['info', 'processes-per-gpu'], ['warning', 'gpu-count']]);
  assert.match(findings[0]!.message, /^--nproc_per_node=gpu starts one process per GPU of each machine: 8 on the machines of 'pcie4'/);
  assert.equal(fixAll(GPU, text, dataParallelPlan(2)).text, text.replace('=gpu', '=2'));
  // CUDA_VISIBLE_DEVICES decides how many GPUs the machine shows the launch.
  assert.deepEqual(checkConfig('run.sh', 'CUDA_VISIBLE_DEVICES=0,1 torchrun --nproc_per_node=gpu t.py\n', dataParallelPlan(2)).findings, []);
});

test('sbatch_run.sh: 4 machines × 1 GPU is a node-count finding, and your config is the launch’s 4 GPUs, not modelled over the network', async () => {
  const r = await capture(() => configCommand.run([SBATCH, '--model', MLP, '--input', '8192', '--cluster', 'a100x8', '--gpus', '4']));
  assert.match(r.out, /sbatch_run\.sh:\d+:\d+: warning: 4 machines requested; the plan fits its 4 GPUs on 1 machine\(s\) .* \[node-count\]/);
  assert.match(r.out, /sbatch_run\.sh: your config \(4 GPUs, as sbatch_run\.sh launches it\) \(approximate: 4 machines × 1 GPU\b.*\): .* · best plan: /);
});

test('tensor_parallelism’s script builds its model through a classmethod: the script is read, not a helper module it imports first', () => {
  const launch = 'torchrun --nnodes=1 --nproc_per_node=${2:-4} ${1:-fsdp_tp_example.py}\n';
  const script = 'from log_utils import rank_log, get_logger\nfrom llama2_model import Transformer, ModelArgs\n\nconfig = ModelArgs(dim=256)\nmodel = Transformer.from_model_args(config)\n';
  const io = folder({ 'tp/run_example.sh': launch, 'tp/fsdp_tp_example.py': script, 'tp/log_utils.py': 'def rank_log(): ...\n', 'tp/llama2_model.py': 'class Transformer: ...\n' });
  assert.deepEqual(resolveLaunchedModel('tp/run_example.sh', launch, io), { file: 'tp/fsdp_tp_example.py', how: 'run_example.sh runs with torchrun', launch: 'tp/run_example.sh' });
});

test('torchrun without --nproc_per_node starts one process per machine, its default: said, compared, and the fix writes the plan’s count', () => {
  const text = '#!/bin/bash\ntorchrun --standalone train.py --lr 0.1\n';
  const findings = checkConfig('run.sh', text, dataParallelPlan(8)).findings;
  assert.deepEqual(findings.map((f) => [f.severity, f.code]), [['info', 'launch-count-default'], ['warning', 'gpu-count']]);
  assert.equal(findings[0]!.message, 'torchrun without --nproc_per_node starts one process per machine (its default)');
  assert.match(findings[1]!.message, /^1 process requested; the plan uses 8 GPUs/);
  assert.equal(fixAll('run.sh', text, dataParallelPlan(8)).text, '#!/bin/bash\ntorchrun --nproc_per_node=8 --standalone train.py --lr 0.1\n');
  // A count written out is the count, as before.
  assert.deepEqual(checkConfig('run.sh', '#!/bin/bash\ntorchrun --nproc_per_node 8 train.py\n', dataParallelPlan(8)).findings, []);
});
