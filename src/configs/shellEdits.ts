/**
 * Edits of command-line words in shell scripts and Makefiles: drop an argument, insert one. They change only the
 * words the fix is about, so the user's layout (one flag a line, `\` continuations, bash arrays) stays as written.
 */
import type { TextEdit } from './types';

/**
 * Removes the argument spanning `start`..`end` (a flag and its value). One alone on its line (an array element, a
 * continued line ending in `\`) takes its line with it; elsewhere the blanks before it go, and its line stays, so a
 * last continued line never makes the command run on into the next.
 */
export function dropArgument(text: string, start: number, end: number): TextEdit[] {
  const lineStart = text.lastIndexOf('\n', start - 1) + 1;
  const nl = text.indexOf('\n', end);
  const lineEnd = nl < 0 ? text.length : nl;
  const rest = text.slice(end, lineEnd);
  const continued = /^\s*\\\s*$/.test(rest);
  // The line above ends in `\`: without this line's own `\`, removing it would join the command to the next line.
  const aboveContinues = /\\\r?\n$/.test(text.slice(0, lineStart));
  if (!/\S/.test(text.slice(lineStart, start)) && nl >= 0 && (continued || (/^\s*$/.test(rest) && !aboveContinues))) return [{ start: lineStart, end: nl + 1, newText: '' }];
  const before = text.slice(0, start).match(/[ \t]*$/)![0].length;
  return [{ start: start - before, end, newText: '' }];
}

/** Inserts ` words` right after offset `at` (a script word): on its line, so inside the command across continuations. */
export const insertAfter = (at: number, words: string): TextEdit[] => [{ start: at, end: at, newText: ` ${words}` }];
