import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseTopologyJson } from '../../src/frontends/json';

const root = join(__dirname, '..', '..');

test('examples/keras-json/model.json cut at every 50th character: one located error, never a throw', () => {
  const text = readFileSync(join(root, 'examples/keras-json/model.json'), 'utf8');
  const lineCount = text.split('\n').length;
  for (let cut = 0; cut < text.length - 1; cut += 50) {
    const part = text.slice(0, cut);
    const r = parseTopologyJson('model.json', part);
    assert.equal(r.models.length, 0, `cut ${cut}`);
    if (part.includes('"class_name"')) {
      assert.equal(r.diagnostics.length, 1, `cut ${cut}`);
      const d = r.diagnostics[0];
      assert.equal(d.severity, 'error');
      assert.ok(d.line >= 1 && d.line <= lineCount && d.column >= 1, `cut ${cut}: ${d.line}:${d.column}`);
    } else {
      assert.deepEqual(r.diagnostics, [], `cut ${cut}`);
    }
  }
  assert.equal(parseTopologyJson('model.json', text).models.length, 1);
});
