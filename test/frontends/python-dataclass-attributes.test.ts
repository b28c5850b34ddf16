/**
 * A dataclass keeps each field's plain default (and `field(default=…)`) as a class attribute, so a script can read
 * its settings without making an instance: pytorch/examples' distributed/FSDP passes `train_config.model_name` to
 * from_pretrained. WAP read such an attribute as unknown, so `nn.Linear(32, cfg.width)` had 0 features and the FSDP
 * example had "no model found … the model name is not a string", at a line of utils/train_utils.py without naming
 * that file. The fixture (test/fixtures/fsdp-dataclass) has that layout; the truth is torch's parameter count.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { analyzeSource, initFrontends } from '../../src/frontends';

const PYTHON = '/usr/bin/python3';
const dir = join(__dirname, '..', 'fixtures', 'fsdp-dataclass');

before(async () => {
  await initFrontends();
});

const read = (name: string, text?: string) => {
  const file = join(dir, name);
  return analyzeSource(file, text ?? readFileSync(file, 'utf8'), {}, { workspaceFolders: [dir] });
};

/** torch's parameter count of the model the fixture builds from its config class (transformers is not needed for it). */
function torchParams(): number {
  const code = `import sys, types
sys.path.insert(0, ${JSON.stringify(dir)})
sys.modules["transformers"] = types.SimpleNamespace(T5ForConditionalGeneration=None)
from configs import train_config
from utils import setup_model
assert not hasattr(train_config, "milestones"), "a default_factory is no class attribute"
m = setup_model(train_config.width, train_config.depth, train_config.classes)
print(sum(p.numel() for p in m.parameters()))`;
  const r = spawnSync(PYTHON, ['-c', code], { encoding: 'utf8', timeout: 60_000 });
  assert.equal(r.status, 0, `${PYTHON} needs torch (CI installs python3-torch): ${r.stderr}`);
  return Number(r.stdout.trim().split('\n').pop());
}

test("a dataclass's field defaults are its class attributes: the FSDP layout's model is torch's size", async () => {
  const r = await read('train.py');
  const model = r.models[0];
  assert.ok(model, JSON.stringify(r.diagnostics.map((d) => d.message)));
  assert.equal(model.completeness?.complete ?? true, true, JSON.stringify(model.completeness));
  assert.equal(model.totals.params, torchParams());
});

test('field(default=…) is a class attribute too; a default_factory is not one, as in Python', async () => {
  const text = [
    'from dataclasses import dataclass, field',
    'import torch.nn as nn',
    '@dataclass',
    'class cfg:',
    '    width: int = field(default=48)',
    '    extra: list = field(default_factory=list)',
    'model = nn.Sequential(nn.Linear(10, cfg.width), nn.Linear(cfg.width, 2))',
    'has_extra = hasattr(cfg, "extra")',
  ].join('\n');
  const r = await read('inline_dataclass.py', text);
  assert.equal(r.models.find((m) => m.name === 'model')?.totals.params, 10 * 48 + 48 + 48 * 2 + 2);
});

test("from_pretrained given a dataclass's model_name reads the name, and the error names the file it is in", async () => {
  const r = await read('T5_training.py');
  assert.equal(r.models.length, 0, 'no t5-base config on disk: no model');
  const error = r.diagnostics.find((d) => d.severity === 'error' && d.code === 'hf-config-missing');
  assert.ok(error, JSON.stringify(r.diagnostics.map((d) => d.message)));
  assert.match(error.message, /^T5ForConditionalGeneration\.from_pretrained\('t5-base'\): the config of 't5-base' is not on disk/);
  assert.equal(error.file, join(dir, 'utils', 'train_utils.py'));
  assert.equal(error.line, 14);
});
