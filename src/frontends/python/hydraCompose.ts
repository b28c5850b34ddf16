/**
 * The config `@hydra.main(config_path=..., config_name=...)` hands its function, composed without running anything:
 * the primary config's Defaults List is expanded depth first (group options, `_self_`, packages, `override`s), the
 * configs are merged in that order, the command-line words are applied, Hydra's own `hydra` node is dropped (the task
 * function never sees it), and OmegaConf's `${...}` are resolved. Reading is done through `HydraSources`, so this
 * module stays pure. Rules follow Hydra 1.1+ with version_base >= 1.1; the docs page behind each is named inline.
 */
import { parse as parseYaml, type ScalarTag } from 'yaml';
import { resolveInterpolations, Unresolved } from './omegaInterpolation';
import { overrideValues } from './hydraOverrideValues';

export interface HydraSources {
  /** A file's text by absolute path, or why it cannot be read (`missing` when there is no such file). */
  read(path: string): { text: string } | { why: string; missing?: boolean };
  /** Whether a folder exists (a config group is a folder under the config dir). */
  isDir(path: string): boolean;
}

export interface ComposeRequest {
  /** Absolute folder config_path names (the script's folder joined with config_path). */
  configDir: string;
  /** config_name, with or without `.yaml`. */
  configName: string;
  /** The command-line words after the script, in Hydra's override grammar. */
  overrides: string[];
}

export interface Composed {
  /** The composed config, interpolations resolved (Unresolved where they cannot be). */
  config: Record<string, unknown>;
  /** Every file read, absolute paths. */
  files: string[];
  /** What was not modelled, said once each (a sweep, an unreadable optional group…), for a diagnostic. */
  notes: string[];
}

type Dict = Record<string, unknown>;
/** One Defaults List entry (Hydra docs, 'The Defaults List': CONFIG | [optional|override] GROUP(@PACKAGE): OPTION). */
interface Entry { self?: boolean; group?: string; path?: string; option?: unknown; pkg?: string; optional?: boolean; override?: boolean; external?: boolean }
/** A config to load: its file (relative to the config dir), group, and what decides its package. */
interface Spec { file: string; groupPath: string; relGroup: string; parentPkg: string; explicit?: string; name: string; optional?: boolean; primary?: boolean }
interface Item { content: Dict; pkg: string }
type ValueOp = { op: '=' | '+' | '++' | '~'; key: string; value: unknown; word: string };

/** PyYAML, which OmegaConf loads with, reads YAML 1.1 scalars the core schema leaves as text: `55_000`, `yes`. */
const PYYAML_SCALARS: ScalarTag[] = [
  { tag: 'tag:yaml.org,2002:int', default: true, test: /^[-+]?[0-9][0-9_]*$/, resolve: (s) => Number(s.replace(/_/g, '')) },
  { tag: 'tag:yaml.org,2002:float', default: true, test: /^[-+]?[0-9][0-9_]*\.[0-9_]*([eE][-+]?[0-9]+)?$/, resolve: (s) => Number(s.replace(/_/g, '')) },
  { tag: 'tag:yaml.org,2002:bool', default: true, test: /^(yes|Yes|YES|no|No|NO|on|On|ON|off|Off|OFF)$/, resolve: (s) => /^(yes|on)$/i.test(s) },
];

/** Thrown while composing, caught at the top: the config cannot be composed, and why. */
class Failed { constructor(readonly why: string) {} }

const isDict = (v: unknown): v is Dict => typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Unresolved);
const copy = (v: unknown): unknown =>
  Array.isArray(v) ? v.map(copy) : isDict(v) ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, copy(x)])) : v;
