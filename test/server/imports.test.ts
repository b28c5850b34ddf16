/**
 * The real server following imports: hover and CodeLens on the line where a
 * training script builds a model defined in another file (nanoGPT layout),
 * re-analysis when the imported file changes, and trust: an untrusted
 * workspace spawns no interpreter and says library imports were not read.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ModelsRequest } from '../../src/protocol/lsp';
import { ROOT, TestServer } from './harness';

const NANOGPT = join(ROOT, 'test/fixtures/nanogpt');
const TRAIN = join(NANOGPT, 'train.py');
const MODEL = join(NANOGPT, 'model.py');

let bin: string;
let calls: string;
before(() => {
  bin = mkdtempSync(join(tmpdir(), 'wap-fake-python-'));
  calls = join(bin, 'calls.log');
  const file = join(bin, 'python3');
  writeFileSync(file, `#!/bin/sh\necho python3 >> '${calls}'\n`);
  chmodSync(file, 0o755);
});
after(() => rmSync(bin, { recursive: true, force: true }));

test('hover on `model = GPT(...)` in train.py shows the model from model.py, its plan, and links to model.py', async () => {
  const server = await TestServer.start({ trusted: true, root: NANOGPT, settings: { batchSize: 8, cluster: 'a100x8' } });
  try {
    const uri = await server.open(TRAIN);
    const lenses = await server.planned(uri, 60_000);
    const line = readFileSync(TRAIN, 'utf8').split('\n').findIndex((l) => l.startsWith('model = GPT('));
    assert.equal(lenses.length, 1);
    assert.equal(lenses[0].range.start.line, line);
    const hover = await server.hoverText(uri, line, 10);
    assert.match(hover, /\*\*model\*\* · pytorch/);
    assert.match(hover, /params 354\.08 M/);
    assert.match(hover, /\*\*Plan:\*\* \d+ GPUs? · /);
    assert.ok(hover.includes(`](${pathToFileURL(MODEL).href}#L`), hover);
    // Lines of model.py are not layers of train.py: line 30 of train.py has no hover of a model.py layer.
    assert.equal(await server.hoverText(uri, 30, 10), '');
  } finally {
    await server.stop();
  }
});

test('editing the imported model.py re-analyses train.py', async () => {
  const server = await TestServer.start({ trusted: true, root: NANOGPT });
  try {
    const uri = await server.open(TRAIN);
    const params = async () => (await server.conn.sendRequest(ModelsRequest, { uri })).models[0]?.params;
    const before = await server.until('train.py analysed', params, 30_000);
    const modelUri = await server.open(MODEL);
    const text = readFileSync(MODEL, 'utf8').replace('nn.Linear(config.n_embd, config.vocab_size, bias=False)', 'nn.Linear(config.n_embd, config.vocab_size, bias=True)');
    await server.change(modelUri, text);
    // The head gains a bias of vocab_size (the weight is tied to the embedding).
    await server.until('train.py re-analysed', async () => ((await params()) === before + 50304 ? true : undefined), 30_000);
  } finally {
    await server.stop();
  }
});

test('untrusted: no interpreter is spawned; workspace imports are followed, library imports say they were not', async () => {
  rmSync(calls, { force: true });
  const dir = mkdtempSync(join(tmpdir(), 'wap-untrusted-'));
  const script = join(dir, 'train_tv.py');
  writeFileSync(script, 'import torchvision\n\nmodel = torchvision.models.resnet50()\n');
  const server = await TestServer.start({ trusted: false, root: dir, env: { PATH: bin } });
  try {
    const uri = await server.open(script);
    const diags = await server.until('diagnostics', () => server.diagnostics.get(uri));
    const d = diags.find((x) => x.code === 'import-unresolved');
    assert.ok(d, JSON.stringify(diags));
    assert.equal(d.range.start.line, 0);
    assert.match(d.message, /not trusted/);
    const trainUri = await server.open(TRAIN);
    await server.until('nanoGPT still read', async () => ((await server.conn.sendRequest(ModelsRequest, { uri: trainUri })).models[0]?.params ?? 0) > 0, 30_000);
    assert.equal(existsSync(calls), false, 'no python3 may run in an untrusted workspace');
  } finally {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('trusted with wap.python: the interpreter is probed once in the background, then torchvision.models.resnet50() is read', { skip: !existsSync('/usr/lib/python3/dist-packages/torchvision') && 'torchvision not installed' }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'wap-trusted-tv-'));
  const script = join(dir, 'train_tv.py');
  writeFileSync(script, 'import torchvision\n\nmodel = torchvision.models.resnet50()\n');
  const server = await TestServer.start({ trusted: true, root: dir, settings: { python: '/usr/bin/python3' } });
  try {
    const uri = await server.open(script);
    const params = await server.until('resnet50 read after the probe', async () => (await server.conn.sendRequest(ModelsRequest, { uri })).models[0]?.params, 90_000);
    assert.equal(params, 25_557_032);
  } finally {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});
