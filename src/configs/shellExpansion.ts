/**
 * Argument lists a launch script keeps in variables, spliced into the command that expands them, as bash would:
 *   ARGS=(                                   DS_ARGS="--deepspeed ds_z3.json --bf16"
 *     --per_device_train_batch_size 4        torchrun --nproc_per_node 8 run_clm.py $DS_ARGS
 *     --bf16
 *   )
 *   torchrun --nproc_per_node 8 run_clm.py "${ARGS[@]}"
 * Real launch scripts (Hugging Face examples, LLaMA-Factory, FastChat, Megatron's DISTRIBUTED_ARGS) are written so.
 * Before, such a command was read without those words: as the Trainer's defaults, or as no Trainer launch at all.
 *
 * The spliced words keep their offsets in the array or the assignment, so a fix edits them where they are written.
 * Only a variable whose value is a list of options (`-…`) is split: a single value (`--per_device_train_batch_size
 * $BS`) stays the run's, as the readers have always taken it. What cannot be expanded is returned as unread: `"$@"`
 * (the launch script's own arguments), an array assigned more than once or appended to (`ARGS+=(…)`), or an option
 * list without its one assignment; the readers say their settings are unknown rather than take the defaults.
 *
 * A word that is a whole `${1:-example.py}` / `${SCRIPT:-train.py}` whose variable the script never sets (pytorch/
 * examples' `torchrun --nproc_per_node=${2:-4} ${1:-example.py}`) is its default, as bash expands it when the launch
 * script is run without arguments; the word keeps `defaultOf`, so the readers say the run may give another.
 */
import { findAssignments, isMakefileName, resolveReference, splitCommands, type Assignment, type Command, type Word } from './shellWords';

/** A bash array by name: its element words, or 'run' when the script assigns it more than once or appends to it. */
export type ShellArrays = ReadonlyMap<string, Word[] | 'run'>;

/** Index of the `)` that closes an array opened just before `from`; quotes, `$(…)` and comments skipped. */
function closingParen(text: string, from: number): number | undefined {
  let depth = 0;
  for (let i = from; i < text.length; i++) {
    const c = text[i]!;
    if (c === '\\') i++;
    else if (c === "'") i = text.indexOf("'", i + 1) < 0 ? text.length : text.indexOf("'", i + 1);
    else if (c === '"') {
      for (i++; i < text.length && text[i] !== '"'; i++) if (text[i] === '\\') i++;
    } else if (c === '#' && /\s/.test(text[i - 1] ?? '\n')) i = text.indexOf('\n', i) < 0 ? text.length : text.indexOf('\n', i);
    else if (c === '(') depth++;
    else if (c === ')' && depth-- === 0) return i;
  }
  return undefined;
}

/** `NAME=( … )`, with `export`/`local`/`declare -a`/`readonly` in front; `NAME+=( … )` makes the array the run's. */
export function findArrays(text: string): ShellArrays {
  const out = new Map<string, Word[] | 'run'>();
  const re = /^[ \t]*(?:(?:export|local|readonly|declare(?:[ \t]+-\w+)*)[ \t]+)?([A-Za-z_]\w*)(\+?)=\(/gm;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    const open = m.index + m[0].length;
    const close = closingParen(text, open);
    if (close === undefined) break;
    re.lastIndex = close + 1;
    const name = m[1]!;
    if (m[2] || out.has(name)) {
      out.set(name, 'run');
      continue;
    }
    const words = splitCommands(text.slice(open, close)).flat();
    out.set(name, words.map((w) => ({ raw: w.raw, start: w.start + open, end: w.end + open })));
  }
  return out;
}

/** An assignment's value split on blanks, as an unquoted expansion is; each piece at its offset in the value. */
function splitValue(a: Assignment): Word[] {
  const out: Word[] = [];
  for (const m of a.value.matchAll(/\S+/g)) out.push({ raw: m[0], start: a.start + m.index!, end: a.start + m.index! + m[0].length });
  return out;
}

