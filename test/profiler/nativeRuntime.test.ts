/**
 * tfjs-node / tfjs-node-gpu: the worker must find the package outside its
 * bundle (WAP_NODE_PATH, global npm roots) and build and time every layer with
 * the tf namespace *that package exports*, not with the tfjs-core bundled into
 * dist/trialWorker.js.
 *
 * The real native packages download libtensorflow at install time and cannot
 * be installed here, so real libtensorflow timing cannot run in CI. Instead a
 * stand-in package exporting the pure-JS tf namespace (@tensorflow/tfjs, a
 * separate tfjs-core copy from the bundle's) proves the worker uses the
 * package's namespace: like tfjs-node it registers a backend named
 * 'tensorflow' (here backed by the pure-JS cpu kernels) and exports the whole
 * tf API, and it counts the op calls made through its exports.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { build } from 'esbuild';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { availableBackends, profileModel } from '../../src/profiler/index';
import { globalNpmRoots, locatePackage } from '../../src/profiler/optionalPackage';
import { WorkerClient } from '../../src/profiler/workerClient';
import { tinyCnn } from './fixtures';

const root = join(__dirname, '..', '..');
const STAND_IN_VERSION = '0.0.0-wap-stand-in';
const tmp = mkdtempSync(join(tmpdir(), 'wap-native-'));
const modulesDir = join(tmp, 'node_modules');
const standInDir = join(modulesDir, '@tensorflow', 'tfjs-node');
const callsDir = join(tmp, 'calls');
const savedEnv = { WAP_NODE_PATH: process.env.WAP_NODE_PATH, WAP_TRIAL_WORKER: process.env.WAP_TRIAL_WORKER };

/** The stand-in's index.js: the pure-JS tf namespace with a 'tensorflow' backend, counting op calls through its exports. */
function standInSource(): string {
  const tfjs = require.resolve('@tensorflow/tfjs', { paths: [root] });
  const cpu = require.resolve('@tensorflow/tfjs-backend-cpu', { paths: [root] });
  return `// Stand-in for @tensorflow/tfjs-node written by WAP's tests (not libtensorflow).
'use strict';
const fs = require('fs');
const path = require('path');
const tf = require(${JSON.stringify(tfjs)});
const { MathBackendCPU } = require(${JSON.stringify(cpu)});
// tfjs-node registers its backend as 'tensorflow'; the pure-JS cpu kernels stand in for libtensorflow's.
tf.registerBackend('tensorflow', () => new MathBackendCPU(), 3);
for (const k of tf.getKernelsForBackend('cpu')) tf.registerKernel({ ...k, backendName: 'tensorflow' });
const calls = {};
const ns = {};
for (const key of Object.keys(tf)) {
  const v = tf[key];
  ns[key] = typeof v === 'function' && /^[a-z]/.test(key)
    ? function (...args) { calls[key] = (calls[key] || 0) + 1; return v.apply(this, args); }
    : v;
}
ns.__wapStandIn = true;
process.on('exit', () => {
  const dir = process.env.WAP_STAND_IN_CALLS_DIR;
  if (dir) fs.writeFileSync(path.join(dir, 'calls-' + process.pid + '.json'), JSON.stringify(calls));
});
module.exports = ns;
`;
}

/** Op-call counts the stand-in wrote when its worker exited (the worker exits after close, asynchronously). */
async function readCalls(dir: string): Promise<Record<string, number>> {
  for (let i = 0; i < 100 && readdirSync(dir).length === 0; i++) await new Promise((r) => setTimeout(r, 50));
  const total: Record<string, number> = {};
  for (const f of readdirSync(dir)) {
    for (const [k, n] of Object.entries(JSON.parse(readFileSync(join(dir, f), 'utf8')) as Record<string, number>)) total[k] = (total[k] ?? 0) + n;
  }
  return total;
}

const freshCallsDir = (name: string) => {
  const d = join(callsDir, name);
  mkdirSync(d, { recursive: true });
  return d;
};

before(async () => {
  mkdirSync(standInDir, { recursive: true });
  writeFileSync(join(standInDir, 'package.json'), JSON.stringify({ name: '@tensorflow/tfjs-node', version: STAND_IN_VERSION, main: 'index.js' }));
  writeFileSync(join(standInDir, 'index.js'), standInSource());
  // The worker as it ships: an esbuild bundle with its own tfjs-core, outside any node_modules,
  // so only WAP_NODE_PATH can lead it to the package.
  const workerFile = join(tmp, 'bundle', 'trialWorker.js');
  await build({
    entryPoints: [join(root, 'src', 'profiler', 'worker', 'trialWorker.ts')],
    outfile: workerFile,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    external: ['@tensorflow/tfjs-node-gpu', '@tensorflow/tfjs-node'],
    logLevel: 'error',
  });
  process.env.WAP_TRIAL_WORKER = workerFile;
  process.env.WAP_NODE_PATH = modulesDir;
});

