/**
 * Submodules of a Hugging Face model as a fine-tuning script reaches them to
 * freeze them: `model.bert`, `model.base_model`, `model.model.layers[0]`,
 * `model.bert.encoder.layer[:8]`. WAP builds Hugging Face models from their
 * config (../huggingface), with transformers' module names, so a submodule is
 * a path into that graph: it exists when some parameterised layer lives under
 * it. What the code does to a submodule's parameters (`requires_grad_`, a loop
 * over its `parameters()`) is kept as freeze steps on the model, applied to
 * its graph when it is built (../freezing/freezeSteps.ts).
 */
import type { FreezeStep } from '../freezing/freezeSteps';
import { torchParameterNames } from '../freezing/parameterNames';
import { buildHfModel } from '../huggingface/registry';
import { UNKNOWN, list, toNumber, type CallSite, type HfV, type Value } from './values';

/** transformers' `base_model_prefix` per model type: `model.base_model` is that attribute, or the model itself. */
const BASE_MODEL_PREFIX: Readonly<Record<string, string>> = {
  bert: 'bert',
  roberta: 'roberta',
  gpt2: 'transformer',
  gpt_neox: 'gpt_neox',
  llama: 'model',
  mistral: 'model',
  mixtral: 'model',
  qwen2: 'model',
  gemma: 'model',
  t5: 'transformer',
  mt5: 'transformer',
  vit: 'vit',
};

/** The model a value belongs to (itself for a model). */
export function hfRoot(v: HfV): HfV {
  return v.module?.root ?? v;
}

/** The module path of a model or submodule value ('' for the model). */
export function hfPath(v: HfV): string {
  return v.module?.path ?? '';
}

/** Every module path that holds parameters in a model's graph, built once per model value. */
const modulePaths = new WeakMap<HfV, Set<string>>();

function pathsOf(model: HfV): Set<string> {
  let paths = modulePaths.get(model);
  if (paths) return paths;
  paths = new Set();
  const spec = buildHfModel({ config: model.config, head: model.head ?? 'base', encoderOnly: model.encoderOnly, name: model.className, className: model.className, range: model.range, source: model.source });
  for (const layer of spec.layers) {
    if (!torchParameterNames(layer.op, layer.attrs)?.length) continue;
    const parts = layer.name.split('.');
    for (let i = 1; i <= parts.length; i++) paths.add(parts.slice(0, i).join('.'));
  }
  modulePaths.set(model, paths);
  return paths;
}

function submodule(of: HfV, path: string): HfV {
  const root = hfRoot(of);
  return { ...root, what: 'module', module: { root, path } };
}

const join = (a: string, b: string): string => (a ? `${a}.${b}` : b);

/** Freeze steps the code applied to each model, in program order. */
const steps = new WeakMap<HfV, FreezeStep[]>();

/** The freeze steps recorded on a model value. */
export function hfFreezeSteps(model: HfV): readonly FreezeStep[] {
  return steps.get(model) ?? [];
}

/** Records a freeze of a model or submodule's parameters: `requiresGrad` takes names relative to it. */
export function addHfFreezeStep(target: HfV, requiresGrad: FreezeStep['requiresGrad'], site: CallSite): void {
  const root = hfRoot(target);
  let list = steps.get(root);
  if (!list) steps.set(root, (list = []));
  list.push({ prefix: hfPath(target), requiresGrad, range: site.range });
}

/** `model.bert`, `model.base_model`: undefined for names that are not submodules. */
export function hfModuleAttr(obj: HfV, name: string): Value | undefined {
  if (obj.what === 'config') return undefined;
  const root = hfRoot(obj);
  const paths = pathsOf(root);
  if (name === 'base_model' && obj.what === 'model') {
    const prefix = BASE_MODEL_PREFIX[String(root.config.model_type)];
    return prefix && paths.has(prefix) ? submodule(root, prefix) : obj;
  }
  const path = join(hfPath(obj), name);
  return paths.has(path) ? submodule(root, path) : undefined;
}

/**
 * `model.model.layers[0]`, or with `slice` (the indices a slice key picks of a length) `model.bert.encoder.layer[:8]`,
 * a list of submodules.
 */
export function hfModuleItem(obj: HfV, key: Value, slice?: (length: number) => number[]): Value | undefined {
  if (obj.what !== 'module') return undefined;
  const paths = pathsOf(hfRoot(obj));
  const path = hfPath(obj);
  let length = 0;
  while (paths.has(`${path}.${length}`)) length++;
  if (slice) return list(slice(length).map((i) => submodule(obj, `${path}.${i}`)));
  const i = toNumber(key);
  if (i === undefined || !Number.isInteger(i)) return UNKNOWN;
  const index = i < 0 ? i + length : i;
  return index >= 0 && index < length ? submodule(obj, `${path}.${index}`) : UNKNOWN;
}
