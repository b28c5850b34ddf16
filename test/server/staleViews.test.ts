/**
 * The workbench must never show a plan of another cluster than the one the
 * user chose: the status bar names the cluster, and a settings change tells
 * open plan views to re-plan (wap/plansStale), after which a plan uses the new
 * cluster.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { DidChangeConfigurationNotification } from 'vscode-languageserver-protocol/node';
import { PlanRequest, PlansStaleNotification, type PlansStaleParams } from '../../src/protocol/lsp';
import { ROOT, TestServer } from './harness';

const CNN = join(ROOT, 'examples/tfjs/cnn.ts');

let server: TestServer;
const stale: PlansStaleParams[] = [];
before(async () => {
  server = await TestServer.start({ trusted: false, settings: { cluster: 'pcie4', batchSize: 64 } });
  server.conn.onNotification(PlansStaleNotification, (p) => stale.push(p));
});
after(async () => server?.stop());

test('the status bar text names the configured cluster', async () => {
  const status = await server.until('a status naming the cluster', () => server.statuses.find((s) => s.clusterName));
  assert.match(status.text, /^WAP: 4x TITAN Xp/);
  assert.match(status.tooltip, /wap\.cluster = pcie4/);
});

test('a settings change sends wap/plansStale, and the next plan and status use the new cluster', async () => {
  const uri = await server.open(CNN);
  const before = await server.conn.sendRequest(PlanRequest, { uri });
  assert.equal(before.outcome.cluster.source, 'preset:pcie4');
  server.settings = { cluster: 'h100x8', batchSize: 64 };
  await server.conn.sendNotification(DidChangeConfigurationNotification.type, { settings: null });
  const note = await server.until('wap/plansStale', () => stale.at(-1));
  assert.match(note.reason, /settings/);
  const after = await server.conn.sendRequest(PlanRequest, { uri });
  assert.equal(after.outcome.cluster.source, 'preset:h100x8');
  const status = await server.until('a status naming the new cluster', () => server.statuses.find((s) => /H100/.test(s.text)));
  assert.match(status.text, /^WAP: .*H100/);
});
