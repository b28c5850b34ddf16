/**
 * A newer transformers' names for the parameters of a graph the builders name as transformers 4.46–4.51 does (the
 * checkpoints' keys), from moduleLayouts.ts's `newer`: LLaVA's and Gemma 3's parts under `model` with `lm_head` at the
 * top (4.52), Qwen-VL's `model.visual` and `model.language_model` (4.52), transformers 5's experts as one module with
 * one tensor per projection (`mlp.experts.gate_up_proj` stacking every expert's gate and up projections,
 * `mlp.experts.down_proj` their down projections) and Mixtral's `block_sparse_moe` renamed `mlp`.
 *
 * A newer module path stands for graph parameters: those whose newer names lie under it. It is one graph module when
 * that module holds exactly them (`model.model.language_model` is LLaVA's `language_model.model`); a fused tensor
 * (`…experts.gate_up_proj`) is a parameter of the newer experts module, standing for two layers of every expert.
 */
import type { LayerSpec, ModelSpec } from '../../core/ir';
import { expertOf } from '../../core/moe';
import { joinParameterName, torchParameterNames } from '../freezing/parameterNames';
import type { ParameterRenaming } from '../freezing/stepNaming';
import type { HfHead } from './configs';
import { hfModuleLayout, type NewerNames } from './moduleLayouts';

export interface NewerNaming extends ParameterRenaming {
  /** The newer module path holding exactly the parameters of a graph module path; undefined where none does (one expert). */
  newerPath(graphPath: string): string | undefined;
  /** The graph module path holding exactly the parameters of a newer module path; undefined where none does (LLaVA's `model`). */
  graphPath(newerPath: string): string | undefined;
  /** Whether the newer release has a module holding parameters at this path. */
  isModule(newerPath: string): boolean;
  /** Whether the newer release has a parameter by this full name (`model.layers.0.mlp.experts.gate_up_proj`). */
  isParameter(newerName: string): boolean;
  /** The newer path a property of the model returns (`language_model` → `model.language_model`), if it has that property. */
  property(attribute: string): string | undefined;
  /** The parameters under a graph module path, and under a newer one, by their owners' graph names (a tied weight once). */
  parametersUnderGraph(graphPath: string): Set<string>;
  parametersUnderNewer(newerPath: string): Set<string>;
}

/** One parameter as the graph holds it: its name, its owner's (a tied weight's is the module that holds it), its newer name. */
interface Named {
  graph: string;
  owner: string;
  newer: string;
}

const EXPERT_LAYER = /^(.*)\.(\d+)\.([^.]+)$/;
const under = (prefix: string, name: string): boolean => !prefix || name === prefix || name.startsWith(prefix + '.');

/** The newer names of a graph's parameters, or undefined for a model_type whose names no newer release changed. */
export function newerNaming(graph: ModelSpec, modelType: string, head: HfHead | undefined): NewerNaming | undefined {
  const names = hfModuleLayout(modelType)?.newer;
  if (!names) return undefined;
  // The moves and properties are the ForConditionalGeneration classes'; a base model (LlavaModel) keeps its names.
  const whole = head !== 'base';
  const paths = pathRenaming(names, whole);
  const parameters = namedParameters(graph.layers, names, paths.forward);
  const graphCounts = prefixCounts(parameters.map((p) => p.graph));
  const newerCounts = prefixCounts(parameters.map((p) => p.newer));
  const newerParameters = new Set(parameters.map((p) => p.newer));
  const byGraph = new Map(parameters.map((p) => [p.graph, p.newer]));
  const isModule = (path: string): boolean => newerCounts.has(path) && !newerParameters.has(path);
  const owners = (match: (p: Named) => boolean): Set<string> => new Set(parameters.filter(match).map((p) => p.owner));
  return {
    since: names.since,
    graphNamesUnreleased: names.graphNamesUnreleased,
    nameOf: (name) => byGraph.get(name) ?? paths.forward(name),
    newerPath(graphPath) {
      const path = paths.forward(graphPath);
      return graphCounts.has(graphPath) && isModule(path) && newerCounts.get(path) === graphCounts.get(graphPath) ? path : undefined;
    },
    graphPath(newerPath) {
      const path = paths.backward(newerPath);
      return isModule(newerPath) && graphCounts.get(path) === newerCounts.get(newerPath) ? path : undefined;
    },
    isModule,
    isParameter: (name) => newerParameters.has(name),
    property: (attribute) => (whole && names.properties && Object.prototype.hasOwnProperty.call(names.properties, attribute) ? names.properties[attribute] : undefined),
    parametersUnderGraph: (path) => owners((p) => under(path, p.graph)),
    parametersUnderNewer: (path) => owners((p) => under(path, p.newer)),
  };
}

