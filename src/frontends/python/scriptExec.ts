/**
 * The way a script reads settings from files as it runs, read statically: nanoGPT's train.py writes its defaults,
 * then `exec(open('configurator.py').read())`, whose loop over `sys.argv[1:]` execs the config file it is given
 * (`config/train_shakespeare_char.py`) and writes `--key=value` pairs through `globals()[key] = literal_eval(val)`.
 * With the run's arguments known (AnalyzeOptions.scriptArguments), the model read is the one the run trains; before,
 * it was the one the written defaults build, with a warning.
 *
 * - `open(path)` for reading: a file object whose `read()` is the file's text (a regular file of source size, from the
 *   script's folder when relative, as the import room reads sources); other modes are unknown.
 * - `exec(code)`: code read from a file, or any string WAP knows, evaluated in the module's scope (or the dict it is
 *   given) as an imported module is evaluated, never run. A file already being exec'd is not entered again.
 * - `globals()`: the module's scope as a dict, live, so `globals()[key] = value` and `.update()` write the names.
 * - `ast.literal_eval(s)`: numbers, strings, True/False/None and lists, tuples and dicts of them; anything else raises,
 *   as it does in Python, so the script's `except (SyntaxError, ValueError)` runs.
 * Each exec that is followed is remembered, so rewrittenGlobals.ts warns only about the ones that are not.
 */
import { dirname, isAbsolute, join } from 'node:path';
import type { PyNode } from './ast';
import { commandLineOf, GIVE_ARGUMENTS, howRead } from './commandLine';
import type { Interp } from './interpreter';
import { readSource } from '../imports/sourceFiles';
import { runFile, runFileNote, type RunFile } from './runDirectory';
import { noteForPlans } from './runFacts';
import { RaiseSignal } from './signals';
import { ScopeDict } from './scopeDict';
import { FALSE, NONE, TRUE, UNKNOWN, list, native, num, str, tuple, type CallSite, type DictV, type Scope, type Value } from './values';

/** The files strings were read from, so an exec of one is ranged in its file. */
const readFrom = new WeakMap<Value, string>();

/** The text of each file object `open` returned, for loaders given the object (`yaml.safe_load(f)`). */
const handleText = new WeakMap<Value, string>();

/** A string's value, or the text of a file object `open` returned; undefined for anything else. */
export function textOf(v: Value): string | undefined {
  return v.k === 'str' ? v.v : handleText.get(v);
}

/**
 * A file the script names by path (`open`, `OmegaConf.load`, a parser's JSON or YAML file), from the script's folder
 * when relative, read as sources are (open editors first) and recorded as read, so editing it reads the script again.
 * `open` also looks where the run may start when the path is not beside the script, and says so (runDirectory.ts).
 */
export function readScriptFile(interp: Interp, path: Value | undefined, at?: CallSite): { file: string; text: string } | { why: string } {
  if (path?.k !== 'str' || !interp.file) return { why: 'a path WAP could not read' };
  // A call that can carry a note looks where the run may start too (runDirectory.ts); the others, beside the script.
  const found: RunFile = at ? runFile(interp, interp.file, path.v) : { file: isAbsolute(path.v) ? path.v : join(dirname(interp.file), path.v) };
  const read = readSource(found.file, interp.loader?.options.overrides);
  if ('why' in read) return { why: `${path.v}: ${read.why}${found.alsoLooked?.length ? `, nor is it in ${found.alsoLooked.join(', ')}` : ''}` };
  interp.loader?.options.filesRead?.add(found.file);
  const note = at && runFileNote(interp.file, path.v, found);
  if (note) noteForPlans(interp, at!.range, note, 'run-directory', 'info');
  return { file: found.file, text: read.text };
}

function openFile(interp: Interp, args: Value[], kwargs: Map<string, Value>, site: CallSite): Value {
  const node = site.node;
  const mode = args[1] ?? kwargs.get('mode');
  if (mode !== undefined && (mode.k !== 'str' || !/^r?t?$/.test(mode.v))) return UNKNOWN;
  const read = readScriptFile(interp, args[0] ?? kwargs.get('file'), site);
  if ('why' in read) return { k: 'unknown', why: read.why };
  const text = str(read.text);
  readFrom.set(text, read.file);
  const attrs = new Map<string, Value>();
  const handle: Value = { k: 'inst', cls: { k: 'class', name: 'TextIOWrapper', bases: [], attrs: new Map(), node, dataclass: false, fields: [] }, attrs };
  attrs.set('read', native('read', () => text));
  attrs.set('readlines', native('readlines', () => list(read.text.split(/(?<=\n)/).map(str))));
  attrs.set('__enter__', native('__enter__', () => handle));
  attrs.set('close', native('close', () => NONE));
  handleText.set(handle, read.text);
  return handle;
}

/** Files being exec'd now: one that execs itself again is not entered twice. */
const executing = new Set<string>();

