/**
 * OmegaConf's `${...}` interpolations, resolved the way OmegaConf resolves them when the program reads a key
 * (OmegaConf docs, 'Variable interpolation' and 'Resolvers'): a lone `${a.b}` is the referenced node itself, typed;
 * `${a}` inside other text is string concatenation of Python's `str()` of each value. What only the running program
 * knows (an environment variable, a custom resolver, a `???` given on the command line) becomes an `Unresolved` that
 * says why, so a model sized by it can say so instead of guessing. Pure: no file or process access.
 */
import { parse as parseYaml } from 'yaml';

/** A value OmegaConf would compute at run time but WAP cannot (an env var, a custom resolver, a missing key): why. */
export class Unresolved {
  constructor(readonly why: string) {}
}

/** OmegaConf's MISSING (`???`): kept apart so `oc.select` can fall back to its default as OmegaConf does. */
class Mandatory extends Unresolved {}

type Seg = string | number;
type Found = { value: unknown } | { missing: true };
type Piece = { text: string } | { body: string };

const MISSING: Found = { missing: true };

const isDict = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Unresolved);

/** A deep copy of plain containers: a value referenced twice must not be one shared object in the new tree. */
const copy = (v: unknown): unknown =>
  Array.isArray(v) ? v.map(copy) : isDict(v) ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, copy(x)])) : v;

/** `a.list[0].b` as people write it, for messages. */
const keyName = (path: Seg[]): string =>
  path.map((s, i) => (typeof s === 'number' ? `[${s}]` : i === 0 ? s : `.${s}`)).join('');

/** The first Unresolved inside a value: concatenating a container that holds one cannot be computed either. */
function firstUnresolved(v: unknown): Unresolved | undefined {
  if (v instanceof Unresolved) return v;
  const items = Array.isArray(v) ? v : isDict(v) ? Object.values(v) : [];
  for (const x of items) {
    const u = firstUnresolved(x);
    if (u) return u;
  }
  return undefined;
}

/** A float as Python's repr prints it: positional from 1e-4 up to 1e16, else `1e-05` style. */
function pyNum(n: number): string {
  if (Number.isNaN(n)) return 'nan';
  if (!Number.isFinite(n)) return n > 0 ? 'inf' : '-inf';
  if (Number.isInteger(n) && Math.abs(n) < 1e16) return String(n);
  const [mantissa, e] = n.toExponential().split('e');
  const exp = Number(e);
  if (exp >= -4 && exp < 16) return String(n);
  return `${mantissa}e${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`;
}

function pyRepr(v: unknown): string {
  return typeof v === 'string' ? `'${v.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'` : pyStr(v);
}

/** Python's `str()` of a value, which is what OmegaConf puts into a string with `${...}` inside it. */
function pyStr(v: unknown): string {
  if (typeof v === 'string') return v;
  if (typeof v === 'number') return pyNum(v);
  if (typeof v === 'boolean') return v ? 'True' : 'False';
  if (v === null || v === undefined) return 'None';
  if (Array.isArray(v)) return `[${v.map(pyRepr).join(', ')}]`;
  if (isDict(v)) return `{${Object.entries(v).map(([k, x]) => `${pyRepr(k)}: ${pyRepr(x)}`).join(', ')}}`;
  return String(v);
}

/** Where the `${` opened before `from` closes, skipping nested `${...}`, brackets and quoted resolver arguments. */
function closing(s: string, from: number): number {
  let depth = 1;
  let quote = '';
  for (let j = from; j < s.length; j++) {
    const c = s[j];
    if (quote) {
      if (c === '\\') j++;
      else if (c === quote) quote = '';
    } else if (c === "'" || c === '"') quote = c;
    else if (c === '{') depth++;
    else if (c === '}' && --depth === 0) return j;
  }
  return -1;
}

/**
 * A string as literal text and `${...}` bodies; undefined when a `${` never closes (OmegaConf raises a grammar
 * error there). `\${` is an escaped, literal `${`; `\\${` is a backslash then an interpolation (OmegaConf docs,
 * 'Escaping interpolations').
 */
function splitPieces(s: string): Piece[] | undefined {
  const out: Piece[] = [];
  let text = '';
  for (let i = 0; i < s.length; ) {
    if (s.startsWith('\\\\${', i)) {
      text += '\\';
      i += 2;
    } else if (s.startsWith('\\${', i)) {
      text += '${';
      i += 3;
    } else if (s.startsWith('${', i)) {
      const end = closing(s, i + 2);
      if (end < 0) return undefined;
      if (text) out.push({ text });
      text = '';
      out.push({ body: s.slice(i + 2, end) });
      i = end + 1;
    } else text += s[i++];
  }
  if (text || out.length === 0) out.push({ text });
  return out;
}

