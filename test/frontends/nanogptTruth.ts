/**
 * Ground truth for the nanoGPT fixture's GPT: built in real torch (Debian's python3-torch, as CI installs it) at the
 * given config, its parameter count. Shared by the tests that read scripts sizing that model from their command line
 * or settings files.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

export const NANOGPT = join(__dirname, '..', 'fixtures', 'nanogpt');
const PYTHON = '/usr/bin/python3';

/** torch's parameter count of the fixture's `GPT(GPTConfig(<config>))`, e.g. `n_layer=2, n_head=8, n_embd=512`. */
export function nanogptParams(config: string): number {
  const r = spawnSync(PYTHON, ['-c', `import sys; sys.path.insert(0, ${JSON.stringify(NANOGPT)})\nfrom model import GPT, GPTConfig\nprint(sum(p.numel() for p in GPT(GPTConfig(${config})).parameters()))`], { encoding: 'utf8', timeout: 60_000 });
  assert.equal(r.status, 0, `${PYTHON} needs torch (CI installs python3-torch): ${r.stderr}`);
  return Number(r.stdout.trim().split('\n').pop());
}
