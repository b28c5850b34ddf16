/**
 * Comments a fix would contradict. A fix edits only the value, so a comment
 * such as "# all eight GPUs of the box" above `num_processes: 8` would still
 * say eight after the fix writes 3. WAP never rewrites the user's prose; it
 * names the comment in the fix's title so the user sees it before applying.
 */
import type { ConfigFix, TextRange } from './types';

const NUMBER_WORDS = ['zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten', 'eleven', 'twelve', 'thirteen', 'fourteen', 'fifteen', 'sixteen'];

/** Words that say a value in prose: 8 → '8', 'eight'; 'fp32' → 'fp32', 'float32', 'full precision'. */
export function wordsFor(value: unknown): string[] {
  if (typeof value === 'number') return [String(value), ...(NUMBER_WORDS[value] ? [NUMBER_WORDS[value]!] : [])];
  if (typeof value !== 'string') return [];
  const v = value.toLowerCase();
  const synonyms: Record<string, string[]> = {
    fp32: ['fp32', 'float32', 'full precision', '32-bit', '32-true'],
    fp16: ['fp16', 'float16', 'half precision', '16-mixed'],
    bf16: ['bf16', 'bfloat16', 'bf16-mixed'],
  };
  return synonyms[v] ?? (v.length >= 3 && !['true', 'false', 'none', 'auto'].includes(v) ? [v] : []);
}

const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The comment text of a line (from `#` or `//` outside quotes), or undefined. */
function commentOf(line: string): string | undefined {
  let quote = '';
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quote) {
      if (c === '\\') i++;
      else if (c === quote) quote = '';
    } else if (c === '"' || c === "'") quote = c;
    else if (c === '#' || (c === '/' && line[i + 1] === '/')) return line.slice(i).trim();
  }
  return undefined;
}

/**
 * The comment beside or directly above `range` that mentions one of `words`
 * (as whole words), or undefined.
 */
export function contradictingComment(text: string, range: TextRange, words: string[]): string | undefined {
  if (words.length === 0) return undefined;
  const re = new RegExp(`(^|[^\\w.-])(${words.map(escape).join('|')})(?![\\w])`, 'i');
  const lineStart = text.lastIndexOf('\n', range.start - 1) + 1;
  const lineEnd = text.indexOf('\n', range.end);
  const own = text.slice(range.end, lineEnd < 0 ? text.length : lineEnd);
  const candidates: string[] = [];
  const trailing = commentOf(own);
  if (trailing) candidates.push(trailing);
  // Comment-only lines directly above (a block comment introducing the value).
  let end = lineStart - 1;
  for (let k = 0; k < 3 && end > 0; k++) {
    const start = text.lastIndexOf('\n', end - 1) + 1;
    const line = text.slice(start, end);
    if (!/^\s*(#|\/\/)/.test(line)) break;
    candidates.push(line.trim());
    end = start - 1;
  }
  return candidates.find((c) => re.test(c));
}

/** The fix with its title naming the comments it leaves saying the old value. */
export function flagComments(fix: ConfigFix, comments: Array<string | undefined>): ConfigFix {
  const found = [...new Set(comments.filter((c): c is string => !!c))].filter((c) => !fix.title.includes(`"${c.length > 60 ? c.slice(0, 57) : c}`));
  if (found.length === 0) return fix;
  const quoted = found.map((c) => `"${c.length > 60 ? `${c.slice(0, 57)}…` : c}"`).join(', ');
  return { ...fix, title: `${fix.title} — the comment ${quoted} will no longer be true: update it` };
}

/**
 * For value-replacing edits of a fix (a number or a word replaced by another),
 * the comments that mention the replaced value.
 */
export function flagReplacedValues(text: string, fix: ConfigFix): ConfigFix {
  const comments = fix.edits.map((e) => {
    const old = text.slice(e.start, e.end).replace(/^["']|["']$/g, '');
    if (!old || /\s/.test(old) || old.length > 24 || old === e.newText.replace(/^["']|["']$/g, '')) return undefined;
    const value = /^\d+$/.test(old) ? Number(old) : old;
    return contradictingComment(text, e, wordsFor(value));
  });
  return flagComments(fix, comments);
}
