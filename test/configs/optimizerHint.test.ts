/**
 * The optimizer the code and configs beside the model build: read from real
 * files (the repository's DeepSpeed example config, torch's own installed
 * sources) and from snippets for each rule, through the CLI and the server's
 * settings to the plan's line that says which optimizer it priced and why.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { before, test } from 'node:test';
import { initConfigReaders, optimizerHint, precisionHint, withOptimizerFrom } from '../../src/configs';
import { planModel, resolveCluster } from '../../src/planner/index';
import { normalizeSettings, toPlanOptions } from '../../src/server/settings';
import { withTrainingHints } from '../../src/server/trainingHints';
import { ModelBuilder } from '../planner/fixtures';

before(() => initConfigReaders());

const root = join(__dirname, '..', '..');
const py = (text: string, name = 'train.py') => optimizerHint([{ name, text }]);

test('the repository’s DeepSpeed example config: its optimizer section (type Adam) is what DeepSpeed builds', () => {
  const text = readFileSync(join(root, 'examples', 'pytorch', 'ds_config.json'), 'utf8');
  assert.deepEqual(optimizerHint([{ name: 'ds_config.json', text }]), { optimizer: 'adam', source: 'ds_config.json (optimizer.type: Adam)' });
  // DeepSpeed's own optimizer wins over what a launch script beside it constructs (types matched without case)...
  const ds = { name: 'ds.json', text: '{"optimizer": {"type": "adagrad"}}' };
  const train = { name: 'train.py', text: 'import torch\nopt = torch.optim.AdamW(m.parameters())\n' };
  assert.deepEqual(optimizerHint([ds, train], 'model.py'), { optimizer: 'momentum', source: 'ds.json (optimizer.type: adagrad)' });
  // ...but not over the file being planned: a LightningModule's configure_optimizers is what that script trains with.
  assert.deepEqual(optimizerHint([ds, train], 'train.py'), { optimizer: 'adam', source: 'train.py:2 (torch.optim.AdamW)' });
  assert.equal(optimizerHint([{ name: 'ds.json', text: '{"optimizer": {"type": "auto"}}' }]), undefined, 'the HF Trainer fills "auto" in');
  assert.equal(optimizerHint([{ name: 'ds.json', text: '{"optimizer": {"type": ' }]), undefined, 'a broken config says nothing, and does not throw');
});

const torchFile = (rel: string) => join('/usr/lib/python3/dist-packages/torch', rel);
const rpcExamples = 'testing/_internal/distributed/rpc/examples';
test('torch’s own installed sources: optim.SGD with momentum=0.9, optim.Adam, and docstring examples that are not code', { skip: !existsSync(torchFile('optim/sgd.py')) && 'Debian python3-torch is not installed' }, () => {
  const read = (rel: string) => optimizerHint([{ name: rel.split('/').pop()!, text: readFileSync(torchFile(rel), 'utf8') }]);
  assert.deepEqual(read(`${rpcExamples}/parameter_server_test.py`), { optimizer: 'momentum', source: 'parameter_server_test.py:38 (optim.SGD)' });
  assert.deepEqual(read(`${rpcExamples}/reinforcement_learning_rpc_test.py`), { optimizer: 'adam', source: 'reinforcement_learning_rpc_test.py:132 (optim.Adam)' });
  // torch/optim/sgd.py shows `torch.optim.SGD(…, momentum=0.9)` only inside its docstring: no constructor runs there.
  assert.equal(read('optim/sgd.py'), undefined);
});

test('Python rules: qualified or imported constructors only, SGD by its momentum, aliases, the model’s file first', () => {
  assert.deepEqual(py('import torch\nopt = torch.optim.AdamW(model.parameters(), lr=3e-4)\n'), { optimizer: 'adam', source: 'train.py:2 (torch.optim.AdamW)' });
  assert.equal(py('from torch import optim\nopt = optim.SGD(m.parameters(), lr=0.1)\n')?.optimizer, 'sgd');
  assert.equal(py('from torch import optim\nopt = optim.SGD(m.parameters(), lr=0.1, momentum=0.0)\n')?.optimizer, 'sgd');
  assert.equal(py('from torch import optim\nopt = optim.SGD(m.parameters(), lr=0.1, momentum=args.momentum)\n')?.optimizer, 'momentum');
  assert.deepEqual(py('from torch.optim import SGD as S\nopt = S(m.parameters(), lr=0.1, momentum=0.9)\n'), { optimizer: 'momentum', source: 'train.py:2 (S)' });
  assert.equal(py('from apex.optimizers import FusedLAMB\nopt = FusedLAMB(params)\n')?.optimizer, 'adam');
  assert.equal(py('from lion_pytorch import Lion\nopt = Lion(params)\n')?.optimizer, 'momentum');
  // A class of the user's own called Adam, never imported from an optimizer package, is not torch's.
  assert.equal(py('class Adam:\n    pass\nopt = Adam()\n'), undefined);
  // Names an object has by inheritance are no optimizers.
  assert.equal(py('import torch\nx = torch.optim.constructor(p)\n'), undefined);
  assert.equal(optimizerHint([{ name: 'ds.json', text: '{"optimizer": {"type": "toString"}}' }]), undefined);
  // Half-typed code: a call still being typed is no call yet (no guess, no throw); the complete ones around a
  // syntax error are still read.
  assert.equal(py('import torch\nopt = torch.optim.Adam(model.parameters(),\n'), undefined);
  assert.deepEqual(py('import torch\ndef f(:\n    pass\nopt = torch.optim.AdamW(p)\n'), { optimizer: 'adam', source: 'train.py:4 (torch.optim.AdamW)' });
  const files = [
    { name: 'a_utils.py', text: 'import torch\nopt = torch.optim.SGD(p, lr=1)\n' },
    { name: 'model.py', text: 'import torch\ndef configure_optimizers(self):\n    return torch.optim.AdamW(self.parameters())\n' },
  ];
  assert.equal(optimizerHint(files, 'model.py')?.source, 'model.py:3 (torch.optim.AdamW)');
  assert.equal(optimizerHint(files)?.source, 'a_utils.py:2 (torch.optim.SGD)');
});

test('the repository’s Lightning example: its own configure_optimizers (SGD, momentum 0.9) and Trainer precision, not the DeepSpeed and accelerate configs beside it', async () => {
  const dir = join(root, 'examples', 'pytorch');
  const files = ['accelerate_config.yaml', 'ds_config.json', 'train_lightning.py'].map((name) => ({ name, text: readFileSync(join(dir, name), 'utf8') }));
  assert.deepEqual(optimizerHint(files, 'train_lightning.py'), { optimizer: 'momentum', source: 'train_lightning.py:28 (torch.optim.SGD)' });
  assert.equal(precisionHint(files, 'train_lightning.py')?.source, 'train_lightning.py (Trainer precision="32-true")');
  // Planning alexnet.py beside them, the DeepSpeed config is what the directory says.
  assert.equal(optimizerHint(files, 'alexnet.py')?.source, 'ds_config.json (optimizer.type: Adam)');
});

test('an explicit optimizer wins; the server’s auto setting reads the files, and the plan says which optimizer it priced and where from', () => {
  const hint = { optimizer: 'adam' as const, source: 'train.py:5 (torch.optim.AdamW)' };
  const explicit = { batch: 8, objective: 'throughput' as const, strategies: 'dp' as const, optimizer: 'sgd' as const, optimizerSource: '--optimizer' };
  assert.equal(withOptimizerFrom(explicit, hint), explicit);
  const dir = mkdtempSync(join(tmpdir(), 'wap-optim-'));
  writeFileSync(join(dir, 'model.py'), 'import torch.nn as nn\nmodel = nn.Linear(4, 4)\n');
  writeFileSync(join(dir, 'train.py'), 'import torch\nfrom model import model\n\n\nopt = torch.optim.AdamW(model.parameters())\n');
  const uri = pathToFileURL(join(dir, 'model.py')).href;
  const auto = withTrainingHints(toPlanOptions(normalizeSettings({})), uri);
  assert.deepEqual([auto.optimizer, auto.optimizerSource], ['adam', 'train.py:5 (torch.optim.AdamW)']);
  const set = withTrainingHints(toPlanOptions(normalizeSettings({ optimizer: 'momentum' })), uri);
  assert.deepEqual([set.optimizer, set.optimizerSource], ['momentum', 'the wap.optimizer setting']);
  assert.equal(normalizeSettings({ optimizer: 'adafactor' }).optimizer, 'auto');
  // The plan: Adam's two moments against momentum's one, and the line that says so.
  const b = new ModelBuilder('mlp', [1024]);
  b.linear('fc', 'x', 1024);
  const plan = (o: typeof auto) => planModel(b.build(), resolveCluster('a100x8'), { ...o, batch: 8, gpus: 1, precision: 'fp32' });
  const adam = plan(auto);
  const assumed = plan(toPlanOptions(normalizeSettings({})));
  assert.ok(adam.feasible && assumed.feasible);
  assert.ok(adam.diagnostics.some((d) => d.message === 'optimizer: adam (Adam-style, two moments per parameter), from train.py:5 (torch.optim.AdamW)'));
  assert.ok(assumed.diagnostics.some((d) => /^optimizer: momentum .*assumed \(SGD with momentum, the default of torchvision's reference training recipes\)/.test(d.message)));
  const params = 1024 * 1024 + 1024;
  assert.equal(adam.plan.setup!.memoryPerGpu.optimizer - assumed.plan.setup!.memoryPerGpu.optimizer, params * 4, 'one more fp32 moment per parameter');
});

test("a Hugging Face Trainer's optim= names the optimizer (AdamW when absent); a constructor in the file or a DeepSpeed optimizer section wins", () => {
  const script = (args: string, extra = '') => ({ name: 'finetune.py', text: `from transformers import TrainingArguments, Trainer\n${extra}args = TrainingArguments(output_dir="out", ${args})\n` });
  assert.deepEqual(optimizerHint([script('optim="paged_adamw_32bit"')], 'finetune.py'), { optimizer: 'adam', source: 'finetune.py:2 (TrainingArguments(optim="paged_adamw_32bit"))' });
  assert.deepEqual(optimizerHint([script('bf16=True')], 'finetune.py'), { optimizer: 'adam', source: "finetune.py:2 (TrainingArguments: the Trainer's default adamw_torch)" });
  assert.equal(optimizerHint([script('optim="sgd"')], 'finetune.py')?.optimizer, 'sgd');
  assert.equal(optimizerHint([script('optim="adafactor"')], 'finetune.py'), undefined, 'factored state is neither kind: no guess');
  assert.equal(optimizerHint([script('optim=args.optim')], 'finetune.py'), undefined);
  // The script's own constructor (handed to Trainer(optimizers=…)) and a DeepSpeed config's optimizer win.
  const own = script('optim="adamw_torch"', 'import torch\nopt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)\n');
  assert.equal(optimizerHint([own], 'finetune.py')?.optimizer, 'momentum');
  const ds = { name: 'ds.json', text: '{"optimizer": {"type": "Lion"}}' };
  assert.equal(optimizerHint([script('optim="adamw_torch"'), ds], 'finetune.py')?.optimizer, 'momentum');
});
