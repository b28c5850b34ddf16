/**
 * Hydra, read as it runs a training script: `@hydra.main(config_path="conf", config_name="config")` hands the
 * decorated `main(cfg)` the config Hydra composes from `conf/config.yaml`, its defaults list and the command line's
 * overrides (`python train.py model=gpt2 model.n_layer=12`, the launch script's words); `hydra.utils.instantiate`
 * builds what a `_target_` names with the config's other keys (lightning-hydra-template's
 * `hydra.utils.instantiate(cfg.model)`). Without this, `main()` was called without its `cfg` and a Hydra project
 * had "no model found" and no word why. Composition itself is hydraCompose.ts; this room binds it to the interpreter.
 */
import { dirname, isAbsolute, join } from 'node:path';
import { existsSync, statSync } from 'node:fs';
import type { SourceRange } from '../../core/ir';
import { field, namedChildren, rangeOf, type PyNode } from './ast';
import { commandLineOf, howRead } from './commandLine';
import { evalArguments, evalExpr } from './expressions';
import { composeHydraConfig, type HydraSources } from './hydraCompose';
import { readSource } from '../imports';
import { importDotted } from './dottedImport';
import { callConfigStore, isStored, withStoredConfigs } from './hydraConfigStore';
import type { Interp } from './interpreter';
import { fromDocument } from './settingsFiles';
import { native, type CallSite, type DictV, type Scope, type Value } from './values';

/** What `@hydra.main(…)` says: where the primary config is, relative to the file that declares `main`. */
export interface HydraMain {
  configPath: string | undefined;
  configName: string | undefined;
  /** The file declaring the decorated function (config_path is relative to it). */
  file: string | undefined;
  range: SourceRange;
}

const HYDRA_MAIN = /^hydra(\.main)?\.main$/;

const literalString = (v: Value | undefined): string | undefined => (v?.k === 'str' ? v.v : undefined);

/** The `@hydra.main(…)` among a definition's decorators, read without running anything else they say. */
export function hydraMainOf(interp: Interp, decorators: PyNode[], scope: Scope): HydraMain | undefined {
  for (const decorator of decorators) {
    const call = namedChildren(decorator)[0];
    const callee = call?.type === 'call' ? field(call, 'function') : undefined;
    if (!call || !callee) continue;
    const target = evalExpr(interp, callee, scope);
    if (target.k !== 'lib' || !HYDRA_MAIN.test(target.path)) continue;
    const { args: positional, kwargs } = evalArguments(interp, field(call, 'arguments'), scope);
    // hydra.main(config_path=None, config_name=None, version_base=…): the first two may be positional.
    return {
      configPath: literalString(kwargs.get('config_path') ?? positional[0]),
      configName: literalString(kwargs.get('config_name') ?? positional[1]),
      file: interp.loader?.fileOf(decorator) ?? interp.file,
      range: rangeOf(decorator),
    };
  }
  return undefined;
}

/** The files Hydra reads, as sources are read (open editors first), recorded so editing one reads the script again. */
function sourcesFor(interp: Interp): HydraSources {
  return {
    read: (path) => {
      const read = readSource(path, interp.loader?.options.overrides);
      if ('why' in read) return { why: read.why, ...(existsSync(path) || interp.loader?.options.overrides?.has(path) ? {} : { missing: true }) };
      interp.loader?.options.filesRead?.add(path);
      return { text: read.text };
    },
    isDir: (path) => {
      try {
        return statSync(path).isDirectory();
      } catch {
        return false;
      }
    },
  };
}

