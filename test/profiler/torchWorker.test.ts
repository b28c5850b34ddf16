/** The torch worker script run directly (scripts/gpu-check.sh does) on a machine without PyTorch. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const script = join(__dirname, '..', '..', 'src', 'profiler', 'torch', 'torch_worker.py');

test('torch_worker.py --specs without torch: one clear line and exit 2, no traceback', (t) => {
  const probe = spawnSync('python3', ['-B', '-c', 'import torch'], { encoding: 'utf8' });
  if (probe.error) return t.skip('python3 is not installed here');
  if (probe.status === 0) return t.skip('torch is installed here; scripts/gpu-check.sh exercises the real path');
  const dir = mkdtempSync(join(tmpdir(), 'wap-torchw-'));
  try {
    const specs = join(dir, 'm.json');
    writeFileSync(specs, JSON.stringify({ model: 'm', batch: 2, specs: [], inputs: [], outputs: [] }));
    // -B: no __pycache__ left in the source tree.
    const r = spawnSync('python3', ['-B', script, '--specs', specs], { encoding: 'utf8', timeout: 30_000 });
    assert.equal(r.status, 2, r.stderr);
    assert.doesNotMatch(r.stderr, /Traceback/);
    const lines = r.stderr.trim().split('\n');
    assert.equal(lines.length, 1, r.stderr);
    assert.match(lines[0]!, /^torch_worker: PyTorch cannot be imported by .*No module named 'torch'/);
    assert.equal(r.stdout, '');
    assert.equal(existsSync(join(__dirname, '..', '..', 'src', 'profiler', 'torch', '__pycache__')), false);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
