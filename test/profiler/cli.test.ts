/** `wap profile` on the TF.js example CNN: a valid profile for every layer, then a fully cached re-run. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadProfile } from '../../src/profiler/index';

const root = join(__dirname, '..', '..');
const example = join(root, 'examples', 'tfjs', 'cnn.ts');

function wap(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import', 'tsx', join(root, 'src', 'cli', 'main.ts'), ...args], { cwd: root, timeout: 240_000 }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout: String(stdout), stderr: String(stderr) }),
    );
  });
}

test('wap profile examples/tfjs/cnn.ts --backend wasm --batch 8: every layer, then every layer cached', { skip: !existsSync(example) && 'examples/tfjs/cnn.ts is not there yet' }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'wap-cli-'));
  const out = join(dir, 'profile.json');
  const args = ['profile', example, '--backend', 'wasm', '--batch', '8', '--input', '8,8,3', '--out', out, '--cache', join(dir, 'cache'), '--repetitions', '2'];
  const first = await wap(args);
  assert.equal(first.code, 0, first.stderr);
  const p = loadProfile(readFileSync(out, 'utf8'));
  assert.ok(p.layers.length >= 10, `layers: ${p.layers.length}`);
  for (const l of p.layers) assert.equal(l.status, 'measured', `${l.layer}: ${l.error}`);
  assert.match(first.stdout, /Fwd ms\s+Bwd ms\s+Spread\s+Status\s+Backend \/ device/);
  assert.match(first.stdout, /wasm \/ CPU/);

  const second = await wap(args);
  assert.equal(second.code, 0, second.stderr);
  const q = loadProfile(readFileSync(out, 'utf8'));
  assert.equal(q.layers.length, p.layers.length);
  assert.ok(q.layers.every((l) => l.status === 'cached'), 'second run hits the cache for every layer');
  assert.match(second.stdout, new RegExp(`0 measured, ${p.layers.length} cached, 0 fallback`));
});

test('wap profile: bad flags are one-line errors', async () => {
  const r = await wap(['profile', example, '--backend', 'tpu']);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /--backend must be one of/);
  const s = await wap(['profile']);
  assert.equal(s.code, 2);
  assert.match(s.stderr, /needs a model file/);
});
