/**
 * Lightning's LightningCLI, read as it runs (Lightning docs, "Configure hyperparameters from the CLI"):
 * `LightningCLI(MyModel, MyDataModule)` parses `fit --config config.yaml --model.hidden_dim 128 --trainer.precision
 * bf16-mixed`, builds the model class with the `model:` section's values (or the `class_path` / `init_args` it
 * names), builds the Trainer from `trainer:` over `trainer_defaults`, and fits. The command line is the launch's
 * (commandLine.ts) or the `args=` the code passes; `--config` files merge in order, then each `--section.key value`.
 * Without this, a LightningModule whose `__init__` takes arguments had no model, or one at its defaults.
 */
import { noteFitLoader, noteTrainerAccumulation } from './runLoaderBatch';
import { parse as parseYaml } from 'yaml';
import { commandLineOf, howRead } from './commandLine';
import { importDotted } from './dottedImport';
import type { Interp } from './interpreter';
import { MissingArgument } from './parameters';
import { noteLightningPrecision } from './runPrecision';
import { readScriptFile } from './scriptExec';
import { fromDocument } from './settingsFiles';
import { UNKNOWN, type CallSite, type InstV, type Value } from './values';

type Doc = Record<string, unknown>;

const SUBCOMMANDS = new Set(['fit', 'validate', 'test', 'predict']);

const isDoc = (v: unknown): v is Doc => typeof v === 'object' && v !== null && !Array.isArray(v);

function merge(into: Doc, from: Doc): void {
  for (const [k, v] of Object.entries(from)) {
    if (k === '__proto__') continue;
    if (isDoc(into[k]) && isDoc(v)) merge(into[k] as Doc, v);
    else into[k] = v;
  }
}

/** `a.b.c = v` into the document, making the sections on the way. */
function setPath(doc: Doc, path: string[], value: unknown): void {
  let at = doc;
  for (const key of path.slice(0, -1)) {
    if (!isDoc(at[key])) at[key] = {};
    at = at[key] as Doc;
  }
  at[path[path.length - 1]!] = value;
}

/** A command-line value as jsonargparse reads one without its annotation: YAML's scalars, lists and mappings. */
function valueOf(word: string): unknown {
  try {
    return parseYaml(word) ?? null;
  } catch {
    return word;
  }
}

interface Parsed {
  doc: Doc;
  subcommand: string | undefined;
  files: string[];
  unread: string[];
}

/** The command line as LightningCLI's parser reads it: a subcommand, `--config` files, then dotted overrides. */
function parseCommandLine(interp: Interp, words: readonly string[], run: boolean): Parsed {
  const out: Parsed = { doc: {}, subcommand: undefined, files: [], unread: [] };
  let i = 0;
  if (run && words[0] !== undefined && SUBCOMMANDS.has(words[0])) out.subcommand = words[i++];
  for (; i < words.length; i++) {
    const word = words[i]!;
    if (!word.startsWith('-')) {
      out.unread.push(word);
      continue;
    }
    const eq = word.indexOf('=');
    const name = (eq >= 0 ? word.slice(0, eq) : word).replace(/^--?/, '');
    const value = eq >= 0 ? word.slice(eq + 1) : words[i + 1]?.startsWith('--') ? undefined : words[++i];
    if (name === 'config' || name === 'c') {
      const read = value === undefined ? { why: 'no path' } : readScriptFile(interp, { k: 'str', v: value });
      if ('why' in read) {
        out.unread.push(`--config ${value ?? ''} (${read.why})`);
        continue;
      }
      out.files.push(value!);
      try {
        const doc: unknown = parseYaml(read.text);
        // A config given before the subcommand holds it as a section (`fit: {trainer: …}`).
        const section = out.subcommand && isDoc(doc) && isDoc(doc[out.subcommand]) ? doc[out.subcommand] : doc;
        if (isDoc(section)) merge(out.doc, section);
      } catch (e) {
        out.unread.push(`--config ${value} (${e instanceof Error ? e.message.split('\n')[0] : String(e)})`);
      }
      continue;
    }
    if (value === undefined) {
      setPath(out.doc, name.split('.'), true);
      continue;
    }
    setPath(out.doc, name.split('.'), valueOf(value));
  }
  return out;
}

/**
 * A `{class_path, init_args}` mapping built as jsonargparse builds it; any other value as it is. A key beside
 * class_path is an init argument too (`--model.hidden_dim 32` after `--model.class_path …`, jsonargparse's shorthand).
 */
function built(interp: Interp, value: unknown, site: CallSite): Value {
  if (isDoc(value) && typeof value.class_path === 'string') {
    const cls = importDotted(interp, value.class_path, site.node, 'class_path');
    const { class_path: _path, init_args: given, ...beside } = value;
    const init = { ...(isDoc(given) ? given : {}), ...beside };
    return interp.callValue(cls, [], new Map(Object.entries(init).map(([k, v]) => [k, built(interp, v, site)])), site);
  }
  return fromDocument(value, 'dict');
}