const ARRAY_ALL = /^"?\$\{([A-Za-z_]\w*)\[[@*]\]\}"?$/;
const PLAIN = /^\$(?:\{([A-Za-z_]\w*)\}|([A-Za-z_]\w*))$/;
const SCRIPT_ARGS = /^"?\$(?:[@*]|\{[@*]\})"?$/;
const WITH_DEFAULT = /^("?)(\$\{(?:[A-Za-z_]\w*|\d+):?-[^}]*\})\1$/;

/** `${1:-example.py}` left unset by the script: its default, one word quoted, else split as bash splits it; else undefined. */
function defaultWords(w: Word, assignments: readonly Assignment[]): Word[] | undefined {
  const m = WITH_DEFAULT.exec(w.raw);
  if (!m) return undefined;
  const resolved = resolveReference(m[2]!, w.start + m[1]!.length, [...assignments]);
  if (!resolved?.defaultOf) return undefined;
  const piece = (raw: string, at: number): Word => ({ raw, start: at, end: at + raw.length, defaultOf: resolved.defaultOf });
  if (m[1]) return [piece(resolved.value, resolved.start)];
  return [...resolved.value.matchAll(/\S+/g)].map((p) => piece(p[0], resolved.start + p.index!));
}

/** A word that may stand for options: the first word, or one not taken as the value of the option before it. */
const optionPosition = (words: Command, i: number): boolean => i === 0 || !/^-[^=]*$/.test(words[i - 1]!.raw) || ARRAY_ALL.test(words[i - 1]!.raw);

/**
 * The command with its argument-list expansions spliced in, and the words that stand for arguments WAP cannot read.
 * `from` is the first word that may be expanded (the script's arguments, or the launcher's options).
 */
export function expandCommand(words: Command, arrays: ShellArrays, assignments: readonly Assignment[], from = 0): { words: Command; unread: Word[] } {
  const out: Word[] = words.slice(0, from);
  const unread: Word[] = [];
  for (let i = from; i < words.length; i++) {
    const w = words[i]!;
    const array = ARRAY_ALL.exec(w.raw);
    if (array) {
      const elements = arrays.get(array[1]!);
      if (Array.isArray(elements)) out.push(...elements);
      else unread.push(w);
      continue;
    }
    if (SCRIPT_ARGS.test(w.raw)) {
      unread.push(w);
      continue;
    }
    const defaulted = defaultWords(w, assignments);
    if (defaulted) {
      out.push(...defaulted);
      continue;
    }
    const plain = PLAIN.exec(w.raw);
    const name = plain && (plain[1] ?? plain[2]!);
    const elements = name ? arrays.get(name) : undefined;
    const defs = name ? assignments.filter((a) => a.name === name) : [];
    if (Array.isArray(elements)) {
      // `$ARR` is its first element in bash.
      if (elements[0]) out.push(elements[0]);
      continue;
    }
    // A list of options splits wherever it stands: argparse never takes `--deepspeed …` as the value before it.
    if (defs.length === 1 && /^\s*-/.test(defs[0]!.value)) {
      out.push(...splitValue(defs[0]!));
      continue;
    }
    if (name && defs.length !== 1 && optionPosition(words, i)) unread.push(w);
    out.push(w);
  }
  return { words: out, unread };
}

/** A launch script's commands, each with its argument lists spliced in, and the script's variable assignments. */
export function expandedCommands(fileName: string, text: string): { commands: Array<{ words: Command; unread: Word[] }>; assignments: Assignment[] } {
  const split = splitCommands(text);
  const makefile = isMakefileName(fileName);
  const assignments = findAssignments(text, split, makefile);
  // make has no arrays; `NAME=(` in a Makefile is not one.
  const arrays: ShellArrays = makefile ? new Map() : findArrays(text);
  return { commands: split.map((words) => expandCommand(words, arrays, assignments)), assignments };
}
