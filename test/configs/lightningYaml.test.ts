/**
 * A Lightning Trainer written as YAML (configs/lightningYaml.ts): LightningCLI's config.yaml (`trainer:` beside
 * `model:`) and a Hydra trainer group (`_target_: lightning.pytorch.trainer.Trainer`). Real files: the
 * lightning-cli and hydra-lightning fixtures; the plan is the hand-written 8B Llama one the other formats are
 * checked against.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { checkConfig, detectConfigFormats, fixAll, initConfigReaders, readConfigSetups, resolveLaunchedModel } from '../../src/configs';
import { disk, root } from './helpers';
import { llamaPlan } from './llamaPlan';

const CLI = join(root, 'test/fixtures/lightning-cli/config.yaml');
const HYDRA = join(root, 'test/fixtures/hydra-lightning/configs/trainer/default.yaml');

before(() => initConfigReaders());

test('detected in both shapes; LightningCLI’s trainer section states 8 devices, bf16-mixed (autocast), DDP', () => {
  const text = readFileSync(CLI, 'utf8');
  assert.deepEqual(detectConfigFormats(CLI, text), ['lightning-yaml']);
  assert.deepEqual(detectConfigFormats(HYDRA, readFileSync(HYDRA, 'utf8')), ['lightning-yaml']);
  // An accelerate config or a plain YAML is not one.
  assert.deepEqual(detectConfigFormats('x.yaml', 'trainer:\n  name: bob\n'), []);
  const [setup] = readConfigSetups(CLI, text);
  assert.deepEqual([setup!.label, setup!.world, setup!.precision?.value, setup!.ampStyle?.value, setup!.zeroStage?.value, setup!.zeroStage?.stated], ['Lightning Trainer YAML', 8, 'bf16', 'autocast', 0, false]);
  // The model is the script run.sh launches with it, read with its command line (LightningCLI), not the imported class.
  assert.equal(resolveLaunchedModel(CLI, text, disk)?.file, join(root, 'test/fixtures/lightning-cli/main.py'));
});

test('the plan’s ZeRO stage and precision are written as Lightning’s words, the devices as the plan’s count; a key the file lacks is added to the trainer section', () => {
  const text = 'seed_everything: 1\ntrainer:\n  accelerator: gpu\n  devices: 4\n  strategy: deepspeed_stage_3\nmodel:\n  hidden_dim: 64\n';
  const plan = llamaPlan({ zeroStage: 2, precision: 'bf16', recompute: 'none', microBatch: 2, gradientAccumulation: 8 });
  const findings = checkConfig('config.yaml', text, plan).findings;
  assert.ok(findings.some((f) => f.code === 'setup-differs' && /ZeRO 3/.test(f.message)), JSON.stringify(findings.map((f) => f.message)));
  const fixed = fixAll('config.yaml', text, plan).text;
  assert.match(fixed, /^  strategy: deepspeed_stage_2$/m);
  assert.match(fixed, /^  precision: bf16-mixed$/m, 'the missing precision goes into the trainer section');
  assert.match(fixed, /^  devices: 8$/m);
  assert.match(fixed, /^model:\n  hidden_dim: 64\n$/m, 'the model section is untouched');
  // Fixed, the file agrees with the plan on what it can say.
  assert.deepEqual(checkConfig('config.yaml', fixed, plan).findings.filter((f) => f.severity !== 'info').map((f) => f.message), []);
});

test('a Hydra trainer group on CPU is not a GPU plan to compare; a strategy name with _offload states the offload', () => {
  assert.deepEqual(checkConfig(HYDRA, readFileSync(HYDRA, 'utf8'), llamaPlan()).findings, []);
  const [setup] = readConfigSetups('ds.yaml', '_target_: lightning.pytorch.trainer.Trainer\naccelerator: gpu\ndevices: 8\nnum_nodes: 2\nstrategy: deepspeed_stage_3_offload\nprecision: 16-true\n');
  assert.deepEqual([setup!.world, setup!.zeroStage?.value, setup!.cpuOffload?.value, setup!.paramOffload?.value, setup!.precision?.value, setup!.ampStyle?.value], [16, 3, true, true, 'fp16', 'pure']);
  // devices as a list of GPU indices: as many processes per node, never an unread count.
  const [listed] = readConfigSetups('config.yaml', 'trainer:\n  devices: [0, 1, 2, 3]\n  num_nodes: 2\n');
  assert.equal(listed!.world, 8);
});

test('lightning-hydra-template’s trainer/ddp.yaml extends default.yaml without a _target_: read by its place, fixed in Lightning’s words', () => {
  const file = join(root, 'test/fixtures/hydra-lightning/configs/trainer/ddp.yaml');
  const text = readFileSync(file, 'utf8');
  assert.deepEqual(detectConfigFormats(file, text), ['lightning-yaml']);
  // The same keys outside a trainer/ group folder are not taken for a Trainer.
  assert.deepEqual(detectConfigFormats('configs/model/ddp.yaml', text), []);
  const [setup] = readConfigSetups(file, text);
  assert.deepEqual([setup!.world, setup!.zeroStage?.value, setup!.zeroStage?.stated, setup!.precision?.value, setup!.precision?.stated], [4, 0, true, 'fp32', false]);
  const plan = llamaPlan({ zeroStage: 2, precision: 'bf16', recompute: 'none', microBatch: 2, gradientAccumulation: 8 });
  const fixed = fixAll(file, text, plan).text;
  assert.match(fixed, /^strategy: deepspeed_stage_2$/m);
  assert.match(fixed, /^devices: 8$/m);
  assert.match(fixed, /^precision: bf16-mixed$/m);
  assert.match(fixed, /^defaults:\n  - default\n/, 'the defaults list stays first');
});

test('a strategy as a class mapping (LightningCLI’s class_path / init_args): FSDPStrategy’s sharding written back by member name, DeepSpeedStrategy’s stage and offloads read', () => {
  const fsdp = 'trainer:\n  devices: 8\n  precision: bf16-mixed\n  strategy:\n    class_path: lightning.pytorch.strategies.FSDPStrategy\n    init_args:\n      sharding_strategy: SHARD_GRAD_OP\n      cpu_offload: false\nmodel:\n  hidden_dim: 64\n';
  const [setup] = readConfigSetups('config.yaml', fsdp);
  assert.deepEqual([setup!.zeroStage?.value, setup!.hybridShard?.value, setup!.cpuOffload?.value, setup!.world], [2, false, false, 8]);
  const plan = llamaPlan({ zeroStage: 3, precision: 'bf16', recompute: 'none', microBatch: 2, gradientAccumulation: 8 });
  const fixed = fixAll('config.yaml', fsdp, plan).text;
  assert.match(fixed, /^      sharding_strategy: FULL_SHARD$/m);
  assert.match(fixed, /^    class_path: lightning\.pytorch\.strategies\.FSDPStrategy$/m);
  const ds = 'trainer:\n  devices: 8\n  strategy:\n    class_path: lightning.pytorch.strategies.DeepSpeedStrategy\n    init_args:\n      stage: 3\n      offload_optimizer: true\n';
  const [dsSetup] = readConfigSetups('config.yaml', ds);
  assert.deepEqual([dsSetup!.zeroStage?.value, dsSetup!.cpuOffload?.value, dsSetup!.paramOffload?.value], [3, true, false]);
  // Another class is said, not guessed.
  const [other] = readConfigSetups('config.yaml', 'trainer:\n  devices: 8\n  strategy:\n    class_path: my.CustomStrategy\n');
  assert.equal(other!.zeroStage, undefined);
  assert.match(other!.unmodelled![0]!.message, /strategy class_path my\.CustomStrategy: WAP reads FSDPStrategy and DeepSpeedStrategy here/);
});
