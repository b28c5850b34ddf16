/**
 * `wap config LAUNCH` reads the model with the arguments that launch passes, found from where the launch runs:
 * - DeepSpeed-Chat's layout: training_scripts/single_node/run_large.sh runs `deepspeed main.py --num_layers 8
 *   --hidden_size 2048` from the step's folder, two above; run_small.sh passes other sizes. Before, main.py was not
 *   found ("no launch script names it"), and with --model the model was read at the script's defaults.
 * - DeepSpeedExamples' imagenet layout: config/ds_fp16_z1_config.json is passed by ../run_ds_fp16_z1.sh as
 *   `--deepspeed_config config/ds_fp16_z1_config.json`. Before, only the config's own folder was looked in.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { configCommand } from '../../src/cli/commands/config';
import { analyzeModelFile } from '../../src/cli/modelLoading';
import { initConfigReaders, launchArgumentsOfModel, resolveLaunchedModel } from '../../src/configs';
import { initFrontends } from '../../src/frontends';
import { capture } from '../cli/helpers';
import { disk, readExample, root } from './helpers';

const STEP = 'test/fixtures/deepspeed-chat/training/step1_supervised_finetuning';
const MAIN = join(root, STEP, 'main.py');
const LARGE = join(root, STEP, 'training_scripts/single_node/run_large.sh');
const SMALL = join(root, STEP, 'training_scripts/single_node/run_small.sh');
const IMAGENET = join(root, 'test/fixtures/deepspeed-launches');

before(async () => {
  await initFrontends();
  await initConfigReaders();
});

/** Linear(h, h) with bias, `layers` times. */
const mlpParams = (layers: number, hidden: number): number => layers * (hidden * hidden + hidden);

test('a launch script in a subfolder runs its script from the folder it is launched in, and says so', () => {
  assert.deepEqual(resolveLaunchedModel(LARGE, readExample(`${STEP}/training_scripts/single_node/run_large.sh`), disk), {
    file: MAIN, how: 'run_large.sh runs with deepspeed from two folders above it', launch: LARGE,
  });
});

test('each launch’s own arguments size the model: run_large.sh’s, not the defaults, nor run_small.sh’s', async () => {
  const large = launchArgumentsOfModel(LARGE, readExample(`${STEP}/training_scripts/single_node/run_large.sh`), { file: MAIN }, disk);
  assert.deepEqual(large?.words, ['--num_layers', '8', '--hidden_size', '2048', '--zero_stage', '$ZERO_STAGE', '--deepspeed']);
  assert.equal(large?.said, "run_large.sh's deepspeed command: --num_layers 8 --hidden_size 2048 --zero_stage $ZERO_STAGE --deepspeed; $ZERO_STAGE as written (no one value in run_large.sh)");
  const small = launchArgumentsOfModel(SMALL, readExample(`${STEP}/training_scripts/single_node/run_small.sh`), { file: MAIN }, disk);
  for (const [launch, params] of [[large, mlpParams(8, 2048)], [small, mlpParams(2, 512)]] as const) {
    const r = await analyzeModelFile(MAIN, { launchArguments: { words: launch!.words, source: launch!.source } });
    assert.equal(r.models[0]?.totals.params, params, launch!.source);
  }
});

test('wap config run_large.sh (and with --model main.py) says the command line it reads the model with', async () => {
  for (const extra of [[], ['--model', MAIN]]) {
    const r = await capture(() => configCommand.run([LARGE, '--cluster', 'a100x8', ...extra]));
    assert.match(r.err, /comparing with the model in .*step1_supervised_finetuning\/main\.py, found by [^;]*; read with run_large\.sh's deepspeed command: --num_layers 8 --hidden_size 2048 /, r.err);
    assert.match(r.out, /run_large\.sh: your config \(8 GPUs, as run_large\.sh launches it\): /);
  }
});

test('a DeepSpeed JSON in a subfolder: the launch above that passes its path runs the model, with that launch’s arguments', async () => {
  const json = join(IMAGENET, 'config/ds_fp16_z1_config.json');
  const target = resolveLaunchedModel(json, readExample('test/fixtures/deepspeed-launches/config/ds_fp16_z1_config.json'), disk);
  const launch = join(IMAGENET, 'run_ds_fp16_z1.sh');
  assert.deepEqual(target, { file: join(IMAGENET, 'main.py'), how: 'run_ds_fp16_z1.sh runs with deepspeed and config/ds_fp16_z1_config.json', launch });
  const own = launchArgumentsOfModel(json, '', target!, disk);
  assert.deepEqual(own?.words, ['-a', 'resnet50', '--deepspeed', '--deepspeed_config', 'config/ds_fp16_z1_config.json', '--multiprocessing_distributed', '/data/imagenet']);
  // A JSON no launch passes by its path stays without a model.
  assert.equal(resolveLaunchedModel(join(IMAGENET, 'config/other.json'), '{}', disk), undefined);
});
