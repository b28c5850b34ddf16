/**
 * Which comment a config fix would leave contradicting the new value: the
 * comment beside the value (`#`, or `//` in JSONC) or the comment lines just
 * above it; a lone `/` (a path, a division) starts no comment, and quotes
 * hide comment marks.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { contradictingComment, flagComments, flagReplacedValues, wordsFor } from '../../src/configs/comments';

/** The range of the first `value` in `text`. */
function at(text: string, value: string): { start: number; end: number } {
  const start = text.indexOf(value);
  assert.ok(start >= 0, `${value} in ${text}`);
  return { start, end: start + value.length };
}

test('a trailing # or // comment naming the old value is found; a path or division after the value is not a comment', () => {
  const yaml = 'num_processes: 8  # 8 GPUs on one node\n';
  assert.equal(contradictingComment(yaml, at(yaml, '8'), ['8']), '# 8 GPUs on one node');
  const jsonc = '{ "stage": 2, // ZeRO-2 saves memory\n}';
  assert.equal(contradictingComment(jsonc, at(jsonc, '2'), ['ZeRO-2']), '// ZeRO-2 saves memory');
  const path = 'config_file: 2 /ZeRO-2/ds.json\n';
  assert.equal(contradictingComment(path, at(path, '2'), ['ZeRO-2']), undefined, 'one slash is a path, not a comment');
  const escaped = 'strategy: 2 "a\\"b" # ZeRO-2 here\n';
  assert.equal(contradictingComment(escaped, at(escaped, '2'), ['ZeRO-2']), '# ZeRO-2 here', 'an escaped quote does not end the string');
  const hashInEscaped = 'strategy: 2 "a\\"#ZeRO-2"\n';
  assert.equal(contradictingComment(hashInEscaped, at(hashInEscaped, '2'), ['ZeRO-2']), undefined);
  const quoted = 'strategy: 2 "#ZeRO-2"\n';
  assert.equal(contradictingComment(quoted, at(quoted, '2'), ['ZeRO-2']), undefined, 'a # inside quotes is text');
});

test('comment lines directly above the value count, up to three; a code line in between stops the search', () => {
  const above = '# use ZeRO-2 here\nstage: 2\n';
  assert.equal(contradictingComment(above, at(above, '2\n'), ['ZeRO-2']), '# use ZeRO-2 here');
  const blocked = '# use ZeRO-2 here\nother: 1\nstage: 2\n';
  assert.equal(contradictingComment(blocked, at(blocked, '2\n'), ['ZeRO-2']), undefined);
  assert.equal(contradictingComment(above, at(above, '2\n'), []), undefined, 'no words, no comment');
  const fourAbove = '# use ZeRO-2 here\n# a\n# b\n# c\nstage: 2\n';
  assert.equal(contradictingComment(fourAbove, at(fourAbove, '2\n'), ['ZeRO-2']), undefined, 'four lines up is no longer about this value');
  const threeAbove = '# use ZeRO-2 here\n# b\n# c\nstage: 2\n';
  assert.equal(contradictingComment(threeAbove, at(threeAbove, '2\n'), ['ZeRO-2']), '# use ZeRO-2 here');
});

test('precision words: each precision is found under the names configs and people give it', () => {
  assert.deepEqual(wordsFor('fp16'), ['fp16', 'float16', 'half precision', '16-mixed']);
  assert.deepEqual(wordsFor('bf16'), ['bf16', 'bfloat16', 'bf16-mixed']);
  assert.deepEqual(wordsFor('fp32'), ['fp32', 'float32', 'full precision', '32-bit', '32-true']);
  const text = 'trainer = L.Trainer(precision="16-mixed")  # 16-mixed: the V100s have no bf16\n';
  const at = text.indexOf('"16-mixed"');
  assert.equal(contradictingComment(text, { start: at, end: at + 10 }, wordsFor('fp16')), '# 16-mixed: the V100s have no bf16');
});

test('a comment is named in a fix title once, a long one cut at 57 characters with an ellipsis', () => {
  const long = `# ${'x'.repeat(59)}`; // 61 characters: just over the 60 shown whole
  const once = flagComments({ title: 'Use 4 GPUs', edits: [] }, [long]);
  assert.equal(once.title, `Use 4 GPUs — the comment "${long.slice(0, 57)}…" will no longer be true: update it`);
  assert.equal(flagComments(once, [long]).title, once.title, 'flagging the same comment again changes nothing');
  // A 60-character comment is quoted whole: one that only shares its first 57 characters with a named one is its own.
  const sixty = `# ${'x'.repeat(55)}abc`;
  assert.equal(sixty.length, 60);
  const named = { title: `Use 4 GPUs — the comment "${sixty.slice(0, 57)}…" will no longer be true: update it`, edits: [] };
  assert.match(flagComments(named, [sixty]).title, new RegExp(`"${sixty}"`));
  const short = '# eight GPUs';
  assert.equal(flagComments(flagComments({ title: 'Use 4 GPUs', edits: [] }, [short, short]), [short]).title, 'Use 4 GPUs — the comment "# eight GPUs" will no longer be true: update it');
});

test('a # inside a later quoted string on the line is not a comment: the comment after the string is the one found', () => {
  const text = 't = Trainer(devices=8, name="run # 1")  # eight GPUs\n';
  const at = text.indexOf('8');
  assert.equal(contradictingComment(text, { start: at, end: at + 1 }, ['eight']), '# eight GPUs');
  const escaped = "t = Trainer(devices=8, name='it\\'s # 1')  # eight GPUs\n";
  const at2 = escaped.indexOf('8');
  assert.equal(contradictingComment(escaped, { start: at2, end: at2 + 1 }, ['eight']), '# eight GPUs');
});

test('a replaced value up to 24 characters is looked for in comments; longer ones, and values with spaces, are not', () => {
  const flagged = (value: string) => {
    const text = `strategy: ${value}  # ${value} fits this box\n`;
    const start = text.indexOf(value);
    return flagReplacedValues(text, { title: 'Use ZeRO-3', edits: [{ start, end: start + value.length, newText: 'zero3' }] }).title;
  };
  const word24 = 'deepspeed_stage_2_offlo'.padEnd(24, 'd');
  assert.equal(word24.length, 24);
  assert.equal(flagged(word24), `Use ZeRO-3 — the comment "# ${word24} fits this box" will no longer be true: update it`);
  assert.equal(flagged(`${word24}x`), 'Use ZeRO-3', 'a 25-character value is not a word comments would repeat');
});
