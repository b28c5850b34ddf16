/**
 * argparse, as a training script's command line: real scripts size their model from it
 * (`GPT(GPTConfig(n_layer=args.n_layer))`). Before, `parser.parse_args()` was unknown, every `args.x` with it, and
 * such a model came out with zero-sized layers and a message about an embedding dimension of 0.
 *
 * A parser collects its options (`add_argument`, through groups too, and `set_defaults`); `parse_args()` and
 * `parse_known_args()` give a namespace holding, for each option, the value the script's arguments give when WAP
 * knows them (AnalyzeOptions.scriptArguments: the launch script that runs the file, or the user), else its default,
 * converted by its `type=` as argparse does (a user's `str2bool` is evaluated too). An option that is required and not
 * given, or whose value cannot be converted, is unknown. An info diagnostic at the call says which command line was
 * read and the values that sized the run, so a plan of the defaults is never mistaken for a plan of the run.
 */
import type { PyNode } from './ast';
import { commandLineOf, GIVE_ARGUMENTS, howRead, type CommandLine } from './commandLine';
import type { Interp } from './interpreter';
import { BATCH_NAMES, noteBatchOption } from './runBatch';
import { SEQUENCE_LENGTH_NAMES } from '../../core/sequenceOptions';
import { noteRunSequence } from './runSequence';
import { noteForPlans } from './runFacts';
import { FALSE, NONE, TRUE, UNKNOWN, list, native, str, tuple, type CallSite, type ClassV, type InstV, type Value } from './values';

interface OptionSpec {
  dest: string;
  /** `--n_layer`, `-n`; empty for a positional. */
  flags: string[];
  action: string;
  /** The value when the option is absent; `default=` as written (not yet converted). */
  fallback: Value;
  /** store_true/store_false/store_const: the value when the flag is given. */
  constant?: Value;
  type?: Value;
  required: boolean;
  /** nargs of '+', '*' or a count: the value is a list. */
  many: boolean;
}

interface ParserState {
  specs: OptionSpec[];
  defaults: Map<string, Value>;
}

const ACTIONS_WITHOUT_VALUE = new Set(['store_true', 'store_false', 'store_const', 'count', 'help', 'version']);

function destOf(flags: string[], kwargs: Map<string, Value>): string {
  const dest = kwargs.get('dest');
  if (dest?.k === 'str') return dest.v;
  const long = flags.find((f) => f.startsWith('--')) ?? flags[0] ?? '';
  return long.replace(/^-+/, '').replace(/-/g, '_');
}

function addArgument(state: ParserState, args: Value[], kwargs: Map<string, Value>): Value {
  const names = args.filter((a): a is { k: 'str'; v: string } => a.k === 'str').map((a) => a.v);
  const flags = names.filter((n) => n.startsWith('-'));
  const action = kwargs.get('action');
  const actionName = action?.k === 'str' ? action.v : action ? 'custom' : 'store';
  if (actionName === 'help' || actionName === 'version') return NONE;
  const nargs = kwargs.get('nargs');
  const many = nargs !== undefined && !(nargs.k === 'str' && nargs.v === '?');
  const given = kwargs.get('default');
  const fallback = given ?? (actionName === 'store_true' ? FALSE : actionName === 'store_false' ? TRUE : NONE);
  const constant = actionName === 'store_true' ? TRUE : actionName === 'store_false' ? FALSE : kwargs.get('const');
  const required = kwargs.get('required');
  state.specs.push({
    dest: flags.length ? destOf(flags, kwargs) : (names[0] ?? ''),
    flags,
    action: actionName,
    fallback,
    ...(constant ? { constant } : {}),
    ...(kwargs.get('type') ? { type: kwargs.get('type')! } : {}),
    // A positional without nargs '?'/'*' must be given, as must `required=True`.
    required: flags.length === 0 ? !(nargs?.k === 'str' && (nargs.v === '?' || nargs.v === '*')) : required?.k === 'bool' && required.v,
    many,
  });
  return NONE;
}

