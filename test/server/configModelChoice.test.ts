/**
 * "Which model does this config train?", last step: a config no launch script
 * names, with `wap.model` unset, gets a quick fix that runs the client's
 * quick pick; the answer arrives as `wap/setConfigModels` and the config is
 * then checked against that model, its diagnostics naming the file and how to
 * change it. Real server over stdio, as the VS Code extension talks to it.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { CodeActionRequest, DiagnosticSeverity, type CodeAction, type Diagnostic } from 'vscode-languageserver-protocol/node';
import { ClientActionCommands } from '../../src/protocol/commands';
import { SetConfigModelsNotification } from '../../src/protocol/lsp';
import { ROOT, TestServer } from './harness';

const CONFIG = join(ROOT, 'examples/configs/chosen_accelerate.yaml');
const ALEXNET = pathToFileURL(join(ROOT, 'examples/pytorch/alexnet.py')).href;
const TEXT = 'distributed_type: MULTI_GPU\nnum_processes: 8\nmixed_precision: "no"\n';

let server: TestServer;
before(async () => {
  server = await TestServer.start({ clientCommands: true, settings: { cluster: 'pcie4', batchSize: 128 } });
});
after(async () => server?.stop());

async function actionsOn(uri: string, diag: Diagnostic): Promise<CodeAction[]> {
  return (await server.conn.sendRequest(CodeActionRequest.type, { textDocument: { uri }, range: diag.range, context: { diagnostics: [diag] } })) as CodeAction[];
}

test('no launch script and no wap.model: the info offers the quick pick as a quick fix; the choice is then used, named, and changeable', async () => {
  const uri = await server.open(CONFIG, TEXT, 'yaml');
  const missing = await server.until('the no-model diagnostic', () => server.diagnostics.get(uri)?.find((d) => d.code === 'no-model'));
  assert.match(missing.message, /Choose the model this config trains/);
  const choose = (await actionsOn(uri, missing)).find((a) => a.command?.command === ClientActionCommands.chooseConfigModel);
  assert.ok(choose, 'a quick fix runs the client quick pick');
  assert.equal(choose.title, 'Choose the model this config trains…');
  assert.deepEqual(choose.command!.arguments, [uri]);

  // The client remembered the pick and sends every choice.
  await server.conn.sendNotification(SetConfigModelsNotification, { models: { [uri]: ALEXNET } });
  const named = await server.until('the chosen model, named', () => server.diagnostics.get(uri)?.find((d) => d.code === 'config-model'), 60_000);
  assert.equal(named.severity, DiagnosticSeverity.Hint, 'a hint: no Problems entry for a choice the user made');
  assert.match(named.message, /alexnet\.py, chosen for this config; quick fix "Change the model this config is checked against…"/);
  assert.ok(!server.diagnostics.get(uri)!.some((d) => d.code === 'no-model'));
  // Findings against the plan say which model they compare with.
  const finding = await server.until('a finding against the chosen plan', () => server.diagnostics.get(uri)?.find((d) => /\(plan: alexnet\.py, chosen/.test(d.message)), 60_000);
  const change = (await actionsOn(uri, finding)).find((a) => a.title === 'Change the model this config is checked against…');
  assert.equal(change?.command?.command, ClientActionCommands.chooseConfigModel);

  // "Forget the choice" sends the map without this config: back to asking.
  await server.conn.sendNotification(SetConfigModelsNotification, { models: {} });
  await server.until('the no-model diagnostic again', () => server.diagnostics.get(uri)?.find((d) => d.code === 'no-model'));
});

test('wap.model comes before a per-config choice, and its quick fix opens that setting', async () => {
  const uri = await server.open(join(ROOT, 'examples/configs/setting_accelerate.yaml'), TEXT, 'yaml');
  await server.until('no model yet', () => server.diagnostics.get(uri)?.find((d) => d.code === 'no-model'));
  server.settings = { cluster: 'pcie4', batchSize: 128, model: 'examples/pytorch/vgg.py' };
  await server.conn.sendNotification(SetConfigModelsNotification, { models: { [uri]: ALEXNET } });
  await server.conn.sendNotification('workspace/didChangeConfiguration', { settings: {} });
  const finding = await server.until('a finding against the wap.model plan', () => server.diagnostics.get(uri)?.find((d) => /\(plan: vgg\.py from the wap\.model setting\)/.test(d.message)), 90_000);
  const open = (await actionsOn(uri, finding)).find((a) => a.title === 'Change the wap.model setting…');
  assert.deepEqual(open?.command?.arguments, ['wap.model']);
  assert.ok(!server.diagnostics.get(uri)!.some((d) => d.code === 'config-model'), 'the per-config choice is not used while wap.model is set');
});
