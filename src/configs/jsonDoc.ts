/**
 * JSON / JSONC reading through jsonc-parser (what VS Code uses): a syntax tree
 * with offsets for ranges, and `modify` for edits that touch only the value.
 */
import { applyEdits, findNodeAtLocation, modify, type Node, parseTree, printParseErrorCode, type ParseError } from 'jsonc-parser';
import { MalformedConfig, type TextEdit, type TextRange } from './types';

export function parseJsonConfig(text: string): Node {
  const errors: ParseError[] = [];
  // DeepSpeed loads its config with hjson, so comments and trailing commas are legal there.
  const root = parseTree(text, errors, { allowTrailingComma: true, disallowComments: false });
  const err = errors[0];
  if (err) throw new MalformedConfig(`JSON: ${printParseErrorCode(err.error)} at offset ${err.offset}`, { start: err.offset, end: err.offset + Math.max(1, err.length) });
  if (!root || root.type !== 'object') throw new MalformedConfig('JSON: the config must be an object', root ? rangeOf(root) : { start: 0, end: 0 });
  rejectDuplicateKeys(root);
  return root;
}

/** jsonc-parser keeps the last duplicate silently; DeepSpeed refuses duplicates, and so do we. */
function rejectDuplicateKeys(node: Node): void {
  const stack: Node[] = [node];
  while (stack.length) {
    const n = stack.pop()!;
    if (n.type === 'object') {
      const seen = new Set<string>();
      for (const prop of n.children ?? []) {
        const key = prop.children?.[0];
        if (!key) continue;
        if (seen.has(key.value)) throw new MalformedConfig(`JSON: duplicate key "${key.value}"`, rangeOf(key));
        seen.add(key.value);
      }
    }
    for (const c of n.children ?? []) stack.push(c);
  }
}

export function rangeOf(node: Node): TextRange {
  return { start: node.offset, end: node.offset + node.length };
}

export function valueAt(root: Node, path: Array<string | number>): Node | undefined {
  return findNodeAtLocation(root, path);
}

/**
 * The file's own indentation, so an inserted section ("offload_optimizer": {…})
 * is indented like the rest: the smallest indent of a line that has one, tabs
 * or spaces; a file on one line gets 2 spaces, DeepSpeed's documented examples' style.
 */
export function jsonIndentation(text: string): { insertSpaces: boolean; tabSize: number } {
  let smallest: string | undefined;
  for (const m of text.matchAll(/\n([ \t]+)\S/g)) if (smallest === undefined || m[1]!.length < smallest.length) smallest = m[1]!;
  if (smallest === undefined) return { insertSpaces: true, tabSize: 2 };
  return smallest.startsWith('\t') ? { insertSpaces: false, tabSize: 1 } : { insertSpaces: true, tabSize: smallest.length };
}

/** Edits that set `path` to `value`, touching only that value's text. */
export function setJsonValue(text: string, path: Array<string | number>, value: unknown): TextEdit[] {
  return modify(text, path, value, { formattingOptions: jsonIndentation(text) }).map((e) => ({
    start: e.offset,
    end: e.offset + e.length,
    newText: e.content,
  }));
}

/**
 * Several values set at once: each `modify` runs on the text the previous one
 * produced (independent insertions into one object would clash), and the
 * result becomes one edit spanning first to last change; every byte outside
 * the changed values is carried over unchanged.
 */
export function setJsonValues(text: string, changes: Array<[Array<string | number>, unknown]>): TextEdit[] {
  // Independent edits when they do not touch each other: each stays as small as the value it changes.
  const separate = changes.flatMap(([path, value]) => setJsonValue(text, path, value)).sort((a, b) => a.start - b.start);
  if (separate.every((e, i) => i === 0 || separate[i - 1]!.end < e.start)) return separate;
  let next = text;
  const formattingOptions = jsonIndentation(text);
  for (const [path, value] of changes) {
    const edits = modify(next, path, value, { formattingOptions });
    next = applyEdits(next, edits);
  }
  if (next === text) return [];
  let p = 0;
  while (p < text.length && p < next.length && text[p] === next[p]) p++;
  let s = 0;
  while (s < text.length - p && s < next.length - p && text[text.length - 1 - s] === next[next.length - 1 - s]) s++;
  return [{ start: p, end: text.length - s, newText: next.slice(p, next.length - s) }];
}