/** Module paths both ways: `renamedModules` segment by segment, then `moves` by their longest matching prefix. */
function pathRenaming(names: NewerNames, whole: boolean): { forward(path: string): string; backward(path: string): string } {
  const moves = whole ? Object.entries(names.moves ?? {}) : [];
  const renamed = new Map(Object.entries(names.renamedModules ?? {}));
  const restored = new Map([...renamed].map(([graph, newer]) => [newer, graph]));
  const segments = (path: string, map: Map<string, string>): string => (map.size === 0 || !path ? path : path.split('.').map((s) => map.get(s) ?? s).join('.'));
  const move = (path: string, pairs: Array<[string, string]>): string => {
    const [from, to] = pairs.filter(([f]) => under(f, path) && f !== '').sort((a, b) => b[0].length - a[0].length)[0] ?? [];
    return from === undefined ? path : to + path.slice(from.length);
  };
  return {
    forward: (path) => move(segments(path, renamed), moves.map(([newer, graph]) => [graph, newer])),
    backward: (path) => segments(move(path, moves), restored),
  };
}

/**
 * Every parameter of the graph's layers with its newer name. An expert's parameters (a layer `…experts.<e>.<proj>`
 * marked as expert e) take the name of the fused tensor that stacks them; where `fusedExperts` does not name one (a
 * bias the newer class has no tensor for), no expert is fused and their names stay per expert.
 */
function namedParameters(layers: readonly LayerSpec[], names: NewerNames, forward: (path: string) => string): Named[] {
  const fusedName = new Map(Object.entries(names.fusedExperts ?? {}).flatMap(([fused, parts]) => parts.map((part) => [part, fused] as const)));
  const out: Array<Named & { fused?: string }> = [];
  let complete = fusedName.size > 0;
  for (const layer of layers) {
    const own = torchParameterNames(layer.op, layer.attrs);
    if (!own?.length) continue;
    const expert = expertOf(layer);
    const parts = expert ? EXPERT_LAYER.exec(layer.name) : null;
    const tied = layer.weightKey !== undefined && layer.weightKey !== layer.name;
    for (const name of own) {
      const graph = joinParameterName(layer.name, name);
      const owner = tied && name === 'weight' ? joinParameterName(layer.weightKey!, 'weight') : graph;
      let fused: string | undefined;
      if (parts && Number(parts[2]) === expert!.index) {
        const stacked = fusedName.get(joinParameterName(parts[3], name));
        if (stacked) fused = joinParameterName(forward(parts[1]), stacked);
        else complete = false;
      }
      out.push({ graph, owner, newer: forward(graph), fused });
    }
  }
  return out.map(({ fused, ...p }) => (complete && fused ? { ...p, newer: fused } : p));
}

/**
 * How many names lie under each path (every prefix of every name, and '' for the whole model). Counted a level at a
 * time, siblings merged before their parent is counted: an MoE model's tens of thousands of names share few parents.
 */
function prefixCounts(names: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>();
  let level = new Map<string, number>();
  for (const name of names) level.set(name, (level.get(name) ?? 0) + 1);
  while (level.size > 0) {
    const parents = new Map<string, number>();
    for (const [path, n] of level) {
      counts.set(path, (counts.get(path) ?? 0) + n);
      if (path === '') continue;
      const dot = path.lastIndexOf('.');
      const parent = dot < 0 ? '' : path.slice(0, dot);
      parents.set(parent, (parents.get(parent) ?? 0) + n);
    }
    level = parents;
  }
  return counts;
}
