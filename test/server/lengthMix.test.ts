/**
 * wap.sequenceLengths over the real server: a plan is also priced on the data's lengths, the hover says so, and a
 * missing file or a bad batching is a warning on the plan while the plan itself stands.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PlanRequest } from '../../src/protocol/lsp';
import { find, TestServer } from './harness';

const dir = mkdtempSync(join(tmpdir(), 'wap-lsp-lengths-'));
const MODEL = 'from transformers import BertConfig, BertModel\nmodel = BertModel(BertConfig(hidden_size=128, num_hidden_layers=2, num_attention_heads=2, intermediate_size=512))\n';
writeFileSync(join(dir, 'bert.py'), MODEL);
writeFileSync(join(dir, 'lengths.json'), JSON.stringify({ lengths: { '60': 30, '250': 50, '700': 20 } }));
const BASE = { cluster: 'a100x8', batchSize: 32, sequenceLengths: 'lengths.json', batching: 'bins:128', padMultiple: 8 };

let server: TestServer;
before(async () => {
  server = await TestServer.start({ root: dir, settings: BASE });
});
after(async () => {
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function replan(settings: Record<string, unknown>, uri: string) {
  server.settings = settings;
  await server.conn.sendNotification('workspace/didChangeConfiguration', { settings: {} });
  return server.conn.sendRequest(PlanRequest, { uri, model: 'model' });
}

test('a plan is priced on the lengths wap.sequenceLengths names (relative to the workspace), and the hover shows it', async () => {
  const uri = await server.open(join(dir, 'bert.py'), MODEL);
  const { outcome } = await server.conn.sendRequest(PlanRequest, { uri, model: 'model' });
  assert.ok(outcome.feasible);
  const mix = outcome.lengthMix!;
  assert.equal(mix.source, 'lengths.json');
  assert.deepEqual(mix.groups.map((g) => g.tokens), [64, 256, 512]);
  assert.ok(mix.speedup > 1 && mix.samplesPerSec > outcome.plan.samplesPerSec);
  const at = find(MODEL, 'BertModel(');
  const hover = await server.hoverText(uri, at.line, at.character + 2);
  assert.match(hover, /On the data's lengths: mean 245 tokens, \d+% padding \(batches drawn from 128-token length bins, each padded to its longest, rounded up to a multiple of 8\): \d+ samples\/s/);
});

test('a missing histogram or an unknown batching is a warning on the plan; the plan stands and the server lives', async () => {
  const uri = await server.open(join(dir, 'bert.py'), MODEL);
  const missing = await replan({ ...BASE, sequenceLengths: 'nowhere.json' }, uri);
  assert.ok(missing.outcome.feasible && missing.outcome.lengthMix === undefined);
  assert.ok(missing.outcome.diagnostics.some((d) => d.severity === 'warning' && /^wap\.sequenceLengths: cannot read 'nowhere\.json' as JSON/.test(d.message)), JSON.stringify(missing.outcome.diagnostics));
  const typo = await replan({ ...BASE, batching: 'buckets:64' }, uri);
  assert.ok(typo.outcome.diagnostics.some((d) => /^wap\.sequenceLengths: batching must be padded, longest or bins:W \(W tokens a bin\), got 'buckets:64'$/.test(d.message)));
  const back = await replan(BASE, uri);
  assert.ok(back.outcome.feasible && back.outcome.lengthMix);
});
