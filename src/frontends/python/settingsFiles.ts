/**
 * Settings a script loads from a file of its own: `cfg = yaml.safe_load(open(args.config))` then
 * `Model(**cfg['model'])`, `json.load(f)`, `json.loads(text)`, `OmegaConf.load(path)` (attribute access,
 * `cfg.model.n_layer`). The file is read as `open` reads it (scriptExec.ts: a regular file of source size, from the
 * script's folder when relative); its values become Python values, so a model sized by them is read at the run's
 * sizes. A file WAP cannot read or parse gives an unknown that says why, and the model built from it says so
 * (torchModuleValues.ts `sizeUnknown`).
 */
import { parse as parseYaml } from 'yaml';
import type { PyNode } from './ast';
import type { Interp } from './interpreter';
import { readScriptFile, textOf } from './scriptExec';
import { FALSE, NONE, TRUE, UNKNOWN, list, num, str, type DictV, type InstV, type Value } from './values';

export type Shape = 'dict' | 'attributes';

/** A parsed JSON/YAML value as Python sees it: dicts as dicts, or (OmegaConf) as objects with attributes. */
function fromDocument(v: unknown, node: PyNode, shape: Shape): Value {
  if (v === null || v === undefined) return NONE;
  if (typeof v === 'boolean') return v ? TRUE : FALSE;
  if (typeof v === 'number') return num(v, !Number.isInteger(v));
  if (typeof v === 'string') return str(v);
  if (Array.isArray(v)) return list(v.map((x) => fromDocument(x, node, shape)));
  if (typeof v !== 'object') return UNKNOWN;
  const entries = Object.entries(v as Record<string, unknown>).map(([k, x]) => [k, fromDocument(x, node, shape)] as const);
  if (shape === 'attributes') {
    const cfg: InstV = { k: 'inst', cls: { k: 'class', name: 'DictConfig', bases: [], attrs: new Map(), node, dataclass: false, fields: [] }, attrs: new Map(entries) };
    return cfg;
  }
  const dict: DictV = { k: 'dict', map: new Map(entries.map(([k, x]) => [`s:${k}`, [str(k), x]])) };
  return dict;
}

/** A JSON or YAML document's text as a Python value; an unknown saying why when it does not parse. */
export function parsed(text: string, yaml: boolean, node: PyNode, shape: Shape, what: string): Value {
  try {
    return fromDocument(yaml ? parseYaml(text) : JSON.parse(text), node, shape);
  } catch (e) {
    return { k: 'unknown', why: `${what} could not be parsed (${e instanceof Error ? e.message.split('\n')[0] : String(e)})` };
  }
}

/** `OmegaConf.load(path)`: the file by path, read as `open` reads it. */
function loadPath(interp: Interp, path: Value | undefined, node: PyNode): Value {
  const read = readScriptFile(interp, path);
  if ('why' in read) return { k: 'unknown', why: read.why };
  return parsed(read.text, !/\.json$/i.test(read.file), node, 'attributes', read.file);
}

/** The value a settings loader returns, or undefined when `path` is not one. */
export function loadSettings(interp: Interp, path: string, args: Value[], node: PyNode): Value | undefined {
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
      return parsed(text, path.startsWith('yaml.'), node, 'dict', path);
    }
    case 'omegaconf.OmegaConf.load':
      return loadPath(interp, source, node);
    default:
      return undefined;
  }
}
