/**
 * The command line a script's parse reads, and how the note at the parse names it, for argparse
 * (argparseRuntime.ts), HfArgumentParser and TrlParser (hfArgumentParser.ts) and an exec'd configurator
 * (scriptExec.ts) alike: a list the code passes (`parse_args(['--x', '1'])`), else the run's
 * (AnalyzeOptions.scriptArguments: the launch script's, or --script-args); without one, the script as run with none,
 * and why (launch scripts that disagree are named).
 */
import type { Interp } from './interpreter';
import { UNKNOWN, list, str, type Value } from './values';

export interface CommandLine {
  words: string[];
  source: string;
  /** Options the launches pass differently, left out of `words` (configs/launchedBy.ts). */
  differing?: string[];
}

/** What to do when the defaults were read: said after a note that read none. */
export const GIVE_ARGUMENTS = 'a run that passes others trains with those (give them with --script-args, or run the script from a launch script beside it)';

/** A list of strings the code passes to the parse, else the run's command line; undefined when neither is known. */
export function commandLineOf(interp: Interp, inCode?: Value): CommandLine | undefined {
  if ((inCode?.k === 'list' || inCode?.k === 'tuple') && inCode.items.every((i) => i.k === 'str')) return { words: inCode.items.map((i) => (i as { v: string }).v), source: 'the code' };
  const run = interp.givenInput.scriptArguments;
  return run && 'words' in run ? run : undefined;
}

/** "with the arguments run.sh gives (…)", or "as the script run with no arguments, <defaults>" and why. */
export function howRead(interp: Interp, given: CommandLine | undefined, defaults: string): string {
  if (given) {
    const differing = given.differing?.length ? `; the launches differ on ${given.differing.join(', ')}, read at the script's defaults` : '';
    return `with the arguments ${given.source} gives (${given.words.join(' ').slice(0, 120)}${differing})`;
  }
  const run = interp.givenInput.scriptArguments;
  const disagree = run && 'disagree' in run ? ` (${run.disagree.join(' and ')} run it with different arguments)` : '';
  return `as the script run with no arguments${disagree}, ${defaults}`;
}

/** `sys.argv`: the script's name and the run's arguments, as the script would see them; only its name when none are known. */
export function scriptArgv(interp: Interp): Value {
  const run = interp.givenInput.scriptArguments;
  const name = interp.file?.replace(/^.*[\\/]/, '') ?? 'script.py';
  return list([str(name), ...(run && 'words' in run ? run.words.map((w) => (/[$`]/.test(w) ? UNKNOWN : str(w))) : [])]);
}
