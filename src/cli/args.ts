/**
 * Flag parsing shared by every `wap` subcommand, so that each one answers
 * `--help`, unknown flags and malformed values the same way: help on stdout
 * with exit 0, everything else a one-line CliError (exit 2) naming the flag.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { CliError } from './cliError';

type OptionSpecs = NonNullable<ParseArgsConfig['options']>;
const HELP_OPTION = { help: { type: 'boolean', short: 'h' } } as const;
type CommandConfig<O extends OptionSpecs> = { args: string[]; allowPositionals: true; strict: true; options: O & typeof HELP_OPTION };
type Parsed<O extends OptionSpecs> = ReturnType<typeof parseArgs<CommandConfig<O>>>;

/**
 * parseArgs in strict mode with positionals and `-h/--help` added. Returns
 * undefined after printing `help` when asked for it: the caller exits 0.
 */
export function parseCommandArgs<const O extends OptionSpecs>(command: string, help: string, args: string[], options: O): Parsed<O> | undefined {
  let parsed: Parsed<O>;
  try {
    const config: CommandConfig<O> = { args, allowPositionals: true, strict: true, options: { ...options, ...HELP_OPTION } };
    parsed = parseArgs(config);
  } catch (err) {
    // Node appends a multi-sentence hint about '--' to unknown options; the first sentence names the flag.
    const first = (err instanceof Error ? err.message : String(err)).split('\n')[0]!.split('. To specify')[0]!.replace(/\.$/, '');
    throw new CliError(`${command}: ${first} (see wap ${command} --help)`);
  }
  if ((parsed.values as { help?: boolean }).help) {
    console.log(help);
    return undefined;
  }
  return parsed;
}

/** `--flag N` as a positive integer, or undefined when the flag is absent. */
export function positiveInt(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^[1-9]\d*$/.test(value.trim())) throw new CliError(`--${flag} expects a positive integer, got '${value}'`);
  return Number(value);
}

/** `--flag V` restricted to `allowed`, with a default when absent. */
export function oneOf<T extends string>(flag: string, value: string | undefined, allowed: readonly T[], dflt: T): T {
  if (value === undefined) return dflt;
  if (!(allowed as readonly string[]).includes(value)) throw new CliError(`--${flag} must be one of ${allowed.join(', ')}, got '${value}'`);
  return value as T;
}

/** "3,224,224" → [3, 224, 224]; throws CliError for anything but positive integers. */
export function parseShapeFlag(value: string): number[] {
  const parts = value.split(',').map((p) => p.trim());
  if (parts.length === 0 || parts.some((p) => !/^[1-9]\d*$/.test(p))) {
    throw new CliError(`--input expects positive integers separated by commas (e.g. 3,224,224 or 1024), got '${value}'`);
  }
  return parts.map(Number);
}

/** The one positional argument a command takes (a model or config file). */
export function singlePositional(command: string, positionals: string[], what: string): string {
  if (positionals.length === 0) throw new CliError(`${command} needs a ${what}: wap ${command} <${what.replace(/ /g, '-')}> (see wap ${command} --help)`);
  if (positionals.length > 1) throw new CliError(`${command} expects exactly one ${what}, got ${positionals.length}: ${positionals.join(' ')}`);
  return positionals[0]!;
}
