/**
 * Long jobs stop when cancelled (a 1000-layer model on 64 GPUs plans for
 * seconds; a profile runs trials in a worker), and a failing handler leaves the
 * server answering.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { CancellationTokenSource, DidCloseTextDocumentNotification, ExecuteCommandRequest, HoverRequest, LSPErrorCodes, WorkDoneProgress } from 'vscode-languageserver-protocol/node';
import { ModelsRequest, PlanRequest, ProfileRequest, ServerCommands } from '../../src/protocol/lsp';
import { ROOT, TestServer } from './harness';

const dir = mkdtempSync(join(tmpdir(), 'wap-server-cancel-'));
const deep = join(dir, 'deep.py');
const cluster = join(dir, 'c64.json');

function deepModel(pairs: number): string {
  const body = Array.from({ length: pairs }, () => '            nn.Linear(1024, 1024),\n            nn.ReLU(),').join('\n');
  return `import torch.nn as nn\n\n\nclass Deep(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.layers = nn.Sequential(\n${body}\n        )\n\n    def forward(self, x):\n        return self.layers(x)\n`;
}

let server: TestServer;
before(async () => {
  writeFileSync(deep, deepModel(500));
  const gpu = { name: 'A100', tflops: 19.5, memoryGB: 80, memoryBandwidthGBs: 2039, powerW: 400, idlePowerW: 50 };
  writeFileSync(cluster, JSON.stringify({ name: '8x8 A100', nodes: 8, gpusPerNode: 8, gpu, intraNode: { bandwidthGBs: 300, latencyUs: 3, name: 'nvlink' }, interNode: { bandwidthGBs: 25, latencyUs: 5, name: 'ib' } }));
  server = await TestServer.start({
    trusted: true,
    settings: { cluster, batchSize: 128, strategies: 'hybrid' },
    // The open-then-close test plans with pipelines too: minutes of work unless cancelled.
    settingsFor: (uri) =>
      uri?.endsWith('deep_open.py') || uri?.endsWith('deep.py') ? { cluster, batchSize: 128, strategies: 'all' } : uri?.endsWith('cnn.ts') ? { cluster: 'pcie4', batchSize: 8 } : undefined,
    cacheDir: join(dir, 'profile-cache'),
  });
});
after(async () => server?.stop());

async function rejection(p: Promise<unknown>): Promise<{ code?: number; message: string }> {
  try {
    await p;
  } catch (err) {
    return err as { code?: number; message: string };
  }
  assert.fail('expected the request to be cancelled');
}

test('cancelling wap/plan on a 1000-layer model over 64 GPUs stops it', async () => {
  const uri = pathToFileURL(deep).href;
  // Not opened: the server reads it from disk and plans it only on request, so nothing else competes.
  const source = new CancellationTokenSource();
  const started = Date.now();
  const workDoneToken = 'plan-cancel-test';
  const reports: string[] = [];
  server.conn.onProgress(WorkDoneProgress.type, workDoneToken, (v) => {
    if (v.kind === 'report' && v.message) reports.push(v.message);
  });
  const pending = server.conn.sendRequest(PlanRequest, { uri, workDoneToken }, source.token);
  // With pipelines on 64 GPUs this plan takes many seconds uncancelled. Cancel once the planner reports
  // its first GPU count (reading the 1000-layer file is over): the server hands its token to the planner,
  // which checks it every ~20 ms of search, so the rejection follows the cancel closely.
  await server.until('the planner to report progress', () => reports.some((r) => /configurations/.test(r)), 60_000);
  const cancelledAt = Date.now();
  source.cancel();
  const err = await rejection(pending);
  const latency = Date.now() - cancelledAt;
  assert.equal(err.code, LSPErrorCodes.RequestCancelled, err.message);
  assert.ok(cancelledAt > 0, 'rejected before the cancel was sent');
  // A server that kept the token to itself would answer only when the plan ends (seconds later).
  assert.ok(latency < 1500, `the cancel took ${latency} ms to land (started ${cancelledAt - started} ms in)`);
  // The server is free again: a hover right after answers with the layer under the cursor.
  const hover = await server.conn.sendRequest(HoverRequest.type, { textDocument: { uri }, position: { line: 7, character: 14 } });
  assert.ok(hover, 'a hover on a layer answers');
  const text = typeof hover.contents === 'object' && 'value' in hover.contents ? hover.contents.value : JSON.stringify(hover.contents);
  assert.match(text, /\*\*layers\.0\*\*/);
});

