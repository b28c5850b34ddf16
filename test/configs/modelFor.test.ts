/**
 * Which model a training config trains, found through the script it launches:
 * a launch script's torchrun/accelerate lines, a Lightning script itself, and
 * the launch script beside a YAML config that names it. Files are an in-memory
 * folder; nothing is executed.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { resolveLaunchedModel, type FileAccess } from '../../src/configs';

function folder(files: Record<string, string>): FileAccess {
  return {
    read: (path) => files[path],
    list: (dir) => Object.keys(files).filter((p) => p.startsWith(`${dir}/`) && !p.slice(dir.length + 1).includes('/')).map((p) => p.slice(dir.length + 1)),
  };
}

const TRAIN = 'import torch\nfrom model import GPT, GPTConfig\n\nmodel = GPT(GPTConfig())\n';

test('a launch script: a launched script that is not there is passed over, the next one names the model', () => {
  const launch = 'torchrun --nproc_per_node=8 gone.py\ntorchrun --nproc_per_node=8 train.py --lr 3e-4\n';
  const io = folder({ 'p/launch.sh': launch, 'p/train.py': TRAIN, 'p/model.py': 'class GPT: ...\n' });
  assert.deepEqual(resolveLaunchedModel('p/launch.sh', launch, io), { file: 'p/model.py', modelName: 'GPT', how: 'imported by train.py, which launch.sh runs with torchrun' });
});

test('a Lightning script is its own launcher; a script that imports no local module is the model file itself', () => {
  const lit = 'import lightning as L\nfrom model import GPT\n\nnet = GPT()\ntrainer = L.Trainer(devices=8)\n';
  const io = folder({ 'p/fit.py': lit, 'p/model.py': 'class GPT: ...\n' });
  assert.deepEqual(resolveLaunchedModel('p/fit.py', lit, io), { file: 'p/model.py', modelName: 'GPT', how: 'imported by fit.py, the Lightning script fit.py' });
  const alone = 'import lightning as L\nimport torch\n\nclass Net(L.LightningModule): ...\ntrainer = L.Trainer(devices=2)\n';
  assert.deepEqual(resolveLaunchedModel('p/solo.py', alone, folder({ 'p/solo.py': alone })), { file: 'p/solo.py', how: 'the Lightning script solo.py' });
});

test('a YAML config is found through the launch script beside it that passes it by name; none, no model', () => {
  const yaml = 'distributed_type: MULTI_GPU\nnum_processes: 8\n';
  const launch = 'accelerate launch --config_file accel.yaml train.py\n';
  const io = folder({ 'p/accel.yaml': yaml, 'p/run.sh': launch, 'p/train.py': TRAIN, 'p/model.py': 'class GPT: ...\n' });
  assert.equal(resolveLaunchedModel('p/accel.yaml', yaml, io)?.file, 'p/model.py');
  assert.equal(resolveLaunchedModel('p/accel.yaml', yaml, folder({ 'p/accel.yaml': yaml, 'p/train.py': TRAIN })), undefined);
});

test('a DeepSpeed JSON that only an accelerate config names: the model that config launches, one hop, and how', () => {
  const json = '{"zero_optimization": {"stage": 3}}\n';
  const yaml = 'distributed_type: DEEPSPEED\ndeepspeed_config:\n  deepspeed_config_file: ds_z3.json\nnum_processes: 8\n';
  const launch = 'accelerate launch --config_file accel.yaml train.py\n';
  const io = folder({ 'p/ds_z3.json': json, 'p/accel.yaml': yaml, 'p/run.sh': launch, 'p/train.py': TRAIN, 'p/model.py': 'class GPT: ...\n' });
  assert.deepEqual(resolveLaunchedModel('p/ds_z3.json', json, io), {
    file: 'p/model.py', modelName: 'GPT', how: 'imported by train.py, which run.sh runs with accelerate and accel.yaml; accel.yaml names ds_z3.json',
  });
  // Two configs naming each other lead nowhere without a launch script, and end.
  const loop = 'deepspeed_config_file: ds_z3.json\nother: b.yaml\n';
  const b = 'x: accel.yaml\n';
  assert.equal(resolveLaunchedModel('p/ds_z3.json', json, folder({ 'p/ds_z3.json': json, 'p/accel.yaml': loop, 'p/b.yaml': b })), undefined);
});
