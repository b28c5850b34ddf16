/**
 * A small quote-aware tokenizer for launch command lines in shell scripts and
 * Makefile recipes.
 *
 * Why not tree-sitter-bash: Makefiles are not bash (make variables `$(NGPU)`,
 * `$$` escapes, `@`-prefixed recipe lines, `NGPU := 8` assignments), so a bash
 * grammar would misread half the files this reader exists for; and all WAP
 * needs is words with their offsets, split into commands. This tokenizer is
 * linear in the text, never recurses, and keeps the raw span of every word so
 * an edit replaces exactly the value's characters.
 */

export interface Word {
  /** The word as written (quotes, `$…` kept). */
  raw: string;
  start: number;
  end: number;
  /** Set where the word is the default of an expansion the script leaves unset (`${1:-example.py}`, shellExpansion.ts). */
  defaultOf?: string;
}

/** One simple command: words up to `;`, `&&`, `||`, `|`, `&` or an unescaped newline. */
export type Command = Word[];

export function isMakefileName(fileName: string): boolean {
  const base = fileName.replace(/^.*[\\/]/, '');
  return /^(GNU)?makefile$/i.test(base) || /\.(mk|make)$/i.test(base);
}

/** Index just past the quote/expansion that starts at `i`, or text.length when unterminated. */
function skipQuoted(text: string, i: number): number {
  const c = text[i];
  if (c === "'") {
    const close = text.indexOf("'", i + 1);
    return close < 0 ? text.length : close + 1;
  }
  if (c === '"' || c === '`') {
    for (let j = i + 1; j < text.length; j++) {
      if (text[j] === '\\') j++;
      else if (text[j] === c) return j + 1;
    }
    return text.length;
  }
  // $( … ) or ${ … }: balanced brackets; quotes inside are skipped as units.
  const open = text[i + 1]!;
  const close = open === '(' ? ')' : '}';
  let depth = 0;
  for (let j = i + 1; j < text.length; j++) {
    const d = text[j]!;
    if (d === open) depth++;
    else if (d === close && --depth === 0) return j + 1;
    else if (d === "'" || d === '"' || d === '`') j = skipQuoted(text, j) - 1;
    else if (d === '\n' && open === '{') return j; // ${ never spans lines in practice; stop runaway
  }
  return text.length;
}

export function splitCommands(text: string): Command[] {
  const commands: Command[] = [];
  let words: Word[] = [];
  let wordStart = -1;
  const endWord = (at: number): void => {
    if (wordStart >= 0) words.push({ raw: text.slice(wordStart, at), start: wordStart, end: at });
    wordStart = -1;
  };
  const endCommand = (): void => {
    if (words.length) commands.push(words);
    words = [];
  };
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (c === '\\') {
      const nl = text[i + 1] === '\n' ? 2 : text[i + 1] === '\r' && text[i + 2] === '\n' ? 3 : 0;
      if (nl) {
        endWord(i); // line continuation: the command goes on
        i += nl;
      } else {
        if (wordStart < 0) wordStart = i;
        i += 2;
      }
      continue;
    }
    if (c === ' ' || c === '\t' || c === '\r') {
      endWord(i);
      i++;
      continue;
    }
    if (c === '\n' || c === ';' || c === '&' || c === '|' || c === '(' || c === ')') {
      endWord(i);
      endCommand();
      i++;
      continue;
    }
    if (c === '#' && wordStart < 0) {
      const nl = text.indexOf('\n', i);
      i = nl < 0 ? text.length : nl;
      continue;
    }
    if (wordStart < 0) wordStart = i;
    if (c === "'" || c === '"' || c === '`' || (c === '$' && (text[i + 1] === '(' || text[i + 1] === '{'))) i = skipQuoted(text, i);
    else i++;
  }
  endWord(text.length);
  endCommand();
  return commands;
}

