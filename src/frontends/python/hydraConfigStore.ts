/**
 * Hydra's structured configs (Hydra docs, "Config Store API"): `ConfigStore.instance().store(name="config",
 * node=TrainConfig)` registers a dataclass (or a dict) as a config Hydra composes like a YAML file, by name, in a
 * group when `group=` says one. `@hydra.main(config_name="config")` with no config_path composes from the store
 * alone. The stored nodes become YAML files of a virtual config folder that hydraCompose.ts reads beside the real
 * one (the store wins a name both have, as Hydra's search path puts the store's schemas first only for matching),
 * so defaults lists, group overrides and interpolations work the same for both.
 */
import type { HydraSources } from './hydraCompose';
import type { Interp } from './interpreter';
import { NONE, type Value } from './values';

/** What a script stored, per analysis: `group/name` → node. */
const stores = new WeakMap<Interp, Map<string, Value>>();

/** OmegaConf's MISSING, and what a value WAP cannot read becomes: a mandatory value the run gives. */
const MANDATORY = '???';

/** `ConfigStore.instance()`'s methods, by library path; undefined when `path` is not one. */
export function callConfigStore(interp: Interp, path: string, args: Value[], kwargs: Map<string, Value>): Value | undefined {
  if (/^hydra\.core\.config_store\.ConfigStore\.instance$/.test(path)) return { k: 'lib', path: 'hydra.core.config_store.ConfigStore()' };
  if (path !== 'hydra.core.config_store.ConfigStore().store') return undefined;
  const name = kwargs.get('name') ?? args[0];
  const node = kwargs.get('node') ?? args[1];
  const group = kwargs.get('group');
  if (name?.k !== 'str' || !node) return NONE;
  const key = `${group?.k === 'str' && group.v ? `${group.v}/` : ''}${name.v.replace(/\.ya?ml$/, '')}`;
  let store = stores.get(interp);
  if (!store) stores.set(interp, (store = new Map()));
  store.set(key, node);
  return NONE;
}

/** Whether the script stored a config under `key` (`config`, `model/gpt2`). */
export function isStored(interp: Interp, key: string): boolean {
  return stores.get(interp)?.has(key) ?? false;
}

/** A stored node as the plain document OmegaConf makes of it: a dataclass's fields, a dict's entries, scalars. */
function documentOf(interp: Interp, v: Value, depth = 0): unknown {
  if (depth > 32) return MANDATORY;
  switch (v.k) {
    case 'none':
      return null;
    case 'bool':
    case 'num':
    case 'str':
      return v.v;
    case 'list':
    case 'tuple':
      return v.items.map((x) => documentOf(interp, x, depth + 1));
    case 'dict':
      return Object.fromEntries([...v.map.values()].filter(([k]) => k.k === 'str').map(([k, x]) => [(k as { v: string }).v, documentOf(interp, x, depth + 1)]));
    case 'class':
      // A dataclass type stands for its defaults, as OmegaConf.structured(TrainConfig) does.
      return v.dataclass ? documentOf(interp, interp.callValue(v, [], new Map(), interp.site(v.node)), depth + 1) : MANDATORY;
    case 'inst':
      if (!v.cls.dataclass) return MANDATORY;
      return Object.fromEntries(v.cls.fields.map((f) => [f.name, documentOf(interp, v.attrs.get(f.name) ?? { k: 'unknown' }, depth + 1)]));
    default:
      // omegaconf.MISSING, and anything WAP cannot read: a value the run must give.
      return MANDATORY;
  }
}

/** `sources` with the stored configs as YAML files of `configDir` (JSON is YAML), found before the disk's. */
export function withStoredConfigs(interp: Interp, configDir: string, sources: HydraSources): HydraSources {
  const store = stores.get(interp);
  if (!store?.size) return sources;
  const files = new Map<string, string>();
  for (const [key, node] of store) files.set(`${configDir}/${key}.yaml`, JSON.stringify(documentOf(interp, node)));
  const groups = new Set([...store.keys()].filter((k) => k.includes('/')).map((k) => `${configDir}/${k.slice(0, k.lastIndexOf('/'))}`));
  return {
    read: (path) => {
      const text = files.get(path);
      return text !== undefined ? { text } : sources.read(path);
    },
    isDir: (path) => groups.has(path) || sources.isDir(path),
  };
}
