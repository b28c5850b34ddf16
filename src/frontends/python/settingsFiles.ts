/**
 * Settings a script loads from a file of its own: `cfg = yaml.safe_load(open(args.config))` then
 * `Model(**cfg['model'])`, `json.load(f)`, `json.loads(text)`, `OmegaConf.load(path)` (attribute access,
 * `cfg.model.n_layer`). The file is read as `open` reads it (scriptExec.ts: a regular file of source size, from the
 * script's folder when relative); its values become Python values, so a model sized by them is read at the run's
 * sizes. A file WAP cannot read or parse gives an unknown that says why, and the model built from it says so
 * (torchModuleValues.ts `sizeUnknown`).
 */
import { parse as parseYaml } from 'yaml';
import type { Interp } from './interpreter';
import { readScriptFile, textOf } from './scriptExec';
import { resolveInterpolations, Unresolved } from './omegaInterpolation';
import { FALSE, NONE, TRUE, UNKNOWN, list, num, str, type DictV, type Value } from './values';

export type Shape = 'dict' | 'attributes';

/** A parsed JSON/YAML value as Python sees it: dicts as dicts, or (OmegaConf) as DictConfigs whose keys are attributes. */
export function fromDocument(v: unknown, shape: Shape): Value {
  if (v === null || v === undefined) return NONE;
  // What OmegaConf would compute at run time (an environment variable, a mandatory ??? value) keeps why.
  if (v instanceof Unresolved) return { k: 'unknown', why: v.why };
  if (typeof v === 'boolean') return v ? TRUE : FALSE;
  if (typeof v === 'number') return num(v, !Number.isInteger(v));
  if (typeof v === 'string') return str(v);
  if (Array.isArray(v)) return list(v.map((x) => fromDocument(x, shape)));
  if (typeof v !== 'object') return UNKNOWN;
  const entries = Object.entries(v as Record<string, unknown>).map(([k, x]) => [k, fromDocument(x, shape)] as const);
  // A DictConfig is a mapping whose keys are attributes too: `cfg.model`, `cfg["model"]`, `Model(**cfg.model)`.
  const dict: DictV = { k: 'dict', map: new Map(entries.map(([k, x]) => [`s:${k}`, [str(k), x]])), ...(shape === 'attributes' ? { attributes: true as const } : {}) };
  return dict;
}

/** A JSON or YAML document's text as a Python value; an unknown saying why when it does not parse. */
export function parsed(text: string, yaml: boolean, shape: Shape, what: string): Value {
  try {
    const doc: unknown = yaml ? parseYaml(text) : JSON.parse(text);
    // OmegaConf resolves `${model.dim}` on access; a plain YAML or JSON loader keeps the text.
    return fromDocument(shape === 'attributes' ? resolveInterpolations(doc) : doc, shape);
  } catch (e) {
    return { k: 'unknown', why: `${what} could not be parsed (${e instanceof Error ? e.message.split('\n')[0] : String(e)})` };
  }
}

/** `OmegaConf.load(path)`: the file by path, read as `open` reads it. */
function loadPath(interp: Interp, path: Value | undefined): Value {
  const read = readScriptFile(interp, path);
  if ('why' in read) return { k: 'unknown', why: read.why };
  return parsed(read.text, !/\.json$/i.test(read.file), 'attributes', read.file);
}

/** The value a settings loader returns, or undefined when `path` is not one. */
export function loadSettings(interp: Interp, path: string, args: Value[]): Value | undefined {
  const source = args[0];
  switch (path) {
    case 'json.load':
    case 'json.loads':
    case 'yaml.safe_load':
    case 'yaml.load':
    case 'yaml.full_load': {
      const text = source && textOf(source);
      // A file `open` could not read keeps its reason (`config/x.yaml: … does not exist`).
      if (text === undefined) return source?.k === 'unknown' && source.why ? source : { k: 'unknown', why: `${path} of something WAP could not read` };
      return parsed(text, path.startsWith('yaml.'), 'dict', path);
    }
    case 'omegaconf.OmegaConf.load':
      return loadPath(interp, source);
    default:
      return undefined;
  }
}