test('closing a document cancels its background plan', async () => {
  const uri = await server.open(join(dir, 'deep_open.py'), deepModel(500), 'python');
  await server.until('the background plan to start', () => server.statuses.at(-1)?.busy === true, 30_000);
  await server.conn.sendNotification(DidCloseTextDocumentNotification.type, { textDocument: { uri } });
  // With pipelines on 64 GPUs this plan runs for minutes; closing must end it within a few planner steps.
  await server.until('the server to go idle', () => server.statuses.at(-1)?.busy === false, 60_000);
  const { models } = await server.conn.sendRequest(ModelsRequest, { uri: pathToFileURL(join(ROOT, 'examples/tfjs/cnn.ts')).href });
  assert.deepEqual(models, []); // not open → nothing listed, answered at once
});

test('cancelling wap/profile stops the trials', async () => {
  const uri = pathToFileURL(join(ROOT, 'examples/tfjs/cnn.ts')).href;
  const source = new CancellationTokenSource();
  const workDoneToken = 'profile-cancel-test';
  const reports: string[] = [];
  server.conn.onProgress(WorkDoneProgress.type, workDoneToken, (v) => {
    if (v.kind === 'report' && v.message) reports.push(v.message);
  });
  const pending = server.conn.sendRequest(ProfileRequest, { uri, backend: 'wasm', workDoneToken }, source.token);
  // Cancel once the first layer has been measured: the trials really run, and then must stop.
  await server.until('the first measured layer', () => reports.length > 0, 60_000);
  source.cancel();
  const started = Date.now();
  const err = await rejection(pending);
  assert.equal(err.code, LSPErrorCodes.RequestCancelled, err.message);
  const elapsed = Date.now() - started;
  assert.ok(elapsed < 20_000, `profile stopped ${elapsed} ms after the cancel`);
  const total = Number(/\/(\d+)/.exec(reports[0])?.[1] ?? 0);
  assert.ok(total > 10, `the CNN has more than 10 layers to measure: ${reports[0]}`);
  assert.ok(reports.length < total, `stopped before measuring every layer (${reports.length}/${total})`);
});

test('a handler failure is answered as an error and the server keeps serving', async () => {
  // Malformed params make the hover handler throw inside; it must answer null, not die.
  const bad = await server.conn.sendRequest(HoverRequest.type, { textDocument: undefined as never, position: undefined as never });
  assert.equal(bad, null);
  const err = await rejection(server.conn.sendRequest(ExecuteCommandRequest.type, { command: ServerCommands.parallelizeModel, arguments: [] }));
  assert.match(err.message, /needs a document uri/);
  const missing = await rejection(server.conn.sendRequest(PlanRequest, { uri: pathToFileURL(join(dir, 'nope.py')).href }));
  assert.match(missing.message, /neither open nor readable/);
  // Still alive and useful.
  const ok = await server.conn.sendRequest(PlanRequest, { uri: pathToFileURL(join(ROOT, 'examples/tfjs/cnn.ts')).href });
  assert.equal(ok.outcome.feasible, true);
  assert.equal(server.child.exitCode, null);
  const status = await server.until('an error in the status', () => server.statuses.find((s) => s.error));
  assert.match(status.error!, /hover/);
});


test('a command failing before planning begins still ends the progress it created', async () => {
  const uri = pathToFileURL(join(ROOT, 'examples/tfjs/cnn.ts')).href;
  const before = new Set(server.progress.keys());
  const err = await rejection(server.conn.sendRequest(ExecuteCommandRequest.type, { command: ServerCommands.parallelizeModel, arguments: [uri, 'NoSuchModel'] }));
  assert.match(err.message, /no model 'NoSuchModel'/);
  const created = [...server.progress.keys()].filter((t) => !before.has(t));
  assert.equal(created.length, 1, 'the command created one progress');
  const kinds = await server.until('the progress to end', () => (server.progress.get(created[0])!.includes('end') ? server.progress.get(created[0]) : undefined), 5_000);
  assert.equal(kinds.filter((k) => k === 'end').length, 1, `ended exactly once: ${kinds.join(',')}`);
});
