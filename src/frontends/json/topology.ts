/**
 * Keras layer lists (already read from JSON) → IR layers, inputs and outputs.
 * Sequential models chain their layers; functional models follow
 * inbound_nodes, in the Keras 2 nested-list form or the Keras 3 `{args}` form.
 */
import type { Diagnostic, LayerSpec, ModelInput, SourceRange } from '../../core/ir';
import { camelCaseKeys, mapKerasLayer } from './kerasLayers';

export interface LayerEntry {
  className: string;
  name: string;
  /** snake_case, as in the file. */
  config: Record<string, unknown>;
  inboundNodes: unknown[];
  range: SourceRange;
}

export interface BuiltGraph {
  inputs: ModelInput[];
  layers: LayerSpec[];
  outputs: string[];
  diagnostics: Diagnostic[];
  channelsFirst: boolean;
}

const NESTED_MODELS = new Set(['Sequential', 'Functional', 'Model']);

function warn(g: BuiltGraph, range: SourceRange, message: string, code: string): void {
  g.diagnostics.push({ severity: 'warning', message, line: range.line, column: range.column, endLine: range.endLine, endColumn: range.endColumn, code });
}

function shapeWithoutBatch(v: unknown): number[] | undefined {
  if (!Array.isArray(v) || v.length < 2) return undefined;
  const dims = v.slice(1);
  return dims.every((d) => typeof d === 'number' && Number.isInteger(d)) ? (dims as number[]) : undefined;
}

function inputOf(entry: LayerEntry, id: string, g: BuiltGraph): ModelInput {
  const c = entry.config;
  const raw = c.batch_shape ?? c.batch_input_shape;
  const shape = shapeWithoutBatch(raw);
  if (!shape && Array.isArray(raw)) {
    g.diagnostics.push({ severity: 'info', message: `input shape [${raw.map((d) => d ?? 'null').join(', ')}] has a variable dimension; give one with --input`, line: entry.range.line, column: entry.range.column, code: 'variable-input' });
  }
  const input: ModelInput = { id, shape };
  if (typeof c.dtype === 'string' && /^u?int/.test(c.dtype)) input.dtype = 'int';
  return input;
}

function layerSpec(entry: LayerEntry, id: string, inputs: string[], g: BuiltGraph): LayerSpec {
  if (NESTED_MODELS.has(entry.className)) {
    return { id, name: entry.name, type: entry.className, op: 'opaque', attrs: { reason: `nested ${entry.className} model '${entry.name}' is not expanded` }, inputs, range: entry.range };
  }
  // Opaque layers are reported once, by the core's analysis ('unknown-layer', with the mapper's reason).
  const mapped = mapKerasLayer(entry.className, camelCaseKeys(entry.config) as Record<string, unknown>);
  if (mapped.channelsFirst) g.channelsFirst = true;
  // A layer saved with `trainable: false` (a frozen Keras backbone) keeps its weights but does not train.
  const frozen = entry.config.trainable === false ? { frozen: true } : {};
  return { id, name: entry.name, type: entry.className, op: mapped.op, attrs: mapped.attrs, inputs, range: entry.range, ...frozen };
}

function emptyGraph(): BuiltGraph {
  return { inputs: [], layers: [], outputs: [], diagnostics: [], channelsFirst: false };
}

export function buildSequential(entries: LayerEntry[], modelConfig: Record<string, unknown>): BuiltGraph {
  const g = emptyGraph();
  const list = [...entries];
  const first = list[0];
  if (!first) return g;
  let input: ModelInput;
  if (first.className === 'InputLayer') {
    input = inputOf(first, first.name, g);
    list.shift();
  } else {
    input = inputOf(first, `${first.name}_input`, g);
    // Keras 3 records the build shape on the Sequential itself.
    if (!input.shape) input.shape = shapeWithoutBatch(modelConfig.build_input_shape);
    if (first.className === 'Embedding') input.dtype = 'int';
  }
  g.inputs.push(input);
  const seen = new Map<string, number>([[input.id, 1]]);
  let prev = input.id;
  for (const entry of list) {
    if (entry.className === 'InputLayer') continue;
    const n = (seen.get(entry.name) ?? 0) + 1;
    seen.set(entry.name, n);
    const spec = layerSpec(entry, n === 1 ? entry.name : `${entry.name}#${n}`, [prev], g);
    g.layers.push(spec);
    prev = spec.id;
  }
  if (g.layers.length) g.outputs.push(prev);
  return g;
}

