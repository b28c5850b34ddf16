import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseScriptSource } from '../../src/frontends/typescript';
import { analyzeModel } from '../../src/core/analyze';
import type { FrontendResult } from '../../src/core/ir';

const root = join(__dirname, '..', '..');

function checkResult(r: FrontendResult, where: string): void {
  assert.equal(r.framework, 'tfjs');
  for (const d of [...r.diagnostics, ...r.models.flatMap((m) => m.diagnostics)]) {
    assert.ok(d.line >= 1 && d.column >= 1, `${where}: diagnostic at ${d.line}:${d.column}`);
    assert.notEqual(d.code, 'internal-error', `${where}: ${d.message}`);
  }
  for (const m of r.models) assert.ok(analyzeModel(m, {}).layers.length > 0, where);
}

for (const example of ['examples/tfjs/cnn.ts', 'examples/tfjs/functional.ts']) {
  test(`${example} cut at every 50th character: no throw, a result each time`, () => {
    const text = readFileSync(join(root, example), 'utf8');
    let withModels = 0;
    let withErrors = 0;
    const cuts = [...Array.from({ length: Math.ceil(text.length / 50) }, (_, i) => i * 50), text.length];
    for (const cut of cuts) {
      const r = parseScriptSource(example, text.slice(0, cut));
      checkResult(r, `${example}@${cut}`);
      if (r.models.length) withModels++;
      if (r.diagnostics.some((d) => d.severity === 'error')) withErrors++;
    }
    // Most cuts end mid-statement: the parser reports them, and once the model code is there a partial model comes back.
    assert.ok(withErrors > 0);
    assert.ok(withModels > 0);
  });
}
