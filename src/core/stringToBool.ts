/**
 * A command-line word as transformers' HfArgumentParser reads a bool (`string_to_bool`: yes/true/t/y/1 and
 * no/false/f/n/0, any case); undefined for any other word, which argparse refuses. The launch-command reader
 * (configs/trainerArgv.ts) and the script reader (frontends/python/hfArgumentParser.ts) take the same words.
 */
const TRUE_WORDS: ReadonlySet<string> = new Set(['yes', 'true', 't', 'y', '1']);
const FALSE_WORDS: ReadonlySet<string> = new Set(['no', 'false', 'f', 'n', '0']);

export function stringToBool(word: string): boolean | undefined {
  const w = word.toLowerCase();
  return TRUE_WORDS.has(w) ? true : FALSE_WORDS.has(w) ? false : undefined;
}
