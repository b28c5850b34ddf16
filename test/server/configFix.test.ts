/**
 * Config quick-fixes through the real server: the Lightning Trainer(devices=8)
 * in examples/pytorch/train_lightning.py disagrees with the 4-GPU plan of
 * examples/pytorch/alexnet.py; the quick-fix's WorkspaceEdit, applied to the
 * text, changes exactly that value.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CodeActionKind, CodeActionRequest, type CodeAction, type TextEdit } from 'vscode-languageserver-protocol/node';
import { FIX_ALL_KIND } from '../../src/protocol/lsp';
import { find, ROOT, TestServer } from './harness';

const ALEXNET = join(ROOT, 'examples/pytorch/alexnet.py');
const LIGHTNING = join(ROOT, 'examples/pytorch/train_lightning.py');

function applyEdits(text: string, edits: TextEdit[]): string {
  const starts = [0];
  for (let i = 0; i < text.length; i++) if (text[i] === '\n') starts.push(i + 1);
  const offset = (p: { line: number; character: number }) => starts[p.line] + p.character;
  return [...edits]
    .sort((a, b) => offset(b.range.start) - offset(a.range.start))
    .reduce((t, e) => t.slice(0, offset(e.range.start)) + e.newText + t.slice(offset(e.range.end)), text);
}

let server: TestServer;
before(async () => {
  server = await TestServer.start({ settings: { cluster: 'pcie4', batchSize: 128 } });
});
after(async () => server?.stop());

test('Lightning Trainer(devices=8) → devices=4 through codeAction and the WorkspaceEdit', async () => {
  const modelUri = await server.open(ALEXNET);
  const lenses = await server.planned(modelUri);
  assert.match(lenses[0].command!.title, /^4 GPUs/);

  const text = readFileSync(LIGHTNING, 'utf8');
  const uri = await server.open(LIGHTNING, text);
  const devices = find(text, 'devices=8');
  const diag = await server.until('a devices diagnostic on the Trainer call', () =>
    (server.diagnostics.get(uri) ?? []).find((d) => d.range.start.line === devices.line && d.source === 'wap'),
  );
  assert.match(diag.message, /8/);

  const actions = (await server.conn.sendRequest(CodeActionRequest.type, {
    textDocument: { uri },
    range: diag.range,
    context: { diagnostics: [diag] },
  })) as CodeAction[];
  const quickfix = actions.find((a) => a.kind === CodeActionKind.QuickFix && a.edit?.changes?.[uri]?.some((e) => e.newText.includes('4')));
  assert.ok(quickfix, `quick-fixes offered: ${actions.map((a) => a.title).join(' | ')}`);
  const fixed = applyEdits(text, quickfix.edit!.changes![uri]);
  assert.equal(fixed, text.replace('devices=8,', 'devices=4,'), 'only the devices value changes, byte for byte');
  assert.ok(actions.some((a) => a.kind === FIX_ALL_KIND && a.edit), 'a "Fix all WAP config issues" source action');

  // Applying it clears that diagnostic.
  await server.change(uri, fixed);
  await server.until('the devices diagnostic to go', () => !(server.diagnostics.get(uri) ?? []).some((d) => d.range.start.line === devices.line && /devices|process/i.test(d.message)));
});

test('source.fixAll.wap alone returns only the fix-all action', async () => {
  const text = readFileSync(LIGHTNING, 'utf8');
  const uri = await server.open(join(ROOT, 'examples/pytorch/train_lightning_copy.py'), text, 'python');
  await server.until('findings on the copy', () => (server.diagnostics.get(uri) ?? []).some((d) => d.source === 'wap' && d.range.start.line === find(text, 'devices=8').line));
  const actions = (await server.conn.sendRequest(CodeActionRequest.type, {
    textDocument: { uri },
    range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } },
    context: { diagnostics: [], only: [FIX_ALL_KIND] },
  })) as CodeAction[];
  assert.equal(actions.length, 1);
  const fixed = applyEdits(text, actions[0].edit!.changes![uri]);
  assert.ok(fixed.includes('devices=4,'));
  assert.ok(fixed.includes('# one process per GPU'), 'comments survive');
});