/** A word's value with one level of surrounding quotes removed, and the span of that value. */
export function unquote(raw: string, start: number): { value: string; start: number; end: number } {
  const q = raw[0];
  if (raw.length >= 2 && (q === '"' || q === "'") && raw[raw.length - 1] === q) {
    return { value: raw.slice(1, -1), start: start + 1, end: start + raw.length - 1 };
  }
  return { value: raw, start, end: start + raw.length };
}

/** `NAME=value` in a word → the value part (unquoted) and its span. */
export function assignmentValue(word: Word, name?: string): { name: string; value: string; start: number; end: number } | undefined {
  const m = /^([A-Za-z_][A-Za-z0-9_]*)=/.exec(word.raw);
  if (!m || (name && m[1] !== name)) return undefined;
  const v = unquote(word.raw.slice(m[0].length), word.start + m[0].length);
  return { name: m[1]!, ...v };
}

export interface Assignment {
  name: string;
  value: string;
  start: number;
  end: number;
}

/**
 * Variable assignments: shell `NAME=value` / `export NAME=value` words, and in
 * Makefiles `NAME := value`, `NAME ?= value`, `NAME = value` lines.
 */
export function findAssignments(text: string, commands: Command[], makefile: boolean): Assignment[] {
  const out: Assignment[] = [];
  for (const words of commands) {
    for (const w of words) {
      if (w.raw === 'export' || w.raw === 'env' || w.raw === 'local' || w.raw === 'readonly' || w.raw === 'declare') continue;
      const a = assignmentValue(w);
      if (!a) break; // assignments only before the command name
      out.push(a);
    }
  }
  if (makefile) {
    const re = /^ *(?:export[ \t]+|override[ \t]+)?([A-Za-z_][A-Za-z0-9_]*)[ \t]*(::=|:=|\?=|\+=|=)[ \t]*([^#\n]*?)[ \t]*(?:#.*)?$/gm;
    for (let m = re.exec(text); m; m = re.exec(text)) {
      if (m[2] === '+=') continue;
      const valueStart = m.index + m[0].indexOf(m[3]!, m[0].indexOf(m[2]!) + m[2]!.length);
      if (out.some((a) => a.start === valueStart)) continue;
      const v = unquote(m[3]!, valueStart);
      out.push({ name: m[1]!, ...v });
    }
  }
  return out;
}

/** A value read through a variable; `defaultOf` when it is the `${NAME:-default}` default the script writes. */
export interface ResolvedValue {
  value: string;
  start: number;
  end: number;
  /** The expansion whose default this is (`${2:-4}`): the variable is not set in the script, so the run may give another. */
  defaultOf?: string;
}

/**
 * `$NGPU`, `${NGPU}`, `$(NGPU)` (make), `${NGPU:-8}`, `${2:-4}` → the one place the value is written. Undefined when
 * it is assigned more than once or computed. A default counts where nothing in the script sets the variable: a
 * positional parameter (the launch script's own arguments) or one left to the environment; it is marked, so that
 * readers say they read the default.
 */
export function resolveReference(raw: string, start: number, assignments: Assignment[], depth = 0): ResolvedValue | undefined {
  const m = /^\$(?:\{([A-Za-z_]\w*|\d+)(?::?-([^}]*))?\}|\(([A-Za-z_]\w*)\)|([A-Za-z_]\w*))$/.exec(raw);
  if (!m) return undefined;
  const name = m[1] ?? m[3] ?? m[4]!;
  // Positional parameters are the launch script's arguments: never assigned in it.
  const defs = /^\d/.test(name) ? [] : assignments.filter((a) => a.name === name);
  const def = defs[0];
  if (defs.length === 1 && def!.value.startsWith('$') && depth < 3) {
    // NGPU=${NGPU:-8} refers to itself: without that assignment the default is what counts.
    return resolveReference(def!.value, def!.start, assignments.filter((a) => a !== def), depth + 1);
  }
  if (defs.length === 1) return def;
  if (defs.length === 0 && m[2] !== undefined) {
    const at = start + raw.indexOf(':-') + 2;
    return { value: m[2], start: raw.includes(':-') ? at : start + raw.indexOf('-') + 1, end: start + raw.length - 1, defaultOf: raw };
  }
  return undefined;
}
