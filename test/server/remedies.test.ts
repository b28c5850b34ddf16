/**
 * "Does not fit" comes with ways out the user can click: a batch the planner
 * says fits (written to wap.batchSize by the client) and the cluster picker.
 * The error marks the model's name line only, not the whole class body.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CodeActionRequest, type CodeAction } from 'vscode-languageserver-protocol/node';
import { ClientActionCommands, ClientCommands } from '../../src/protocol/commands';
import { PlanRequest } from '../../src/protocol/lsp';
import { ROOT, TestServer } from './harness';

const VGG = join(ROOT, 'examples/pytorch/vgg.py');

let server: TestServer;
before(async () => {
  server = await TestServer.start({ trusted: false, clientCommands: true, settings: { cluster: 'pcie4', batchSize: 1024, strategies: 'dp' } });
});
after(async () => server?.stop());

test('an infeasible model gets a one-line error with a batch that fits and a cluster picker as quick fixes', async () => {
  const uri = await server.open(VGG, readFileSync(VGG, 'utf8'));
  const { outcome } = await server.conn.sendRequest(PlanRequest, { uri, model: 'vgg16' });
  assert.equal(outcome.feasible, false);
  const diag = await server.until('the error with its ways out', () => server.diagnostics.get(uri)?.find((d) => d.code === 'plan-infeasible' && /vgg16/.test(d.message) && /Ways out/.test(d.message)), 60_000);
  assert.equal(diag.range.start.line, diag.range.end.line, 'only the model name line is marked');
  const batch = Number(/batch (\d+) fits/.exec(diag.message)?.[1]);
  assert.ok(batch >= 1 && batch < 1024, diag.message);

  const actions = (await server.conn.sendRequest(CodeActionRequest.type, { textDocument: { uri }, range: diag.range, context: { diagnostics: [diag] } })) as CodeAction[];
  const useBatch = actions.find((a) => a.command?.command === ClientActionCommands.applySetting);
  assert.ok(useBatch, JSON.stringify(actions.map((a) => a.title)));
  assert.deepEqual(useBatch.command!.arguments, ['batchSize', batch, uri]);
  assert.match(useBatch.title, new RegExp(`^Use batch ${batch} \\(fits on \\d GPUs?: [\\d,]+ samples/s\\)$`));
  assert.ok(actions.some((a) => a.command?.command === ClientCommands.selectCluster));

  // The batch offered really fits, and twice that does not (it is the largest power-of-two fraction).
  const fits = await server.conn.sendRequest(PlanRequest, { uri, model: 'vgg16', controls: { batch, objective: 'throughput', strategies: 'dp' } });
  assert.equal(fits.outcome.feasible, true);
  if (batch * 2 < 1024) {
    const twice = await server.conn.sendRequest(PlanRequest, { uri, model: 'vgg16', controls: { batch: batch * 2, objective: 'throughput', strategies: 'dp' } });
    assert.equal(twice.outcome.feasible, false);
  }
});