/** Resolver arguments split at top-level commas (not inside quotes, `${...}`, `[...]` or `{...}`), trimmed. */
function splitArgs(text: string): string[] {
  if (text.trim() === '') return [];
  const out: string[] = [];
  let depth = 0;
  let quote = '';
  let start = 0;
  for (let j = 0; j < text.length; j++) {
    const c = text[j];
    if (quote) {
      if (c === '\\') j++;
      else if (c === quote) quote = '';
    } else if (c === "'" || c === '"') quote = c;
    else if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') depth--;
    else if (c === ',' && depth === 0) {
      out.push(text.slice(start, j).trim());
      start = j + 1;
    }
  }
  out.push(text.slice(start).trim());
  return out;
}

/** `a.b[0].c` or `a.b.0.c` as segments; undefined for a malformed key like `a..b`. */
function parseKey(key: string): string[] | undefined {
  const segs: string[] = [];
  for (const part of key.split('.')) {
    const m = /^([^[\]]*)((?:\[[^[\]]*\])*)$/.exec(part);
    if (!m || (!m[1] && !m[2])) return undefined;
    if (m[1]) segs.push(m[1]);
    for (const b of m[2].matchAll(/\[([^[\]]*)\]/g)) segs.push(b[1].trim());
  }
  return segs;
}

/** A resolver argument written bare (`8`, `true`, `null`, `abc`) as OmegaConf's grammar types it. */
function scalar(text: string): unknown {
  if (text === '') return '';
  try {
    const v: unknown = parseYaml(text);
    return v === undefined ? text : v;
  } catch {
    return text;
  }
}

/** OmegaConf's own resolvers WAP does not evaluate (OmegaConf docs, 'Built-in resolvers'). */
const OMEGACONF_RESOLVERS = new Set(['oc.decode', 'oc.create', 'oc.deprecated', 'oc.dict.keys', 'oc.dict.values']);

class Resolver {
  /** Resolved values of interpolation strings, by raw path, so a chain read many times is resolved once. */
  private readonly memo = new Map<string, unknown>();
  /** Raw paths of the strings being resolved now: meeting one again is a cycle. */
  private readonly stack: Seg[][] = [];

  constructor(private readonly root: unknown) {}

  /** The raw node at `path`, resolved, as a new tree. */
  node(raw: unknown, path: Seg[]): unknown {
    if (Array.isArray(raw)) return raw.map((v, i) => this.node(v, [...path, i]));
    if (isDict(raw)) return Object.fromEntries(Object.entries(raw).map(([k, v]) => [k, this.node(v, [...path, k])]));
    if (raw === '???') return new Mandatory(`${keyName(path)} is ??? (mandatory, given at run time)`);
    if (typeof raw !== 'string' || !raw.includes('${')) return raw;
    const id = JSON.stringify(path);
    if (this.memo.has(id)) return copy(this.memo.get(id));
    const at = this.stack.findIndex((p) => JSON.stringify(p) === id);
    if (at >= 0) {
      const chain = [...this.stack.slice(at), path].map(keyName).join(' -> ');
      return new Unresolved(`${keyName(path)}: interpolation cycle ${chain}`);
    }
    this.stack.push(path);
    const value = this.text(raw, path, true);
    this.stack.pop();
    this.memo.set(id, value);
    return copy(value);
  }

  /** A string with interpolations: typed when it is one `${...}` alone (and `typed`), else concatenated. */
  private text(raw: string, path: Seg[], typed: boolean): unknown {
    const pieces = splitPieces(raw);
    if (!pieces) return new Unresolved(`${keyName(path)}: '${raw}' is not a well-formed interpolation`);
    const only = pieces[0];
    if (typed && pieces.length === 1 && 'body' in only) return this.interpolation(only.body, path);
    let out = '';
    for (const p of pieces) {
      if ('text' in p) {
        out += p.text;
        continue;
      }
      const v = this.interpolation(p.body, path);
      const bad = firstUnresolved(v);
      if (bad) return bad;
      out += pyStr(v);
    }
    return out;
  }

  /** The body of one `${...}`: a resolver call `name:args`, or a key (absolute or relative, maybe nested). */
  private interpolation(body: string, path: Seg[]): unknown {
    const call = /^\s*([A-Za-z_][\w.-]*)\s*:([\s\S]*)$/.exec(body);
    if (call) return this.resolver(call[1], call[2], body, path);
    const key = this.keyText(body.trim(), path);
    if (key instanceof Unresolved) return key;
    const found = this.select(key, path);
    return 'missing' in found ? new Unresolved(`\${${body.trim()}}: no key ${key} in the config`) : found.value;
  }

