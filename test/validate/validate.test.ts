/**
 * wap-test: alone (scripts/test.mjs runs this file after the rest, with the
 * machine to itself: it times real torchrun steps against a prediction).
 *
 * `wap validate` for real: torchrun with gloo over CPU processes of Debian's
 * torch 1.13 (/usr/bin/python3; CI installs python3-torch). Missing torch is a
 * failure with a clear message, never a skip.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadProfile, parseDevices, probePython, runDistributed } from '../../src/profiler/index';
import { chainModel } from '../profiler/fixtures';

const root = join(__dirname, '..', '..');
const TORCH_PYTHON = '/usr/bin/python3';

function wap(args: string[], timeout = 900_000): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import', 'tsx', join(root, 'src', 'cli', 'main.ts'), ...args], { cwd: root, timeout, maxBuffer: 16 << 20 }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout: String(stdout), stderr: String(stderr) }),
    );
  });
}

async function requireTorch(): Promise<void> {
  const info = await probePython(TORCH_PYTHON);
  assert.ok(info.torchVersion, `${TORCH_PYTHON} cannot import torch (${info.torchReason ?? info.reason}); install python3-torch python3-torchvision with apt, as .ci/run does`);
}

/** Processes still running validate_dp.py (none may outlive a validation). */
function leftoverRanks(): string[] {
  return execFileSync('ps', ['-eo', 'pid,args'], { encoding: 'utf8' })
    .split('\n')
    .filter((l) => l.includes('validate_dp.py') && !l.includes(' ps '));
}

const tiny = () =>
  chainModel('tiny', 'channels_first', [3, 8, 8], [
    ['conv', 'conv', { rank: 2, outChannels: 4, kernel: [3, 3], stride: [1, 1], padding: [[1, 1], [1, 1]], dilation: [1, 1], groups: 1, bias: true }, 'Conv2d'],
    ['relu', 'activation', { fn: 'relu' }, 'ReLU'],
    ['flatten', 'flatten', { startDim: 1, endDim: -1 }, 'Flatten'],
    ['fc', 'linear', { outFeatures: 10, bias: true }, 'Linear'],
  ], 'pytorch');

const run = (model = tiny(), extra: Partial<Parameters<typeof runDistributed>[1]> = {}) =>
  runDistributed(model, { python: TORCH_PYTHON, devices: parseDevices('cpu:2'), batchPerRank: 2, optimizer: 'sgd', warmup: 1, steps: 2, timeoutMs: 300_000, calibrationBytes: [4096, 65536], ...extra });

