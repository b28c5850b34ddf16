/**
 * LightningCLI read as it runs (frontends/python/lightningCli.ts): the model class built from `--config` files and
 * `--model.*` overrides, a `class_path`/`init_args` section, and the Trainer's precision from `trainer:`. Real files
 * in test/fixtures/lightning-cli; the network's parameter count is real torch's at the sizes the run gives.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, test } from 'node:test';
import type { AnalyzeOptions, Diagnostic } from '../../src/core/ir';
import { analyzeSource, initFrontends } from '../../src/frontends';

const DIR = join(__dirname, '..', 'fixtures', 'lightning-cli');
const FILE = join(DIR, 'main.py');

before(async () => {
  await initFrontends();
});

const analyze = (words?: string) => {
  const options: AnalyzeOptions = words === undefined ? {} : { scriptArguments: { words: words.split(' '), source: 'run.sh' } };
  return analyzeSource(FILE, readFileSync(FILE, 'utf8'), options, { workspaceFolders: [DIR] });
};
const notes = (r: { diagnostics: Diagnostic[]; models: Array<{ diagnostics?: Diagnostic[] }> }): Diagnostic[] => [...r.diagnostics, ...r.models.flatMap((m) => m.diagnostics ?? [])];

/** torch's parameter count of the fixture's MLP at these sizes. */
function mlpParams(sizes: string): number {
  const code = `import sys; sys.path.insert(0, ${JSON.stringify(DIR)})\nfrom backbone import MLP\nprint(sum(p.numel() for p in MLP(${sizes}).parameters()))`;
  const r = spawnSync('/usr/bin/python3', ['-c', code], { encoding: 'utf8', timeout: 60_000 });
  assert.equal(r.status, 0, `/usr/bin/python3 needs torch (CI installs python3-torch): ${r.stderr}`);
  return Number(r.stdout.trim().split('\n').pop());
}

test('fit --config config.yaml --model.hidden_dim 256: the model at the config’s sizes with the override, in the trainer’s bf16-mixed', async () => {
  const r = await analyze('fit --config config.yaml --model.hidden_dim 256');
  assert.deepEqual(r.models.map((m) => m.name), ['LitClassifier'], JSON.stringify(notes(r).map((d) => d.message)));
  const model = r.models[0]!;
  assert.equal(model.totals.params, mlpParams('784, 256, 3, 10'));
  assert.deepEqual([model.runPrecision?.precision, model.runPrecision?.holding], ['bf16', 'autocast']);
  assert.match(notes(r).find((d) => d.code === 'script-arguments')?.message ?? '', /builds the model from config\.yaml with the arguments run\.sh gives \(fit --config config\.yaml --model\.hidden_dim 256\)/);
  const configOnly = await analyze('fit --config config.yaml');
  assert.equal(configOnly.models[0]!.totals.params, mlpParams('784, 128, 3, 10'));
  // A test (or validate, predict) launch runs the same model: it is still the one to plan training for.
  const tested = await analyze('test --config config.yaml');
  assert.equal(tested.models[0]?.totals.params, mlpParams('784, 128, 3, 10'));
});

test('a class_path with init_args, and a run with no arguments says what it lacks', async () => {
  const subclass = await analyze('fit --model.class_path model.LitClassifier --model.init_args.hidden_dim 32 --model.init_args.num_layers 1 --trainer.precision 16-true');
  assert.equal(subclass.models[0]!.totals.params, mlpParams('784, 32, 1, 10'));
  assert.deepEqual([subclass.models[0]!.runPrecision?.precision, subclass.models[0]!.runPrecision?.holding], ['fp16', 'pure']);
  // jsonargparse's shorthand: an argument beside class_path is an init argument, never dropped.
  const shorthand = await analyze('fit --model.class_path model.LitClassifier --model.hidden_dim 48 --model.num_layers 2');
  assert.equal(shorthand.models[0]!.totals.params, mlpParams('784, 48, 2, 10'));
  // No arguments: LightningCLI wants a subcommand and LitClassifier's hidden_dim; no model is made up.
  const bare = await analyze();
  assert.equal(bare.models.length, 0);
  assert.match(notes(bare).find((d) => d.code === 'script-arguments')?.message ?? '', /as the script run with no arguments.*LightningCLI needs a subcommand \(fit\)/);
  assert.match(notes(bare).find((d) => d.code === 'script-arguments-unknown')?.message ?? '', /LitClassifier\(\) needs hidden_dim, which neither a --config file nor --model\.hidden_dim gives; no model is read/);
});