  /** A key that may itself hold interpolations (`${models.${name}}`), as text. */
  private keyText(text: string, path: Seg[]): string | Unresolved {
    if (!text.includes('${')) return text;
    const v = this.text(text, path, false);
    return v instanceof Unresolved ? v : pyStr(v);
  }

  /**
   * The node a key names, seen from the string at `from`. Leading dots are relative (OmegaConf docs, 'Relative
   * interpolation'): `.x` is in the same container, `..x` in its parent. An interpolation met on the way is
   * resolved first and the walk goes on inside its value.
   */
  private select(key: string, from: Seg[]): Found {
    let dots = 0;
    while (key[dots] === '.') dots++;
    if (from.length - dots < 0) return MISSING;
    const segs = key.length === dots ? [] : parseKey(key.slice(dots));
    if (!segs) return MISSING;
    let path: Seg[] = dots ? from.slice(0, from.length - dots) : [];
    let cur: unknown = this.root;
    for (const seg of path) cur = Array.isArray(cur) ? cur[seg as number] : isDict(cur) ? cur[seg] : undefined;
    let resolved = false;
    for (const seg of segs) {
      if (!resolved && typeof cur === 'string' && (cur.includes('${') || cur === '???')) {
        cur = this.node(cur, path);
        resolved = true;
      }
      if (cur instanceof Unresolved) return { value: cur };
      if (Array.isArray(cur)) {
        const i = Number(seg);
        if (!/^\d+$/.test(seg) || i >= cur.length) return MISSING;
        cur = cur[i];
        path = [...path, i];
      } else if (isDict(cur) && Object.hasOwn(cur, seg)) {
        cur = cur[seg];
        path = [...path, seg];
      } else return MISSING;
    }
    return { value: resolved ? copy(cur) : this.node(cur, path) };
  }

  /** One resolver argument: quoted text, a lone `${...}` (typed), text with `${...}` in it, or a bare scalar. */
  private arg(text: string, path: Seg[]): unknown {
    const q = text[0];
    if ((q === "'" || q === '"') && text.length >= 2 && text.endsWith(q)) {
      const inner = text.slice(1, -1).replace(/\\(.)/g, '$1');
      return inner.includes('${') ? this.text(inner, path, false) : inner;
    }
    return text.includes('${') ? this.text(text, path, true) : scalar(text);
  }

  private resolver(name: string, argText: string, body: string, path: Seg[]): unknown {
    const args = splitArgs(argText);
    const where = `\${${body.trim()}}`;
    if (name === 'oc.env' || name === 'env') {
      // The environment of the run is unknown when reading the code; a default is what a run without it gets, as
      // OmegaConf 2.1+ hands it back: a string (or None), which `${oc.decode:…}` would parse (OmegaConf docs, oc.env).
      if (args.length >= 2) {
        const fallback = this.arg(args[1], path);
        return fallback === null || fallback instanceof Unresolved || typeof fallback === 'string' ? fallback : pyStr(fallback);
      }
      const variable = args.length ? this.arg(args[0], path) : '';
      const v = typeof variable === 'string' ? variable : pyStr(variable);
      return new Unresolved(`\${${name}:${v}} reads the environment variable ${v} at run time`);
    }
    if (name === 'oc.select') {
      // OmegaConf docs, 'oc.select': the key's value, or the default (None without one) if absent or `???`.
      const key = args.length ? this.keyText(args[0], path) : '';
      if (key instanceof Unresolved) return key;
      const found = this.select(key, path);
      if (!('missing' in found) && !(found.value instanceof Mandatory)) return found.value;
      return args.length >= 2 ? this.arg(args[1], path) : null;
    }
    if (name === 'hydra') return new Unresolved(`${where}: Hydra fills in ${argText.trim()} when the job runs`);
    if (OMEGACONF_RESOLVERS.has(name)) return new Unresolved(`${where}: OmegaConf's ${name} resolver is not evaluated by WAP`);
    return new Unresolved(`${where}: ${name} is a custom resolver the program registers at run time`);
  }
}

/** The document with every `${...}` interpolation resolved, as OmegaConf resolves on access. Never throws. */
export function resolveInterpolations(root: unknown): unknown {
  try {
    return new Resolver(root).node(root, []);
  } catch (e) {
    // A pathological document (nesting deep enough to exhaust the stack) still gets an answer.
    return new Unresolved(`the config's interpolations could not be resolved (${e instanceof Error ? e.message : String(e)})`);
  }
}
