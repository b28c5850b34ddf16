/**
 * runDistributed's teardown watch, with a stand-in for the Python launcher: it
 * writes the job's result file as rank 0 does after its last timed step, then
 * hangs as a gloo teardown can. The measurement is kept, and it says the ranks
 * were killed; nothing of the group outlives the call.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseDevices, runDistributed } from '../../src/profiler/index';
import { chainModel } from '../profiler/fixtures';

const model = () => chainModel('tiny', 'channels_first', [4], [['fc', 'linear', { outFeatures: 2, bias: true }, 'Linear']], 'pytorch');

const RESULT = { computeMs: 3, allreduceMs: 1, stepMs: 5, allreducePoints: [], memoryBandwidthGBs: 10, worldSize: 2, torchVersion: 'stand-in', backend: 'gloo', deviceName: 'cpu', params: 10, warmup: 1, steps: 2 };

/** A "python" that reads --job, writes the result file, then sleeps (marker: wap-hung-launcher) unless told to exit. */
function standIn(dir: string, hang: boolean): string {
  const file = join(dir, 'fake-python');
  writeFileSync(
    file,
    [
      '#!/usr/bin/env node',
      "const fs = require('node:fs');",
      "const job = JSON.parse(fs.readFileSync(process.argv[process.argv.indexOf('--job') + 1], 'utf8'));",
      `fs.writeFileSync(job.resultFile, ${JSON.stringify(JSON.stringify(RESULT))});`,
      hang ? "process.title = 'wap-hung-launcher'; setInterval(() => {}, 1000);" : '',
      '',
    ].join('\n'),
  );
  chmodSync(file, 0o755);
  return file;
}

const running = () => execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' }).split('\n').filter((l) => l.includes('wap-hung'));

test('ranks that hang after writing their timings are killed; the measurement is kept and says so', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'wap-teardown-'));
  try {
    const options = { devices: parseDevices('cpu:2'), batchPerRank: 2, optimizer: 'sgd', warmup: 1, steps: 2, timeoutMs: 60_000, calibrationBytes: [4096], teardownGraceMs: 1000 };
    const hung = await runDistributed(model(), { ...options, python: standIn(dir, true) });
    assert.equal(hung.stepMs, 5);
    assert.match(hung.teardownKilled ?? '', /had not exited 1 s after writing their timings and were killed; the timed steps had finished/);
    assert.deepEqual(running(), [], 'the hung launcher is gone');
    const clean = await runDistributed(model(), { ...options, python: standIn(dir, false) });
    assert.equal(clean.stepMs, 5);
    assert.equal(clean.teardownKilled, undefined, 'a clean exit carries no note');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
