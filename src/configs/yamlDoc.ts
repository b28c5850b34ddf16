/**
 * YAML reading for configs through the `yaml` package's Document API. Values
 * are located by their node ranges and rewritten by splicing only the value's
 * source span, so comments, key order, quoting and indentation elsewhere stay
 * byte-for-byte as they were.
 */
import { Document, isMap, isScalar, parseDocument, Scalar, type Pair, type ParsedNode, type YAMLMap } from 'yaml';
import { MalformedConfig, type ConfigValue, type TextEdit, type TextRange } from './types';

/** Aliases allowed when expanding the document; far above what real configs use, far below a "billion laughs". */
const MAX_ALIASES = 100;

export function parseYamlConfig(text: string): Document.Parsed {
  const doc = parseDocument(text, { uniqueKeys: true, prettyErrors: false });
  const err = doc.errors[0];
  if (err) throw new MalformedConfig(`YAML: ${err.message.split('\n')[0]}`, { start: err.pos[0], end: err.pos[1] });
  try {
    // Expanding once with a bound detects alias bombs before anything else touches the document.
    doc.toJS({ maxAliasCount: MAX_ALIASES });
  } catch (e) {
    throw new MalformedConfig(`YAML: ${e instanceof Error ? e.message : String(e)} (more than ${MAX_ALIASES} alias expansions)`, { start: 0, end: Math.min(text.length, 1) });
  }
  if (doc.contents !== null && !isMap(doc.contents)) {
    const r = doc.contents.range;
    throw new MalformedConfig('YAML: the config must be a mapping of keys to values', r ? { start: r[0], end: r[1] } : { start: 0, end: 0 });
  }
  return doc;
}

/** The top-level scalar node of `key`, or undefined when absent. Non-scalar values are a type error. */
export function topScalar(doc: Document.Parsed, key: string): Scalar | undefined {
  if (!isMap(doc.contents)) return undefined;
  const pair = doc.contents.items.find((p) => isScalar(p.key) && p.key.value === key);
  if (!pair || pair.value === null || pair.value === undefined) return undefined;
  if (!isScalar(pair.value)) {
    const r = (pair.value as { range?: [number, number, number] }).range;
    throw new MalformedConfig(`${key} must be a single value, not a list, mapping or alias`, r ? { start: r[0], end: r[1] } : { start: 0, end: 0 });
  }
  if (pair.value.value === null) return undefined;
  return pair.value;
}

export function valueRange(node: Scalar): TextRange {
  const [start, end] = node.range ?? [0, 0];
  return { start, end };
}

/** Renders a string in the node's own quoting style so the edit looks like the user's. */
function renderString(node: Scalar, value: string): string {
  switch (node.type) {
    case Scalar.QUOTE_SINGLE:
      return `'${value.replace(/'/g, "''")}'`;
    case Scalar.QUOTE_DOUBLE:
      return JSON.stringify(value);
    default:
      return value;
  }
}

export function replaceNode(node: Scalar, newText: string): TextEdit[] {
  return [{ ...valueRange(node), newText }];
}

/** A positive whole number (num_processes, num_machines). */
export function readCount(doc: Document.Parsed, key: string): ConfigValue<number> | undefined {
  const node = topScalar(doc, key);
  if (!node) return undefined;
  const v = node.value;
  // 0 processes or machines launches nothing: Accelerate refuses it, so WAP does too.
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 1) {
    throw new MalformedConfig(`${key} must be a positive whole number, got ${JSON.stringify(v)}`, valueRange(node));
  }
  return { value: v, range: valueRange(node), set: (n) => replaceNode(node, String(n)) };
}

export function readString(doc: Document.Parsed, key: string): ConfigValue<string> | undefined {
  const node = topScalar(doc, key);
  if (!node) return undefined;
  const v = node.value;
  // YAML 1.1 readers (PyYAML, which Accelerate uses) read a bare `no` as false.
  const s = v === false ? 'no' : v === true ? 'yes' : v;
  if (typeof s !== 'string') throw new MalformedConfig(`${key} must be a string, got ${JSON.stringify(v)}`, valueRange(node));
  return { value: s, range: valueRange(node), set: (next) => replaceNode(node, renderString(node, next)) };
}

/** Accelerate's gpu_ids: 'all', one id, or a comma-separated list. `undefined` value means all GPUs. */
export function readGpuIds(doc: Document.Parsed, key: string): ConfigValue<number[]> | undefined {
  const node = topScalar(doc, key);
  if (!node) return undefined;
  const raw = typeof node.value === 'number' ? String(node.value) : node.value;
  if (typeof raw !== 'string') throw new MalformedConfig(`${key} must be 'all' or a list like 0,1,2,3`, valueRange(node));
  if (raw.trim().toLowerCase() === 'all') return undefined;
  const parts = raw.split(',').map((p) => p.trim());
  if (!parts.every((p) => /^\d+$/.test(p))) throw new MalformedConfig(`${key} must be 'all' or GPU ids like 0,1,2,3, got ${JSON.stringify(raw)}`, valueRange(node));
  return { value: parts.map(Number), range: valueRange(node), set: (ids) => replaceNode(node, renderString(node, ids.join(','))) };
}