function execCode(interp: Interp, code: Value | undefined, into: Value | undefined, site: CallSite): Value {
  if (code?.k !== 'str' || !interp.loader) {
    warnArgumentsUnapplied(interp, code, site);
    return UNKNOWN;
  }
  const file = readFrom.get(code) ?? `${interp.file ?? '<string>'}:<exec>`;
  const scope: Scope | undefined = into === undefined ? interp.globals : into.k === 'dict' && into.map instanceof ScopeDict ? into.map.scope : undefined;
  if (!scope || executing.has(file)) return UNKNOWN;
  executing.add(file);
  try {
    interp.loader.execIn(file, code.v, scope);
    interp.execFollowed.add(site.node);
  } finally {
    executing.delete(file);
  }
  // Code that reads the command line (a configurator) was read with the run's: say which, as argparse's note does.
  if (/\bsys\.argv\b/.test(code.v)) {
    const given = commandLineOf(interp);
    const how = `${howRead(interp, given, 'with the values the file writes')}${given ? '' : `; ${GIVE_ARGUMENTS}`}`;
    interp.warnAt(site.range, `\`${interp.text(site.node).replace(/\s+/g, ' ').slice(0, 60)}\` reads the command line: it is read ${how}`, 'script-arguments', 'info', interp.runNotes);
  }
  return NONE;
}

/**
 * An exec whose code WAP could not read, in a run given a command line: if that code is a configurator (nanochat's
 * `exec(open(os.path.join('nanochat', 'configurator.py')).read())`), the run's `--depth=26` would rewrite the script's
 * values there, and WAP reads the values the file writes. rewrittenGlobals.ts says the exec was not followed; this
 * says which arguments were not applied, and why the code was not read.
 */
function warnArgumentsUnapplied(interp: Interp, code: Value | undefined, site: CallSite): void {
  // The analysed script's own exec: a library's exec of generated code has nothing to do with the run's arguments.
  const given = site.node.lines === interp.mainRoot?.lines ? commandLineOf(interp) : undefined;
  if (!given || given.words.length === 0) return;
  const why = code?.k === 'unknown' && code.why ? code.why : code?.k === 'str' ? 'no import context to read it in' : 'its code is not a string WAP could read';
  const call = interp.text(site.node).replace(/\s+/g, ' ').slice(0, 60);
  noteForPlans(interp, site.range, `\`${call}\` runs code WAP could not read (${why}): the arguments ${given.source} gives (${given.words.join(' ').slice(0, 120)}) are not applied through it, so if it is a configurator the model is read with the values the file writes, not the run's`, 'script-arguments-unapplied', 'warning');
}

/** Python literals as ast.literal_eval takes them; undefined for anything else. */
function literal(text: string): Value | undefined {
  let i = 0;
  const space = (): void => {
    while (i < text.length && /\s/.test(text[i]!)) i++;
  };
  const item = (): Value | undefined => {
    space();
    const rest = text.slice(i);
    const number = /^[-+]?(\d[\d_]*\.?\d*(e[-+]?\d+)?|\.\d+(e[-+]?\d+)?)/i.exec(rest);
    if (number) {
      i += number[0].length;
      const v = Number(number[0].replace(/_/g, ''));
      return Number.isFinite(v) ? num(v, /[.e]/i.test(number[0])) : undefined;
    }
    const word = /^(True|False|None)\b/.exec(rest);
    if (word) {
      i += word[0].length;
      return word[0] === 'True' ? TRUE : word[0] === 'False' ? FALSE : NONE;
    }
    const quoted = /^(['"])((?:\\.|(?!\1)[^\\\n])*)\1/.exec(rest);
    if (quoted) {
      i += quoted[0].length;
      return str(quoted[2]!.replace(/\\(.)/g, '$1'));
    }
    const open = rest[0];
    if (open === '[' || open === '(' || open === '{') {
      const close = open === '[' ? ']' : open === '(' ? ')' : '}';
      i++;
      const items: Value[] = [];
      const pairs: Array<[Value, Value]> = [];
      for (;;) {
        space();
        if (text[i] === close) break;
        const key = item();
        if (!key) return undefined;
        space();
        if (open === '{') {
          if (text[i++] !== ':') return undefined;
          const value = item();
          if (!value) return undefined;
          pairs.push([key, value]);
        } else items.push(key);
        space();
        if (text[i] === ',') i++;
        else if (text[i] !== close) return undefined;
      }
      i++;
      if (open === '{') {
        const dict: DictV = { k: 'dict', map: new Map() };
        for (const [k, v] of pairs) dict.map.set(k.k === 'str' ? `s:${k.v}` : `n:${String((k as { v: unknown }).v)}`, [k, v]);
        return dict;
      }
      return open === '[' ? list(items) : tuple(items);
    }
    return undefined;
  };
  const value = item();
  space();
  return value && i === text.length ? value : undefined;
}

/** `ast.literal_eval(s)`: the literal, or a raise as Python's (ValueError, SyntaxError) for anything else. */
export function literalEval(args: Value[], node: PyNode): Value {
  const s = args[0];
  if (s?.k !== 'str') return UNKNOWN;
  const value = literal(s.v);
  if (!value) throw new RaiseSignal(node);
  return value;
}

/** `open`, `exec` and `globals` for one file's evaluation. */
export function scriptBuiltins(interp: Interp): Array<[string, Value]> {
  return [
    ['open', native('open', (args, kwargs, site) => openFile(interp, args, kwargs, site))],
    ['exec', native('exec', (args, kwargs, site) => execCode(interp, args[0] ?? kwargs.get('source'), args[1] ?? kwargs.get('globals'), site))],
    ['globals', native('globals', () => ({ k: 'dict', map: new ScopeDict(interp.globals) }))],
  ];
}
