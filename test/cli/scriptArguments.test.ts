/**
 * `wap analyze|plan` on a script that sizes its model with argparse: the launch script beside it gives the
 * arguments, `--script-args="…"` overrides them, and without either every option is at its default; the built CLI,
 * on real files in a temporary folder.
 */
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const root = join(__dirname, '..', '..');
const work = mkdtempSync(join(tmpdir(), 'wap-script-args-cli-'));
const project = join(work, 'project');
let cli = '';

before(() => {
  const built = spawnSync('flock', ['/tmp/wap-build-server.lock', process.execPath, 'scripts/build.mjs'], { cwd: root, encoding: 'utf8' });
  assert.equal(built.status, 0, built.stderr);
  cli = join(work, 'cli.js');
  copyFileSync(join(root, 'dist', 'cli.js'), cli);
  for (const wasm of ['web-tree-sitter.wasm', 'tree-sitter-python.wasm']) if (existsSync(join(root, 'dist', wasm))) copyFileSync(join(root, 'dist', wasm), join(work, wasm));
  spawnSync('mkdir', ['-p', project]);
  for (const f of ['train.py', 'model.py']) copyFileSync(join(root, 'test', 'fixtures', 'argparse', f), join(project, f));
});

function analyze(...args: string[]): { layers: number; note: string } {
  const r = spawnSync(process.execPath, [cli, 'analyze', join(project, 'train.py'), '--json', ...args], { cwd: project, encoding: 'utf8', timeout: 120_000, maxBuffer: 64 << 20 });
  assert.equal(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout) as { models: Array<{ name: string; layers: Array<{ name: string }> }>; diagnostics: Array<{ code?: string; message: string }> };
  const model = out.models.find((m) => m.name === 'model')!;
  return { layers: model.layers.filter((l) => /\.attn\.c_attn$/.test(l.name)).length, note: out.diagnostics.find((d) => d.code === 'script-arguments')?.message ?? '' };
}

test('the defaults, then the launch script’s arguments, then --script-args over them', () => {
  const none = analyze();
  assert.equal(none.layers, 6);
  assert.match(none.note, /run with no arguments/);
  writeFileSync(join(project, 'run.sh'), '#!/bin/bash\nARCH=(--n-layer 4 --n_embd 256 --n_head 4)\ntorchrun --nproc_per_node 8 train.py "${ARCH[@]}" --compile > train.log 2>&1\n');
  const launched = analyze();
  assert.equal(launched.layers, 4);
  assert.match(launched.note, /with the arguments run\.sh gives \(--n-layer 4 --n_embd 256 --n_head 4 --compile\)/);
  const given = analyze('--script-args=--n-layer 2 --n_embd "128" --n_head 4');
  assert.equal(given.layers, 2);
  assert.match(given.note, /with the arguments --script-args gives \(--n-layer 2 --n_embd 128 --n_head 4\)/);
  // Two launch scripts that disagree: which one is the run is the user's to say, so the defaults, said as such.
  writeFileSync(join(project, 'sweep.sh'), '#!/bin/bash\ntorchrun --nproc_per_node 8 train.py --n-layer 12\n');
  const disagree = analyze();
  assert.equal(disagree.layers, 6);
  assert.match(disagree.note, /as the script run with no arguments \(run\.sh and sweep\.sh run it with different arguments\), each option at its default: n_layer=6/);
});
