/**
 * The real server reads a script's argparse with the arguments the launch script beside it gives: the model's size
 * in the editor is the run's, and the note at `parse_args()` says which command line was read.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ModelsRequest } from '../../src/protocol/lsp';
import { ROOT, TestServer } from './harness';

const project = mkdtempSync(join(tmpdir(), 'wap-script-args-lsp-'));
after(() => rmSync(project, { recursive: true, force: true }));

test('a launch script’s arguments size the model the editor shows, and the parse_args() line says so', async () => {
  copyFileSync(join(ROOT, 'test/fixtures/nanogpt/argparse_train.py'), join(project, 'train.py'));
  copyFileSync(join(ROOT, 'test/fixtures/nanogpt/model.py'), join(project, 'model.py'));
  writeFileSync(join(project, 'run.sh'), '#!/bin/bash\ntorchrun --nproc_per_node 8 train.py --n-layer 2 --n_embd 128 --n_head 4\n');
  const server = await TestServer.start({ trusted: true, root: project });
  try {
    const uri = await server.open(join(project, 'train.py'));
    const models = await server.until('train.py analysed', async () => {
      const r = await server.conn.sendRequest(ModelsRequest, { uri });
      return r.models.length ? r.models : undefined;
    }, 30_000);
    const model = models.find((m) => m.name === 'model');
    assert.ok(model, JSON.stringify(models.map((m) => m.name)));
    // 2 blocks of n_embd 128 (12·128² weights and two bias-free norms each), the tied 50304-token table, 256 positions, the final norm.
    const block = 12 * 128 * 128 + 2 * 128;
    assert.equal(model.params, 2 * block + 50304 * 128 + 256 * 128 + 128);
    const note = await server.until('the argparse note', () => server.diagnostics.get(uri)?.find((d) => String(d.code) === 'script-arguments'), 20_000);
    assert.match(note.message, /with the arguments run\.sh gives \(--n-layer 2 --n_embd 128 --n_head 4\)/);
    assert.equal(note.range.start.line, 25);
    // Editing the launch script (unsaved) reads the script again with its new arguments; closing it goes back to disk.
    const run = await server.open(join(project, 'run.sh'));
    await server.change(run, '#!/bin/bash\ntorchrun --nproc_per_node 8 train.py --n-layer 3 --n_embd 128 --n_head 4\n');
    const params = async () => (await server.conn.sendRequest(ModelsRequest, { uri })).models.find((m) => m.name === 'model')?.params;
    await server.until('three blocks after the edit', async () => (await params()) === 3 * block + 50304 * 128 + 256 * 128 + 128, 30_000);
    await server.close(run);
    await server.until('two blocks again once the edit is discarded', async () => (await params()) === 2 * block + 50304 * 128 + 256 * 128 + 128, 30_000);
  } finally {
    await server.stop();
  }
});
