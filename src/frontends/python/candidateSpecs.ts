/**
 * One model candidate (models.ts finds them) turned into its ModelSpec, per
 * framework: a PyTorch module's forward evaluated on symbolic inputs (again
 * for a stated or assumed input when it needs concrete sizes), a Keras
 * Sequential or functional model's recorded layers, a Keras subclassed
 * model's `call`. Separate from models.ts, which decides what counts as a
 * model; this file only reads one.
 */
import type { Diagnostic, LayerSpec, ModelSpec, SourceRange } from '../../core/ir';
import { classLookup } from './access';
import { Graph } from './graph';
import type { Interp } from './interpreter';
import { callKerasLayer, callKerasModel } from './kerasRuntime';
import { LimitSignal, isSignal } from './signals';
import { tensorsIn } from './tensorOps';
import { assignPaths, callModule } from './torchRuntime';
import { dropUnconsumedParameters } from './torchParameters';
import { specialisedInput, specialisedNote } from './specialise';
import { labelArguments, labelNote } from './trainingLabels';
import { uncalledModules } from './uncalledModules';
import { keywordInputsOf } from './transformersCalls';
import type { HfV, InstV, KModelV, ModV, Value } from './values';

export type Root = InstV | ModV | KModelV | HfV;

export interface Candidate {
  name: string;
  range: SourceRange;
  root: Root;
  /** Factory/instance models count their root as a part of themselves; class models do not. */
  kind: 'instance' | 'factory' | 'class';
  graphDiagnostics: Diagnostic[];
}

/** Runs one evaluation step; a budget or depth limit becomes a 'partial-eval' warning instead of losing the file. */
export function guarded(interp: Interp, run: () => void, diagnostics: Diagnostic[], range: SourceRange): void {
  try {
    run();
  } catch (e) {
    if (e instanceof LimitSignal) diagnostics.push({ severity: 'warning', message: `Model reading stopped early: ${e.why}`, line: range.line, column: range.column, code: 'partial-eval' });
    else if (!isSignal(e)) throw e;
  }
  void interp;
}

/** A Keras subclassed model: `call` evaluated on symbolic inputs named after its parameters. */
export function kerasSubclassSpec(interp: Interp, c: Candidate, inst: InstV): ModelSpec {
  const g = new Graph('keras');
  interp.graph = g;
  interp.steps = 0;
  const call = classLookup(inst.cls, 'call');
  const names = call?.k === 'func' ? interp.params(call.node).slice(1).filter((p) => p.kind === 'pos' && !p.defaultNode).map((p) => p.name) : [];
  if (names.length === 0) names.push('inputs');
  const shape = inst.inputShape;
  const known = shape && shape.every((d) => d !== undefined) ? (shape as number[]) : undefined;
  const inputs = names.map((n, i) => g.addInput(n, i === 0 && shape ? [undefined, ...shape] : undefined, 'keras', i === 0 ? known : undefined));
  let result: Value | undefined;
  const site = { node: inst.cls.node, range: c.range, calleeText: c.name };
  guarded(interp, () => void (result = callKerasModel(interp, inst, inputs, new Map(), site)), g.diagnostics, c.range);
  const outputs = result ? tensorsIn([flattenDict(result)]).map((t) => t.id) : [];
  if (!outputs.length && g.layers.length) outputs.push(g.layers[g.layers.length - 1].id);
  for (const input of g.inputs) if (g.layers.some((l) => l.op === 'embedding' && l.inputs[0] === input.id)) input.dtype = 'int';
  return {
    name: c.name,
    framework: 'keras',
    range: c.range,
    layout: 'channels_last',
    inputs: g.inputs,
    layers: g.layers,
    outputs: [...new Set(outputs)],
    diagnostics: [...c.graphDiagnostics, ...g.diagnostics],
  };
}

export function torchSpec(interp: Interp, c: Candidate, fileDiagnostics: Diagnostic[]): ModelSpec | undefined {
  void fileDiagnostics;
  // The code runs the model on an example input: that is the input, read with its sizes known (a given --input wins).
  const example = exampleInput(c.root);
  if (example && !interp.givenInput.inputShape) {
    const stated = readTorchForward(interp, c, example);
    stated.spec.diagnostics = [...(stated.spec.diagnostics ?? []), exampleNote(stated.spec, example)];
    return stated.spec;
  }
  const first = readTorchForward(interp, c);
  if (!first.starved) return first.spec;
  // Forward needed sizes of its input it did not know: read it again for the given input, or the one the analysis would assume.
  const input = specialisedInput(first.spec, interp.givenInput, interp.run.sequence);
  const second = readTorchForward(interp, c, input);
  const problems = (s: ModelSpec): number => (s.diagnostics ?? []).filter((d) => d.severity !== 'info').length;
  // Only a reading that resolves what stalled the first is worth tying the graph to one input size.
  if (problems(second.spec) >= problems(first.spec)) return first.spec;
  second.spec.diagnostics = [...(second.spec.diagnostics ?? []), specialisedNote(second.spec, input.shape)];
  return second.spec;
}

/** The input shape a script or a LightningModule's `example_input_array` states for this model, without batch. */
function exampleInput(root: Root): { shape: number[]; what: string; stated: true } | undefined {
  if (root.k !== 'inst' && root.k !== 'mod') return undefined;
  const array = root.k === 'inst' ? root.attrs.get('example_input_array') : undefined;
  const lightning = array?.k === 'tensor' && array.id === '' && array.shape && array.shape.length >= 2 && array.shape.every((d) => d !== undefined && d > 0);
  if (lightning) return { shape: array.shape!.slice(1) as number[], what: 'its example_input_array', stated: true };
  const shape = root.inputShape;
  if (!shape || !root.inputShapeFrom || shape.some((d) => d === undefined)) return undefined;
  return { shape: shape as number[], what: root.inputShapeFrom, stated: true };
}