/** The words each option is given, in the order argparse reads them: `--x v`, `--x=v`, flags, then positionals. */
function givenWords(specs: OptionSpec[], words: string[]): { byDest: Map<string, string[] | true>; unknown: string[] } {
  const byDest = new Map<string, string[] | true>();
  const unknown: string[] = [];
  const positionals = specs.filter((s) => s.flags.length === 0);
  const loose: string[] = [];
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!;
    if (!w.startsWith('-') || /^-\d/.test(w)) {
      loose.push(w);
      continue;
    }
    const eq = w.indexOf('=');
    const flag = eq >= 0 ? w.slice(0, eq) : w;
    const spec = specs.find((s) => s.flags.includes(flag)) ?? specs.find((s) => s.flags.some((f) => f.startsWith('--') && flag.length > 3 && f.startsWith(flag)));
    if (!spec) {
      unknown.push(w);
      continue;
    }
    if (ACTIONS_WITHOUT_VALUE.has(spec.action)) {
      byDest.set(spec.dest, true);
      continue;
    }
    const values: string[] = eq >= 0 ? [w.slice(eq + 1)] : [];
    while (eq < 0 && i + 1 < words.length && !(words[i + 1]!.startsWith('-') && !/^-\d/.test(words[i + 1]!)) && (spec.many || values.length === 0)) values.push(words[++i]!);
    byDest.set(spec.dest, values);
  }
  positionals.forEach((spec, i) => {
    if (spec.many) byDest.set(spec.dest, loose.splice(0));
    else if (loose[0] !== undefined && i < positionals.length) byDest.set(spec.dest, [loose.shift()!]);
  });
  return { byDest, unknown };
}