/** The block mapping at `path` (top level for []), or undefined when absent or not a mapping. */
export function mapAt(doc: Document.Parsed, path: string[]): YAMLMap | undefined {
  let node: unknown = doc.contents;
  for (const key of path) {
    if (!isMap(node)) return undefined;
    node = node.items.find((p) => isScalar(p.key) && p.key.value === key)?.value;
  }
  return isMap(node) ? node : undefined;
}

/** A scalar inside a nested mapping (fsdp_config.fsdp_sharding_strategy), or undefined. */
export function nestedScalar(doc: Document.Parsed, path: string[], key: string): Scalar | undefined {
  const map = mapAt(doc, path);
  const pair = map?.items.find((p) => isScalar(p.key) && p.key.value === key);
  return pair && isScalar(pair.value) && pair.value.value !== null ? pair.value : undefined;
}

/**
 * An insertion of `key: value` as the last entry of the block mapping at
 * `path`, on a line of its own with the entries' indentation; nothing else in
 * the text moves. Undefined for flow mappings ({a: 1}) and absent mappings.
 */
export function insertYamlKey(text: string, doc: Document.Parsed, path: string[], key: string, value: string): TextEdit[] | undefined {
  const map = mapAt(doc, path);
  if (!map || map.flow) return undefined;
  const last = map.items[map.items.length - 1];
  const keyNode = last && isScalar(last.key) ? last.key : undefined;
  if (!keyNode?.range) {
    return path.length === 0 ? [{ start: text.length, end: text.length, newText: `${text.endsWith('\n') || text === '' ? '' : '\n'}${key}:${sep(value)}${value}\n` }] : undefined;
  }
  const lineStart = text.lastIndexOf('\n', keyNode.range[0] - 1) + 1;
  const indent = text.slice(lineStart, keyNode.range[0]);
  if (/\S/.test(indent)) return undefined; // `- key:` in a sequence: not a place WAP writes into
  const valueEnd = (last!.value as { range?: [number, number, number] } | null)?.range?.[1] ?? keyNode.range[1];
  // A block list or mapping ends past its last line break: the next line starts there.
  if (text[valueEnd - 1] === '\n') return [{ start: valueEnd, end: valueEnd, newText: `${indent}${key}:${sep(value)}${value}\n` }];
  const nl = text.indexOf('\n', valueEnd);
  if (nl < 0) return [{ start: text.length, end: text.length, newText: `\n${indent}${key}:${sep(value)}${value}` }];
  return [{ start: nl + 1, end: nl + 1, newText: `${indent}${key}:${sep(value)}${value}\n` }];
}

/** A nested block (value starting on the next line) follows the colon directly. */
const sep = (value: string): string => (value.startsWith('\n') ? '' : ' ');

/** Rewrites a scalar in its own quoting style. */
export function setScalar(node: Scalar, value: string | number | boolean): TextEdit[] {
  return replaceNode(node, typeof value === 'string' ? renderString(node, value) : String(value));
}

/** Whether the top-level mapping has `key` at all (any value, null included). */
export function hasTopKey(doc: Document.Parsed, key: string): boolean {
  return isMap(doc.contents) && doc.contents.items.some((p) => isScalar(p.key) && p.key.value === key);
}

/** The top-level `key: value` pair (its value may be null: `key:` alone), or undefined. */
export function topPair(doc: Document.Parsed, key: string): Pair<Scalar.Parsed, ParsedNode | null> | undefined {
  if (!isMap(doc.contents)) return undefined;
  return doc.contents.items.find((p): p is Pair<Scalar.Parsed, ParsedNode | null> => isScalar(p.key) && p.key.value === key);
}

/** Where a node's text ends ((key: value) pairs whose value is null end at the key). */
const nodeEnd = (node: unknown, fallback: number): number => (node as { range?: [number, number, number] } | null)?.range?.[1] ?? fallback;

/**
 * `key: value` at the top level: the value rewritten where the key is there (`key:` alone or `key: null` too, so
 * the key is never written twice), else inserted as the mapping's last entry.
 */
export function setTopKey(text: string, doc: Document.Parsed, key: string, value: string): TextEdit[] | undefined {
  const pair = topPair(doc, key);
  if (!pair) return insertYamlKey(text, doc, [], key, value);
  const node = pair.value;
  const keyEnd = pair.key.range[1];
  // `key:` alone: its null value has an empty range at the line's end (or none).
  if (!node?.range || node.range[0] === node.range[1]) {
    const colon = text.indexOf(':', keyEnd);
    return [{ start: colon + 1, end: colon + 1, newText: ` ${value}` }];
  }
  return [{ start: node.range[0], end: node.range[1], newText: value }];
}

/** Removes a top-level key with its value: its lines go, comments on them too; nothing else moves. */
export function removeTopKey(text: string, doc: Document.Parsed, key: string): TextEdit[] {
  const pair = topPair(doc, key);
  if (!pair) return [];
  const start = text.lastIndexOf('\n', pair.key.range[0] - 1) + 1;
  const end = nodeEnd(pair.value, pair.key.range[1]);
  if (text[end - 1] === '\n') return [{ start, end, newText: '' }];
  const nl = text.indexOf('\n', end);
  return [{ start, end: nl < 0 ? text.length : nl + 1, newText: '' }];
}
