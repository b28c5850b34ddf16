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
import { applyFreezeSteps, type FreezeStep } from '../freezing/freezeSteps';
import type { HfModelSpec } from '../huggingface/registry';
import { withQuantizedWeights } from '../quantization/bitsandbytes';
import { torchParameterNames } from '../freezing/parameterNames';
import { hfModuleLayout } from '../huggingface/moduleLayouts';
import { hfGraph } from './transformersModels';
import type { ModelSpec, SourceRange } from '../../core/ir';
import { UNKNOWN, list, toNumber, type HfV, type Value } from './values';

/** The model a value belongs to (itself for a model). */
function hfRoot(v: HfV): HfV {
  return v.module?.root ?? v;
}

/** The module path of a model or submodule value ('' for the model). */
export function hfPath(v: HfV): string {
  return v.module?.path ?? '';
}

/** A model's graph as paths: every module path that holds parameters, and each layer's own parameter names. */
interface ModuleIndex {
  paths: Set<string>;
  parameters: Map<string, string[]>;
}

/** One per graph (hfGraph builds a model's graph once, again only if its config changed). */
const indexes = new WeakMap<ModelSpec, ModuleIndex>();

function indexOf(model: HfV): ModuleIndex {
  const graph = hfGraph(model);
  let index = indexes.get(graph);
  if (index) return index;
  index = { paths: new Set(), parameters: new Map() };
  for (const layer of graph.layers) {
    const names = torchParameterNames(layer.op, layer.attrs);
    if (!names?.length) continue;
    index.parameters.set(layer.name, names);
    addPath(index, layer.name);
    // A tied weight's owner is a module in torch even where the graph has no layer by its name: T5's `shared`, whose
    // table each stack's embed_tokens uses.
    if (layer.weightKey !== undefined && layer.weightKey !== layer.name && names.includes('weight')) {
      addPath(index, layer.weightKey);
      if (!index.parameters.has(layer.weightKey)) index.parameters.set(layer.weightKey, ['weight']);
    }
  }
  indexes.set(graph, index);
  return index;
}

function addPath(index: ModuleIndex, path: string): void {
  const parts = path.split('.');
  for (let i = 1; i <= parts.length; i++) index.paths.add(parts.slice(0, i).join('.'));
}

const pathsOf = (model: HfV): Set<string> => indexOf(model).paths;

function submodule(of: HfV, path: string): HfV {
  const root = hfRoot(of);
  return { ...root, what: 'module', module: { root, path } };
}

export const joinModulePath = (a: string, b: string): string => (a ? `${a}.${b}` : b);

/** Where a model's base model is (`model` of a LlamaForCausalLM, `bert` of a BertFor…): '' when the model is its own. */
export function hfBaseModelPath(of: HfV): string {
  const root = hfRoot(of);
  const prefix = hfModuleLayout(String(root.config.model_type))?.base;
  return prefix && pathsOf(root).has(prefix) ? prefix : '';
}

/** The submodule at `path` (from the model) when its graph has parameters there; undefined when it has none. */
export function hfSubmoduleAt(of: HfV, path: string): HfV | undefined {
  return pathsOf(hfRoot(of)).has(path) ? submodule(of, path) : undefined;
}

/** Freeze steps the code applied to each model, in program order. */
const steps = new WeakMap<HfV, FreezeStep[]>();

/** The freeze steps recorded on a model value. */
export function hfFreezeSteps(model: HfV): readonly FreezeStep[] {
  return steps.get(model) ?? [];
}

/**
 * The graph a run trains: the script's freezes applied, then bitsandbytes' quantized weights (after the freezes: a
 * quantized weight never trains). The model WAP plans, or the part a script's own module calls.
 */
export function hfTrainedGraph(model: HfV): HfModelSpec {
  const graph = hfGraph(model);
  const frozen = applyFreezeSteps(graph, hfFreezeSteps(model));
  return { ...(model.quantization ? withQuantizedWeights(frozen, model.quantization) : frozen), outputFields: graph.outputFields };
}

/** Records a freeze of a model or submodule's parameters: `requiresGrad` takes names relative to it. */
export function addHfFreezeStep(target: HfV, requiresGrad: FreezeStep['requiresGrad'], range: SourceRange): void {
  const root = hfRoot(target);
  let list = steps.get(root);
  if (!list) steps.set(root, (list = []));
  list.push({ prefix: hfPath(target), requiresGrad, range });
}

/** `model.bert`, `model.base_model`, a layer's `weight`: undefined for names that are neither submodules nor parameters. */
export function hfModuleAttr(obj: HfV, name: string): Value | undefined {
  if (obj.what === 'config') return undefined;
  const root = hfRoot(obj);
  const paths = pathsOf(root);
  if (name === 'base_model' && obj.what === 'model') {
    const base = hfBaseModelPath(root);
    return base ? submodule(root, base) : obj;
  }
  const path = aliasedPath(root, joinModulePath(hfPath(obj), name));
  if (paths.has(path)) return submodule(root, path);
  // `model.bert.embeddings.word_embeddings.weight`: one parameter of a layer, whose requires_grad the code may set.
  if (obj.what === 'module' && indexOf(root).parameters.get(hfPath(obj))?.includes(name)) return { ...root, what: 'parameter', module: { root, path } };
  return undefined;
}

/**
 * A module path as the graph names it: a newer transformers' path for a part (`model.visual` of Qwen2.5-VL since
 * 4.52) is the graph's (`visual`), so a script written for either layout reaches the same parameters.
 */
function aliasedPath(root: HfV, path: string): string {
  if (pathsOf(root).has(path)) return path;
  const aliases = hfModuleLayout(String(root.config.model_type))?.aliases ?? {};
  for (const [from, to] of Object.entries(aliases)) if (path === from || path.startsWith(`${from}.`)) return to + path.slice(from.length);
  return path;
}

/**
 * `…weight.requires_grad = False` on a Hugging Face layer's parameter: a step over that one name, which splits the
 * layer when it has others in another state (freezeSteps.ts says so).
 */
export function hfParameterRequiresGrad(parameter: HfV, requires: boolean, range: SourceRange): void {
  const path = hfPath(parameter);
  const dot = path.lastIndexOf('.');
  const name = path.slice(dot + 1);
  addHfFreezeStep(submodule(parameter, path.slice(0, dot)), (rel) => (rel === name ? requires : undefined), range);
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