function exampleNote(spec: ModelSpec, example: { shape: number[]; what: string }): Diagnostic {
  const r = spec.range;
  const message = `${spec.name} is read for the input [${example.shape.join(', ')}] (without batch) from ${example.what}; \`--input\` reads it for another.`;
  return { severity: 'info', code: 'input-from-code', message, line: r.line, column: r.column, endLine: r.endLine, endColumn: r.endColumn };
}

function readTorchForward(interp: Interp, c: Candidate, input?: { shape: number[]; what: string; stated?: boolean; tokens?: true }): { spec: ModelSpec; starved: boolean } {
  const root = c.root as InstV | ModV;
  const g = new Graph('pytorch');
  g.concrete = !!input;
  interp.graph = g;
  interp.steps = 0;
  assignPaths(g.paths, root);
  const forward = root.k === 'inst' ? classLookup(root.cls, 'forward') : undefined;
  const params = forward?.k === 'func' ? interp.params(forward.node).slice(1) : [];
  const inputNames = forward?.k === 'func' ? params.filter((p) => p.kind === 'pos' && !p.defaultNode).map((p) => p.name) : ['input'];
  const byKeyword = inputNames.length === 0 && params.some((p) => p.kind === 'dstar') ? keywordInputsOf(root) : undefined;
  if (inputNames.length === 0) inputNames.push(...(byKeyword ?? ['input']));
  const sized = (i: number): boolean => !!input && (i === 0 || input.tokens === true);
  const inputs = inputNames.map((n, i) => g.addInput(n, sized(i) ? [undefined, ...input!.shape] : undefined, 'pytorch', i === 0 ? input?.shape : undefined));
  if (input && !input.stated) g.inputs[0].assumed = input.what;
  const labels = forward?.k === 'func' ? labelArguments(interp, forward) : undefined;
  if (labels?.node && root.k === 'inst') interp.warn(labels.node, labelNote(labels.names, root.cls.name), 'labels-given', 'info');
  let result: Value | undefined;
  const site = { node: root.k === 'inst' ? root.cls.node : (undefined as never), range: c.range, calleeText: c.name };
  const kwargs = new Map(labels?.kwargs ?? []);
  if (byKeyword) inputs.splice(0).forEach((t, i) => kwargs.set(inputNames[i]!, t));
  guarded(interp, () => void (result = callModule(interp, root, inputs, kwargs, site)), g.diagnostics, c.range);
  const uncalled = uncalledModules(g, g.paths);
  if (uncalled) interp.warnAt(uncalled.range, uncalled.message, 'uncalled-modules', 'info');
  const outputs = result ? tensorsIn([flattenDict(result)]).map((t) => t.id) : [];
  if (!outputs.length && g.layers.length) outputs.push(g.layers[g.layers.length - 1].id);
  for (const input of g.inputs) if (g.layers.some((l) => l.op === 'embedding' && l.inputs[0] === input.id)) input.dtype = 'int';
  const spec: ModelSpec = {
    name: c.name,
    framework: 'pytorch',
    range: c.range,
    layout: 'channels_first',
    inputs: g.inputs,
    layers: dropUnconsumedParameters(g.layers, outputs),
    outputs: [...new Set(outputs)],
    diagnostics: [...c.graphDiagnostics, ...g.diagnostics],
  };
  return { spec, starved: g.starved };
}

function flattenDict(v: Value): Value {
  if (v.k === 'dict') return { k: 'list', items: [...v.map.values()].map(([, x]) => x) };
  return v;
}

export function kerasSpec(interp: Interp, c: Candidate, fileDiagnostics: Diagnostic[]): ModelSpec | undefined {
  const model = c.root as KModelV;
  let layers: LayerSpec[];
  let inputs: ModelSpec['inputs'];
  let outputs: string[];
  let diagnostics = c.graphDiagnostics;
  if (model.kind === 'sequential') {
    const g = new Graph('keras');
    interp.graph = g;
    const shape = model.inputShape;
    const known = shape && shape.every((d) => d !== undefined) ? (shape as number[]) : undefined;
    let x: Value = g.addInput('input_layer', shape ? [undefined, ...shape] : undefined, 'keras', known);
    for (const layer of model.layers) x = callKerasLayer(interp, layer, [x], new Map(), { node: undefined as never, range: layer.range, calleeText: layer.type });
    layers = g.layers;
    inputs = g.inputs;
    outputs = x.k === 'tensor' ? [x.id] : [];
    diagnostics = [...diagnostics, ...g.diagnostics];
  } else {
    const g = model.graph;
    if (!g) return undefined;
    const wanted = new Set<string>();
    const byId = new Map(g.layers.map((l) => [l.id, l]));
    const stack = model.outputs.map((t) => t.id);
    while (stack.length) {
      const id = stack.pop()!;
      if (wanted.has(id)) continue;
      wanted.add(id);
      for (const i of byId.get(id)?.inputs ?? []) stack.push(i);
    }
    layers = g.layers.filter((l) => wanted.has(l.id));
    inputs = g.inputs.filter((i) => wanted.has(i.id));
    outputs = model.outputs.map((t) => t.id);
  }
  void fileDiagnostics;
  for (const input of inputs) if (layers.some((l) => l.op === 'embedding' && l.inputs[0] === input.id)) input.dtype = 'int';
  return { name: c.name, framework: 'keras', range: c.range, layout: 'channels_last', inputs, layers, outputs, diagnostics: [...diagnostics] };
}
