/**
 * Submodules of a Hugging Face model as a fine-tuning script reaches them to
 * freeze them: `model.bert`, `model.base_model`, `model.model.layers[0]`,
 * `model.bert.encoder.layer[:8]`. WAP builds Hugging Face models from their
 * config (../huggingface), with transformers' module names, so a submodule is
 * a path into that graph: it exists when some parameterised layer lives under
 * it. What the code does to a submodule's parameters (`requires_grad_`, a loop
 * over its `parameters()`) is kept as freeze steps on the model, applied to
 * its graph when it is built (../freezing/freezeSteps.ts). Where a newer
 * transformers names the model's modules otherwise (`model.model.vision_tower`
 * of LLaVA since 4.52, `…mlp.experts.gate_up_proj` of transformers 5's MoE
 * models; ../huggingface/newerNames.ts), a path either release names reaches
 * the same parameters.
 */
import { applyFreezeSteps, type FreezeStep } from '../freezing/freezeSteps';
import type { HfModelSpec } from '../huggingface/registry';
import { withQuantizedWeights } from '../quantization/bitsandbytes';
import { torchParameterNames } from '../freezing/parameterNames';
import { hfModuleLayout } from '../huggingface/moduleLayouts';
import { newerNaming, type NewerNaming } from '../huggingface/newerNames';
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
  const steps = hfFreezeSteps(model);
  const frozen = steps.length ? applyFreezeSteps(graph, steps, namingOf(model)) : graph;
  return { ...(model.quantization ? withQuantizedWeights(frozen, model.quantization) : frozen), outputFields: graph.outputFields };
}

/** Records a freeze of a model or submodule's parameters: `requiresGrad` takes names relative to it. */
export function addHfFreezeStep(target: HfV, requiresGrad: FreezeStep['requiresGrad'], range: SourceRange): void {
  const root = hfRoot(target);
  let list = steps.get(root);
  if (!list) steps.set(root, (list = []));
  list.push({ prefix: hfPath(target), requiresGrad, range, ...stepNaming(target) });
}

/**
 * Which names a step over `target` reads (../freezing/stepNaming.ts): the release's whose path the code took, both
 * where both releases have it; the graph's, said, where the path is a different module in each (LLaVA's
 * `language_model`, the causal LM before 4.52 and the bare decoder after).
 */
function stepNaming(target: HfV): Pick<FreezeStep, 'naming' | 'newerPrefix' | 'caveat'> {
  const naming = namingOf(hfRoot(target));
  if (!naming) return {};
  const at = reachedOf(target);
  if (at.graph === undefined) return { naming: 'newer', newerPrefix: at.newer };
  if (at.newer === undefined) return { naming: 'graph' };
  if (naming.graphPath(at.newer) !== at.graph) return { naming: 'graph', ...(at.caveat ? { caveat: at.caveat } : {}) };
  return { newerPrefix: at.newer };
}

/** The names a newer transformers gives a model's parameters (newerNames.ts), once per graph; undefined where none renamed them. */
const namings = new WeakMap<ModelSpec, NewerNaming | null>();

function namingOf(root: HfV): NewerNaming | undefined {
  const graph = hfGraph(root);
  if (!namings.has(graph)) namings.set(graph, newerNaming(graph, String(root.config.model_type), root.head) ?? null);
  return namings.get(graph) ?? undefined;
}

/**
 * The path by which the code reached a module or parameter, in the graph's names and in a newer release's: each
 * undefined where that release has no such path (`language_model.model.layers` is 4.46–4.51's only,
 * `model.model.language_model.layers` 4.52's). `caveat` says a path that is a different module in each.
 */
interface Reached {
  graph?: string;
  newer?: string;
  caveat?: string;
}

const reached = new WeakMap<HfV, Reached>();

/** How a value was reached; one made elsewhere (get_input_embeddings(), `model.base_model`) by its graph path. */
function reachedOf(v: HfV): Reached {
  const known = reached.get(v);
  if (known) return known;
  const path = hfPath(v);
  return { graph: path, newer: v.what === 'parameter' ? undefined : namingOf(hfRoot(v))?.newerPath(path) };
}

/**
 * The submodule `name` of a model or submodule, by either release's path: the value's path is the graph's module
 * (for a newer module no one graph module holds, LLaVA's `model.model`, its newer path, which holds no layer).
 */
function childModule(obj: HfV, name: string): HfV | undefined {
  const root = hfRoot(obj);
  const naming = namingOf(root);
  const at = reachedOf(obj);
  const inGraph = at.graph !== undefined ? joinModulePath(at.graph, name) : undefined;
  const graph = inGraph !== undefined && pathsOf(root).has(inGraph) ? inGraph : undefined;
  const inNewer = newerChildName(obj, at, name);
  const newer = inNewer !== undefined && naming?.isModule(inNewer) ? inNewer : undefined;
  if (graph === undefined && newer === undefined) return undefined;
  const value = submodule(root, graph ?? naming?.graphPath(newer!) ?? newer!);
  const caveat = graph !== undefined && newer !== undefined && naming!.graphPath(newer) !== graph ? differentModules(root, naming!, name, graph, newer) : undefined;
  reached.set(value, { graph, newer, ...(caveat ? { caveat } : {}) });
  return value;
}

