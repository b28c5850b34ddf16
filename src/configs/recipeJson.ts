/**
 * A JSON recipe (HfArgumentParser.parse_json_file, `python run_clm.py args.json`) as a RecipeDoc
 * (recipeSource.ts). Every edit touches only its own value: a value is replaced where it is written, a missing key
 * becomes the object's first entry, a removed key takes its comma with it. jsonc-parser's `modify` rewrites the
 * neighbouring entry when it inserts, so two insertions of one fix would clash; these never do.
 */
import type { Node } from 'jsonc-parser';
import type { TreeValue } from './configTree';
import { jsonIndentation, parseJsonConfig, rangeOf } from './jsonDoc';
import type { RecipeDoc } from './recipeSource';
import type { TextEdit } from './types';

/** The property node of `key` in an object node. */
const propertyOf = (object: Node, key: string): Node | undefined => object.children?.find((p) => p.children?.[0]?.value === key);

function jsonValue(node: Node): TreeValue {
  const range = rangeOf(node);
  const none = { range, get: () => undefined };
  switch (node.type) {
    case 'object':
      return {
        kind: 'map', range,
        get: (key) => {
          const value = propertyOf(node, key)?.children?.[1];
          return value && jsonValue(value);
        },
      };
    case 'array':
      return { ...none, kind: 'list', items: (node.children ?? []).map(jsonValue) };
    case 'string':
      return { ...none, kind: 'string', value: node.value as string };
    case 'number':
      return { ...none, kind: Number.isInteger(node.value) ? 'int' : 'number', value: node.value as number };
    case 'boolean':
      return { ...none, kind: 'bool', value: node.value as boolean };
    case 'null':
      return { ...none, kind: 'none' };
    default:
      return { ...none, kind: 'other' };
  }
}

const literal = (value: boolean | number | string | string[]): string => (Array.isArray(value) ? `[${value.map((w) => JSON.stringify(w)).join(', ')}]` : JSON.stringify(value));

/** `text` parsed as a JSON recipe; a malformed file raises MalformedConfig (one 'malformed-config' finding). */
export function jsonRecipe(text: string): RecipeDoc {
  const root = parseJsonConfig(text);
  const { insertSpaces, tabSize } = jsonIndentation(text);
  const indent = insertSpaces ? ' '.repeat(tabSize) : '\t';
  const props = root.children ?? [];
  const lineStart = (at: number): number => text.lastIndexOf('\n', at - 1) + 1;
  const ownLine = (at: number): boolean => /^[ \t]*$/.test(text.slice(lineStart(at), at));
  return {
    text, top: jsonValue(root),
    keyword: (key) => `"${key}":`,
    keyRange: (key) => {
      const name = propertyOf(root, key)?.children?.[0];
      return name && rangeOf(name);
    },
    set: (key, value) => {
      const node = propertyOf(root, key)?.children?.[1];
      if (node) return [{ ...rangeOf(node), newText: literal(value) }];
      // First in the object, on a line of its own where the object spans lines.
      const at = root.offset + 1;
      const multiline = /^[ \t]*\r?\n/.test(text.slice(at));
      return [{ start: at, end: at, newText: `${multiline ? `\n${indent}` : ' '}"${key}": ${literal(value)}${props.length ? ',' : multiline ? '\n' : ' '}` }];
    },
    remove: (key) => {
      const prop = propertyOf(root, key);
      if (!prop) return [];
      const i = props.indexOf(prop);
      const next = props[i + 1];
      const previous = props[i - 1];
      const end = prop.offset + prop.length;
      // Up to the next entry (with the comma, and the line where each has its own), or from the previous one's end.
      if (next) return [{ start: ownLine(prop.offset) ? lineStart(prop.offset) : prop.offset, end: ownLine(next.offset) ? lineStart(next.offset) : next.offset, newText: '' }];
      return [{ start: previous ? previous.offset + previous.length : prop.offset, end, newText: '' }];
    },
    rename: (from, to) => {
      const name = propertyOf(root, from)!.children![0]!;
      return [{ ...rangeOf(name), newText: JSON.stringify(to) }];
    },
  };
}
