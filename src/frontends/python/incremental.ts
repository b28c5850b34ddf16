/**
 * Re-parsing a file after an edit. The language server re-reads a model on
 * every keystroke, so per file name we keep the previous tree-sitter tree and
 * the converted top-level statements: the new text is diffed against the old
 * one (common prefix and suffix → one contiguous edit), tree-sitter re-parses
 * incrementally, and only statements whose text changed are converted again.
 * Results are identical to a fresh parse (test/frontends/python-incremental).
 */
import type { Edit, Parser, Point, Tree } from 'web-tree-sitter';
import { convertTree, lineIndexAt, type ConvertedTree, type StatementPool } from './ast';

interface FileState {
  text: string;
  tree: Tree;
  /** The conversion of `text`: the same text read again is this tree again (imported modules are reused the same way per file version). */
  converted: ConvertedTree;
  pool: StatementPool;
  /** Shared by every node converted for this file; rewritten in place on each parse. */
  lines: number[];
}

/** Files whose trees are kept; an editor has few Python models open at once. */
const MAX_FILES = 8;
/** Above this share of the text changed, a fresh parse is as cheap and needs no old tree. */
const MAX_INCREMENTAL_SHARE = 0.5;

const states = new Map<string, FileState>();

/** Parses `text` for `fileName`, reusing what the previous parse of that file allows. */
export function parseIncrementally(parser: Parser, fileName: string, text: string): ConvertedTree {
  const prev = states.get(fileName);
  states.delete(fileName);
  if (prev && prev.text === text) {
    remember(fileName, prev);
    return prev.converted;
  }
  let tree: Tree | undefined;
  try {
    tree = parseText(parser, text, prev);
    prev?.tree.delete();
    const lines = prev?.lines ?? [];
    const pool: StatementPool = new Map();
    const converted = convertTree(tree, text, { reuse: prev?.pool, pool, lines });
    remember(fileName, { text, tree, converted, pool, lines });
    return converted;
  } catch (e) {
    // A half-updated state must not poison the next edit: drop it; the next parse starts fresh.
    if (prev && prev.tree !== tree) prev.tree.delete();
    tree?.delete();
    throw e;
  }
}

/** Drops the kept tree of a file (the editor closed it). */
export function forgetIncremental(fileName: string): void {
  states.get(fileName)?.tree.delete();
  states.delete(fileName);
}

function remember(fileName: string, state: FileState): void {
  states.set(fileName, state);
  while (states.size > MAX_FILES) {
    const [oldest, s] = states.entries().next().value as [string, FileState];
    s.tree.delete();
    states.delete(oldest);
  }
}

function parseText(parser: Parser, text: string, prev: FileState | undefined): Tree {
  // tree-sitter asks for chunks; hand it bounded slices rather than the whole rest of the file each time.
  const input = (index: number): string => text.slice(index, index + 16_384);
  let old: Tree | null = null;
  if (prev) {
    const edit = singleEdit(prev.text, text, prev.lines);
    if (edit.newEndIndex - edit.startIndex <= text.length * MAX_INCREMENTAL_SHARE) {
      prev.tree.edit(edit as Edit);
      old = prev.tree;
    }
  }
  const tree = parser.parse(input, old);
  if (!tree) throw new Error('tree-sitter returned no tree');
  return tree;
}

/** The one contiguous edit turning `before` into `after`: common prefix and suffix kept. Indices and columns in UTF-16 units, as web-tree-sitter counts. */
export function singleEdit(before: string, after: string, beforeLines: number[]): Omit<Edit, 'editPoint' | 'editRange'> {
  const max = Math.min(before.length, after.length);
  let prefix = 0;
  while (prefix < max && before.charCodeAt(prefix) === after.charCodeAt(prefix)) prefix++;
  // Never split a surrogate pair.
  if (prefix > 0 && isHighSurrogate(before.charCodeAt(prefix - 1))) prefix--;
  let suffix = 0;
  while (suffix < max - prefix && before.charCodeAt(before.length - 1 - suffix) === after.charCodeAt(after.length - 1 - suffix)) suffix++;
  if (suffix > 0 && isLowSurrogate(before.charCodeAt(before.length - suffix))) suffix--;
  const startIndex = prefix;
  const oldEndIndex = before.length - suffix;
  const newEndIndex = after.length - suffix;
  const startPosition = pointAt(beforeLines, startIndex);
  return {
    startIndex,
    oldEndIndex,
    newEndIndex,
    startPosition,
    oldEndPosition: pointAt(beforeLines, oldEndIndex),
    newEndPosition: advance(startPosition, after, startIndex, newEndIndex),
  };
}

const isHighSurrogate = (c: number): boolean => c >= 0xd800 && c <= 0xdbff;
const isLowSurrogate = (c: number): boolean => c >= 0xdc00 && c <= 0xdfff;

/** 0-based row/column of an offset, from a line-start table. */
function pointAt(lines: number[], offset: number): Point {
  const row = lineIndexAt(lines, offset);
  return { row, column: offset - (lines[row] ?? 0) };
}

/** The point reached from `from` (at `start`) after the text up to `end`. */
function advance(from: Point, text: string, start: number, end: number): Point {
  let row = from.row;
  let lineStart = start - from.column;
  for (let i = text.indexOf('\n', start); i >= 0 && i < end; i = text.indexOf('\n', i + 1)) {
    row++;
    lineStart = i + 1;
  }
  return { row, column: end - lineStart };
}