/** `name` under a value in the newer release's names: at the model, a property it keeps for older code comes first. */
function newerChildName(obj: HfV, at: Reached, name: string): string | undefined {
  if (at.newer === undefined) return undefined;
  return (obj.what === 'model' ? namingOf(hfRoot(obj))?.property(name) : undefined) ?? joinModulePath(at.newer, name);
}

/** The warning for an attribute that is one module before a release and another after it, when their parameters differ. */
function differentModules(root: HfV, naming: NewerNaming, name: string, graph: string, newer: string): string | undefined {
  const before = naming.parametersUnderGraph(graph);
  const after = naming.parametersUnderNewer(newer);
  const onlyBefore = [...before].find((p) => !after.has(p));
  const onlyAfter = [...after].find((p) => !before.has(p));
  if (onlyBefore === undefined && onlyAfter === undefined) return undefined;
  const example = onlyBefore !== undefined ? `\`${onlyBefore}\` is under it only before ${naming.since}` : `\`${onlyAfter}\` is under it only from ${naming.since}`;
  return `\`${name}\` of ${root.className} is a different module in different transformers releases: before ${naming.since} \`${graph}\` (${before.size} parameter tensors), from ${naming.since} \`${newer}\` (${after.size}); ${example}. WAP cannot tell which release runs the script and plans the earlier meaning; a path only one release has (\`${newer}\` from ${naming.since}) says which is meant`;
}

/** `model.bert`, `model.base_model`, a layer's `weight`: undefined for names that are neither submodules nor parameters. */
export function hfModuleAttr(obj: HfV, name: string): Value | undefined {
  if (obj.what === 'config' || obj.what === 'parameter') return undefined;
  const root = hfRoot(obj);
  if (name === 'base_model' && obj.what === 'model') {
    const base = hfBaseModelPath(root);
    return base ? submodule(root, base) : obj;
  }
  const child = childModule(obj, name);
  if (child) return child;
  if (obj.what !== 'module') return undefined;
  // `model.bert.embeddings.word_embeddings.weight`: one parameter of a layer, whose requires_grad the code may set; or
  // transformers 5's `model.model.layers[0].mlp.experts.gate_up_proj`, a tensor stacking a projection of every expert.
  const at = reachedOf(obj);
  const graph = at.graph !== undefined && indexOf(root).parameters.get(at.graph)?.includes(name) ? joinModulePath(at.graph, name) : undefined;
  const inNewer = newerChildName(obj, at, name);
  const newer = inNewer !== undefined && namingOf(root)?.isParameter(inNewer) ? inNewer : undefined;
  if (graph === undefined && newer === undefined) return undefined;
  const parameter: HfV = { ...root, what: 'parameter', module: { root, path: joinModulePath(hfPath(obj), name) } };
  reached.set(parameter, { graph, newer });
  return parameter;
}

/**
 * `…weight.requires_grad = False` on a Hugging Face layer's parameter: a step over that one name, which splits the
 * layer when it has others in another state (freezeSteps.ts says so).
 */
export function hfParameterRequiresGrad(parameter: HfV, requires: boolean, range: SourceRange): void {
  const path = hfPath(parameter);
  const dot = path.lastIndexOf('.');
  const name = path.slice(dot + 1);
  const module = submodule(parameter, path.slice(0, dot));
  // The module in the names the parameter was reached by: a fused experts tensor is the newer release's only.
  const at = reachedOf(parameter);
  const parent = (full: string | undefined): string | undefined => (full === undefined ? undefined : full.slice(0, Math.max(0, full.lastIndexOf('.'))));
  reached.set(module, { graph: parent(at.graph), newer: parent(at.newer) });
  addHfFreezeStep(module, (rel) => (rel === name ? requires : undefined), range);
}

/**
 * `model.model.layers[0]`, or with `slice` (the indices a slice key picks of a length) `model.bert.encoder.layer[:8]`,
 * a list of submodules.
 */
export function hfModuleItem(obj: HfV, key: Value, slice?: (length: number) => number[]): Value | undefined {
  if (obj.what !== 'module') return undefined;
  let length = 0;
  while (childModule(obj, String(length))) length++;
  if (slice) return list(slice(length).map((i) => childModule(obj, String(i)) ?? UNKNOWN));
  const i = toNumber(key);
  if (i === undefined || !Number.isInteger(i)) return UNKNOWN;
  const index = i < 0 ? i + length : i;
  return index >= 0 && index < length ? (childModule(obj, String(index)) ?? UNKNOWN) : UNKNOWN;
}