test('acceptance: wap validate alexnet on cpu:2 at batch 8, 3×64×64 — predicted/measured step within 0.67–1.5', async () => {
  await requireTorch();
  const dir = mkdtempSync(join(tmpdir(), 'wap-validate-cli-'));
  try {
    const saved = join(dir, 'measured.json');
    const r = await wap(['validate', 'examples/pytorch/alexnet.py', '--devices', 'cpu:2', '--batch', '8', '--input', '3,64,64', '--python', TORCH_PYTHON, '--steps', '3', '--cache', join(dir, 'cache'), '--save-profile', saved, '--json']);
    assert.equal(r.code, 0, r.stderr);
    const report = JSON.parse(r.stdout);
    console.log(`validate alexnet cpu:2: predicted ${report.predictedStepMs.toFixed(1)} ms, measured ${report.measuredStepMs.toFixed(1)} ms, ratio ${report.ratio.toFixed(3)}; phases ${JSON.stringify(report.phases.map((p: { phase: string; ratio: number }) => [p.phase, +p.ratio.toFixed(2)]))}`);
    assert.equal(report.devices, 'cpu:2');
    assert.match(report.torchVersion, /^1\.13/);
    assert.deepEqual(report.phases.map((p: { phase: string }) => p.phase), ['compute', 'allreduce', 'step']);
    for (const p of report.phases) assert.ok(p.measuredMs > 0 && p.predictedMs > 0, JSON.stringify(p));
    assert.ok(report.notValidated.some((n: string) => /FSDP.*torch ≥ 2\.2/.test(n)), 'says what torch 1.13 cannot validate');
    assert.ok(report.ratio >= 0.67 && report.ratio <= 1.5, `predicted/measured ${report.ratio}`);
    // The measurement kept as a profile: per-layer torch times, the measured step and all-reduce link.
    const profile = loadProfile(require('node:fs').readFileSync(saved, 'utf8'));
    assert.equal(profile.wholeStep?.ms, report.measuredStepMs);
    assert.equal(profile.python?.torchVersion, report.torchVersion);
    assert.ok(profile.links.some((l) => l.kind === 'inter-process' && l.source === 'measured'));
    assert.deepEqual(leftoverRanks(), []);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a failing rank is reported in one message naming the rank and its error', async () => {
  await requireTorch();
  const m = chainModel('bad', 'channels_first', [16], [['mystery', 'opaque', { reason: 'custom CUDA kernel' }, 'MyOp']], 'pytorch');
  await assert.rejects(run(m), (e: Error) => {
    assert.match(e.message, /^torchrun \(\/usr\/bin\/python3, 2 CPU processes \(gloo\)\) exited with code 1; rank [01] failed: Unsupported: opaque layer: custom CUDA kernel$/);
    return true;
  });
  assert.deepEqual(leftoverRanks(), []);
});

test('timeout and cancel kill the launcher and every rank', async () => {
  await requireTorch();
  await assert.rejects(run(tiny(), { timeoutMs: 1500 }), /timed out after 2 s/);
  await new Promise((r) => setTimeout(r, 300));
  assert.deepEqual(leftoverRanks(), []);
  const token = { isCancellationRequested: false };
  setTimeout(() => (token.isCancellationRequested = true), 1500);
  await assert.rejects(run(tiny(), { cancel: token }), (e: Error) => e.name === 'Cancelled');
  await new Promise((r) => setTimeout(r, 300));
  assert.deepEqual(leftoverRanks(), []);
});

test('wap validate: bad devices, an uneven batch and an interpreter without torch are clear one-line errors', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'wap-validate-err-'));
  try {
    const noTorch = join(dir, 'python-no-torch');
    writeFileSync(noTorch, '#!/bin/sh\nexec python3 -S "$@"\n');
    chmodSync(noTorch, 0o755);
    const base = ['validate', 'examples/pytorch/alexnet.py', '--input', '3,64,64'];
    const bad = await wap([...base, '--devices', 'gpu:2']);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--devices expects cpu:N or cuda:I,J,… \(e\.g\. cpu:2 or cuda:0,1\), got 'gpu:2'/);
    const uneven = await wap([...base, '--devices', 'cpu:3', '--batch', '8']);
    assert.match(uneven.stderr, /batch 8 does not split evenly over 3 ranks/);
    const missing = await wap([...base, '--devices', 'cpu:2', '--python', noTorch]);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /cannot validate: .*python-no-torch cannot import torch \(ModuleNotFoundError: No module named 'torch'\); choose an interpreter with torch \(--python\)/);
    const none = await wap(['validate', 'examples/pytorch/alexnet.py']);
    assert.match(none.stderr, /validate needs --devices/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a small model on cpu:2: every phase measured, the slowest rank counts', async () => {
  await requireTorch();
  const m = await run();
  assert.equal(m.worldSize, 2);
  assert.equal(m.backend, 'gloo');
  assert.ok(m.computeMs > 0 && m.allreduceMs > 0 && m.stepMs > 0, JSON.stringify(m));
  assert.equal(m.allreducePoints.length, 2);
  assert.ok(m.memoryBandwidthGBs > 0);
  assert.equal(m.params, 4 * 3 * 9 + 4 + 4 * 64 * 10 + 10);
});
