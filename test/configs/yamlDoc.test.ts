/**
 * YAML configs through the Document API: top-level and nested scalars, PyYAML's
 * YAML 1.1 `no`, gpu_ids forms, quoting kept on rewrite, and key insertion at
 * the mapping's own indentation; errors for lists, alias bombs and non-mappings.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { applyTextEdits } from '../../src/configs/edits';
import { hasTopKey, insertYamlKey, nestedScalar, parseYamlConfig, readCount, readGpuIds, readString, setScalar, topScalar } from '../../src/configs/yamlDoc';

test('scalars, strings in their quoting, counts and gpu_ids', () => {
  const text = "a: 'x'\nb: \"y\"\nc: z\nmp: no\nn: 8\nids: 0,2, 3\none: 1\nall: ALL\nempty:\nnested:\n  k: v\n  deep:\n    q: 1\n";
  const doc = parseYamlConfig(text);
  const set = (key: string, v: string) => applyTextEdits(text, readString(doc, key)!.set!(v));
  assert.equal(set('a', "it's"), text.replace("a: 'x'", "a: 'it''s'"));
  assert.equal(set('b', 'q"'), text.replace('b: "y"', 'b: "q\\""'));
  assert.equal(set('c', 'w'), text.replace('c: z', 'c: w'));
  assert.equal(readString(doc, 'mp')?.value, 'no');
  assert.equal(readCount(doc, 'n')?.value, 8);
  assert.equal(applyTextEdits(text, readCount(doc, 'n')!.set!(4)), text.replace('n: 8', 'n: 4'));
  assert.deepEqual(readGpuIds(doc, 'ids')?.value, [0, 2, 3]);
  assert.equal(applyTextEdits(text, readGpuIds(doc, 'ids')!.set!([0, 1])), text.replace('ids: 0,2, 3', 'ids: 0,1'));
  assert.deepEqual(readGpuIds(doc, 'one')?.value, [1]);
  assert.equal(readGpuIds(doc, 'all'), undefined);
  assert.equal(topScalar(doc, 'empty'), undefined);
  assert.equal(topScalar(doc, 'missing'), undefined);
  assert.ok(hasTopKey(doc, 'empty'));
  assert.ok(!hasTopKey(doc, 'missing'));
  assert.equal(nestedScalar(doc, ['nested'], 'k')?.value, 'v');
  assert.equal(nestedScalar(doc, ['nested', 'deep'], 'q')?.value, 1);
  assert.equal(nestedScalar(doc, ['nested', 'k'], 'q'), undefined);
  assert.equal(nestedScalar(doc, ['nope'], 'q'), undefined);
  assert.throws(() => topScalar(doc, 'nested'), /nested must be a single value/);
  assert.throws(() => readCount(parseYamlConfig('n: 0\n'), 'n'), /positive whole number, got 0/);
  assert.throws(() => readCount(parseYamlConfig('n: 2.5\n'), 'n'), /positive whole number/);
  assert.throws(() => readCount(parseYamlConfig('n: "8"\n'), 'n'), /positive whole number/);
  assert.throws(() => readString(parseYamlConfig('s: 3\n'), 's'), /s must be a string, got 3/);
  assert.throws(() => readGpuIds(parseYamlConfig('g: 0,x\n'), 'g'), /GPU ids like 0,1,2,3, got "0,x"/);
  assert.throws(() => readGpuIds(parseYamlConfig('g: true\n'), 'g'), { message: "g must be 'all' or a list like 0,1,2,3" });
  assert.equal(applyTextEdits('f: true\n', setScalar(topScalar(parseYamlConfig('f: true\n'), 'f')!, false)), 'f: false\n');
});

test('inserting a key: after the last entry at its indentation, at the end, or nowhere for flow mappings and sequences', () => {
  const text = 'top: 1\nsec:\n  a: 1\n  b: 2 # two\nlast: 3\n';
  const doc = parseYamlConfig(text);
  assert.equal(applyTextEdits(text, insertYamlKey(text, doc, ['sec'], 'c', '3')!), text.replace('  b: 2 # two\n', '  b: 2 # two\n  c: 3\n'));
  assert.equal(applyTextEdits(text, insertYamlKey(text, doc, [], 'new', 'x')!), `${text}new: x\n`);
  const noNl = 'a: 1';
  assert.equal(applyTextEdits(noNl, insertYamlKey(noNl, parseYamlConfig(noNl), [], 'b', '2')!), 'a: 1\nb: 2');
  // A nested block as the value: no space after the colon.
  assert.equal(applyTextEdits(text, insertYamlKey(text, doc, [], 'cfg', '\n  k: v')!), `${text}cfg:\n  k: v\n`);
  assert.equal(insertYamlKey(text, doc, ['missing'], 'k', 'v'), undefined);
  // A last entry with a complex key (`? [x, y]`) gives no line to copy: a top-level key is appended at the end.
  const complex = 'a: 1\n? [x, y]\n: 2\n';
  assert.equal(applyTextEdits(complex, insertYamlKey(complex, parseYamlConfig(complex), [], 'new', 'x')!), `${complex}new: x\n`);
  const flow = 'sec: {a: 1}\n';
  assert.equal(insertYamlKey(flow, parseYamlConfig(flow), ['sec'], 'b', '2'), undefined);
});

test('YAML errors: syntax, duplicate keys, alias bombs, a non-mapping document', () => {
  assert.throws(() => parseYamlConfig('a: [1, 2\n'), /^Error: YAML: /);
  assert.throws(() => parseYamlConfig('a: 1\na: 2\n'), /YAML: .*[Uu]nique/);
  const bomb = ['a: &a [x, x, x, x, x, x, x, x, x, x]', 'b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]', 'c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]', 'd: [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]'].join('\n');
  assert.throws(() => parseYamlConfig(bomb), /more than 100 alias expansions/);
  // A bomb has no one bad place: the error marks the document's first character, not its whole text.
  assert.throws(() => parseYamlConfig(bomb), (e: { range?: { start: number; end: number } }) => e.range?.start === 0 && e.range.end === 1);
  assert.throws(() => parseYamlConfig('- 1\n- 2\n'), /must be a mapping of keys to values/);
  assert.doesNotThrow(() => parseYamlConfig(''));
});
