import type { Node } from 'web-tree-sitter';
import { MAX_CONFIG_CHARS } from './check';
import { guardOf, pythonReady, withPythonTree } from './python';

/**
 * The first of several readings of the files beside a model that gives an
 * answer (a precision, an optimizer). A reading that throws is a malformed
 * config, which the config checks report; here it just says nothing.
 */
export function firstHint<T>(readings: Iterable<() => T | undefined>): T | undefined {
  for (const read of readings) {
    try {
      const hint = read();
      if (hint) return hint;
    } catch {
      // Reported by the config checks, not here.
    }
  }
  return undefined;
}

/**
 * The first answer of `read` over the Python files among `files`: the model's own file first, then the others in the
 * order given. Oversized files say nothing.
 */
export function firstPythonHint<T>(files: ReadonlyArray<{ name: string; text: string }>, modelFile: string | undefined, maxChars: number, read: (name: string, text: string) => T | undefined): T | undefined {
  const python = files.filter((f) => /\.py$/i.test(f.name) && f.text.length <= maxChars);
  const ordered = [...python.filter((f) => f.name === modelFile), ...python.filter((f) => f.name !== modelFile)];
  return firstHint(ordered.map((f) => () => read(f.name, f.text)));
}

/**
 * The first call that always runs (no `if` around it) and that `read` makes a hint of, in the model's own file first,
 * then the others: what the code switches on for every run (gradient checkpointing, channels_last, an attention
 * kernel). A file that never mentions `mentions` is not parsed.
 */
export function firstCallHint<T>(files: ReadonlyArray<{ name: string; text: string }>, modelFile: string | undefined, mentions: RegExp, read: (call: Node, name: string) => T | undefined): T | undefined {
  return firstPythonHint(files, modelFile, MAX_CONFIG_CHARS, (name, text) => {
    if (!pythonReady() || !mentions.test(text)) return undefined;
    return withPythonTree(text, (root) => {
      for (const call of root.descendantsOfType('call')) {
        if (!call || guardOf(call)) continue;
        const hint = read(call, name);
        if (hint) return hint;
      }
      return undefined;
    });
  });
}
