/**
 * A small TOML reader for training configs (torchtitan's job files): tables,
 * `key = value` with strings, numbers, booleans and arrays, and comments.
 * It keeps the source span of every value so an edit replaces exactly the
 * value's characters; comments, order and spacing elsewhere stay byte for
 * byte. Why not a TOML library: those parse to plain objects and re-print,
 * which loses comments; configs need spans, not a printer.
 */
import { MalformedConfig, type TextEdit, type TextRange } from './types';

export interface TomlEntry {
  table: string;
  key: string;
  /** The value as written (quotes kept). */
  raw: string;
  value: string | number | boolean | undefined;
  range: TextRange;
}

export interface TomlTable {
  name: string;
  /** Offset just past the header line (or 0 for the root table). */
  bodyStart: number;
  /** Offset just past the table's last key line (bodyStart when it has none). */
  lastEntryEnd: number;
}

export interface TomlDoc {
  entries: TomlEntry[];
  tables: TomlTable[];
}

const BARE_KEY = /^[A-Za-z0-9_-]+(\s*\.\s*[A-Za-z0-9_-]+)*/;

function parseScalar(raw: string): TomlEntry['value'] {
  if (/^"(?:[^"\\]|\\.)*"$/.test(raw)) return JSON.parse(raw) as string;
  if (/^'[^']*'$/.test(raw)) return raw.slice(1, -1);
  if (raw === 'true' || raw === 'false') return raw === 'true';
  if (/^[+-]?\d[\d_]*$/.test(raw)) return Number(raw.replace(/_/g, ''));
  if (/^[+-]?(\d[\d_]*)?(\.\d+)?([eE][+-]?\d+)?$/.test(raw) && /\d/.test(raw)) return Number(raw.replace(/_/g, ''));
  return undefined; // arrays, inline tables, dates: kept as raw text
}

/** End of a value starting at `i` on its line: a quoted string, a bracketed array (may span lines) or a bare token. */
function valueEnd(text: string, i: number): number {
  const c = text[i];
  if (c === '"' || c === "'") {
    const triple = text.startsWith(c.repeat(3), i);
    if (triple) {
      const close = text.indexOf(c.repeat(3), i + 3);
      if (close < 0) throw new MalformedConfig('TOML: unterminated multi-line string', { start: i, end: i + 3 });
      return close + 3;
    }
    for (let j = i + 1; j < text.length && text[j] !== '\n'; j++) {
      if (c === '"' && text[j] === '\\') j++;
      else if (text[j] === c) return j + 1;
    }
    throw new MalformedConfig('TOML: unterminated string', { start: i, end: i + 1 });
  }
  if (c === '[' || c === '{') {
    let depth = 0;
    for (let j = i; j < text.length; j++) {
      const d = text[j]!;
      if (d === '"' || d === "'") j = valueEnd(text, j) - 1;
      else if (d === '#') j = (text.indexOf('\n', j) + 1 || text.length) - 1;
      else if (d === '[' || d === '{') depth++;
      else if ((d === ']' || d === '}') && --depth === 0) return j + 1;
    }
    throw new MalformedConfig('TOML: unterminated array or inline table', { start: i, end: i + 1 });
  }
  let j = i;
  while (j < text.length && !/[\s#,]/.test(text[j]!)) j++;
  return j;
}

export function parseToml(text: string): TomlDoc {
  const entries: TomlEntry[] = [];
  const tables: TomlTable[] = [{ name: '', bodyStart: 0, lastEntryEnd: 0 }];
  let table = tables[0]!;
  let pos = 0;
  while (pos < text.length) {
    const nl = text.indexOf('\n', pos);
    const lineEnd = nl < 0 ? text.length : nl;
    const line = text.slice(pos, lineEnd);
    const trimmed = line.trim();
    const indent = line.length - line.trimStart().length;
    if (trimmed === '' || trimmed.startsWith('#')) {
      pos = lineEnd + 1;
      continue;
    }
    const header = /^\[\[?\s*([^\]]+?)\s*\]\]?\s*(#.*)?$/.exec(trimmed);
    if (header) {
      table = { name: header[1]!.replace(/\s*\.\s*/g, '.').replace(/"/g, ''), bodyStart: lineEnd + 1, lastEntryEnd: Math.min(lineEnd + 1, text.length) };
      tables.push(table);
      pos = lineEnd + 1;
      continue;
    }
    const key = BARE_KEY.exec(trimmed) ?? /^"[^"]*"/.exec(trimmed);
    const eq = key ? trimmed.slice(key[0].length).match(/^\s*=\s*/) : null;
    if (!key || !eq) throw new MalformedConfig(`TOML: expected 'key = value' or a [table], got '${trimmed.slice(0, 40)}'`, { start: pos + indent, end: lineEnd });
    const start = pos + indent + key[0].length + eq[0].length;
    const end = valueEnd(text, start);
    const rest = text.slice(end, text.indexOf('\n', end) < 0 ? text.length : text.indexOf('\n', end));
    if (!/^\s*(#.*)?$/.test(rest)) throw new MalformedConfig(`TOML: unexpected '${rest.trim().slice(0, 20)}' after the value`, { start: end, end: end + rest.length });
    const raw = text.slice(start, end);
    const name = key[0].replace(/\s*\.\s*/g, '.').replace(/"/g, '');
    if (entries.some((e) => e.table === table.name && e.key === name)) throw new MalformedConfig(`TOML: duplicate key '${name}' in [${table.name}]`, { start: pos + indent, end: lineEnd });
    entries.push({ table: table.name, key: name, raw, value: parseScalar(raw), range: { start, end } });
    const valueLineEnd = text.indexOf('\n', end);
    table.lastEntryEnd = valueLineEnd < 0 ? text.length : valueLineEnd + 1;
    pos = table.lastEntryEnd;
  }
  return { entries, tables };
}

export function tomlEntry(doc: TomlDoc, table: string, key: string): TomlEntry | undefined {
  return doc.entries.find((e) => e.table === table && e.key === key);
}

export function renderToml(value: string | number | boolean, like?: TomlEntry): string {
  if (typeof value !== 'string') return String(value);
  return like?.raw.startsWith("'") ? `'${value}'` : JSON.stringify(value);
}

/**
 * Edits that set `table.key`: the value's span when present, else a new line
 * after the table's last key, else a new table at the end of the file.
 */
export function setToml(text: string, doc: TomlDoc, table: string, key: string, value: string | number | boolean): TextEdit[] {
  const entry = tomlEntry(doc, table, key);
  if (entry) return [{ ...entry.range, newText: renderToml(value, entry) }];
  const line = `${key} = ${renderToml(value)}`;
  const t = doc.tables.find((x) => x.name === table);
  if (t) {
    const at = t.lastEntryEnd;
    const needsNl = at > 0 && text[at - 1] !== '\n';
    return [{ start: at, end: at, newText: `${needsNl ? '\n' : ''}${line}\n` }];
  }
  const sep = text.length === 0 || text.endsWith('\n\n') ? '' : text.endsWith('\n') ? '\n' : '\n\n';
  return [{ start: text.length, end: text.length, newText: `${sep}[${table}]\n${line}\n` }];
}
