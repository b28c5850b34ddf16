/** Profiler pieces without workers: profile file validation, α-β fit, nvidia-smi parsing, cache merging, torch availability. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { availableBackends, fitAlphaBeta, loadProfile } from '../../src/profiler/index';
import { parseGpuQuery, parseTopology } from '../../src/profiler/gpus';
import { TrialCache } from '../../src/profiler/cache';
import { PROFILE_FORMAT, PROFILE_VERSION } from '../../src/protocol/profile';

const minimal = { format: PROFILE_FORMAT, version: PROFILE_VERSION, createdAt: 'x', model: 'm', dtype: 'float32', devices: [{ index: 0, name: 'd', backend: 'wasm', version: 'v' }], layers: [], links: [], warnings: [] };

test('loadProfile accepts a valid file and rejects foreign, newer and malformed ones clearly', () => {
  assert.equal(loadProfile(JSON.stringify(minimal)).model, 'm');
  assert.throws(() => loadProfile('{"format":"something-else"}'), /not a WAP profile/);
  assert.throws(() => loadProfile(JSON.stringify({ ...minimal, version: PROFILE_VERSION + 1 })), /newer than this WAP understands/);
  assert.throws(() => loadProfile('{"format": "wap-pro'), /invalid JSON/);
  assert.throws(() => loadProfile(JSON.stringify({ ...minimal, layers: [{ layer: 'a', forwardMs: 1, backwardMs: 1, device: 3 }] })), /unknown device 3/);
});

test('fitAlphaBeta recovers α and β from exact points and needs two sizes', () => {
  const alphaUs = 12;
  const gbs = 8;
  const pts = [4096, 65536, 1 << 20, 16 << 20].map((bytes) => ({ bytes, ms: alphaUs / 1000 + bytes / (gbs * 1e9) * 1000 }));
  const fit = fitAlphaBeta(pts);
  assert.ok(Math.abs(fit.alphaUs - alphaUs) < 1e-6);
  assert.ok(Math.abs(fit.bandwidthGBs - gbs) < 1e-6);
  assert.throws(() => fitAlphaBeta(pts.slice(0, 1)), /two copy sizes/);
});

test('nvidia-smi query and topology parsing', () => {
  const gpus = parseGpuQuery('0, NVIDIA H100 80GB HBM3, 81559, 550.54.15\n1, NVIDIA A10, 23028, 550.54.15\n');
  assert.deepEqual(gpus.map((g) => [g.index, g.name, g.driver]), [[0, 'NVIDIA H100 80GB HBM3', '550.54.15'], [1, 'NVIDIA A10', '550.54.15']]);
  assert.equal(gpus[0]!.memoryGB, 79.6);
  const topo = '\tGPU0\tGPU1\tGPU2\tCPU Affinity\nGPU0\t X \tNV12\tSYS\t0-31\nGPU1\tNV12\t X \tPHB\t0-31\nGPU2\tSYS\tPHB\t X \t0-31\n';
  const links = parseTopology(topo);
  assert.deepEqual(links.map((l) => [l.a, l.b, l.kind, l.bandwidthGBs]), [[0, 1, 'NV12', 300], [0, 2, 'SYS', 10], [1, 2, 'PHB', 16]]);
});

test('two cache writers interleaving never tear the file and keep both entries', () => {
  const dir = mkdtempSync(join(tmpdir(), 'wap-cache-'));
  const id = { backend: 'wasm' as const, deviceName: 'dev', version: 'v1' };
  const a = new TrialCache(dir, id);
  const b = new TrialCache(dir, id);
  const t = { forwardMs: 1, backwardMs: 2, forwardSpread: 0, backwardSpread: 0, repetitions: 3 };
  for (let i = 0; i < 20; i++) {
    a.put(`a${i}`, t);
    b.put(`b${i}`, { ...t, forwardMs: i });
  }
  const disk = JSON.parse(readFileSync(a.path, 'utf8'));
  assert.equal(Object.keys(disk.entries).length, 40);
  assert.equal(new TrialCache(dir, id).get('b7')?.forwardMs, 7);
  const other = new TrialCache(dir, { ...id, version: 'v2' });
  assert.equal(other.size, 0, 'another library version has its own file');
});

// The torch backend with and without torch: test/profiler/torchWorker.test.ts (real interpreters).

test('availableBackends: wasm and cpu are always there; native ones say why not', async () => {
  const list = await availableBackends();
  assert.deepEqual(list.map((b) => b.id).sort(), ['cpu', 'tfjs-node', 'tfjs-node-gpu', 'torch', 'wasm']);
  assert.equal(list.find((b) => b.id === 'wasm')!.available, true);
  for (const b of list) if (!b.available) assert.ok(b.reason && b.reason.length > 10, `${b.id} has a reason`);
});
