/**
 * Hovers on lines that several layers share: a layer class used by several
 * models shows the model the user planned by name (not the first model in the
 * file), and a line built in a loop lists all its instances.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ModelsRequest, PlanRequest } from '../../src/protocol/lsp';
import { find, ROOT, TestServer } from './harness';

const VGG = join(ROOT, 'examples/pytorch/vgg.py');
const GPT = join(ROOT, 'examples/pytorch/gpt.py');

let server: TestServer;
before(async () => {
  server = await TestServer.start({ trusted: false, settings: { cluster: 'pcie4', batchSize: 64 } });
});
after(async () => server?.stop());

test('a layer shared by vgg11…vgg19 hovers as the model planned by name, naming the others', async () => {
  const text = readFileSync(VGG, 'utf8');
  const uri = await server.open(VGG, text);
  const { models } = await server.conn.sendRequest(ModelsRequest, { uri });
  const names = models.map((m) => m.name);
  assert.ok(names.includes('vgg11') && names.includes('vgg16'), names.join(','));
  assert.notEqual(names[0], 'vgg16', 'the test needs vgg16 not to be the first model');
  const at = find(text, 'nn.Linear(4096, 4096)');
  await server.conn.sendRequest(PlanRequest, { uri, model: 'vgg16' });
  const hover = await server.hoverText(uri, at.line, at.character + 4);
  assert.match(hover, /model `vgg16`/);
  assert.match(hover, /Also built for .*`vgg11`/);
  await server.conn.sendRequest(PlanRequest, { uri, model: 'vgg11' });
  assert.match(await server.hoverText(uri, at.line, at.character + 4), /model `vgg11`/);
});

test('a line built in a loop lists its instances', async () => {
  const text = readFileSync(GPT, 'utf8');
  const uri = await server.open(GPT, text);
  const { models } = await server.conn.sendRequest(ModelsRequest, { uri });
  const at = find(text, 'self.c_fc = nn.Linear');
  const hover = await server.hoverText(uri, at.line, at.character + 14);
  const built = /\*\*Built (\d+)× here:\*\*/.exec(hover);
  assert.ok(built, hover);
  assert.ok(Number(built[1]) >= 2);
  assert.match(hover, /h\.0\.mlp\.c\\_fc/); // Markdown-escaped underscore
  assert.match(hover, new RegExp(`h\\.${Number(built[1]) - 1}\\.mlp\\.c\\\\_fc`));
  assert.ok(models.length >= 1);
});
