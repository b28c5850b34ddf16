/**
 * "Does not fit" marks the model's name line only (not the whole class body)
 * and says what WAP already tried; the way out the user can click is the
 * cluster picker, offered as a quick fix rather than as CLI advice.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveCluster } from '../../src/planner/index';
import { CodeActionRequest, type CodeAction } from 'vscode-languageserver-protocol/node';
import { ClientActionCommands, ClientCommands } from '../../src/protocol/commands';
import { PlanRequest } from '../../src/protocol/lsp';
import { ROOT, TestServer } from './harness';

// A 20-billion-parameter GPT (the nanoGPT fixture, 96 layers of width 4096) cannot train on four 12 GB GPUs in a
// workstation with 64 GB of RAM: its 16 bytes of state per parameter overflow the host memory offload would use.
const HUGE = join(ROOT, 'test/fixtures/nanogpt/huge_train.py');
const { index: _i, node: _n, ...TITAN_XP } = resolveCluster('pcie4').gpus[0]!;
const WORKSTATION = { name: '4x TITAN Xp, 64 GB RAM', nodes: 1, gpusPerNode: 4, gpu: { ...TITAN_XP, hostMemoryGB: 16 }, intraNode: { bandwidthGBs: 10, latencyUs: 10, name: 'pcie', p2p: false }, interNode: { bandwidthGBs: 12.5, latencyUs: 5 } };
const TEXT = 'from model import GPT, GPTConfig\n\nmodel = GPT(GPTConfig(n_layer=96, n_head=32, n_embd=4096))\n';

let server: TestServer;
before(async () => {
  const cluster = join(mkdtempSync(join(tmpdir(), 'wap-remedies-')), 'workstation.json');
  writeFileSync(cluster, JSON.stringify(WORKSTATION));
  server = await TestServer.start({ trusted: false, clientCommands: true, settings: { cluster, batchSize: 64, optimizer: 'adam' } });
});
after(async () => server?.stop());

test('an infeasible model gets a one-line error saying what was tried, and the cluster picker as a quick fix', async () => {
  const uri = await server.open(HUGE, TEXT, 'python');
  const { outcome } = await server.conn.sendRequest(PlanRequest, { uri });
  assert.equal(outcome.feasible, false);
  const diag = await server.until('the error with its ways out', () => server.diagnostics.get(uri)?.find((d) => d.code === 'plan-infeasible' && /choose another cluster/.test(d.message)), 60_000);
  assert.equal(diag.range.start.line, diag.range.end.line, 'only the model line is marked');
  assert.match(diag.message, /ZeRO-3/);
  const actions = (await server.conn.sendRequest(CodeActionRequest.type, { textDocument: { uri }, range: diag.range, context: { diagnostics: [diag] } })) as CodeAction[];
  assert.ok(actions.some((a) => a.command?.command === ClientCommands.selectCluster && /Choose another cluster/.test(a.title)), JSON.stringify(actions.map((a) => a.title)));
  // No precision was fixed by a setting, so there is no precision remedy to offer.
  assert.ok(!actions.some((a) => a.command?.command === ClientActionCommands.applySetting));
});