/** [layerName, nodeIndex] references of one inbound node, in argument order. */
function producerRefs(node: unknown): Array<[string, number]> {
  const refs: Array<[string, number]> = [];
  const visit = (v: unknown, depth: number): void => {
    if (depth > 12 || v === null || typeof v !== 'object') return;
    if (Array.isArray(v)) {
      // Keras 2: ["conv2d", 0, 0, {}]
      if (typeof v[0] === 'string' && typeof v[1] === 'number') {
        refs.push([v[0], v[1]]);
        return;
      }
      for (const x of v) visit(x, depth + 1);
      return;
    }
    const o = v as Record<string, unknown>;
    // Keras 3: {class_name: '__keras_tensor__', config: {keras_history: [name, node, tensor]}}
    if (o.class_name === '__keras_tensor__') {
      const h = (o.config as Record<string, unknown> | undefined)?.keras_history;
      if (Array.isArray(h) && typeof h[0] === 'string') refs.push([h[0], typeof h[1] === 'number' ? h[1] : 0]);
      return;
    }
    if ('args' in o) visit(o.args, depth + 1);
    if ('kwargs' in o) visit(o.kwargs, depth + 1);
  };
  visit(node, 0);
  return refs;
}

/** `[["a", 0, 0], ["b", 0, 0]]` or the single-output `["a", 0, 0]` → [[name, node]]. */
function endpointRefs(v: unknown): Array<[string, number]> {
  if (!Array.isArray(v)) return [];
  if (typeof v[0] === 'string') return [[v[0], typeof v[1] === 'number' ? v[1] : 0]];
  return v.filter((x): x is unknown[] => Array.isArray(x) && typeof x[0] === 'string').map((x) => [x[0] as string, typeof x[1] === 'number' ? x[1] : 0]);
}

interface Application {
  entry: LayerEntry;
  id: string;
  refs: Array<[string, number]>;
  order: number;
}

export function buildFunctional(entries: LayerEntry[], modelConfig: Record<string, unknown>, modelRange: SourceRange): BuiltGraph {
  const g = emptyGraph();
  const idOf = new Map<string, string>();
  const apps: Application[] = [];
  const shared = new Set<string>();
  for (const entry of entries) {
    if (entry.className === 'InputLayer') {
      g.inputs.push(inputOf(entry, entry.name, g));
      idOf.set(`${entry.name}:0`, entry.name);
      continue;
    }
    const nodes = entry.inboundNodes.length ? entry.inboundNodes : [[]];
    if (nodes.length > 1) shared.add(entry.name);
    nodes.forEach((node, k) => {
      const id = k === 0 ? entry.name : `${entry.name}#${k + 1}`;
      idOf.set(`${entry.name}:${k}`, id);
      apps.push({ entry, id, refs: producerRefs(node), order: apps.length });
    });
  }
  // Keras lists layers in creation order, which is not always topological for shared layers: sort.
  const done = new Set<string>(g.inputs.map((i) => i.id));
  let pending = apps;
  while (pending.length) {
    const next: Application[] = [];
    let progressed = false;
    for (const app of pending) {
      const producers = app.refs.map(([name, k]) => idOf.get(`${name}:${k}`));
      const ready = producers.every((p) => p === undefined || done.has(p));
      if (!ready) {
        next.push(app);
        continue;
      }
      const inputs: string[] = [];
      app.refs.forEach(([name], i) => {
        const p = producers[i];
        if (p) inputs.push(p);
        else warn(g, app.entry.range, `layer '${app.entry.name}' reads from '${name}', which is not in the model`, 'untraced-input');
      });
      const spec = layerSpec(app.entry, app.id, inputs, g);
      if (shared.has(app.entry.name)) spec.weightKey = app.entry.name;
      g.layers.push(spec);
      done.add(app.id);
      progressed = true;
    }
    if (!progressed) {
      for (const app of next) warn(g, app.entry.range, `layer '${app.entry.name}' is part of a cycle or reads a missing node; skipped`, 'untraced-input');
      break;
    }
    pending = next;
  }
  for (const [name, k] of endpointRefs(modelConfig.output_layers)) {
    const id = idOf.get(`${name}:${k}`);
    if (id && done.has(id)) g.outputs.push(id);
    else warn(g, modelRange, `model output '${name}' is not a layer of the model`, 'untraced-output');
  }
  if (g.outputs.length === 0 && g.layers.length) g.outputs.push(g.layers[g.layers.length - 1].id);
  return g;
}
