/**
 * JSON/JSONC configs (DeepSpeed reads hjson: comments and trailing commas are
 * legal, duplicate keys are not): errors with their place, and edits that
 * change only the values they set, singly or several at once.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { applyTextEdits } from '../../src/configs/edits';
import { parseJsonConfig, rangeOf, setJsonValue, setJsonValues, valueAt } from '../../src/configs/jsonDoc';

test('comments and trailing commas parse; errors, non-objects and duplicates (at any depth) are reported', () => {
  const text = '{\n  // micro-batch\n  "train_micro_batch_size_per_gpu": 4,\n  "zero_optimization": {"stage": 2,},\n}\n';
  const root = parseJsonConfig(text);
  const stage = valueAt(root, ['zero_optimization', 'stage'])!;
  assert.equal(stage.value, 2);
  assert.deepEqual(rangeOf(stage), { start: text.indexOf('2,}'), end: text.indexOf('2,}') + 1 });
  assert.throws(() => parseJsonConfig('[1, 2]'), /the config must be an object/);
  assert.throws(() => parseJsonConfig('{"a": 1, "a": 2}'), /duplicate key "a"/);
  assert.throws(() => parseJsonConfig('{"o": {"b": {"c": 1, "c": 1}}}'), /duplicate key "c"/);
  assert.doesNotThrow(() => parseJsonConfig('{"o": {"c": 1}, "p": {"c": 1}}'));
  try {
    parseJsonConfig('{"a": 1 "b": 2}');
    assert.fail('no error');
  } catch (e) {
    assert.match((e as Error).message, /^JSON: CommaExpected at offset 8$/);
    assert.deepEqual((e as { range: unknown }).range, { start: 8, end: 11 });
  }
});

test('one value set in place; several at once stay separate edits unless they touch', () => {
  const text = '{\n  "a": 1, // keep\n  "b": {"c": 2}\n}\n';
  assert.equal(applyTextEdits(text, setJsonValue(text, ['a'], 8)), text.replace('"a": 1', '"a": 8'));
  const both = setJsonValues(text, [[['a'], 8], [['b', 'c'], 9]]);
  assert.equal(both.length, 2);
  assert.equal(applyTextEdits(text, both), text.replace('"a": 1', '"a": 8').replace('"c": 2', '"c": 9'));
  // Two insertions into one object would clash: they become one edit covering both, every other byte kept.
  const obj = '{\n  "x": 1 // keep\n}\n';
  const inserted = setJsonValues(obj, [[['p'], 1], [['q'], 2]]);
  assert.equal(inserted.length, 1);
  const out = applyTextEdits(obj, inserted);
  const parsed = parseJsonConfig(out);
  assert.deepEqual([valueAt(parsed, ['x'])?.value, valueAt(parsed, ['p'])?.value, valueAt(parsed, ['q'])?.value], [1, 1, 2]);
  assert.ok(out.includes('// keep'), out);
  // The single edit spans only what changed: it starts after the common prefix.
  assert.ok(inserted[0]!.start >= obj.indexOf('1') + 1, JSON.stringify(inserted));
  assert.deepEqual(setJsonValues(obj, [[['x'], 1]]), [{ start: obj.indexOf('1'), end: obj.indexOf('1') + 1, newText: '1' }]);
  assert.deepEqual(setJsonValues(obj, []), []);
  // It ends before the common suffix: the closing brace and what follows stay outside the edit.
  assert.ok(inserted[0]!.end <= obj.lastIndexOf('}'), JSON.stringify(inserted));
  // A pure insertion whose text ends as the text before it does ('"a": 1' then ', "b": 1, "c": 1'): the common
  // suffix stops at the common prefix, so the edit never ends before it starts.
  const compact = '{\n  "a": 1\n}';
  const both1 = setJsonValues(compact, [[['b'], 1], [['c'], 1]]);
  assert.equal(both1.length, 1);
  assert.ok(both1[0]!.start <= both1[0]!.end, JSON.stringify(both1));
  const compactOut = parseJsonConfig(applyTextEdits(compact, both1));
  assert.deepEqual(['a', 'b', 'c'].map((k) => valueAt(compactOut, [k])?.value), [1, 1, 1]);
  // Separate edits come out in text order, whatever order the changes were given in.
  const reversed = setJsonValues(text, [[['b', 'c'], 9], [['a'], 8]]);
  assert.deepEqual(reversed.map((e) => e.newText), ['8', '9']);
  assert.ok(reversed[0]!.end < reversed[1]!.start);
});

test('an inserted section is indented as the file is: 4 spaces, tabs, or 2 spaces for a file on one line', () => {
  const four = '{\n    "train_batch_size": 8,\n    "zero_optimization": {\n        "stage": 2\n    }\n}\n';
  assert.equal(
    applyTextEdits(four, setJsonValue(four, ['zero_optimization', 'offload_optimizer', 'device'], 'cpu')),
    '{\n    "train_batch_size": 8,\n    "zero_optimization": {\n        "stage": 2,\n        "offload_optimizer": {\n            "device": "cpu"\n        }\n    }\n}\n',
  );
  const tabs = '{\n\t"train_batch_size": 8\n}\n';
  assert.equal(applyTextEdits(tabs, setJsonValue(tabs, ['bf16'], { enabled: true })), '{\n\t"train_batch_size": 8,\n\t"bf16": {\n\t\t"enabled": true\n\t}\n}\n');
  const oneLine = '{"train_batch_size": 8}';
  assert.equal(applyTextEdits(oneLine, setJsonValue(oneLine, ['bf16'], { enabled: true })), '{\n  "train_batch_size": 8,\n  "bf16": {\n    "enabled": true\n  }\n}');
  // Several changes at once, touching one object: the same indentation.
  const both = applyTextEdits(four, setJsonValues(four, [[['zero_optimization', 'stage'], 3], [['zero_optimization', 'offload_optimizer', 'device'], 'cpu']]));
  assert.match(both, /\n {8}"offload_optimizer": \{\n {12}"device": "cpu"\n {8}\}/);
  // Mixed tabs and spaces of the same width: the first indented line's style is the file's.
  const mixed = '{\n\t"train_batch_size": 8,\n "gradient_clipping": 1.0\n}\n';
  assert.match(applyTextEdits(mixed, setJsonValue(mixed, ['bf16'], { enabled: true })), /\n\t"bf16": \{\n\t\t"enabled": true\n\t\}/);
});
