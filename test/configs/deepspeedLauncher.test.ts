/**
 * DeepSpeed's launcher as a launch script (format deepspeed-launch), in the layout of DeepSpeedExamples'
 * training/cifar: `deepspeed --bind_cores_to_rank cifar10_deepspeed.py --deepspeed $@` starts one process per GPU of
 * the machine (no --num_gpus: DeepSpeed's documented default), which the plan's machines count and WAP says. Before,
 * `wap config run_ds.sh` answered "is not a training config WAP reads".
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { configCommand } from '../../src/cli/commands/config';
import { checkConfig, detectConfigFormats, fixAll, initConfigReaders, resolveLaunchedModel } from '../../src/configs';
import { capture } from '../cli/helpers';
import { dataParallelPlan } from './fixtures';
import { disk, readExample, root } from './helpers';

const LAUNCH = join(root, 'test/fixtures/deepspeed-cifar/run_ds.sh');
const TEXT = readExample('test/fixtures/deepspeed-cifar/run_ds.sh');

before(() => initConfigReaders());

const brief = (text: string, gpus: number) => checkConfig('run_ds.sh', text, dataParallelPlan(gpus)).findings.map((f) => [f.severity, f.code, f.message]);

test('a deepspeed launch is a launch script WAP reads, and its model is the script it runs', () => {
  assert.ok(detectConfigFormats('run_ds.sh', TEXT).includes('deepspeed-launch'));
  assert.ok(!detectConfigFormats('run.sh', 'pip install deepspeed\ntorchrun --nproc_per_node 8 train.py --deepspeed ds.json\n').includes('deepspeed-launch'));
  assert.deepEqual(resolveLaunchedModel(LAUNCH, TEXT, disk), { file: join(root, 'test/fixtures/deepspeed-cifar/cifar10_deepspeed.py'), how: 'run_ds.sh runs with deepspeed', launch: LAUNCH });
});

test('without --num_gpus it is every GPU of the machine: counted on the plan’s machines, said, and fixed with --num_gpus', () => {
  const findings = checkConfig('run_ds.sh', TEXT, dataParallelPlan(2)).findings;
  assert.deepEqual(findings.map((f) => [f.severity, f.code]), [['info', 'processes-per-gpu'], ['warning', 'gpu-count']]);
  assert.match(findings[0]!.message, /^deepspeed without --num_gpus starts one process per GPU of each machine: 8 on the machines of 'pcie4'/);
  assert.match(findings[1]!.message, /^8 processes requested; the plan .* 2 GPUs/);
  assert.equal(fixAll('run_ds.sh', TEXT, dataParallelPlan(2)).text, TEXT.replace('deepspeed --bind', 'deepspeed --num_gpus=2 --bind'));
  // The plan's 8 GPUs are what the launch starts: nothing to change, and still said.
  assert.deepEqual(brief(TEXT, 8).map(([s, c]) => [s, c]), [['info', 'processes-per-gpu']]);
});

test('--num_gpus × --num_nodes, --include’s list, and what only the machine decides (--exclude, a hostfile’s machines)', () => {
  assert.deepEqual(brief('deepspeed --num_gpus 4 train.py --deepspeed\n', 4), []);
  assert.match(String(brief('deepspeed --num_gpus=4 --num_nodes=2 train.py\n', 4)[0]?.[2]), /^8 processes requested/);
  assert.match(String(brief('deepspeed --num_gpus=4 --num_nodes=2 train.py\n', 8)[0]?.[2]), /^2 machines requested; the plan fits its 8 GPUs on 1 machine/);
  assert.deepEqual(brief('deepspeed --include localhost:0,1 train.py\n', 2), []);
  assert.match(String(brief('deepspeed --include localhost:0,1,2,3 train.py\n', 2)[0]?.[2]), /^4 processes requested/);
  assert.deepEqual(brief('deepspeed --exclude localhost:0 train.py\n', 2), [['info', 'launch-count-unread', "--exclude localhost:0 leaves the rest of each machine's GPUs: WAP does not compare this launch's GPU count with the plan"]]);
  assert.deepEqual(brief('deepspeed -H hostfile train.py\n', 2).map(([, c]) => c), ['launch-count-unread']);
  // A count left to the environment is read at its default, and said.
  const defaulted = brief('deepspeed --num_gpus=${NGPU:-4} train.py\n', 4);
  assert.deepEqual(defaulted, [['info', 'shell-default', '${NGPU:-4} is read at its default 4: run_ds.sh does not set it, so a run may give another']]);
});

test('wap config run_ds.sh: your config runs on the machine’s 8 GPUs of h100x8, with the launch’s own arguments', async () => {
  const r = await capture(() => configCommand.run([LAUNCH, '--cluster', 'h100x8']));
  assert.doesNotMatch(r.err, /not a training config/);
  assert.match(r.err, /read with run_ds\.sh's deepspeed command: --deepspeed; \$@ not read;/);
  assert.match(r.err, /run_ds\.sh: deepspeed without --num_gpus starts one process per GPU of each machine: 8 on the machines of '8x H100/);
  assert.match(r.out, /run_ds\.sh: your config \(8 GPUs, as run_ds\.sh launches it\): /);
});
