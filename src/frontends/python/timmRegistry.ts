/**
 * `timm.create_model("resnet50", **kw)` read through timm's own source: timm
 * fills its registry with `@register_model` decorators when its model files
 * are imported, which a static reader never does. So the registry is read the
 * same way timm builds it, from the text: the model file that defines
 * `@register_model def resnet50(...)` is found in `timm/models/`, loaded as a
 * module, and the entry point called with `pretrained=False`.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { readSource } from '../imports';
import type { Interp } from './interpreter';
import type { LoadedModule, ModuleLoader } from './modules';
import { native, type NativeV, type Value } from './values';

/** Whether `mod.name` is timm's package or one of its modules that exports create_model. */
export function isTimmFactory(mod: LoadedModule, name: string): boolean {
  return name === 'create_model' && /^timm(\.models(\._factory)?)?$/.test(mod.name);
}

/** A stand-in for timm's create_model over the package folder `timmDir` (the one holding `models/`). */
export function timmCreateModel(interp: Interp, loader: ModuleLoader, timmDir: string): NativeV {
  return native('timm.create_model', (args, kwargs, site) => {
    const nameArg = args[0] ?? kwargs.get('model_name');
    if (nameArg?.k !== 'str') return { k: 'unknown', why: 'timm.create_model with a model name that is not a string literal' };
    // 'hf-hub:…' / 'timm/resnet50.a1_in1k': the architecture is the part before the pretrained tag.
    const arch = nameArg.v.replace(/^[\w-]+:/, '').replace(/^timm\//, '').split('.')[0];
    const file = findRegisteredModel(join(timmDir, 'models'), arch, loader);
    if (!file) return { k: 'unknown', why: `timm has no model registered as '${arch}' in ${join(timmDir, 'models')}` };
    const r = loader.resolver.resolve('models.' + file.replace(/\.py$/, ''), 1, join(timmDir, '__init__.py'));
    if (r.kind !== 'source') return { k: 'unknown', why: `timm's ${file} could not be read` };
    const mod = loader.load(loader.moduleFor({ ...r, name: 'timm.models.' + file.replace(/\.py$/, '') }));
    const entry = mod.scope.vars.get(arch);
    if (!entry) return { k: 'unknown', why: `timm's ${file} does not define ${arch}` };
    const kw = new Map<string, Value>(kwargs);
    kw.delete('model_name');
    kw.set('pretrained', { k: 'bool', v: false });
    // Loading options handled by create_model itself, not the entry point.
    for (const k of ['checkpoint_path', 'pretrained_cfg', 'pretrained_cfg_overlay', 'scriptable', 'exportable', 'no_jit']) kw.delete(k);
    return interp.callValue(entry, [], kw, site);
  });
}

const registryCache = new Map<string, Map<string, string>>();

/** The file in `modelsDir` that registers `arch` (by `@register_model` over `def arch(`). */
function findRegisteredModel(modelsDir: string, arch: string, loader: ModuleLoader): string | undefined {
  let registry = registryCache.get(modelsDir);
  if (!registry) {
    registry = new Map();
    let files: string[] = [];
    try {
      files = readdirSync(modelsDir).filter((f) => f.endsWith('.py'));
    } catch {
      files = [];
    }
    const pattern = /@register_model\s*(?:\([^)]*\))?\s*\n\s*def\s+(\w+)\s*\(/g;
    for (const f of files) {
      const src = readSource(join(modelsDir, f), loader.options.overrides);
      if ('why' in src) continue;
      for (const m of src.text.matchAll(pattern)) if (!registry.has(m[1])) registry.set(m[1], f);
    }
    registryCache.set(modelsDir, registry);
  }
  return registry.get(arch);
}
