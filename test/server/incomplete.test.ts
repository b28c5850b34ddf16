/**
 * The real server tells an incomplete model apart (issue 11 item 4): the
 * CodeLens title, the model hover and a layer hover say "incomplete: 1 layer
 * opaque" for a model whose block comes from an import WAP cannot read; a
 * Hugging Face model built from a config literal hovers with its transformers
 * module names.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { find, TestServer } from './harness';

// A model with one layer from an import WAP cannot resolve (a real file, shared with the other incomplete-model test).
const PARTIAL = readFileSync(join(__dirname, '..', 'fixtures', 'incomplete', 'partial.py'), 'utf8');

let server: TestServer;
let dir: string;
before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'wap-incomplete-'));
  server = await TestServer.start({ trusted: false, settings: { cluster: 'pcie4', batchSize: 32 } });
});
after(async () => {
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

test('an opaque layer marks the model incomplete in the CodeLens and the hovers', async () => {
  const file = join(dir, 'partial.py');
  writeFileSync(file, PARTIAL);
  const uri = await server.open(file, PARTIAL);
  const lenses = await server.planned(uri);
  assert.match(lenses[0].command!.title, /⚠ incomplete: 1 layer opaque, 1 layer without a shape$/);
  const cls = find(PARTIAL, 'class Net');
  const modelHover = await server.hoverText(uri, cls.line, cls.character + 7);
  assert.match(modelHover, /\*\*incomplete: 1 layer opaque, 1 layer without a shape\*\*/);
  assert.match(modelHover, /mystery\.FancyBlock/);
  const fc1 = find(PARTIAL, 'nn.Linear(16');
  const layerHover = await server.hoverText(uri, fc1.line, fc1.character + 4);
  assert.match(layerHover, /\*\*fc1\*\*/);
  assert.match(layerHover, /incomplete: 1 layer opaque/);
});

test("a Hugging Face model built from LlamaConfig(...) hovers with transformers' module names and no incomplete mark", async () => {
  const text = `from transformers import AutoModelForCausalLM, LlamaConfig, LlamaForCausalLM\nsmall = LlamaForCausalLM(LlamaConfig(num_hidden_layers=2, hidden_size=256, intermediate_size=512, num_attention_heads=4, vocab_size=1000, max_position_embeddings=128))\n`;
  const uri = await server.open(join(dir, 'hover_llama.py'), text);
  const at = find(text, 'LlamaForCausalLM(LlamaConfig');
  const hover = await server.until('a hover on the model line', async () => {
    const h = await server.hoverText(uri, at.line, at.character + 3);
    return h.includes('model `small`') ? h : undefined;
  });
  assert.match(hover, /\*\*model\.embed\\_tokens\*\* · `Embedding`/);
  assert.doesNotMatch(hover, /incomplete/);
});
