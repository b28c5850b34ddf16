/**
 * A YAML recipe as a RecipeDoc (recipeSource.ts): values read as PyYAML reads them (yaml.safe_load is what
 * HfArgumentParser.parse_yaml_file, TrlParser and OmegaConf use), edits that splice only the value's characters, so
 * comments, key order and quoting elsewhere stay as written. A missing key is a new last top-level entry.
 */
import { isMap, isScalar, isSeq, Scalar, type Document } from 'yaml';
import type { TreeValue } from './configTree';
import type { RecipeDoc } from './recipeSource';
import { parseYamlConfig, removeTopKey, setScalar, setTopKey, topPair } from './yamlDoc';
import type { TextEdit, TextRange } from './types';

/** YAML 1.1's other bool words, which PyYAML reads as bools and YAML 1.2 (the `yaml` package's default) as strings. */
const PYYAML_BOOLS: Record<string, boolean> = Object.fromEntries(
  ['yes', 'Yes', 'YES', 'on', 'On', 'ON'].map((w) => [w, true]).concat(['no', 'No', 'NO', 'off', 'Off', 'OFF'].map((w) => [w, false])),
);

const rangeOf = (node: unknown, fallback: TextRange): TextRange => {
  const r = (node as { range?: [number, number, number] } | null)?.range;
  return r ? { start: r[0], end: r[1] } : fallback;
};

/** A YAML node as a TreeValue; `at` is where a missing node (`key:` alone) is. */
function yamlValue(node: unknown, at: TextRange): TreeValue {
  const range = rangeOf(node, at);
  const none = { range, get: () => undefined };
  if (isMap(node)) {
    return {
      kind: 'map', range,
      get: (key) => {
        const pair = node.items.find((p) => isScalar(p.key) && p.key.value === key);
        return pair && yamlValue(pair.value, rangeOf(pair.key, range));
      },
    };
  }
  if (isSeq(node)) return { ...none, kind: 'list', items: node.items.map((item) => yamlValue(item, range)) };
  if (!isScalar(node)) return { ...none, kind: node === null || node === undefined ? 'none' : 'other' };
  const v = node.value;
  if (v === null || v === undefined) return { ...none, kind: 'none' };
  if (typeof v === 'boolean') return { ...none, kind: 'bool', value: v };
  if (typeof v === 'number') return { ...none, kind: Number.isInteger(v) ? 'int' : 'number', value: v };
  if (typeof v !== 'string') return { ...none, kind: 'other' };
  if (node.type === Scalar.PLAIN && v in PYYAML_BOOLS) return { ...none, kind: 'bool', value: PYYAML_BOOLS[v] };
  return { ...none, kind: 'string', value: v };
}

/** A string as a plain scalar where YAML reads it back as that string, else double-quoted. */
const plainOrQuoted = (s: string): string => (/^[A-Za-z_./][\w./ -]*$/.test(s) && !/ $/.test(s) && !(s in PYYAML_BOOLS) && !/^(true|false|null|~)$/i.test(s) ? s : JSON.stringify(s));

/**
 * A list of words in the form the file writes it: a flow list `[a, b]` in place, a block list's items rewritten
 * one a line at its indentation (the first item's quoting for all).
 */
function writeList(text: string, node: unknown, words: string[]): TextEdit[] | undefined {
  if (!isSeq(node) || !node.range) return undefined;
  const first = node.items[0];
  const quote = isScalar(first) && first.type === Scalar.QUOTE_DOUBLE ? '"' : isScalar(first) && first.type === Scalar.QUOTE_SINGLE ? "'" : '';
  const item = (w: string): string => (quote ? `${quote}${w}${quote}` : plainOrQuoted(w));
  if (node.flow) return [{ start: node.range[0], end: node.range[1], newText: `[${words.map(item).join(', ')}]` }];
  const last = node.items[node.items.length - 1];
  if (!isScalar(first) || !isScalar(last) || !first.range || !last.range) return undefined;
  const dash = text.lastIndexOf('-', first.range[0]);
  const indent = text.slice(text.lastIndexOf('\n', dash - 1) + 1, dash);
  return [{ start: first.range[0], end: last.range[1], newText: words.map(item).join(`\n${indent}- `) }];
}

/** `text` parsed as a YAML recipe; a malformed file raises MalformedConfig (one 'malformed-config' finding). */
export function yamlRecipe(text: string): RecipeDoc {
  const doc: Document.Parsed = parseYamlConfig(text);
  const top = yamlValue(doc.contents, { start: 0, end: 0 });
  return {
    text, top,
    keyword: (key) => `${key}:`,
    keyRange: (key) => {
      const pair = topPair(doc, key);
      return pair && rangeOf(pair.key, { start: 0, end: 0 });
    },
    set: (key, value) => {
      const node = topPair(doc, key)?.value;
      if (Array.isArray(value)) return writeList(text, node, value);
      if (typeof value === 'boolean') {
        // A bool keeps the user's capitals (True is PyYAML's too); a new one is YAML's lower case.
        const capital = isScalar(node) && typeof node.value === 'boolean' && node.range && /^[A-Z]/.test(text.slice(node.range[0], node.range[1]));
        return setTopKey(text, doc, key, capital ? (value ? 'True' : 'False') : String(value));
      }
      if (typeof value === 'string' && isScalar(node) && typeof node.value === 'string') return setScalar(node, value);
      return setTopKey(text, doc, key, typeof value === 'string' ? plainOrQuoted(value) : String(value));
    },
    remove: (key) => removeTopKey(text, doc, key),
    rename: (from, to) => {
      const key = topPair(doc, from)!.key;
      return [{ ...rangeOf(key, { start: 0, end: 0 }), newText: to }];
    },
  };
}
