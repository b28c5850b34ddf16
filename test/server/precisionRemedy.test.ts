/**
 * The precision way out of "does not fit": with `wap.precision` pinned to
 * fp32, a 0.9-billion-parameter GPT does not fit one 1.5 GB GPU that has bf16
 * tensor cores, even with everything the planner tries (its parameters
 * offloaded to host memory included: fp32 activations and fetched layers
 * alone overflow it); in bf16 it does. The server offers "Plan in bf16 instead of fp32 (fits…)"
 * as a quick fix that writes the setting, and the test then does what the
 * client's wap.applySetting does (write the setting, the client announces the
 * change) and checks that the new plan really runs in bf16 and fits.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CodeActionRequest, DidChangeConfigurationNotification, type CodeAction } from 'vscode-languageserver-protocol/node';
import { ClientActionCommands } from '../../src/protocol/commands';
import { PlanRequest } from '../../src/protocol/lsp';
import { ROOT, TestServer } from './harness';

// Beside the nanoGPT fixture so `from model import GPT` resolves; the text is sent, never written.
const TRAIN = join(ROOT, 'test/fixtures/nanogpt/precision_train.py');
const TEXT = 'from model import GPT, GPTConfig\n\nmodel = GPT(GPTConfig(n_layer=16, n_head=16, n_embd=2048))\n';

// One 1.5 GB GPU with bf16 tensor cores: small enough that even with every parameter offloaded fp32 does not fit.
const CLUSTER = {
  name: '1x 8 GB bf16 GPU',
  nodes: 1,
  gpusPerNode: 1,
  gpu: { name: 'Small bf16 GPU', sms: 40, tflops: 20, peakTflops: { fp32: 20, bf16: 160, fp16: 160 }, memoryGB: 1.5, memoryBandwidthGBs: 900, powerW: 300, hostBandwidthGBs: 25 },
  intraNode: { bandwidthGBs: 100, latencyUs: 5, name: 'nvlink' },
  interNode: { bandwidthGBs: 25, latencyUs: 5, name: 'ib' },
};

let server: TestServer;
let clusterFile: string;
before(async () => {
  clusterFile = join(mkdtempSync(join(tmpdir(), 'wap-precision-')), 'small-bf16.json');
  writeFileSync(clusterFile, JSON.stringify(CLUSTER));
  server = await TestServer.start({ clientCommands: true, settings: { cluster: clusterFile, batchSize: 8, optimizer: 'adam', precision: 'fp32' } });
});
after(async () => server?.stop());

test('a pinned fp32 that does not fit: the bf16 quick fix is offered, and taking it re-plans in bf16, which fits', async () => {
  const uri = await server.open(TRAIN, TEXT, 'python');
  const first = await server.conn.sendRequest(PlanRequest, { uri });
  assert.equal(first.outcome.feasible, false, 'fp32 does not fit');
  const diag = await server.until('the error naming the precision way out', () => server.diagnostics.get(uri)?.find((d) => d.code === 'plan-infeasible' && /plan in bf16 instead of fp32 fits/.test(d.message)), 60_000);

  const actions = (await server.conn.sendRequest(CodeActionRequest.type, { textDocument: { uri }, range: diag.range, context: { diagnostics: [diag] } })) as CodeAction[];
  const remedy = actions.find((a) => a.command?.command === ClientActionCommands.applySetting);
  assert.ok(remedy, `offered: ${JSON.stringify(actions.map((a) => a.title))}`);
  assert.match(remedy.title, /^Plan in bf16 instead of fp32 \(fits on 1 GPU: [\d,]+ samples\/s\)$/);
  assert.equal(remedy.isPreferred, true, 'the precision remedy comes before "choose another cluster"');
  assert.deepEqual(remedy.command!.arguments, ['precision', 'auto', uri]);

  // What wap.applySetting does: write the setting; VS Code then announces the configuration change.
  const [key, value] = remedy.command!.arguments as [string, unknown];
  server.settings = { ...server.settings, [key]: value };
  await server.conn.sendNotification(DidChangeConfigurationNotification.type, { settings: {} });
  await server.until('the error to go', () => !server.diagnostics.get(uri)?.some((d) => d.code === 'plan-infeasible') && true, 60_000);

  const { outcome } = await server.conn.sendRequest(PlanRequest, { uri, reuse: true });
  assert.ok(outcome.feasible, 'the re-plan fits');
  assert.equal(outcome.plan.setup?.precision, 'bf16', 'the plan runs in the precision the quick fix named');
  assert.equal(outcome.plan.gpus, 1);
  const promised = Number(/: ([\d,]+) samples\/s/.exec(remedy.title)![1].replace(/,/g, ''));
  assert.equal(Math.round(outcome.plan.samplesPerSec), promised, 'the title predicted this very plan');
});
