/**
 * Editing through the real server: a half-typed file gets diagnostics that go
 * away once fixed, keeps showing the last good plan for unchanged layers, and
 * a file with no model gets no diagnostics at all.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DiagnosticSeverity, DidChangeConfigurationNotification } from 'vscode-languageserver-protocol/node';
import { PlanRequest } from '../../src/protocol/lsp';
import { find, ROOT, TestServer } from './harness';

const ALEXNET = join(ROOT, 'examples/pytorch/alexnet.py');

let server: TestServer;
before(async () => {
  server = await TestServer.start({ settings: { cluster: 'pcie4', batchSize: 128 } });
});
after(async () => server?.stop());

const errorsOf = (uri: string) => (server.diagnostics.get(uri) ?? []).filter((d) => d.severity === DiagnosticSeverity.Error || d.severity === DiagnosticSeverity.Warning);

test('half-typed file: diagnostics appear, unchanged layers keep their plan, and the diagnostics go once fixed', async () => {
  const good = readFileSync(ALEXNET, 'utf8');
  const uri = await server.open(join(ROOT, 'examples/pytorch/alexnet_edit.py'), good, 'python');
  await server.planned(uri);
  await server.until('diagnostics of the clean file', () => server.diagnostics.get(uri));
  assert.deepEqual(errorsOf(uri), [], 'the clean example has no errors or warnings');
  const linear = find(good, 'nn.Linear(4096, 4096)');
  const before = await server.hoverText(uri, linear.line, linear.character + 4);
  const strategy = /\*\*Strategy:\*\* ([^\n]+)/.exec(before)?.[1];
  assert.ok(strategy, before);

  // The user is typing a new layer into the classifier: the call is not closed yet.
  const broken = good.replace('nn.Linear(4096, num_classes),', 'nn.Linear(4096, num_classes),\n            nn.Linear(4096,');
  await server.change(uri, broken);
  const problems = await server.until('a diagnostic for the half-typed line', () => {
    const e = errorsOf(uri);
    return e.length > 0 ? e : undefined;
  });
  assert.ok(problems.some((d) => d.source === 'wap'));

  // The Linear above the edit is unchanged: its hover still shows the last good plan.
  const during = await server.hoverText(uri, linear.line, linear.character + 4);
  assert.ok(during.includes(`**Strategy:** ${strategy}`), during);

  await server.change(uri, good);
  await server.until('the errors to go away', () => errorsOf(uri).length === 0);
  const fixedLens = await server.planned(uri);
  assert.equal(fixedLens.length, 1);
});

test('a changed layer shows its analysis, not a stale strategy, until re-planned', async () => {
  const good = readFileSync(ALEXNET, 'utf8');
  const uri = await server.open(join(ROOT, 'examples/pytorch/alexnet_resize.py'), good, 'python');
  await server.planned(uri);
  const edited = good.replace('nn.Linear(4096, 4096)', 'nn.Linear(4096, 2048)').replace('nn.Linear(4096, num_classes)', 'nn.Linear(2048, num_classes)');
  await server.change(uri, edited);
  const at = find(edited, 'nn.Linear(4096, 2048)');
  // Immediately after the edit (before any re-plan) the hover is about the new layer.
  const hover = await server.hoverText(uri, at.line, at.character + 4);
  assert.doesNotMatch(hover, /split 4096 outputs/, 'the old plan of the 4096-wide layer must not be shown for the resized one');
  if (!hover.includes('Strategy')) assert.match(hover, /output \[2048\][\s\S]*re-planning/);
  // Then the background plan lands and the new layer has a strategy with its new size.
  await server.until('the re-plan of the resized layer', async () => /split 2048 outputs|Strategy/.test(await server.hoverText(uri, at.line, at.character + 4)));
  assert.match(await server.hoverText(uri, at.line, at.character + 4), /params 8\.39 M/); // 4096×2048 + 2048
});

test('a wap/plan that was waiting for settings while a layer was edited does not lend its strategy to the edited layer', async () => {
  const good = readFileSync(ALEXNET, 'utf8');
  const uri = await server.open(join(ROOT, 'examples/pytorch/alexnet_race.py'), good, 'python');
  await server.planned(uri);
  // The resize comes with a syntax error further down, so no background re-plan can paper over a wrong record.
  const edited = `${good.replace('nn.Linear(4096, 4096)', 'nn.Linear(4096, 2048)').replace('nn.Linear(4096, num_classes)', 'nn.Linear(2048, num_classes)')}\nbroken = (\n`;
  const at = find(edited, 'nn.Linear(4096, 2048)');
  // A settings change empties the cache, so the plan below waits for a workspace/configuration round trip;
  // the edit and a hover (which analyses the edit at once) reach the server before the client's answer.
  void server.conn.sendNotification(DidChangeConfigurationNotification.type, { settings: null });
  const planned = server.conn.sendRequest(PlanRequest, { uri });
  void server.change(uri, edited);
  const duringHover = server.hoverText(uri, at.line, at.character + 4);
  const result = await planned;
  await duringHover;
  assert.equal(result.outcome.feasible, true);
  // That plan is of the 4096-wide layer: the resized one must show its own analysis, not that plan.
  const hover = await server.hoverText(uri, at.line, at.character + 4);
  assert.doesNotMatch(hover, /\*\*Strategy:\*\*/, hover);
  assert.match(hover, /params 8\.39 M/, hover); // 4096×2048 + 2048
});

test('a Python file with no model gets no diagnostics and no CodeLens', async () => {
  const uri = await server.open(join(ROOT, 'examples/pytorch/util_nomodel.py'), 'import os\n\ndef helper(x):\n    return os.path.join(x, "a")\n', 'python');
  const diags = await server.until('diagnostics for the plain file', () => server.diagnostics.get(uri));
  assert.deepEqual(diags, []);
  assert.deepEqual(await server.codeLenses(uri), []);
  assert.equal(await server.hoverText(uri, 2, 5), '');
});
