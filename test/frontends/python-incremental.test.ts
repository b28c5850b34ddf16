/**
 * Incremental re-parsing (src/frontends/python/incremental.ts): after any
 * sequence of edits, reading a file gives exactly what a fresh read of the
 * same text gives, and unchanged statements are not converted again.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { forgetPythonSource, initPythonFrontend, parsePythonSource } from '../../src/frontends/python';
import { parseIncrementally, singleEdit } from '../../src/frontends/python/incremental';
import { createPythonParser } from '../../src/frontends/python/treeSitter';

before(() => initPythonFrontend());

const examples = ['examples/pytorch/gpt.py', 'examples/pytorch/resnet.py', 'examples/keras/resnet50.py'];
let freshCount = 0;

function fresh(text: string) {
  const name = `fresh-${freshCount++}.py`;
  try {
    return parsePythonSource(name, text);
  } finally {
    forgetPythonSource(name);
  }
}

/** Deterministic edits a person makes while typing: insert, delete, retype a number, break and fix a line. */
function* edits(text: string, seed: number): Generator<string> {
  let s = seed;
  const rand = (n: number): number => {
    s = (s * 1103515245 + 12345) % 2 ** 31;
    return s % n;
  };
  let t = text;
  for (let i = 0; i < 12; i++) {
    const at = rand(t.length);
    switch (i % 4) {
      case 0:
        t = t.slice(0, at) + 'x' + t.slice(at);
        break;
      case 1:
        t = t.slice(0, at) + t.slice(at + 1);
        break;
      case 2: {
        const m = /\d+/.exec(t.slice(at));
        if (m) t = t.slice(0, at + m.index) + String(Number(m[0]) + 1) + t.slice(at + m.index + m[0].length);
        break;
      }
      default:
        t = t.slice(0, at) + '\n(((\n' + t.slice(at);
    }
    yield t;
    if (i % 4 === 3) {
      t = text;
      yield t;
    }
  }
}

test('every edit sequence reads exactly as a fresh read of the same text', () => {
  for (const [k, file] of examples.entries()) {
    const text = readFileSync(join(__dirname, '..', '..', file), 'utf8');
    const name = `incremental-${k}.py`;
    assert.deepEqual(parsePythonSource(name, text), fresh(text), `${file} first read`);
    let n = 0;
    for (const t of edits(text, 7 + k)) {
      assert.deepEqual(parsePythonSource(name, t), fresh(t), `${file} after edit ${++n}`);
    }
    forgetPythonSource(name);
  }
});

test('an edit inside one class converts only that statement; later statements move to their new offsets', async () => {
  const parser = await createPythonParser();
  const text = `import torch.nn as nn

class A(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 16)

class B(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
`;
  const first = parseIncrementally(parser, 'identity.py', text);
  const edited = text.replace('nn.Linear(8, 16)', 'nn.Linear(8, 160)');
  const second = parseIncrementally(parser, 'identity.py', edited);
  assert.equal(second.root.children.length, 3);
  assert.equal(second.root.children[0], first.root.children[0], 'the import is reused');
  assert.notEqual(second.root.children[1], first.root.children[1], 'class A is converted again');
  const b = second.root.children[2];
  assert.equal(b, first.root.children[2], 'class B is reused');
  assert.equal(edited.slice(b.start, b.end), edited.slice(edited.indexOf('class B')).trimEnd(), 'class B moved by one character');
  forgetPythonSource('identity.py');
});

test('singleEdit finds the one changed span with 0-based rows and UTF-16 columns', () => {
  const before = 'ab\ncd\nef';
  const lines = [0, 3, 6];
  assert.deepEqual(singleEdit(before, 'ab\ncXd\nef', lines), {
    startIndex: 4,
    oldEndIndex: 4,
    newEndIndex: 5,
    startPosition: { row: 1, column: 1 },
    oldEndPosition: { row: 1, column: 1 },
    newEndPosition: { row: 1, column: 2 },
  });
  const joined = singleEdit(before, 'ab\nef', lines);
  assert.deepEqual([joined.startIndex, joined.oldEndIndex, joined.newEndIndex], [3, 6, 3]);
  assert.deepEqual(joined.oldEndPosition, { row: 2, column: 0 });
  const split = singleEdit(before, 'ab\nc\n\nd\nef', lines);
  assert.deepEqual(split.newEndPosition, { row: 3, column: 0 });
});