/** The `cfg` Hydra hands `main`: the composed config as a DictConfig, or an unknown that says why not. */
export function hydraConfigArgument(interp: Interp, main: HydraMain): Value {
  const given = commandLineOf(interp);
  const where = main.file ? dirname(main.file) : undefined;
  const configName = main.configName;
  // Without config_path, only structured configs the script stores (ConfigStore) are there to compose.
  if (configName === undefined || !where || (main.configPath === undefined && !isStored(interp, configName.replace(/\.ya?ml$/, '')))) {
    const why = `@hydra.main without ${configName === undefined ? 'config_name' : 'a config_path WAP can read or a ConfigStore entry of that name'}: the config is only the command line's overrides`;
    interp.warnAt(main.range, why, 'hydra-config', 'warning', interp.runNotes);
    return { k: 'unknown', why };
  }
  const configDir = main.configPath === undefined ? join(where, '<ConfigStore>') : isAbsolute(main.configPath) ? main.configPath : join(where, main.configPath);
  const composed = composeHydraConfig({ configDir, configName, overrides: given?.words ?? [] }, withStoredConfigs(interp, configDir, sourcesFor(interp)));
  if ('why' in composed) {
    interp.warnAt(main.range, `Hydra's config could not be composed (${composed.why}): what main builds from cfg is unknown`, 'hydra-config', 'warning', interp.runNotes);
    return { k: 'unknown', why: `Hydra's config: ${composed.why}` };
  }
  // Named from the config folder as the defaults list names them, the primary first.
  const named = (f: string): string => {
    const rel = f.startsWith(`${configDir}/`) ? f.slice(configDir.length + 1) : f;
    return isStored(interp, rel.replace(/\.yaml$/, '')) ? `${rel.replace(/\.yaml$/, '')} (ConfigStore)` : rel;
  };
  const [primary, ...others] = composed.files.map(named);
  const files = [primary, ...others.sort()];
  interp.warnAt(main.range, `\`cfg\` is the config Hydra composes from ${files.join(', ')}, ${howRead(interp, given, 'each value as the files state it')}`, 'script-arguments', 'info', interp.runNotes);
  for (const note of composed.notes) interp.warnAt(main.range, `Hydra: ${note}`, 'hydra-config', 'warning', interp.runNotes);
  return fromDocument(composed.config, 'attributes');
}

/** Keys of an instantiated config that are Hydra's, not the target's. */
const RESERVED = new Set(['_target_', '_partial_', '_recursive_', '_convert_', '_args_']);

/** `hydra.utils.instantiate(cfg, *args, **kwargs)` (and `call`): the target called with the config's other keys. */
function instantiate(interp: Interp, config: Value | undefined, args: Value[], kwargs: Map<string, Value>, site: CallSite): Value {
  if (config?.k === 'list') return { k: 'list', items: config.items.map((c) => instantiate(interp, c, [], new Map(), site)) };
  if (config?.k !== 'dict') return config?.k === 'unknown' ? config : { k: 'unknown', why: 'hydra.utils.instantiate of a config WAP could not read' };
  const entry = (key: string): Value | undefined => config.map.get(`s:${key}`)?.[1];
  const target = entry('_target_');
  if (!target) return config;
  if (target.k !== 'str') return { k: 'unknown', why: 'a _target_ WAP could not read' };
  const recursive = entry('_recursive_')?.k !== 'bool' || (entry('_recursive_') as { v: boolean }).v;
  const nested = (v: Value): Value => (recursive && (v.k === 'dict' || v.k === 'list') && hasTarget(v) ? instantiate(interp, v, [], new Map(), site) : v);
  const callKwargs = new Map<string, Value>();
  for (const [key, [, v]] of config.map) if (key.startsWith('s:') && !RESERVED.has(key.slice(2))) callKwargs.set(key.slice(2), nested(v));
  for (const [k, v] of kwargs) callKwargs.set(k, v);
  const given = entry('_args_');
  const callArgs = [...(given?.k === 'list' ? given.items.map(nested) : []), ...args];
  const callee = importDotted(interp, target.v, site.node, '_target_');
  // Said with the run's notes: a model the config builds is missing, and a file without a model must still say why.
  if (callee.k === 'unknown') interp.warnAt(site.range, `\`${site.calleeText}\` builds what it cannot read: ${callee.why}`, 'hydra-target', 'warning', interp.runNotes);
  const partial = entry('_partial_');
  if (partial?.k === 'bool' && partial.v) {
    return native(target.v, (more, moreKwargs, later) => interp.callValue(callee, [...callArgs, ...more], new Map([...callKwargs, ...moreKwargs]), later));
  }
  return interp.callValue(callee, callArgs, callKwargs, site);
}

function hasTarget(v: Value): boolean {
  if (v.k === 'list') return v.items.some(hasTarget);
  return v.k === 'dict' && (v as DictV).map.has('s:_target_');
}

/** Hydra's library calls the interpreter models, or undefined when `path` is not one. */
export function callHydra(interp: Interp, path: string, args: Value[], kwargs: Map<string, Value>, site: CallSite): Value | undefined {
  const stored = callConfigStore(interp, path, args, kwargs);
  if (stored) return stored;
  switch (path) {
    case 'hydra.utils.instantiate':
    case 'hydra.utils.call':
      return instantiate(interp, args[0] ?? kwargs.get('config'), args.slice(1), new Map([...kwargs].filter(([k]) => k !== 'config')), site);
    case 'hydra.utils.get_class':
    case 'hydra.utils.get_method':
    case 'hydra.utils.get_object':
      return args[0]?.k === 'str' ? importDotted(interp, args[0].v, site.node, '_target_') : undefined;
    default:
      return undefined;
  }
}
