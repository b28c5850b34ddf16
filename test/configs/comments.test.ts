/**
 * Which comment a config fix would leave contradicting the new value: the
 * comment beside the value (`#`, or `//` in JSONC) or the comment lines just
 * above it; a lone `/` (a path, a division) starts no comment, and quotes
 * hide comment marks.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { contradictingComment } from '../../src/configs/comments';

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
