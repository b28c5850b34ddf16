/**
 * `wap analyze|plan --python PATH` on training scripts whose models live in
 * other files: the nanoGPT layout, torchvision read from the installed
 * sources of the given interpreter, and a library that is not installed.
 */
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const root = join(__dirname, '..', '..');
const work = mkdtempSync(join(tmpdir(), 'wap-imports-cli-'));
let cli = '';

before(() => {
  const built = spawnSync('flock', ['/tmp/wap-build-server.lock', process.execPath, 'scripts/build.mjs'], { cwd: root, encoding: 'utf8' });
  assert.equal(built.status, 0, built.stderr);
  cli = join(work, 'cli.js');
  copyFileSync(join(root, 'dist', 'cli.js'), cli);
  for (const wasm of ['web-tree-sitter.wasm', 'tree-sitter-python.wasm']) if (existsSync(join(root, 'dist', wasm))) copyFileSync(join(root, 'dist', wasm), join(work, wasm));
});

function wap(...args: string[]) {
  const r = spawnSync(process.execPath, [cli, ...args], { cwd: root, encoding: 'utf8', timeout: 120_000, maxBuffer: 64 << 20 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

test('analyze train.py (nanoGPT layout) reads GPT from model.py; layer lines are model.py lines', () => {
  const r = wap('analyze', 'test/fixtures/nanogpt/train.py');
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^Total\s+354,075,648\s/m);
  assert.match(r.stdout, /^transformer\.h\.0\.attn\.c_attn\s+Linear\s+30\s/m);
});

test('plan train.py (354 M GPT on 4 TITAN Xp) fits only through memory savers, and says so without a negative cost', () => {
  const r = wap('plan', 'test/fixtures/nanogpt/train.py', '--json');
  assert.equal(r.code, 0, r.stderr);
  const out = JSON.parse(r.stdout) as { plan: { stepTimeMs: number; setup: { fitsThrough?: string } } };
  const said = out.plan.setup.fitsThrough ?? '';
  assert.match(said, /ZeRO|recompute|accumulation/);
  // The plain plan does not fit (171 GB/GPU), so its step time is hypothetical: never shown as a negative cost.
  assert.doesNotMatch(said, /step -|\(-\d/);
  const faster = /faster than the ([\d.]+) ms/.exec(said);
  if (faster) assert.ok(Number(faster[1]) > out.plan.stepTimeMs, said);
  else assert.match(said, /step \+[\d.]+ ms/);
});

const hasTorchvision = existsSync('/usr/lib/python3/dist-packages/torchvision/models/resnet.py');

test('analyze --python /usr/bin/python3: torchvision.models.resnet50() from the installed sources', { skip: !hasTorchvision && 'torchvision not installed' }, () => {
  const file = join(work, 'r50.py');
  writeFileSync(file, 'import torchvision\n\nmodel = torchvision.models.resnet50()\n');
  const r = wap('analyze', file, '--python', '/usr/bin/python3', '--json');
  assert.equal(r.code, 0, r.stderr);
  const out = JSON.parse(r.stdout) as { models: Array<{ totals: { params: number }; layers: Array<{ name: string }> }> };
  assert.equal(out.models[0].totals.params, 25_557_032);
  assert.ok(out.models[0].layers.some((l) => l.name === 'layer1.0.conv1'));
});

test('a library the interpreter does not have: exit 2 naming the package and the interpreter', () => {
  const r = wap('analyze', 'test/fixtures/imports/missing.py', '--python', '/usr/bin/python3');
  assert.equal(r.code, 2);
  assert.match(r.stderr, /module 'timm' could not be resolved: 'timm' is not installed for \/usr\/bin\/python3/);
});

test('plan takes --python too, and --help documents it', () => {
  const r = wap('plan', 'test/fixtures/imports/main.py', '--python', '/usr/bin/python3', '--cluster', 'pcie4', '--batch', '32');
  assert.equal(r.code, 0, r.stderr);
  assert.match(wap('analyze', '--help').stdout, /--python PATH/);
  assert.match(wap('plan', '--help').stdout, /--python PATH/);
});