/** The datamodule LightningCLI builds from its `data:` section, or unknown where its arguments are not all given. */
function builtDatamodule(interp: Interp, datamoduleClass: Value | undefined, section: unknown, site: CallSite): Value {
  try {
    if (isDoc(section) && typeof section.class_path === 'string') return built(interp, section, site);
    if (!datamoduleClass || datamoduleClass.k === 'none') return UNKNOWN;
    const init = isDoc(section) ? section : {};
    return interp.callValue(datamoduleClass, [], new Map(Object.entries(init).map(([k, v]) => [k, built(interp, v, site)])), site);
  } catch (e) {
    if (e instanceof MissingArgument) return UNKNOWN;
    throw e;
  }
}

/** `LightningCLI(model_class, datamodule_class, …)`: the model it builds, whichever subcommand the launch runs. */
export function lightningCli(interp: Interp, args: Value[], kwargs: Map<string, Value>, site: CallSite): Value {
  const modelClass = args[0] ?? kwargs.get('model_class');
  const runArg = kwargs.get('run');
  const run = !(runArg?.k === 'bool' && !runArg.v);
  const inCode = kwargs.get('args');
  const given = commandLineOf(interp, inCode);
  const parsed = parseCommandLine(interp, given?.words ?? [], run);
  // Said first: building the model may stop at an argument the run does not give.
  const files = parsed.files.length ? ` from ${parsed.files.join(', ')}` : '';
  const how = howRead(interp, given, 'each argument at its default');
  const sub = run && !parsed.subcommand ? '; LightningCLI needs a subcommand (fit), read as fit' : '';
  interp.warnAt(site.range, `\`${site.calleeText}()\` builds the model${files} ${how}${sub}`, 'script-arguments', 'info', interp.runNotes);
  if (parsed.unread.length) interp.warnAt(site.range, `LightningCLI: ${parsed.unread.join(', ')} not read`, 'script-arguments-unknown', 'warning', interp.runNotes);

  const section = parsed.doc.model;
  let model: Value;
  try {
    if (isDoc(section) && typeof section.class_path === 'string') model = built(interp, section, site);
    else if (modelClass && modelClass.k !== 'none') {
      const init = isDoc(section) ? section : {};
      model = interp.callValue(modelClass, [], new Map(Object.entries(init).map(([k, v]) => [k, built(interp, v, site)])), site);
    } else model = { k: 'unknown', why: 'LightningCLI without a model class: the config names none' };
  } catch (e) {
    if (!(e instanceof MissingArgument)) throw e;
    // jsonargparse stops there too: the argument is the run's to give.
    const owner = e.fn === '__init__' && modelClass?.k === 'class' ? modelClass.name : e.fn;
    const why = `${owner}() needs ${e.param}, which neither a --config file nor --model.${e.param} gives`;
    interp.warnAt(site.range, `LightningCLI: ${why}; no model is read`, 'script-arguments-unknown', 'warning', interp.runNotes);
    model = { k: 'unknown', why };
  }
  // `fit` trains it (with run=False the code calls cli.trainer.fit(cli.model) itself); a validate, test or predict
  // launch runs the same model, whose training is still what the plan is for.
  interp.trainedModels.push(model);

  const defaults = kwargs.get('trainer_defaults');
  const trainer = new Map<string, Value>(defaults?.k === 'dict' ? [...defaults.map].filter(([k]) => k.startsWith('s:')).map(([k, [, v]]) => [k.slice(2), v]) : []);
  if (isDoc(parsed.doc.trainer)) for (const [k, v] of Object.entries(parsed.doc.trainer)) trainer.set(k, fromDocument(v, 'dict'));
  noteLightningPrecision(interp, trainer, site);
  noteTrainerAccumulation(interp, trainer);
  // `fit` hands the model and the datamodule to trainer.fit: the datamodule's loader is the run's batch.
  const datamodule = builtDatamodule(interp, args[1] ?? kwargs.get('datamodule_class'), parsed.doc.data, site);
  if (datamodule.k !== 'unknown') noteFitLoader(interp, [model], new Map([['datamodule', datamodule]]), site, 'LightningCLI');

  const attrs = new Map<string, Value>([['model', model], ['trainer', { k: 'lib', path: 'lightning.pytorch.trainer.Trainer()' }], ['datamodule', datamodule]]);
  const cli: InstV = { k: 'inst', cls: { k: 'class', name: 'LightningCLI', bases: [], attrs: new Map(), node: site.node, dataclass: false, fields: [] }, attrs };
  return cli;
}
