/**
 * An accelerate config whose DeepSpeed settings live in a JSON it names
 * (deepspeed_config_file), over the real LSP server: the diagnostic reads the
 * stage from the file on disk, and an unsaved edit of that file in the editor
 * re-checks the YAML with the new stage.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, TestServer } from './harness';

const dir = mkdtempSync(join(tmpdir(), 'wap-linked-lsp-'));
const model = join(dir, 'gpt.py');
const yaml = join(dir, 'accelerate_ds.yaml');
const json = join(dir, 'ds_zero.json');
// Stages the plan does not choose for this model (ZeRO-3 on one NVSwitch node), so each one is a setup-differs finding.
const ZERO2 = '{\n  "zero_optimization": {"stage": 2},\n  "bf16": {"enabled": "auto"}\n}\n';
let server: TestServer;

before(async () => {
  copyFileSync(join(ROOT, 'examples', 'pytorch', 'gpt.py'), model);
  writeFileSync(json, ZERO2);
  writeFileSync(yaml, 'distributed_type: DEEPSPEED\ndeepspeed_config:\n  deepspeed_config_file: ds_zero.json\nmixed_precision: bf16\nnum_processes: 8\n');
  server = await TestServer.start({ settings: { cluster: 'a100x8', batchSize: 64, model } });
});
after(async () => {
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

test('the YAML is checked with the stage its JSON states, and again when the JSON is edited in the editor', async () => {
  const uri = await server.open(yaml);
  const stageSaid = (stage: number) => () => (server.diagnostics.get(uri) ?? []).find((d) => d.code === 'setup-differs' && new RegExp(`trains with ZeRO ${stage}\\b[^;]*\\(in ds_zero\\.json\\)`).test(d.message));
  const first = await server.until('the setup-differs diagnostic naming ZeRO 2 from ds_zero.json', stageSaid(2), 120_000);
  // It points at the reference: the file name in the YAML.
  assert.equal(first.range.start.line, 2);
  // "Your config" is planned with that stage pinned, beside the best plan.
  assert.ok((server.diagnostics.get(uri) ?? []).some((d) => d.code === 'config-vs-best' && /^your config: /.test(d.message)));

  // Unsaved: the editor's buffer of the JSON is what counts.
  const jsonUri = await server.open(json, ZERO2.replace('"stage": 2', '"stage": 0'), 'json');
  await server.until('the YAML re-checked with ZeRO 0', stageSaid(0), 120_000);
  assert.ok(jsonUri.endsWith('ds_zero.json'));
});

test('a link to something that is not a config-sized regular file (/dev/zero) is not read, and the server goes on', async () => {
  const odd = join(dir, 'odd.yaml');
  writeFileSync(odd, 'distributed_type: DEEPSPEED\ndeepspeed_config:\n  deepspeed_config_file: /dev/zero\nnum_processes: 8\n');
  const uri = await server.open(odd);
  const note = await server.until('the not-read note', () => (server.diagnostics.get(uri) ?? []).find((d) => d.code === 'setup-unmodelled'), 60_000);
  assert.match(note.message, /\/dev\/zero was not found/);
});
