/**
 * JSON / JSONC reading through jsonc-parser (what VS Code uses): a syntax tree
 * with offsets for ranges, and `modify` for edits that touch only the value.
 */
import { findNodeAtLocation, modify, type Node, parseTree, printParseErrorCode, type ParseError } from 'jsonc-parser';
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

/** Edits that set `path` to `value`, touching only that value's text. */
export function setJsonValue(text: string, path: Array<string | number>, value: unknown): TextEdit[] {
  return modify(text, path, value, { formattingOptions: { insertSpaces: true, tabSize: 2 } }).map((e) => ({
    start: e.offset,
    end: e.offset + e.length,
    newText: e.content,
  }));
}
