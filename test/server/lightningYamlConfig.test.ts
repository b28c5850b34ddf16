/**
 * LightningCLI's config.yaml in the editor: the real server finds the script run.sh passes it to (main.py), plans
 * that script's model as the launch runs it, and says where the config disagrees, with the fix the CLI applies.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, TestServer } from './harness';

const DIR = join(ROOT, 'test/fixtures/lightning-cli');
const CONFIG = join(DIR, 'config.yaml');

test('config.yaml is compared with main.py’s model as run.sh runs it: the GPU count finding and the your-config line', async () => {
  const server = await TestServer.start({ trusted: false, root: DIR, settings: { cluster: 'a100x8' } });
  try {
    const uri = await server.open(CONFIG, readFileSync(CONFIG, 'utf8'), 'yaml');
    const versus = await server.until('the your-config-vs-best diagnostic', () => (server.diagnostics.get(uri) ?? []).find((d) => d.code === 'config-vs-best'), 120_000);
    assert.match(versus.message, /your config: .* · best plan: .*bf16/);
    const gpus = (server.diagnostics.get(uri) ?? []).find((d) => d.code === 'gpu-count');
    assert.ok(gpus, JSON.stringify((server.diagnostics.get(uri) ?? []).map((d) => d.message)));
    assert.match(gpus.message, /^8 processes requested; the plan reaches the best throughput on \d GPUs/);
    assert.equal(gpus.range.start.line, 4, 'on devices: 8');
  } finally {
    await server.stop();
  }
});
