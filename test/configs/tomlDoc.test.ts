/**
 * The TOML reader against the TOML 1.0 spec's value forms (basic and literal
 * strings, multi-line strings, integers with underscores, floats, booleans,
 * arrays spanning lines, comments, dotted and quoted keys, [tables] and
 * [[arrays of tables]]), the exact span of every value, and edits that
 * change only the value's characters.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { applyTextEdits } from '../../src/configs/edits';
import { parseToml, renderToml, setToml, tomlEntry } from '../../src/configs/tomlDoc';

const TEXT = `# torchtitan job
title = "a \\"quoted\\" # not a comment"
[job]
name = 'literal \\ kept'   # comment
steps = 1_000
lr = 3e-4
ratio = -0.5
flag = true
off = false
notes = """
multi
line"""
dims = [1, [2, 3],
  4] # trailing
inline = { a = 1, b = "}" }
[ parallelism ]
tensor_parallel_degree = 2
"dotted.key" = 3
a . b = 4
[[products]]
x = 1
`;

test('values, spans and tables as the TOML spec reads them', () => {
  const doc = parseToml(TEXT);
  const v = (table: string, key: string) => tomlEntry(doc, table, key)?.value;
  const raw = (table: string, key: string) => {
    const e = tomlEntry(doc, table, key)!;
    assert.equal(TEXT.slice(e.range.start, e.range.end), e.raw, `span of ${table}.${key}`);
    return e.raw;
  };
  assert.equal(v('', 'title'), 'a "quoted" # not a comment');
  assert.equal(raw('', 'title'), '"a \\"quoted\\" # not a comment"');
  assert.equal(v('job', 'name'), 'literal \\ kept');
  assert.equal(v('job', 'steps'), 1000);
  assert.equal(v('job', 'lr'), 3e-4);
  assert.equal(v('job', 'ratio'), -0.5);
  assert.equal(v('job', 'flag'), true);
  assert.equal(v('job', 'off'), false);
  assert.equal(raw('job', 'notes'), '"""\nmulti\nline"""');
  assert.equal(v('job', 'notes'), undefined);
  assert.equal(raw('job', 'dims'), '[1, [2, 3],\n  4]');
  assert.equal(raw('job', 'inline'), '{ a = 1, b = "}" }');
  assert.equal(v('parallelism', 'tensor_parallel_degree'), 2);
  assert.equal(v('parallelism', 'dotted.key'), 3);
  assert.equal(v('parallelism', 'a.b'), 4);
  assert.equal(v('products', 'x'), 1);
  assert.deepEqual(doc.tables.map((t) => t.name), ['', 'job', 'parallelism', 'products']);
  // Each table's body starts after its header line; its last entry ends after its last value's line.
  const par = doc.tables.find((t) => t.name === 'parallelism')!;
  assert.equal(TEXT.slice(par.bodyStart).split('\n')[0], 'tensor_parallel_degree = 2');
  assert.equal(TEXT.slice(par.lastEntryEnd).split('\n')[0], '[[products]]');
  assert.equal(doc.tables.find((t) => t.name === 'products')!.lastEntryEnd, TEXT.length);
  // Not numbers: a bare word, a lone sign or dot.
  assert.equal(v('', 'missing'), undefined);
  assert.equal(parseToml('k = abc\n').entries[0]!.value, undefined);
  assert.equal(parseToml('k = .\n').entries[0]!.value, undefined);
  assert.equal(parseToml('k = +7\n').entries[0]!.value, 7);
  assert.equal(parseToml('k = 1.5e2').entries[0]!.value, 150);
  // A bare value at the very end of the file, no newline: its range ends at the file's end.
  assert.deepEqual(parseToml('k = 8').entries[0]!.range, { start: 4, end: 5 });
});

test('malformed TOML is reported with where it is', () => {
  assert.throws(() => parseToml('k = "open\n'), /unterminated string/);
  // Each marked on its opening quote(s).
  const rangeOfError = (text: string) => {
    try {
      parseToml(text);
    } catch (e) {
      return (e as { range?: { start: number; end: number } }).range;
    }
    return undefined;
  };
  assert.deepEqual(rangeOfError('k = "open\n'), { start: 4, end: 5 });
  assert.deepEqual(rangeOfError('k = """open\n'), { start: 4, end: 7 });
  assert.throws(() => parseToml("k = 'open\n"), /unterminated string/);
  assert.throws(() => parseToml('k = """open\n'), /unterminated multi-line string/);
  assert.throws(() => parseToml('k = [1, 2\n'), /unterminated array or inline table/);
  assert.deepEqual(rangeOfError('k = [1, 2\n'), { start: 4, end: 5 }, 'marked on the opening bracket');
  // A comment inside an array is skipped whole, brackets in it included.
  const commented = parseToml('k = [1, # see [x]\n  2]\nm = 3\n');
  assert.deepEqual(tomlEntry(commented, '', 'k')?.raw, '[1, # see [x]\n  2]');
  assert.equal(tomlEntry(commented, '', 'm')?.value, 3);
  assert.throws(() => parseToml('just words\n'), /expected 'key = value' or a \[table\], got 'just words'/);
  // The error covers the offending text from its first non-blank character to the line's end.
  const indented = '[t]\n    just words\n';
  try {
    parseToml(indented);
    assert.fail('parsed');
  } catch (e) {
    const range = (e as { range?: { start: number; end: number } }).range;
    assert.equal(range && indented.slice(range.start, range.end), 'just words');
  }
  assert.throws(() => parseToml('k = 1 2\n'), /unexpected '2' after the value/);
  const long = 'this line is neither a key nor a table header at all';
  assert.throws(() => parseToml(`${long}\n`), { message: `TOML: expected 'key = value' or a [table], got '${long.slice(0, 40)}'` });
  // A long tail is quoted by its first 20 characters, so the message stays one readable line; the range has it all.
  assert.throws(() => parseToml('k = 1 abcdefghijklmnopqrstuvwxyz\n'), (e: Error & { range?: { start: number; end: number } }) =>
    e.message === "TOML: unexpected 'abcdefghijklmnopqrst' after the value" && e.range!.end - e.range!.start === ' abcdefghijklmnopqrstuvwxyz'.length);
  assert.throws(() => parseToml('[t]\nk = 1\nk = 2\n'), /duplicate key 'k' in \[t\]/);
  // The error marks the second line from its key on, past its indentation.
  const twice = '[t]\n  k = 1\n  k = 2\n';
  assert.throws(() => parseToml(twice), (e: Error & { range?: { start: number; end: number } }) => twice.slice(e.range!.start, e.range!.end) === 'k = 2');
  // The same key in two tables is fine.
  assert.equal(parseToml('[a]\nk = 1\n[b]\nk = 2\n').entries.length, 2);
});

test('edits: replace the value only, add a key after the table’s last one, or add the table', () => {
  const doc = parseToml(TEXT);
  const set = (table: string, key: string, value: string | number | boolean) => applyTextEdits(TEXT, setToml(TEXT, doc, table, key, value));
  assert.equal(set('parallelism', 'tensor_parallel_degree', 4), TEXT.replace('tensor_parallel_degree = 2', 'tensor_parallel_degree = 4'));
  assert.equal(set('job', 'name', 'new'), TEXT.replace("'literal \\ kept'", "'new'"));
  assert.equal(set('', 'title', 'b'), TEXT.replace('"a \\"quoted\\" # not a comment"', '"b"'));
  assert.equal(set('parallelism', 'pipeline_parallel_degree', 2), TEXT.replace('a . b = 4\n', 'a . b = 4\npipeline_parallel_degree = 2\n'));
  assert.equal(set('training', 'seed', 1), `${TEXT}\n[training]\nseed = 1\n`);
  assert.equal(applyTextEdits('x = 1', setToml('x = 1', parseToml('x = 1'), '', 'y', 2)), 'x = 1\ny = 2\n');
  assert.equal(applyTextEdits('', setToml('', parseToml(''), 't', 'k', true)), '[t]\nk = true\n');
  assert.equal(applyTextEdits('a = 1\n\n', setToml('a = 1\n\n', parseToml('a = 1\n\n'), 't', 'k', 'v')), 'a = 1\n\n[t]\nk = "v"\n');
  assert.equal(applyTextEdits('a = 1', setToml('a = 1', parseToml('a = 1'), 't', 'k', 1)), 'a = 1\n\n[t]\nk = 1\n');
  // An empty table gets its first key right after the header.
  assert.equal(applyTextEdits('[t]\n[u]\n', setToml('[t]\n[u]\n', parseToml('[t]\n[u]\n'), 't', 'k', 1)), '[t]\nk = 1\n[u]\n');
  assert.equal(renderToml(3), '3');
  assert.equal(renderToml('s'), '"s"');
});

test('a top-level key goes before the first table, with no blank line ahead of it; an empty file gets just the line', () => {
  const set = (text: string) => applyTextEdits(text, setToml(text, parseToml(text), '', 'seed', 3));
  assert.equal(set('[job]\nname = "x"\n'), 'seed = 3\n[job]\nname = "x"\n');
  assert.equal(set(''), 'seed = 3\n');
  assert.equal(set('a = 1\n[job]\nname = "x"\n'), 'a = 1\nseed = 3\n[job]\nname = "x"\n');
});
