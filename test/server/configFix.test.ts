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
import { pathToFileURL } from 'node:url';
import { CodeActionKind, CodeActionRequest, HoverRequest, type CodeAction, type Hover, type TextEdit } from 'vscode-languageserver-protocol/node';
import { ApplyPlanToConfigsRequest, FIX_ALL_KIND } from '../../src/protocol/lsp';
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
  server = await TestServer.start({
    settings: { cluster: 'pcie4', batchSize: 128 },
    // A second AlexNet limited to 2 GPUs, so two models in one folder have different plans.
    settingsFor: (uri) => (uri?.endsWith('alexnet_two.py') ? { cluster: 'pcie4', batchSize: 128, maxGpus: 2 } : undefined),
  });
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

test('wap/applyPlanToConfigs fixes the open configs against the plan of the model it names', async () => {
  const copy = join(ROOT, 'examples/pytorch/train_lightning_copy.py');
  const copyUri = pathToFileURL(copy).href;
  const alexnetUri = pathToFileURL(ALEXNET).href;
  assert.match((await server.planned(alexnetUri))[0].command!.title, /^4 GPUs/);
  // Planned last, in the same folder: what the configs' own diagnostics now compare against.
  const twoUri = await server.open(join(ROOT, 'examples/pytorch/alexnet_two.py'), readFileSync(ALEXNET, 'utf8'), 'python');
  assert.match((await server.planned(twoUri))[0].command!.title, /^2 GPUs/);

  const text = readFileSync(LIGHTNING, 'utf8');
  for (const [uri, gpus] of [[alexnetUri, 4], [twoUri, 2]] as const) {
    const result = await server.conn.sendRequest(ApplyPlanToConfigsRequest, { uri });
    assert.ok(result.changed.includes(copyUri), `the Trainer(devices=8) copy changes for ${uri}: ${result.changed.join(', ')}`);
    const fixed = applyEdits(text, result.edit.changes![copyUri]);
    assert.ok(fixed.includes(`devices=${gpus},`), `devices follow the ${gpus}-GPU plan of the named model`);
  }
});

test('config re-checks are debounced while typing', async () => {
  const path = join(ROOT, 'examples/configs/accelerate_typing.yaml');
  const text = readFileSync(join(ROOT, 'examples/configs/accelerate_fsdp.yaml'), 'utf8');
  const uri = await server.open(path, text, 'yaml');
  await server.until('the first check', () => server.publishCount.get(uri));
  const start = server.publishCount.get(uri)!;
  const sentAt: number[] = [];
  for (let i = 1; i <= 8; i++) {
    sentAt.push(performance.now());
    await server.change(uri, `${text}\n# typing ${'x'.repeat(i)}\n`);
    await new Promise((r) => setTimeout(r, 15));
  }
  await server.until('a check after the burst', () => server.publishCount.get(uri)! > start);
  await new Promise((r) => setTimeout(r, 400));
  const checks = server.publishCount.get(uri)! - start;
  // A loaded machine can stretch a 15 ms pause past the server's 150 ms window: each such pause may start a burst.
  const bursts = 1 + sentAt.slice(1).filter((t, i) => t - sentAt[i]! >= 150).length;
  // One debounced check per burst, plus at most one re-check when the plan it asked for lands
  // (a plan of the config's model re-checks every config); without debouncing 8 edits give 8 or more.
  assert.ok(checks <= bursts + 2, `8 quick edits in ${bursts} burst(s) gave ${checks} re-checks`);
});

test('a config shows "your config vs best plan" as a diagnostic and as its hover; its model is the one the script imports', async () => {
  const uri = pathToFileURL(LIGHTNING).href;
  const diag = await server.until('the your-config-vs-best diagnostic', () => (server.diagnostics.get(uri) ?? []).find((d) => d.code === 'config-vs-best'));
  assert.match(diag.message, /^your config: .* · best plan: .* \(model: AlexNet in alexnet\.py, imported by train_lightning\.py, the Lightning script train_lightning\.py\)$/);
  const hover = (await server.conn.sendRequest(HoverRequest.type, { textDocument: { uri }, position: { line: 0, character: 3 } })) as Hover | null;
  assert.match(String((hover?.contents as { value: string }).value), /^\*\*WAP\*\* · your config: .* · best plan: /);
});

test('a config no launch script names and no wap.model points to gets an info saying how to choose, never the model planned last', async () => {
  const path = join(ROOT, 'examples/configs/unnamed_accelerate.yaml');
  const uri = await server.open(path, 'distributed_type: MULTI_GPU\nnum_processes: 8\n', 'yaml');
  const diag = await server.until('the no-model diagnostic', () => (server.diagnostics.get(uri) ?? []).find((d) => d.code === 'no-model'));
  assert.match(diag.message, /does not know which model this config trains.*"wap\.model"/);
  assert.ok(!(server.diagnostics.get(uri) ?? []).some((d) => d.code === 'gpu-count'), 'no comparison with a guessed model');
});