after(() => {
  for (const [k, v] of Object.entries(savedEnv)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  delete process.env.WAP_STAND_IN_CALLS_DIR;
  rmSync(tmp, { recursive: true, force: true });
});

test('availableBackends finds tfjs-node through WAP_NODE_PATH and says where', async () => {
  const node = (await availableBackends()).find((b) => b.id === 'tfjs-node')!;
  assert.equal(node.available, true, node.reason);
  assert.ok(node.location?.includes(standInDir), node.location);
  assert.match(node.location ?? '', new RegExp(`${STAND_IN_VERSION.replace(/\./g, '\\.')}.*WAP_NODE_PATH`));
});

test('a missing package: the reason lists WAP_NODE_PATH and the global npm roots it looked in', async (t) => {
  const empty = mkdtempSync(join(tmp, 'empty-'));
  const env = { ...process.env, WAP_NODE_PATH: empty };
  if (locatePackage('@tensorflow/tfjs-node', env).found) {
    t.skip('a real @tensorflow/tfjs-node is installed beside WAP or globally on this machine');
    return;
  }
  process.env.WAP_NODE_PATH = empty;
  try {
    const node = (await availableBackends()).find((b) => b.id === 'tfjs-node')!;
    assert.equal(node.available, false);
    assert.ok(node.reason?.includes(`${empty} (WAP_NODE_PATH)`), node.reason);
    for (const r of globalNpmRoots()) assert.ok(node.reason?.includes(r), `reason names ${r}: ${node.reason}`);
    assert.match(node.reason ?? '', /npm install -g @tensorflow\/tfjs-node@4\.22\.0/);
    await assert.rejects(
      profileModel(tinyCnn(), { backend: 'tfjs-node', batch: 2, cacheDir: join(tmp, 'cache-missing'), trusted: true }),
      /@tensorflow\/tfjs-node is not installed.*WAP_NODE_PATH/,
    );
  } finally {
    process.env.WAP_NODE_PATH = modulesDir;
  }
});

test('globalNpmRoots: the standard places, APPDATA only on Windows', () => {
  const linux = globalNpmRoots({ HOME: '/home/u' }, 'linux');
  assert.ok(linux.includes('/usr/local/lib/node_modules') && linux.includes('/usr/lib/node_modules'));
  assert.ok(linux.includes('/home/u/.npm-global/lib/node_modules'));
  assert.ok(linux.includes(join(dirname(process.execPath), '..', 'lib', 'node_modules')), 'the prefix of the running node');
  const win = globalNpmRoots({ APPDATA: 'C:\\Users\\u\\AppData\\Roaming' }, 'win32');
  assert.ok(win.some((r) => r.includes('AppData') && r.endsWith(join('npm', 'node_modules'))));
  assert.ok(!linux.some((r) => r.includes('AppData')));
});

test("a stand-in package exporting the pure-JS tf namespace proves the worker uses the package's namespace (ready message)", async () => {
  const dir = freshCallsDir('ready');
  const client = await WorkerClient.start('tfjs-node', { ...process.env, WAP_STAND_IN_CALLS_DIR: dir }, 60_000);
  try {
    assert.equal(client.runtime?.activeBackend, 'tensorflow', 'the namespace in use has the package backend active');
    assert.equal(client.runtime?.isBundledCore, false, "the worker's bundled tfjs-core is not the namespace in use");
    assert.equal(client.runtime?.source, standInDir);
    assert.equal(client.version, `tfjs-node ${STAND_IN_VERSION}`);
  } finally {
    client.close();
  }
  const calls = await readCalls(dir);
  assert.ok((calls.setBackend ?? 0) >= 1, `setBackend went through the package: ${JSON.stringify(calls)}`);
});

test("a stand-in package exporting the pure-JS tf namespace proves the worker uses the package's namespace (every layer of a real profile)", async () => {
  const dir = freshCallsDir('profile');
  process.env.WAP_STAND_IN_CALLS_DIR = dir;
  const model = tinyCnn();
  const p = await profileModel(model, { backend: 'tfjs-node', batch: 4, cacheDir: join(tmp, 'cache'), warmup: 1, repetitions: 2, trusted: true });
  delete process.env.WAP_STAND_IN_CALLS_DIR;
  assert.equal(p.devices[0]!.backend, 'tfjs-node');
  assert.equal(p.devices[0]!.version, `tfjs-node ${STAND_IN_VERSION}`);
  for (const l of p.layers) {
    assert.equal(l.status, 'measured', `${l.layer}: ${l.error}`);
    assert.ok(l.forwardMs > 0, `${l.layer} has a forward time`);
  }
  // CPU backend: the copy calibration is a memcpy, not a device link.
  assert.deepEqual(p.links.map((l) => l.kind), ['host-memory']);
  const calls = await readCalls(dir);
  // Each layer's own op went through the package's exports: conv1, relu1, pool1, flatten, fc; plus the copy calibration.
  for (const op of ['conv2d', 'relu', 'maxPool', 'reshape', 'matMul', 'tensor1d', 'randomNormal', 'variable']) {
    assert.ok((calls[op] ?? 0) > 0, `${op} called through the package namespace: ${JSON.stringify(calls)}`);
  }
  assert.ok(existsSync(join(tmp, 'cache')), 'results were cached');
});
