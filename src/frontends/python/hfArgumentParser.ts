/**
 * transformers' HfArgumentParser, as the Hugging Face example scripts use it (run_clm.py, run_mlm.py and the many
 * projects copied from them): `parser = HfArgumentParser((ModelArguments, DataTrainingArguments, TrainingArguments))`
 * then `model_args, data_args, training_args = parser.parse_args_into_dataclasses()`, and the model is
 * `AutoModelForCausalLM.from_pretrained(model_args.model_name_or_path)`. Before, the dataclasses were unknown, and so
 * was the model of every such script.
 *
 * Each dataclass the script defines is built as the parser builds it: a field the run's arguments give
 * (AnalyzeOptions.scriptArguments, as for argparse) converted by its annotation (`Optional[int]` → int, a bool field
 * given alone is True, as HfArgumentParser's `nargs="?"`), the rest at their defaults. A library dataclass
 * (TrainingArguments, trl's SFTConfig) is a namespace of the options no user dataclass claims: WAP reads the
 * training setup from the launch command itself (configs/trainerArgv.ts). `parse_dict` and, where the path is a
 * string WAP can read, `parse_json_file` / `parse_yaml_file` take their values from the dict or the file instead;
 * trl's TrlParser (`parse_args_and_config`) reads the YAML recipe `--config` names under the command line's options.
 * The same note as argparse's says which command line was read.
 */
import { field, namedChildren, type PyNode } from './ast';
import { mro } from './access';
import { stringToBool } from '../../core/stringToBool';
import { commandLineOf, howRead } from './commandLine';
import type { Interp } from './interpreter';
import { noteBatchOption } from './runBatch';
import { noteRunSequence } from './runSequence';
import { FALSE, TRUE, UNKNOWN, int, list, native, num, str, tuple, type CallSite, type ClassV, type InstV, type Value } from './values';
import { readScriptFile } from './scriptExec';
import { parsed } from './settingsFiles';

type Given = Map<string, string[] | true>;

/** `--name v`, `--name=v`, `--flag` alone; dashes in names as underscores (HfArgumentParser accepts both). */
function givenOptions(words: readonly string[]): Given {
  const out: Given = new Map();
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!;
    if (!w.startsWith('--')) continue;
    const eq = w.indexOf('=');
    const name = (eq >= 0 ? w.slice(2, eq) : w.slice(2)).replace(/-/g, '_');
    if (eq >= 0) out.set(name, [w.slice(eq + 1)]);
    else {
      const values: string[] = [];
      while (i + 1 < words.length && !words[i + 1]!.startsWith('--')) values.push(words[++i]!);
      out.set(name, values.length ? values : true);
    }
  }
  return out;
}

const annotationCache = new WeakMap<ClassV, Map<string, string>>();

/** Each field's annotation as written (`Optional[int]`), the class's own and its dataclass bases'. */
function annotations(interp: Interp, cls: ClassV): Map<string, string> {
  const cached = annotationCache.get(cls);
  if (cached) return cached;
  const out = new Map<string, string>();
  for (const c of [...mro(cls)].reverse()) {
    if (c.k !== 'class') continue;
    const body = field(c.node, 'body');
    for (const stmt of body ? namedChildren(body) : []) {
      const a = stmt.type === 'expression_statement' ? namedChildren(stmt)[0] : undefined;
      const left = a?.type === 'assignment' ? field(a, 'left') : undefined;
      const type = a ? field(a, 'type') : undefined;
      if (left?.type === 'identifier' && type) out.set(interp.text(left), interp.text(type));
    }
  }
  annotationCache.set(cls, out);
  return out;
}

/** `Optional[int]`, `Union[int, None]`, `int | None` → `int`; `List[int]` → `list:int`. */
function baseType(annotation: string): string {
  let t = annotation.replace(/\s+/g, '');
  const optional = /^(?:typing\.)?Optional\[(.*)\]$/.exec(t) ?? /^(?:typing\.)?Union\[(.*),None\]$/.exec(t) ?? /^(.*)\|None$/.exec(t);
  if (optional) t = optional[1]!;
  const listOf = /^(?:typing\.)?(?:List|list)\[(.*)\]$/.exec(t);
  return listOf ? `list:${baseType(listOf[1]!)}` : t;
}


