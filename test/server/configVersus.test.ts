/**
 * "your config · best plan" in the editor compares like with like: a bf16
 * FSDP config checked against a model whose folder holds an fp32 accelerate
 * config gets a best plan in bf16, not the model's fp32 plan (which made the
 * config look 7× better than "the best plan").
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT, TestServer } from './harness';

const dir = mkdtempSync(join(tmpdir(), 'wap-versus-'));
const model = join(dir, 'gpt.py');
const fsdp = join(dir, 'configs', 'fsdp.yaml');
let server: TestServer;

before(async () => {
  copyFileSync(join(ROOT, 'examples', 'pytorch', 'gpt.py'), model);
  // The model's own folder says fp32 (an accelerate config for another launcher).
  writeFileSync(join(dir, 'accelerate_config.yaml'), 'distributed_type: MULTI_GPU\nnum_processes: 8\nmixed_precision: "no"\n');
  const configs = join(dir, 'configs');
  mkdirSync(configs);
  writeFileSync(fsdp, readFileSync(join(ROOT, 'examples', 'configs', 'accelerate_fsdp.yaml'), 'utf8'));
  server = await TestServer.start({ settings: { cluster: 'h100x16-2node', batchSize: 32, model } });
});
after(async () => {
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

test('a bf16 config against a model planned in fp32: the best plan is planned again in bf16, and the line says so', async () => {
  const uri = await server.open(fsdp, readFileSync(fsdp, 'utf8'), 'yaml');
  assert.equal(uri, pathToFileURL(fsdp).href);
  const diag = await server.until('the your-config-vs-best diagnostic', () => (server.diagnostics.get(uri) ?? []).find((d) => d.code === 'config-vs-best'), 120_000);
  assert.match(diag.message, /best plan in the config's bf16/);
  // "best plan: X ms/step (R×)": R is your step over the best's; in one precision the best is never far behind.
  const ratio = Number(/\((\d+(?:\.\d+)?)×\)/.exec(diag.message)?.[1]);
  assert.ok(ratio >= 0.9, diag.message);
});
