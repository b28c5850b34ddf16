/**
 * A model sized from a settings file the script loads itself (frontends/python/settingsFiles.ts): `yaml.safe_load`
 * of the file its `--config` option names, `json.load`, `OmegaConf.load` with attribute access. The fixture's model
 * is built in real torch at the file's sizes for the parameter count.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, test } from 'node:test';
import type { AnalyzeOptions } from '../../src/core/ir';
import { analyzeSource, initFrontends } from '../../src/frontends';
import { NANOGPT, nanogptParams } from './nanogptTruth';

const dir = NANOGPT;
const file = join(dir, 'yaml_train.py');
const torchParams = nanogptParams;

before(async () => {
  await initFrontends();
});

const read = (options: AnalyzeOptions = {}, text = readFileSync(file, 'utf8')) => analyzeSource(file, text, options, { workspaceFolders: [dir] });

const SMALL = 'n_layer=2, n_head=8, n_embd=512, block_size=128, bias=False';

test('yaml.safe_load of the file --config names sizes the model, ** unpacked into the config', async () => {
  const r = await read();
  const model = r.models.find((m) => m.name === 'model');
  assert.ok(model, JSON.stringify(r.diagnostics.map((d) => d.message)));
  assert.equal(model.completeness?.complete, true, JSON.stringify(model.completeness));
  assert.equal(model.totals.params, torchParams(SMALL));
});

test('json.loads and OmegaConf.load with attribute access read the same sizes; a file that is not there is said', async () => {
  const text = readFileSync(file, 'utf8');
  const viaJson = await read({}, text.replace("import yaml", "import json").replace('yaml.safe_load(f)', 'json.loads(\'{"model": {"n_layer": 2, "n_head": 8, "n_embd": 512, "block_size": 128, "bias": false}}\')'));
  assert.equal(viaJson.models.find((m) => m.name === 'model')?.totals.params, torchParams(SMALL));
  const omega = text
    .replace('import yaml', 'from omegaconf import OmegaConf')
    .replace("with open(args.config) as f:\n    cfg = yaml.safe_load(f)\nmodel = GPT(GPTConfig(**cfg['model']))", 'cfg = OmegaConf.load(args.config)\nmodel = GPT(GPTConfig(n_layer=cfg.model.n_layer, n_head=cfg.model.n_head, n_embd=cfg.model.n_embd, block_size=cfg.model.block_size, bias=cfg.model.bias))');
  assert.notEqual(omega, text);
  assert.equal((await read({}, omega)).models.find((m) => m.name === 'model')?.totals.params, torchParams(SMALL));
  // A file that is not there: the model is read at GPTConfig's defaults, and the call says why, never silently.
  const missing = await read({ scriptArguments: { words: ['--config', 'config/none.yaml'], source: 'run.sh' } });
  const all = [...missing.diagnostics, ...missing.models.flatMap((m) => m.diagnostics)];
  const said = all.find((d) => d.code === 'unread-arguments');
  assert.ok(said, JSON.stringify(all.map((d) => d.message)));
  assert.equal(said.line, 13);
  assert.match(said.message, /^`\*\*cfg\['model'\]` could not be read \(config\/none\.yaml: .*config\/none\.yaml does not exist(, nor is it in [^)]*)?\): the call is read without those arguments, at its defaults$/);
});