const join = (...parts: string[]): string => parts.filter((p) => p !== '').join('/');
const dirname = (p: string): string => (p.includes('/') ? p.slice(0, p.lastIndexOf('/')) : '');
const dotted = (groupPath: string): string => groupPath.replace(/\//g, '.');
const firstLine = (e: unknown): string => (e instanceof Error ? e.message : String(e)).split('\n')[0];
/** Hydra's own config groups configure Hydra (launcher, logging, sweeper), not the job: never the task's cfg. */
const isHydraGroup = (groupPath: string): boolean => groupPath === 'hydra' || groupPath.startsWith('hydra/');

/** Hydra docs, 'Packages': a package joined under its parent; a `_global_` anywhere makes the rest absolute. */
function packageJoin(parent: string, pkg: string): string {
  const ret = parent === '' ? pkg : pkg === '' ? parent : `${parent}.${pkg}`;
  const g = ret.lastIndexOf('_global_');
  return g < 0 ? ret : ret.slice(g + '_global_'.length + 1);
}

/** A Defaults List `@pkg` (relative to the including config); `_here_` is that config's own package. */
function listPackage(pkg: string | undefined, groupPath: string): string | undefined {
  if (pkg === undefined) return undefined;
  if (pkg === '_here_') return '';
  return pkg.includes('_group_') ? `_global_.${pkg.replace(/_group_/g, dotted(groupPath))}` : pkg;
}

/** The `# @package X` directive among a file's leading comment lines (Hydra docs, 'Packages'): always absolute. */
function packageHeader(text: string, spec: Spec): string | undefined {
  for (const line of text.split(/\r?\n/)) {
    const t = line.trim();
    if (t === '') continue;
    if (!t.startsWith('#')) return undefined;
    const m = /^#\s*@package\s*:?\s*(\S*)/.exec(t);
    if (!m) continue;
    // `_group_` alone is the pre-1.1 way of asking for the default package; `_group_`/`_name_` inside are expanded.
    if (m[1] === '_group_') return undefined;
    const h = m[1].replace(/_group_/g, dotted(spec.groupPath)).replace(/_name_/g, spec.name);
    return h === '' || h === '_global_' || h.startsWith('_global_.') ? h || '_global_' : `_global_.${h}`;
  }
  return undefined;
}

function parseEntry(raw: unknown): Entry | undefined {
  if (typeof raw === 'string') {
    if (raw.trim() === '_self_') return { self: true };
    const [path, pkg] = raw.trim().split('@');
    return { path, pkg };
  }
  if (!isDict(raw) || Object.keys(raw).length !== 1) return undefined;
  const [key, option] = Object.entries(raw)[0];
  const words = key.trim().split(/\s+/);
  const flags = words.slice(0, -1);
  if (flags.some((w) => w !== 'optional' && w !== 'override')) return undefined;
  const [group, pkg] = words[words.length - 1].split('@');
  return { group, pkg, option, optional: flags.includes('optional'), override: flags.includes('override') };
}

/** OmegaConf merge: mappings merge key by key; scalars and lists replace; a `???` does not replace a value. */
function mergeInto(dest: Dict, src: Dict): void {
  for (const [k, v] of Object.entries(src)) {
    if (k === '__proto__') continue;
    const d = dest[k];
    if (isDict(d) && isDict(v)) mergeInto(d, v);
    else if (!(v === '???' && Object.hasOwn(dest, k))) dest[k] = copy(v);
  }
}

const valueText = (v: unknown): string => (typeof v === 'string' ? v : JSON.stringify(v) ?? String(v));

/** Sets, adds or deletes a dotted key in the composed config (Hydra docs, 'Basic Override syntax'). */
function applyValue(root: Dict, { op, key, value, word }: ValueOp, note: (s: string) => void): void {
  const segs = key.split('.');
  let parent: unknown = root;
  for (const seg of segs.slice(0, -1)) {
    const next: unknown = Array.isArray(parent) ? parent[Number(seg)] : isDict(parent) ? parent[seg] : undefined;
    if (next === undefined && op !== '~' && isDict(parent)) parent = parent[seg] = {};
    else parent = next;
  }
  const last = segs[segs.length - 1];
  const has = Array.isArray(parent) ? /^\d+$/.test(last) && Number(last) < parent.length : isDict(parent) && Object.hasOwn(parent, last);
  if (op === '~') {
    if (!has) note(`${word}: ${key} is not in the config; nothing deleted`);
    else if (Array.isArray(parent)) parent.splice(Number(last), 1);
    else delete (parent as Dict)[last];
    return;
  }
  if (!isDict(parent) && !(Array.isArray(parent) && has)) return note(`${word}: ${key} cannot be set (its parent is not a mapping)`);
  if (op === '=' && !has) note(`${word}: ${key} is not in the config (Hydra asks for +${key}=...); set anyway`);
  if (op === '+' && has && (parent as Dict)[last] !== null) note(`${word}: ${key} is already in the config (Hydra refuses +); set anyway`);
  const target = parent as Dict;
  const old = target[last as keyof typeof target];
  if (isDict(old) && isDict(value)) mergeInto(old, value);
  else target[last as keyof typeof target] = copy(value);
}

/**
 * One walk of the Defaults List tree. `choices` maps override keys to options: the command line's first, then the
 * `override` entries met, the first set winning; `fromConfigs` (key -> file) says which of those matched nothing.
 */
interface Pass {
  dir: string; sources: HydraSources; files: Set<string>; note: (s: string) => void;
  choices: Map<string, unknown>; deletes: Set<string>; appends: Entry[]; used: Set<string>; fromConfigs: Map<string, string>;
}

/** Hydra docs, 'The Defaults List': a group's override key, with `@pkg` when not at its default package. */
const overrideKey = (groupPath: string, finalPkg: string): string =>
  finalPkg === dotted(groupPath) ? groupPath : `${groupPath}@${finalPkg || '_global_'}`;

function load(p: Pass, spec: Spec): { doc: Dict; header?: string } | { why: string; missing?: boolean } {
  const path = `${p.dir}/${spec.file}`;
  const got = p.sources.read(path);
  if ('why' in got) return { why: `${spec.file}: ${got.why}`, ...(got.missing ? { missing: true } : {}) };
  p.files.add(path);
  let doc: unknown;
  try {
    doc = parseYaml(got.text, { merge: true, customTags: (tags) => [...tags, ...PYYAML_SCALARS] }) ?? {};
  } catch (e) {
    return { why: `${spec.file}: ${firstLine(e)}` };
  }
  return isDict(doc) ? { doc, header: packageHeader(got.text, spec) } : { why: `${spec.file}: a config is a mapping at its top level` };
}

/** A config and its defaults, depth first, as (content, package) pairs in merge order. */
function expand(p: Pass, spec: Spec, trail: string[]): Item[] {
  if (trail.includes(spec.file)) throw new Failed(`defaults cycle: ${[...trail, spec.file].join(' -> ')}`);
  const loaded = load(p, spec);
  if ('why' in loaded) {
    if (!spec.optional) throw new Failed(loaded.why);
    // Hydra skips an optional config that is not there without a word (lightning-hydra-template's git-ignored
    // `optional local: default`); one that is there but unreadable is worth saying.
    if (!loaded.missing) p.note(`optional ${loaded.why}; skipped`);
    return [];
  }
  // Hydra docs, 'Packages': a Defaults List package wins, then the file's @package header, then its group.
  const pkg = packageJoin(spec.parentPkg, spec.explicit ?? loaded.header ?? dotted(spec.relGroup));
  const { defaults, ...content } = loaded.doc;
  const entries: Entry[] = [];
  if (defaults !== undefined && defaults !== null && !Array.isArray(defaults)) p.note(`${spec.file}: defaults is not a list; ignored`);
  for (const raw of Array.isArray(defaults) ? defaults : []) {
    const e = parseEntry(raw);
    if (e) entries.push(e);
    else p.note(`${spec.file}: defaults entry ${JSON.stringify(raw)} is not one Hydra reads; ignored`);
  }
  // Hydra docs, 'Default composition order': without `_self_`, a config's own values come after its defaults.
  if (!entries.some((e) => e.self)) entries.push({ self: true });
  if (spec.primary) entries.push(...p.appends);
  for (const e of entries) {
    if (!e.override || e.group === undefined) continue;
    const groupPath = e.group.startsWith('/') ? e.group.slice(1) : join(spec.groupPath, e.group);
    const key = overrideKey(groupPath, packageJoin(pkg, listPackage(e.pkg, groupPath) ?? dotted(e.group.replace(/^\//, ''))));
    if (!p.choices.has(key)) p.choices.set(key, e.option);
    if (!isHydraGroup(groupPath) && !p.fromConfigs.has(key)) p.fromConfigs.set(key, spec.file);
  }
  // Last entry first, as Hydra walks it: an `override` in a later config (an experiment) is then known before the
  // group it overrides is loaded, and the first one met (the last in depth-first order) wins.
  const parts: Item[][] = [];
  for (const e of [...entries].reverse()) {
    if (!e.override) parts.push(e.self ? [{ content, pkg }] : child(p, e, spec, pkg, [...trail, spec.file]));
  }
  return parts.reverse().flat();
}

function child(p: Pass, e: Entry, parent: Spec, parentPkg: string, trail: string[]): Item[] {
  if (e.group === undefined) {
    // A CONFIG entry: a file by path relative to the including config's group; its package follows its folder.
    const rel = (e.path ?? '').replace(/^\//, '');
    const abs = e.path?.startsWith('/') ? rel : join(parent.groupPath, rel);
    if (isHydraGroup(dirname(abs))) return [];
    const name = abs.slice(abs.lastIndexOf('/') + 1);
    const spec = { file: `${abs}.yaml`, groupPath: dirname(abs), relGroup: dirname(rel), parentPkg, name };
    return expand(p, { ...spec, explicit: listPackage(e.pkg, dirname(abs)) }, trail);
  }
  // A GROUP_DEFAULT: relative to the including config's group unless it starts with `/` (or came from `+group=`).
  const relGroup = e.group.replace(/^\//, '');
  const groupPath = e.group.startsWith('/') || e.external ? relGroup : join(parent.groupPath, e.group);
  if (isHydraGroup(groupPath)) return [];
  const fromPkg = e.external ? '' : parentPkg;
  const explicit = listPackage(e.pkg, groupPath);
  const key = overrideKey(groupPath, packageJoin(fromPkg, explicit ?? dotted(relGroup)));
  if (p.deletes.has(key) || p.choices.has(key)) p.used.add(key);
  if (p.deletes.has(key)) return [];
  const option = p.choices.has(key) ? p.choices.get(key) : e.option;
  if (option === null || option === undefined) return [];
  if (option === '???') throw new Failed(`${key}: no option chosen (??? in the defaults list: ${key}=OPTION is given at run time)`);
  return (Array.isArray(option) ? option : [option]).flatMap((o: unknown) => {
    if (typeof o === 'string' && !o.includes('${')) {
      return expand(p, { file: `${groupPath}/${o}.yaml`, groupPath, relGroup, parentPkg: fromPkg, explicit, name: o, optional: e.optional }, trail);
    }
    p.note(`${key}: option ${valueText(o)} is not a config name WAP can follow; skipped`);
    return [];
  });
}

/** The primary config's whole Defaults List tree, in merge order. */
function composeDefaults(p: Pass, configName: string): Item[] {
  const name = configName.replace(/\.ya?ml$/, '');
  const file = /\.ya?ml$/.test(configName) ? configName : `${configName}.yaml`;
  const items = expand(p, { file, groupPath: dirname(name), relGroup: dirname(name), parentPkg: '', name, primary: true }, []);
  for (const [key, file] of p.fromConfigs) if (!p.used.has(key)) p.note(`${file}: override ${key} matches no group in the defaults list`);
  return items;
}

/** Words Hydra's own argument parser takes a value after (Hydra docs, 'Hydra's command line flags'). */
const FLAGS_WITH_VALUE = new Set(['--config-name', '-cn', '--config-path', '-cp', '--config-dir', '-cd', '--cfg', '-c', '--package', '-p', '--shell-completion', '-sc', '--experimental-rerun']);
const FLAGS = new Set(['--info', '-i', '--help', '-h', '--hydra-help', '--version', '--resolve', '--run', '-r', '--multirun', '-m']);
const INFO_TOPICS = new Set(['all', 'config', 'defaults', 'defaults-tree', 'plugins', 'searchpath']);

/** The command line as Hydra reads it: its own flags, group choices, group additions and deletions, value edits. */
function readCommandLine(request: ComposeRequest, sources: HydraSources, note: (s: string) => void) {
  let { configDir, configName } = request;
  const all = request.overrides;
  const words: string[] = [];
  for (let i = 0; i < all.length; i++) {
    const w = all[i];
    const eq = w.startsWith('--') ? w.indexOf('=') : -1;
    const flag = eq > 0 ? w.slice(0, eq) : w;
    const value = eq > 0 ? w.slice(eq + 1) : FLAGS_WITH_VALUE.has(flag) ? all[++i] ?? '' : undefined;
    if (!w.startsWith('-')) words.push(w);
    else if (flag === '--config-name' || flag === '-cn') configName = value ?? configName;
    else if ((flag === '--config-path' || flag === '-cp') && value?.startsWith('/')) configDir = value.replace(/\/+$/, '');
    else if (flag === '--config-path' || flag === '-cp') note(`${flag} ${value}: a relative config path is not followed; configs are read from config_path`);
    else if (flag === '--config-dir' || flag === '-cd') note(`${flag} ${value}: an added config folder is not searched`);
    else if (flag === '--multirun' || flag === '-m') note('--multirun: one run is planned, each sweep at its first value');
    else if ((flag === '--info' || flag === '-i') && INFO_TOPICS.has(all[i + 1])) i++;
    else if (!FLAGS_WITH_VALUE.has(flag) && !FLAGS.has(flag)) note(`${w}: not a Hydra flag; skipped`);
  }
  const choices = new Map<string, unknown>();
  const forced = new Set<string>();
  const deletes = new Set<string>();
  const appends: Entry[] = [];
  const valueOps: ValueOp[] = [];
  for (const w of words) {
    const m = /^(~|\+\+|\+)?([^=~+][^=]*?)(?:=([\s\S]*))?$/.exec(w);
    if (!m || (m[3] === undefined && m[1] !== '~')) {
      note(`${w}: not a Hydra override (key=value); skipped`);
      continue;
    }
    const [, prefix = '', key, text] = m;
    // Hydra's own settings (run dir, launcher, sweeper) are not part of the task's config.
    if (key === 'hydra' || key.startsWith('hydra.') || key.startsWith('hydra/')) continue;
    let parsed = { values: [null] as unknown[], sweep: false };
    try {
      if (text !== undefined) parsed = overrideValues(text);
    } catch (e) {
      note(`${w}: the value is not one WAP reads (${firstLine(e)}); skipped`);
      continue;
    }
    const value = parsed.values[0];
    if (parsed.sweep) note(`sweep ${key}=${text}: planned at its first value ${valueText(value)}`);
    const [group, pkg] = key.split('@');
    const isGroup = sources.isDir(`${configDir}/${group}`);
    if (!isGroup) valueOps.push({ op: (prefix || '=') as ValueOp['op'], key, value, word: w });
    else if (prefix === '~') deletes.add(key);
    else if (prefix === '+') appends.push({ group, pkg, option: value, external: true });
    else choices.set(key, value);
    if (isGroup && prefix === '++') forced.add(key);
  }
  return { configDir, configName, choices, forced, deletes, appends, valueOps };
}

export function composeHydraConfig(request: ComposeRequest, sources: HydraSources): Composed | { why: string } {
  const notes = new Set<string>();
  const files = new Set<string>();
  const note = (s: string): void => void notes.add(s);
  try {
    const { configDir, configName, choices, forced, deletes, appends, valueOps } = readCommandLine(request, sources, note);
    const pass = (): Pass => ({ dir: configDir, sources, files, note, choices: new Map(choices), deletes, appends, used: new Set(), fromConfigs: new Map() });
    let p = pass();
    let items = composeDefaults(p, configName);
    const unused = [...choices.keys()].filter((k) => !p.used.has(k));
    if (unused.length > 0) {
      // Hydra refuses `group=option` for a group not in the defaults list and asks for `+group=option` (`++`
      // appends it); the folder exists, so the run meant is the one with the group added.
      for (const key of unused) {
        if (!forced.has(key)) note(`${key}=${valueText(choices.get(key))}: ${key} is not in the defaults list (Hydra asks for +${key}=...); added`);
        const [group, pkg] = key.split('@');
        appends.push({ group, pkg, option: choices.get(key), external: true });
        choices.delete(key);
      }
      items = composeDefaults((p = pass()), configName);
    }
    const root: Dict = {};
    for (const { content, pkg } of items) mergeInto(root, pkg.split('.').reduceRight<Dict>((inner, seg) => (seg ? { [seg]: inner } : inner), content));
    delete root.hydra; // the task function's cfg has no `hydra` node (HydraConfig.get() holds it)
    for (const op of valueOps) applyValue(root, op, note);
    const config = resolveInterpolations(root);
    if (!isDict(config)) return { why: config instanceof Unresolved ? config.why : 'the composed config is not a mapping' };
    return { config, files: [...files], notes: [...notes] };
  } catch (e) {
    return { why: e instanceof Failed ? e.why : `the Hydra config could not be composed: ${firstLine(e)}` };
  }
}