/** A word as HfArgumentParser converts it for a field of this type; unknown where the shell sets it. */
function convert(type: string, word: string): Value {
  if (/[$`]/.test(word)) return { k: 'unknown', why: `${word} is set by the shell when the script runs` };
  if (type === 'int') return /^-?\d+$/.test(word) ? int(Number(word)) : UNKNOWN;
  if (type === 'float') return Number.isFinite(Number(word)) ? num(Number(word), true) : UNKNOWN;
  if (type === 'bool') {
    const b = stringToBool(word);
    return b === undefined ? UNKNOWN : b ? TRUE : FALSE;
  }
  return str(word);
}

/** A field's value from the words given for it. */
function fieldValue(type: string, given: string[] | true): Value {
  if (given === true) return type === 'bool' ? TRUE : UNKNOWN;
  if (type.startsWith('list:')) return list(given.map((w) => convert(type.slice(5), w)));
  return given[0] === undefined ? UNKNOWN : convert(type, given[0]);
}

interface Parsed {
  instances: Value[];
  said: string[];
}

/** One instance per dataclass type: the user's built with the given fields, a library one as a namespace of the rest. */
function build(interp: Interp, classes: Value[], values: Map<string, Value>, site: CallSite, source: string): Parsed {
  const claimed = new Set<string>();
  const said: string[] = [];
  const instances = classes.map((cls) => {
    if (cls.k !== 'class' || !cls.dataclass) return undefined;
    const kwargs = new Map<string, Value>();
    for (const f of mro(cls).flatMap((c) => (c.k === 'class' ? c.fields : []))) {
      const v = values.get(f.name);
      claimed.add(f.name);
      if (v !== undefined) kwargs.set(f.name, v);
    }
    const inst = interp.callValue(cls, [], kwargs, site);
    if (inst.k === 'inst') {
      for (const [name, v] of inst.attrs) {
        noteRunSequence(interp, name, v, values.has(name) ? source : undefined);
        noteBatchOption(interp, name, v, values.has(name) ? source : undefined);
      }
    }
    if (inst.k === 'inst') for (const [name, v] of inst.attrs) if (said.length < 8 && (v.k === 'str' || v.k === 'num' || v.k === 'bool' || v.k === 'none')) said.push(`${name}=${v.k === 'str' ? `'${v.v}'` : v.k === 'none' ? 'None' : v.k === 'bool' ? (v.v ? 'True' : 'False') : String(v.v)}`);
    return inst;
  });
  return {
    said,
    instances: instances.map((inst) => {
      if (inst) return inst;
      const attrs = new Map<string, Value>();
      for (const [name, v] of values) {
        if (claimed.has(name)) continue;
        attrs.set(name, v);
        noteRunSequence(interp, name, v, source);
        noteBatchOption(interp, name, v, source);
      }
      const rest: InstV = { k: 'inst', cls: { k: 'class', name: 'Namespace', bases: [], attrs: new Map(), node: site.node, dataclass: false, fields: [] }, attrs };
      return rest;
    }),
  };
}

/** The given words as field values, each converted by the annotation of the user dataclass field it names. */
function fromWords(interp: Interp, classes: Value[], words: readonly string[]): Map<string, Value> {
  const types = new Map<string, string>();
  for (const cls of classes) if (cls.k === 'class') for (const [name, t] of annotations(interp, cls)) types.set(name, baseType(t));
  const out = new Map<string, Value>();
  for (const [name, given] of givenOptions(words)) {
    const type = types.get(name);
    // A library dataclass's option (--bf16, --per_device_train_batch_size 4): a flag alone is True, else its word.
    out.set(name, type ? fieldValue(type, given) : given === true ? TRUE : convert(/^-?\d+$/.test(given[0] ?? '') ? 'int' : 'str', given[0] ?? ''));
  }
  return out;
}

function note(interp: Interp, site: CallSite, how: string, said: string[]): void {
  interp.warnAt(site.range, `\`${site.calleeText}()\` is read ${how}${said.length ? `: ${said.join(', ')}` : ''}`, 'script-arguments', 'info', interp.runNotes);
}

/** The dataclasses, and the remaining strings when asked for (none: every option is read). */
function result(instances: Value[], kwargs: Map<string, Value>): Value {
  const remaining = kwargs.get('return_remaining_strings');
  return tuple(remaining?.k === 'bool' && remaining.v ? [...instances, list([])] : instances);
}

function parseArgsIntoDataclasses(interp: Interp, classes: Value[], args: Value[], kwargs: Map<string, Value>, site: CallSite): Value {
  const given = commandLineOf(interp, args[0] ?? kwargs.get('args'));
  const parsed = build(interp, classes, fromWords(interp, classes, given?.words ?? []), site, given?.source ?? 'the command line');
  note(interp, site, howRead(interp, given, 'each field at its default'), parsed.said);
  return result(parsed.instances, kwargs);
}

/**
 * trl's `TrlParser.parse_args_and_config()`: the YAML file `--config` names gives the values, and the other options
 * on the command line override them (trl sets the file's values as the parser's defaults).
 */
function parseArgsAndConfig(interp: Interp, classes: Value[], args: Value[], kwargs: Map<string, Value>, site: CallSite): Value {
  const given = commandLineOf(interp, args[0] ?? kwargs.get('args'));
  const words = given?.words ?? [];
  const config = givenOptions(words).get('config');
  const configPath = Array.isArray(config) ? config[0] : undefined;
  const fromFile = configPath !== undefined ? argumentFile(interp, str(configPath), site.node) : undefined;
  const fromCommand = fromWords(interp, classes, words);
  // The run's length is named where it is written: the command line's over the recipe's.
  for (const [name, v] of fromCommand) noteRunSequence(interp, name, v, given?.source);
  for (const [name, v] of fromFile ?? []) noteRunSequence(interp, name, v, configPath);
  const values = new Map([...(fromFile ?? []), ...fromCommand]);
  values.delete('config');
  const parsed = build(interp, classes, values, site, given?.source ?? 'the command line');
  const file = configPath === undefined ? '' : fromFile ? ` and the recipe ${configPath} it names` : `; the recipe ${configPath} it names could not be read, so its values are not`;
  note(interp, site, `${howRead(interp, given, 'each field at its default')}${file}`, parsed.said);
  return result(parsed.instances, kwargs);
}

function parseDict(interp: Interp, classes: Value[], dict: Value | undefined, site: CallSite, source: string): Value {
  if (dict?.k !== 'dict') return UNKNOWN;
  const values = new Map<string, Value>();
  for (const [key, v] of dict.map.values()) if (key.k === 'str') values.set(key.v, v);
  const parsed = build(interp, classes, values, site, source);
  note(interp, site, `from ${source}`, parsed.said);
  return tuple(parsed.instances);
}

/**
 * A JSON or YAML file of arguments (parse_json_file, parse_yaml_file, TrlParser's `--config`), from the script's
 * folder when relative, read as sources are; undefined where WAP cannot read it.
 */
function argumentFile(interp: Interp, path: Value | undefined, node: PyNode): Map<string, Value> | undefined {
  const read = readScriptFile(interp, path);
  if ('why' in read) return undefined;
  const doc = parsed(read.text, /\.ya?ml$/i.test(read.file), 'dict', read.file);
  if (doc.k !== 'dict') return undefined;
  return new Map([...doc.map.values()].flatMap(([k, v]) => (k.k === 'str' ? [[k.v, v] as const] : [])));
}

/** `parse_json_file("args.json")` / `parse_yaml_file("recipe.yaml")`: the file's values, else unknown. */
function parseFile(interp: Interp, classes: Value[], path: Value | undefined, site: CallSite): Value {
  const values = argumentFile(interp, path, site.node);
  if (!values || path?.k !== 'str') return UNKNOWN;
  const parsed = build(interp, classes, values, site, path.v);
  note(interp, site, `from ${path.v}`, parsed.said);
  return tuple(parsed.instances);
}

/** `HfArgumentParser(DataclassType or tuple of them)`. */
export function hfArgumentParser(interp: Interp, args: Value[], node: PyNode): InstV {
  const types = args[0];
  const classes = types?.k === 'tuple' || types?.k === 'list' ? types.items : types ? [types] : [];
  const attrs = new Map<string, Value>([
    ['parse_args_into_dataclasses', native('parse_args_into_dataclasses', (a, kw, site) => parseArgsIntoDataclasses(interp, classes, a, kw, site))],
    ['parse_dict', native('parse_dict', (a, kw, site) => parseDict(interp, classes, a[0] ?? kw.get('args'), site, 'the dict the code passes'))],
    ['parse_json_file', native('parse_json_file', (a, kw, site) => parseFile(interp, classes, a[0] ?? kw.get('json_file'), site))],
    ['parse_yaml_file', native('parse_yaml_file', (a, kw, site) => parseFile(interp, classes, a[0] ?? kw.get('yaml_file'), site))],
    // trl's TrlParser is an HfArgumentParser with a YAML recipe under `--config`.
    ['parse_args_and_config', native('parse_args_and_config', (a, kw, site) => parseArgsAndConfig(interp, classes, a, kw, site))],
  ]);
  return { k: 'inst', cls: { k: 'class', name: 'HfArgumentParser', bases: [], attrs: new Map(), node, dataclass: false, fields: [] }, attrs };
}