/** A word converted by the option's `type=` (a string when it has none); unknown when the conversion is. */
function converted(interp: Interp, spec: OptionSpec, word: string, site: CallSite): Value {
  // `--batch_size $BS` where the launch script assigns BS more than once, or computes it: the shell's, at run time.
  if (/[$`]/.test(word)) return { k: 'unknown', why: `${word} is set by the shell when the script runs` };
  if (!spec.type) return str(word);
  return interp.callValue(spec.type, [str(word)], new Map(), site);
}

/** argparse converts a string default through `type=` too; other defaults are kept as they are. */
function defaultOf(interp: Interp, spec: OptionSpec, state: ParserState, site: CallSite): Value {
  const value = state.defaults.get(spec.dest) ?? spec.fallback;
  return value.k === 'str' && spec.type ? converted(interp, spec, value.v, site) : value;
}

/**
 * An option declared without `type=` is given as the string the command line holds: pytorch/examples' DDP tutorial
 * declares `--batch_size` with `default=32` and no type, so `--batch_size 32` hands its DataLoader '32', which raises
 * (torch's BatchSampler takes only an int). A number given to an option whose default is a number, or whose name is a
 * batch's or a sequence's, is said, and carried to plans: WAP reads no number from it, so the plan's batch is not it.
 */
function warnUntyped(interp: Interp, spec: OptionSpec, value: Value, site: CallSite, source: string): void {
  if (spec.type || spec.action !== 'store' || value.k !== 'str' || !/^[-+]?\d+(\.\d*)?([eE][-+]?\d+)?$/.test(value.v)) return;
  const numericDefault = spec.fallback.k === 'num';
  const batch = BATCH_NAMES.has(spec.dest);
  if (!numericDefault && !batch && !SEQUENCE_LENGTH_NAMES.has(spec.dest)) return;
  const flag = spec.flags.find((f) => f.startsWith('--')) ?? spec.flags[0] ?? spec.dest;
  const defaultWords = numericDefault ? ` (its default ${pythonRepr(spec.fallback as { k: 'num'; v: number })} is a number)` : '';
  const consequence = batch ? `a DataLoader given batch_size='${value.v}' raises ValueError` : 'code that computes with it fails or differs';
  const typeName = /^[-+]?\d+$/.test(value.v) ? 'int' : 'float';
  noteForPlans(interp, site.range, `${flag} is declared without type=: argparse hands the script the '${value.v}' ${source} passes as a string${defaultWords}, and ${consequence}; WAP reads no number from it. Declare it with type=${typeName}`, 'script-arguments-untyped', 'warning');
}

/** As Python prints it in a Namespace: `'adamw'`, `True`, `0.0003`. */
function pythonRepr(v: { k: 'num' | 'str' | 'bool'; v: number | string | boolean }): string {
  if (v.k === 'str') return `'${String(v.v)}'`;
  if (v.k === 'bool') return v.v ? 'True' : 'False';
  return String(v.v);
}

function namespaceClass(node: PyNode): ClassV {
  return { k: 'class', name: 'Namespace', bases: [], attrs: new Map(), node, dataclass: false, fields: [] };
}

/** What the run's command line gives each option, or its default; and the words that say which. */
function parse(interp: Interp, state: ParserState, site: CallSite, given: CommandLine | undefined): { namespace: InstV; said: string[]; unknown: string[] } {
  const { byDest, unknown } = givenWords(state.specs, given?.words ?? []);
  const attrs = new Map<string, Value>();
  const said: string[] = [];
  for (const spec of state.specs) {
    const words = byDest.get(spec.dest);
    let value: Value;
    if (words === true) value = spec.action === 'count' ? { k: 'num', v: 1, float: false } : (spec.constant ?? UNKNOWN);
    else if (words !== undefined) {
      const items = words.map((w) => converted(interp, spec, w, site));
      value = spec.many || spec.action === 'append' ? list(items) : (items[0] ?? UNKNOWN);
    } else value = spec.required ? { k: 'unknown', why: `${spec.flags[0] ?? spec.dest} is required and not given` } : defaultOf(interp, spec, state, site);
    attrs.set(spec.dest, value);
    if (words !== undefined && words !== true) warnUntyped(interp, spec, value, site, given!.source);
    noteRunSequence(interp, spec.dest, value, words !== undefined ? given?.source : undefined);
    noteBatchOption(interp, spec.dest, value, words !== undefined ? given?.source : undefined);
    if (said.length < 8 && (value.k === 'num' || value.k === 'str' || value.k === 'bool')) said.push(`${spec.dest}=${pythonRepr(value)}`);
  }
  for (const [dest, value] of state.defaults) if (!attrs.has(dest)) attrs.set(dest, value);
  return { namespace: { k: 'inst', cls: namespaceClass(site.node), attrs }, said, unknown };
}

function parseArgs(interp: Interp, state: ParserState, args: Value[], site: CallSite, known: boolean): Value {
  // `parse_args(['--x', '1'])` in the code (a notebook's way) wins over the run's arguments.
  const given = commandLineOf(interp, args[0]);
  const { namespace, said, unknown } = parse(interp, state, site, given);
  const values = said.length ? `: ${said.join(', ')}${state.specs.length > said.length ? ', …' : ''}` : '';
  const fix = given ? '' : `; ${GIVE_ARGUMENTS}`;
  interp.warnAt(site.range, `\`${site.calleeText}()\` is read ${howRead(interp, given, 'each option at its default')}${values}${fix}`, 'script-arguments', 'info', interp.runNotes);
  if (unknown.length && !known) interp.warnAt(site.range, `${given!.source} passes ${unknown.join(' ')}, which this parser does not define: argparse would stop with an error there`, 'script-arguments-unknown', 'warning', interp.runNotes);
  return known ? tuple([namespace, list(unknown.map(str))]) : namespace;
}

/** A parser, or an argument group of one (whose options are the parser's). */
function parserObject(interp: Interp, state: ParserState, node: PyNode): InstV {
  const attrs = new Map<string, Value>();
  const self: InstV = { k: 'inst', cls: { k: 'class', name: 'ArgumentParser', bases: [], attrs: new Map(), node, dataclass: false, fields: [] }, attrs };
  attrs.set('add_argument', native('add_argument', (args, kwargs) => addArgument(state, args, kwargs)));
  const group = native('add_argument_group', (_a, _k, site) => parserObject(interp, state, site.node));
  attrs.set('add_argument_group', group);
  attrs.set('add_mutually_exclusive_group', group);
  attrs.set('set_defaults', native('set_defaults', (_a, kwargs) => {
    for (const [k, v] of kwargs) state.defaults.set(k, v);
    return NONE;
  }));
  attrs.set('parse_args', native('parse_args', (args, kwargs, site) => parseArgs(interp, state, [args[0] ?? kwargs.get('args') ?? NONE], site, false)));
  attrs.set('parse_known_args', native('parse_known_args', (args, kwargs, site) => parseArgs(interp, state, [args[0] ?? kwargs.get('args') ?? NONE], site, true)));
  return self;
}

/** `argparse.ArgumentParser(…)`; undefined for every other argparse path (they stay unknown). */
export function callArgparse(interp: Interp, path: string, site: CallSite): Value | undefined {
  if (path !== 'argparse.ArgumentParser') return undefined;
  return parserObject(interp, { specs: [], defaults: new Map() }, site.node);
}

/**
 * `deepspeed.add_config_arguments(parser)` adds DeepSpeed's own options and hands the parser back (DeepSpeed's
 * `_add_core_arguments`: --deepspeed, --deepspeed_config and their old --deepscale names). Without it the parser was
 * unknown, so every option of a DeepSpeed example script was (the CIFAR example's --moe, --num-experts).
 */
export function deepspeedConfigArguments(interp: Interp, parser: Value | undefined, site: CallSite): Value {
  const add = parser?.k === 'inst' ? parser.attrs.get('add_argument') : undefined;
  if (!parser || !add) return UNKNOWN;
  for (const name of ['deepspeed', 'deepscale']) {
    interp.callValue(add, [str(`--${name}`)], new Map([['action', str('store_true')]]), site);
    interp.callValue(add, [str(`--${name}_config`)], new Map([['default', NONE]]), site);
  }
  return parser;
}
