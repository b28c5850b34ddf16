/**
 * A script in the layout of transformers' run_clm.py (frontends/python/hfArgumentParser.ts): its dataclasses are
 * built from the arguments its launch script gives (read by configs' launchedArguments from the real folder), the
 * model comes from `model_args.model_name_or_path` inside `main()`, which returns nothing but hands it to a Trainer.
 * Before, the dataclasses and so the model were unknown. trl's sft.py layout (TrlParser with a `--config` recipe,
 * the model trained from the `__main__` part) is read too. Qwen2-0.5B's 494,032,768 parameters (tied head) are the
 * published count the huggingface tests already check.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { launchedArguments } from '../../src/configs';
import type { AnalyzeOptions } from '../../src/core/ir';
import { analyzeSource, initFrontends } from '../../src/frontends';
import { disk } from '../configs/helpers';

const dir = join(__dirname, '..', 'fixtures', 'hf-example');
const file = join(dir, 'run_clm.py');
const QWEN2_05B = 494_032_768;

before(async () => {
  await initFrontends();
});

const read = (options: AnalyzeOptions = {}, text = readFileSync(file, 'utf8')) => analyzeSource(file, text, options, { workspaceFolders: [dir] });
const all = (r: Awaited<ReturnType<typeof read>>) => [...r.diagnostics, ...r.models.flatMap((m) => m.diagnostics)];

test('run.sh’s arguments build the dataclasses, and the model main() trains is the checkpoint they name', async () => {
  const scriptArguments = launchedArguments(file, disk);
  assert.deepEqual(scriptArguments, { words: ['--model_name_or_path', '../huggingface/qwen2-0.5b', '--block_size', '1024', '--per_device_train_batch_size', '4', '--bf16', '--output_dir', 'out'], source: 'run.sh' });
  const r = await read({ scriptArguments });
  const model = r.models.find((m) => m.name === 'main');
  assert.ok(model, JSON.stringify(all(r).map((d) => d.message)));
  assert.equal(model.totals.params, QWEN2_05B);
  // The run's --block_size is the tokens per sample, not the config's 131,072 max positions; --seq-len still wins.
  assert.deepEqual(model.sequence, { input: 'input_ids', length: 1024, source: 'block_size 1024 from run.sh', assumed: false });
  const flagged = await read({ scriptArguments, sequenceLength: 512 });
  assert.equal(flagged.models.find((m) => m.name === 'main')?.sequence?.length, 512);
  const note = all(r).find((d) => d.code === 'script-arguments');
  assert.equal(note?.line, 32);
  assert.match(note!.message, /^`parser\.parse_args_into_dataclasses\(\)` is read with the arguments run\.sh gives \(--model_name_or_path \.\.\/huggingface\/qwen2-0\.5b .*\): model_name_or_path='\.\.\/huggingface\/qwen2-0\.5b', config_name=None, use_cache=True, dataset_name=None, block_size=1024$/);
});

test('with no arguments the fields are their defaults: no checkpoint is named, and the note and the error say why', async () => {
  const r = await read();
  assert.equal(r.models.length, 0);
  assert.match(all(r).find((d) => d.code === 'script-arguments')!.message, /as the script run with no arguments, each field at its default: model_name_or_path=None/);
  assert.ok(all(r).some((d) => /from_pretrained: the model name or folder is not a string WAP can read/.test(d.message)));
});

test('a JSON file given alone takes the script’s own branch: parse_json_file, values from the file', async () => {
  const r = await read({ scriptArguments: { words: ['args.json'], source: 'run.sh' } });
  assert.equal(r.models.find((m) => m.name === 'main')?.totals.params, QWEN2_05B);
  assert.match(all(r).find((d) => d.code === 'script-arguments')!.message, /is read from args\.json: model_name_or_path='\.\.\/huggingface\/qwen2-0\.5b', config_name=None, use_cache=False/);
});

test('fields are converted by their annotations; a bool given alone is True; a shell variable is the run’s', async () => {
  const r = await read({ scriptArguments: { words: ['--model_name_or_path=../huggingface/qwen2-0.5b', '--use_cache', 'no', '--block_size', '$LEN'], source: 'run.sh' } });
  const message = all(r).find((d) => d.code === 'script-arguments')!.message;
  assert.match(message, /use_cache=False, dataset_name=None$/, 'block_size is unknown, so not said');
  const flag = await read({ scriptArguments: { words: ['--model_name_or_path', '../huggingface/qwen2-0.5b', '--use_cache'], source: 'run.sh' } });
  assert.match(all(flag).find((d) => d.code === 'script-arguments')!.message, /use_cache=True/);
});

test('a main() that hands its model to accelerate or DDP instead is read the same way; one that trains nothing is no model', async () => {
  const text = (body: string) => `import torch\nimport torch.nn as nn\nfrom accelerate import Accelerator\n\ndef main():\n    net = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 10))\n${body}\n\nif __name__ == "__main__":\n    main()\n`;
  const prepared = await read({}, text('    accelerator = Accelerator()\n    net = accelerator.prepare(net)'));
  assert.equal(prepared.models.find((m) => m.name === 'main')?.totals.params, 64 * 256 + 256 + 256 * 10 + 10);
  const ddp = await read({}, text('    net = torch.nn.parallel.DistributedDataParallel(net)'));
  assert.equal(ddp.models.find((m) => m.name === 'main')?.totals.params, 64 * 256 + 256 + 256 * 10 + 10);
  const idle = await read({}, text('    print(net)'));
  assert.equal(idle.models.find((m) => m.name === 'main'), undefined);
});

test('trl’s sft.py: TrlParser reads the recipe --config names under the command line, and the model its __main__ part trains is read', async () => {
  const sft = join(dir, 'sft.py');
  const text = readFileSync(sft, 'utf8');
  const r = await analyzeSource(sft, text, { scriptArguments: { words: ['--config', 'sft_recipe.yaml', '--gradient_checkpointing'], source: 'run.sh' } }, { workspaceFolders: [dir] });
  const model = r.models.find((m) => m.name === '__main__');
  assert.ok(model, JSON.stringify(all(r).map((d) => d.message)));
  assert.equal(model.totals.params, QWEN2_05B);
  assert.deepEqual(model.sequence, { input: 'input_ids', length: 2048, source: 'max_length 2048 from sft_recipe.yaml', assumed: false });
  assert.match(all(r).find((d) => d.code === 'script-arguments')!.message, /with the arguments run\.sh gives \(--config sft_recipe\.yaml --gradient_checkpointing\) and the recipe sft_recipe\.yaml it names/);
  // The command line wins over the recipe, and a recipe WAP cannot read is said.
  const over = await analyzeSource(sft, text, { scriptArguments: { words: ['--config', 'sft_recipe.yaml', '--max_length', '512'], source: 'run.sh' } }, { workspaceFolders: [dir] });
  assert.equal(over.models.find((m) => m.name === '__main__')?.sequence?.length, 512);
  const missing = await analyzeSource(sft, text, { scriptArguments: { words: ['--config', 'nowhere.yaml'], source: 'run.sh' } }, { workspaceFolders: [dir] });
  assert.equal(missing.models.length, 0);
  assert.match(all(missing).find((d) => d.code === 'script-arguments')!.message, /the recipe nowhere\.yaml it names could not be read, so its values are not/);
  // parse_yaml_file reads the same recipe as a file of arguments.
  const fromYaml = await read({ scriptArguments: { words: ['sft_recipe.yaml'], source: 'run.sh' } }, readFileSync(file, 'utf8').replace('parser.parse_json_file(json_file=sys.argv[1])', 'parser.parse_yaml_file(sys.argv[1])').replace('sys.argv[1].endswith(".json")', 'sys.argv[1].endswith(".yaml")'));
  assert.equal(fromYaml.models.find((m) => m.name === 'main')?.totals.params, QWEN2_05B);
});
