/**
 * A Hydra project in the editor: the real server reads hydra_train.py with the config Hydra composes (train.yaml
 * with model/small.yaml), and editing that group file in the editor, or rewriting the launch script that gives its
 * overrides on disk, reads the script again at the new size, as editing an imported module does.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ModelsRequest } from '../../src/protocol/lsp';
import { nanogptParams } from '../frontends/nanogptTruth';
import { ROOT, TestServer } from './harness';

const NANOGPT = join(ROOT, 'test/fixtures/nanogpt');
const SCRIPT = join(NANOGPT, 'hydra_train.py');
const GROUP = join(NANOGPT, 'conf/model/small.yaml');

test('hydra_train.py is read with its composed config, and editing conf/model/small.yaml reads it again', async () => {
  const server = await TestServer.start({ trusted: false, root: NANOGPT, settings: { cluster: 'a100x8' } });
  try {
    const uri = await server.open(SCRIPT);
    const params = async () => (await server.conn.sendRequest(ModelsRequest, { uri })).models.find((m) => m.name === 'GPT')?.params;
    const before = await server.until('hydra_train.py analysed', params, 60_000);
    assert.equal(before, nanogptParams('n_layer=2, n_head=8, n_embd=512, block_size=128, bias=False'));
    const groupUri = await server.open(GROUP, readFileSync(GROUP, 'utf8'), 'yaml');
    await server.change(groupUri, readFileSync(GROUP, 'utf8').replace('n_layer: 2', 'n_layer: 3'));
    const after = nanogptParams('n_layer=3, n_head=8, n_embd=512, block_size=128, bias=False');
    await server.until('hydra_train.py re-analysed at 3 layers', async () => ((await params()) === after ? true : undefined), 60_000);
  } finally {
    await server.stop();
  }
});

test('a launch script rewritten on disk (not open) reads the Hydra script again with its new overrides', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'wap-hydra-launch-'));
  cpSync(NANOGPT, dir, { recursive: true });
  const script = join(dir, 'hydra_train.py');
  writeFileSync(join(dir, 'run.sh'), '#!/bin/bash\ntorchrun --nproc_per_node 8 hydra_train.py model.n_layer=3\n');
  const server = await TestServer.start({ trusted: false, root: dir, settings: { cluster: 'a100x8' } });
  try {
    const uri = await server.open(script);
    const params = async () => (await server.conn.sendRequest(ModelsRequest, { uri })).models.find((m) => m.name === 'GPT')?.params;
    const three = nanogptParams('n_layer=3, n_head=8, n_embd=512, block_size=128, bias=False');
    await server.until('hydra_train.py read with run.sh', async () => ((await params()) === three ? true : undefined), 60_000);
    writeFileSync(join(dir, 'run.sh'), '#!/bin/bash\ntorchrun --nproc_per_node 8 hydra_train.py model.n_layer=4\n');
    const four = nanogptParams('n_layer=4, n_head=8, n_embd=512, block_size=128, bias=False');
    await server.until('hydra_train.py read again after run.sh changed on disk', async () => ((await params()) === four ? true : undefined), 60_000);
  } finally {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});
