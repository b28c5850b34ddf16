/**
 * Which cluster an unset `wap.cluster` plans for, and workspace trust: the real
 * server runs with a PATH holding only stand-in `nvidia-smi` and `python3`
 * scripts that report two H100s and log every call, so a test can tell both
 * what was planned for and whether any process was spawned.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PlanRequest, ValidateRequest } from '../../src/protocol/lsp';
import { find, ROOT, TestServer } from './harness';

const CNN = join(ROOT, 'examples/tfjs/cnn.ts');

let bin: string;
let calls: string;
before(() => {
  bin = mkdtempSync(join(tmpdir(), 'wap-fake-bin-'));
  calls = join(bin, 'calls.log');
  const fake = (name: string, stdout: string) => {
    const file = join(bin, name);
    writeFileSync(file, `#!/bin/sh\necho ${name} >> '${calls}'\nprintf '${stdout}'\n`);
    chmodSync(file, 0o755);
  };
  fake('nvidia-smi', '0, NVIDIA H100 80GB HBM3, 81559, 550.54\\n1, NVIDIA H100 80GB HBM3, 81559, 550.54\\n');
  fake('python3', '');
});
after(() => rmSync(bin, { recursive: true, force: true }));

const spawned = () => (existsSync(calls) ? readFileSync(calls, 'utf8').split('\n').filter(Boolean) : []);

test('trusted, wap.cluster unset: plans run on the detected local GPUs, not the default preset', async () => {
  const server = await TestServer.start({ trusted: true, settings: { batchSize: 64 }, env: { PATH: bin } });
  try {
    const uri = await server.open(CNN);
    const { outcome } = await server.conn.sendRequest(PlanRequest, { uri });
    assert.equal(outcome.cluster.source, 'local');
    assert.equal(outcome.cluster.gpus, 2);
    assert.match(outcome.cluster.name, /H100/);
    assert.ok(spawned().includes('nvidia-smi'));
  } finally {
    await server.stop();
  }
});

test('untrusted: no process is spawned and plans use the default preset, saying why', async () => {
  rmSync(calls, { force: true });
  const server = await TestServer.start({ trusted: false, settings: { batchSize: 64 }, env: { PATH: bin } });
  try {
    const uri = await server.open(CNN);
    const { outcome } = await server.conn.sendRequest(PlanRequest, { uri });
    assert.equal(outcome.cluster.source, 'default');
    const status = await server.until('a status', () => server.statuses.at(-1));
    assert.equal(status.trusted, false);
    assert.deepEqual(status.gpus, []);
    const lenses = await server.planned(uri);
    assert.equal(lenses.length, 1);
    // Validation starts torchrun: refused before anything runs.
    await assert.rejects(server.conn.sendRequest(ValidateRequest, { uri, devices: 'cpu:2' }), /validating runs training processes with torchrun, which is disabled in an untrusted workspace/);
    assert.deepEqual(spawned(), [], 'neither nvidia-smi nor python3 may run in an untrusted workspace');
  } finally {
    await server.stop();
  }
});

test('untrusted, wap.cluster = local: the default preset, saying detection is off for trust (not "nvidia-smi not found")', async () => {
  rmSync(calls, { force: true });
  const server = await TestServer.start({ trusted: false, settings: { cluster: 'local', batchSize: 64 }, env: { PATH: bin } });
  try {
    const uri = await server.open(CNN);
    const { outcome } = await server.conn.sendRequest(PlanRequest, { uri });
    assert.equal(outcome.feasible, true);
    assert.equal(outcome.cluster.source, 'default');
    const hover = await server.until('a hover with the plan', async () => {
      const at = find(readFileSync(CNN, 'utf8'), 'tf.layers.conv2d');
      const text = await server.hoverText(uri, at.line, at.character + 10);
      return /not trusted/.test(text) ? text : undefined;
    });
    assert.match(hover, /GPU detection is off because the workspace is not trusted/);
    assert.doesNotMatch(hover, /nvidia-smi/);
    const status = await server.until('a status naming the trust', () => server.statuses.find((s) => /wap\.cluster = local/.test(s.tooltip)));
    assert.match(status.tooltip, /not trusted/);
    assert.deepEqual(spawned(), [], 'nothing is spawned');
  } finally {
    await server.stop();
  }
});
