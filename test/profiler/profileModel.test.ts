/**
 * profileModel end to end on the wasm backend with real worker processes:
 * a complete profile, a fully cached re-run, SIGKILL recovery, a truncated
 * cache, cancellation, and refusal when untrusted.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadProfile, profileModel, UntrustedError, type ProfileOptions } from '../../src/profiler/index';
import { chainModel, tinyCnn } from './fixtures';

const fresh = () => mkdtempSync(join(tmpdir(), 'wap-prof-'));
const fast = (cacheDir: string, extra: Partial<ProfileOptions> = {}): ProfileOptions => ({
  backend: 'wasm',
  batch: 8,
  cacheDir,
  warmup: 1,
  repetitions: 3,
  trusted: true,
  ...extra,
});

test('untrusted: refuses before spawning or writing anything', async () => {
  const dir = join(fresh(), 'cache');
  await assert.rejects(profileModel(tinyCnn(), fast(dir, { trusted: false })), (e: Error) => e instanceof UntrustedError && /trusted/.test(e.message));
  assert.equal(existsSync(dir), false, 'no cache folder: nothing ran');
});

test('wasm: every layer measured with backend and device named; the re-run is all cache hits', async () => {
  const dir = fresh();
  const model = tinyCnn();
  const events: Array<{ done: number; total: number; cached: boolean }> = [];
  const p = await profileModel(model, fast(dir, { onProgress: (e) => events.push(e) }));
  const again = loadProfile(JSON.stringify(p));
  assert.equal(again.layers.length, model.layers.length);
  assert.deepEqual(p.layers.map((l) => l.layer), model.layers.map((l) => l.name));
  for (const l of p.layers) {
    assert.equal(l.status, 'measured', `${l.layer}: ${l.error}`);
    assert.ok(l.forwardMs > 0 && Number.isFinite(l.backwardMs), `${l.layer} has times`);
    assert.equal(l.batch, 8);
    assert.ok(l.signature.startsWith(model.layers.find((m) => m.name === l.layer)!.op));
  }
  const conv = p.layers.find((l) => l.layer === 'conv1')!;
  assert.ok(conv.backwardMs > 0, 'conv backward (our wasm filter-gradient kernel) ran');
  assert.ok((conv.peakMemoryBytes ?? 0) > 0, 'peak memory reported');
  assert.equal(p.devices[0]!.backend, 'wasm');
  assert.match(p.devices[0]!.name, /wasm/);
  // On a CPU backend the copy is a memcpy, recorded as such and never as a host↔device link.
  assert.equal(p.links[0]?.kind, 'host-memory');
  assert.match(p.links[0]?.name ?? '', /not a device link/);
  assert.ok(!p.links.some((l) => l.kind === 'host-device'), 'no host↔device link on a CPU backend');
  assert.equal(p.links[0]?.source, 'measured');
  assert.deepEqual(events.map((e) => e.done), model.layers.map((_, i) => i + 1));
  assert.ok(events.every((e) => e.total === model.layers.length && !e.cached));

  const t0 = Date.now();
  const cached = await profileModel(model, fast(dir));
  const ms = Date.now() - t0;
  assert.ok(cached.layers.every((l) => l.status === 'cached'), 'every layer from the cache');
  assert.deepEqual(cached.layers.map((l) => l.forwardMs), p.layers.map((l) => l.forwardMs));
  assert.ok(ms < 1500, `cached re-run took ${ms} ms (no worker started)`);
  assert.deepEqual(cached.links, p.links, 'calibration cached too');
});

test('SIGKILL of the worker mid-run: that layer is a marked fallback, the rest complete', async () => {
  const dir = fresh();
  process.env.WAP_TEST_KILL_AT_LAYER = '2';
  try {
    const p = await profileModel(tinyCnn(), fast(dir));
    assert.equal(p.layers.length, 5);
    const killed = p.layers[2]!;
    assert.equal(killed.status, 'fallback');
    assert.match(killed.error ?? '', /SIGKILL/);
    assert.match(killed.error ?? '', /analytical estimate/);
    for (const [i, l] of p.layers.entries()) if (i !== 2) assert.equal(l.status, 'measured', `${l.layer}: ${l.error}`);
  } finally {
    delete process.env.WAP_TEST_KILL_AT_LAYER;
  }
  // Finished layers stayed cached; the killed one is measured now.
  const again = await profileModel(tinyCnn(), fast(dir));
  assert.deepEqual(again.layers.map((l) => l.status), ['cached', 'cached', 'measured', 'cached', 'cached']);
});

test('a crashed worker whose replacement cannot start: remaining layers are marked fallbacks, finished ones stay cached', async () => {
  const dir = fresh();
  process.env.WAP_TEST_KILL_AT_LAYER = '2';
  process.env.WAP_TEST_FAIL_RESTART = '1';
  let p;
  try {
    p = await profileModel(tinyCnn(), fast(dir));
  } finally {
    delete process.env.WAP_TEST_KILL_AT_LAYER;
    delete process.env.WAP_TEST_FAIL_RESTART;
  }
  assert.deepEqual(p.layers.map((l) => l.status), ['measured', 'measured', 'fallback', 'fallback', 'fallback']);
  assert.match(p.layers[2]!.error ?? '', /SIGKILL/);
  for (const l of p.layers.slice(3)) {
    assert.match(l.error ?? '', /replacement trial worker failed to start after a crash/);
    assert.match(l.error ?? '', /analytical estimate/);
    assert.ok(Number.isFinite(l.forwardMs) && l.forwardMs >= 0, `${l.layer} has an estimate`);
  }
  assert.ok(p.layers.slice(3).some((l) => l.forwardMs > 0), 'a layer with FLOPs gets a non-zero estimate');
  assert.ok(p.warnings.some((w) => /replacement trial worker failed to start/.test(w)), p.warnings.join('; '));
  assert.ok(p.warnings.some((w) => /copy calibration failed/.test(w)), 'calibration on the broken device is skipped with a warning');
  const again = await profileModel(tinyCnn(), fast(dir));
  assert.deepEqual(again.layers.map((l) => l.status), ['cached', 'cached', 'measured', 'measured', 'measured']);
});

test('a truncated cache file is rebuilt with a warning and other cache files are untouched', async () => {
  const dir = fresh();
  await profileModel(tinyCnn(), fast(dir));
  const [file] = readdirSync(dir).filter((f) => f.startsWith('wasm-'));
  const other = join(dir, 'cpu-0000000000000000.json');
  writeFileSync(other, '{"keep": true}');
  const text = readFileSync(join(dir, file!), 'utf8');
  writeFileSync(join(dir, file!), text.slice(0, Math.floor(text.length / 2)));
  const p = await profileModel(tinyCnn(), fast(dir));
  assert.ok(p.warnings.some((w) => /corrupt/.test(w) && /rebuilt/.test(w)), p.warnings.join('; '));
  assert.ok(p.layers.every((l) => l.status === 'measured'));
  assert.equal(readFileSync(other, 'utf8'), '{"keep": true}');
  const rebuilt = JSON.parse(readFileSync(join(dir, file!), 'utf8'));
  assert.equal(Object.keys(rebuilt.entries).length, 5);
});

test('cancellation rejects with Cancelled and keeps finished layers cached', async () => {
  const dir = fresh();
  const token = { isCancellationRequested: false };
  await assert.rejects(
    profileModel(tinyCnn(), fast(dir, { cancel: token, onProgress: (e) => (token.isCancellationRequested = e.done >= 1) })),
    (e: Error) => e.name === 'Cancelled',
  );
  const after = await profileModel(tinyCnn(), fast(dir));
  assert.equal(after.layers[0]!.status, 'cached');
});

test('two layers with one signature, one fed by the model input: each is measured (input gradient differs)', async () => {
  const dir = fresh();
  // fc1 reads the model input (no input gradient to compute); fc2 has the same op, attrs and shapes but needs dx.
  const model = chainModel('twins', 'channels_last', [16], [
    ['fc1', 'linear', { outFeatures: 16, bias: true }],
    ['fc2', 'linear', { outFeatures: 16, bias: true }],
  ]);
  assert.equal(model.layers[0]!.op, model.layers[1]!.op);
  const p = await profileModel(model, fast(dir));
  assert.equal(p.layers[0]!.signature, p.layers[1]!.signature);
  assert.deepEqual(p.layers.map((l) => l.status), ['measured', 'measured']);
  const file = readdirSync(dir).find((f) => f.endsWith('.json'))!;
  assert.equal(Object.keys(JSON.parse(readFileSync(join(dir, file), 'utf8')).entries).length, 2);
  const again = await profileModel(model, fast(dir));
  assert.deepEqual(again.layers.map((l) => [l.status, l.backwardMs]), p.layers.map((l) => ['cached', l.backwardMs]));
});
