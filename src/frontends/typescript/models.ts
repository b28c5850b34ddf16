/**
 * Turns the evaluator's ModelRefs into IR ModelSpecs: sequential stacks are
 * chained in order, functional models are traced back from their outputs.
 */
import * as ts from 'typescript';
import type { Diagnostic, LayerSpec, ModelInput, ModelSpec, SourceRange } from '../../core/ir';
import { mapKerasLayer } from '../json/kerasLayers';
import { rangeOf, shapeOf } from './tfjsApi';
import { LayerRef, ModelRef, TensorRef, Unknown, type ApplyNode, type InputNode } from './values';

interface Builder {
  layers: LayerSpec[];
  diagnostics: Diagnostic[];
  ids: Map<string, number>;
  channelsFirst: boolean;
  opaqueCount: number;
}

function warn(b: Builder, range: SourceRange, message: string, code: string): void {
  b.diagnostics.push({ severity: 'warning', message, line: range.line, column: range.column, endLine: range.endLine, endColumn: range.endColumn, code });
}

function uniqueId(b: Builder, name: string): { id: string; reused: boolean } {
  const n = (b.ids.get(name) ?? 0) + 1;
  b.ids.set(name, n);
  return n === 1 ? { id: name, reused: false } : { id: `${name}#${n}`, reused: true };
}

function specOf(b: Builder, layer: LayerRef, id: string, inputs: string[], callRange?: SourceRange): LayerSpec {
  const mapped = mapKerasLayer(layer.className, layer.config);
  // Opaque layers are reported once, by the core's analysis ('unknown-layer', with this reason).
  if (!layer.known) mapped.attrs = { reason: `unknown TF.js layer 'tf.layers.${layer.factory}'` };
  else if (mapped.unknown) mapped.attrs = { reason: `tf.layers.${layer.factory}: ${String(mapped.attrs.reason)}` };
  if (!layer.known) mapped.op = 'opaque';
  if (mapped.channelsFirst) b.channelsFirst = true;
  const spec: LayerSpec = { id, name: layer.name, type: layer.factory, op: mapped.op, attrs: mapped.attrs, inputs, range: layer.range };
  if (callRange) spec.callRange = callRange;
  return spec;
}

function opaqueSpec(b: Builder, u: Unknown, sf: ts.SourceFile, inputs: string[], fallback: SourceRange): LayerSpec {
  const range = u.node ? rangeOf(u.node, sf) : fallback;
  b.opaqueCount += 1;
  const name = `opaque_${b.opaqueCount}`;
  const type = u.node && ts.isCallExpression(u.node) ? u.node.expression.getText(sf) : u.node && ts.isNewExpression(u.node) ? u.node.expression.getText(sf) : 'unknown';
  return { id: uniqueId(b, name).id, name, type, op: 'opaque', attrs: { reason: `could not evaluate this layer (${u.why})` }, inputs, range };
}

/** Input shape without batch, or undefined (with an info) when unstated or variable-length. */
function inputShape(b: Builder, cfg: Record<string, unknown>, range: SourceRange): number[] | undefined {
  const shape = shapeOf(cfg.inputShape) ?? shapeOf(cfg.batchInputShape)?.slice(1) ?? shapeOf(cfg.batchShape)?.slice(1);
  if (!shape) return undefined;
  if (shape.some((d) => d === null)) {
    b.diagnostics.push({ severity: 'info', message: `input shape [${shape.map((d) => d ?? 'null').join(', ')}] has a variable dimension; give one with --input`, line: range.line, column: range.column, code: 'variable-input' });
    return undefined;
  }
  return shape as number[];
}

function flattenSequential(model: ModelRef, seen = new Set<ModelRef>()): Array<LayerRef | Unknown> {
  seen.add(model);
  const out: Array<LayerRef | Unknown> = [];
  for (const l of model.layers) {
    if (l instanceof ModelRef) {
      if (l.kind === 'sequential' && !seen.has(l)) out.push(...flattenSequential(l, seen));
      else out.push(new Unknown(undefined, 'a functional model used as a layer'));
    } else out.push(l);
  }
  return out;
}

function buildSequential(model: ModelRef, sf: ts.SourceFile, b: Builder): { inputs: ModelInput[]; outputs: string[] } {
  const flat = flattenSequential(model);
  const first = flat[0];
  let input: ModelInput = { id: 'input' };
  if (first instanceof LayerRef) {
    const isInputLayer = first.className === 'InputLayer';
    input = { id: isInputLayer ? first.name : `${first.name}_input`, shape: inputShape(b, first.config, first.range) };
    if (first.config.dtype === 'int32' || first.className === 'Embedding') input.dtype = 'int';
    // TF.js Embedding turns inputLength into batchInputShape [null, inputLength].
    if (!input.shape && first.className === 'Embedding' && typeof first.config.inputLength === 'number') input.shape = [first.config.inputLength];
    if (isInputLayer) flat.shift();
  }
  b.ids.set(input.id, 1);
  let prev = input.id;
  for (const l of flat) {
    let spec: LayerSpec;
    if (l instanceof Unknown) spec = opaqueSpec(b, l, sf, [prev], model.range);
    else if (l.className === 'InputLayer') continue;
    else {
      const { id, reused } = uniqueId(b, l.name);
      spec = specOf(b, l, id, [prev]);
      if (reused) spec.weightKey = l.name;
    }
    b.layers.push(spec);
    prev = spec.id;
  }
  return { inputs: [input], outputs: b.layers.length ? [prev] : [] };
}

function buildFunctional(model: ModelRef, sf: ts.SourceFile, b: Builder): { inputs: ModelInput[]; outputs: string[] } {
  const applies = new Map<ApplyNode, true>();
  const inputs = new Map<string, InputNode>();
  for (const t of model.inputs) if (t instanceof TensorRef && t.node.kind === 'input') inputs.set(t.node.id, t.node);
  const stack: Array<TensorRef | Unknown> = [...model.outputs];
  while (stack.length) {
    const t = stack.pop()!;
    if (!(t instanceof TensorRef)) continue;
    const node = t.node;
    if (node.kind === 'input') inputs.set(node.id, node);
    else if (!applies.has(node)) {
      applies.set(node, true);
      stack.push(...node.inputs);
    }
  }
  const modelInputs: ModelInput[] = [...inputs.values()].map((n) => {
    const shape = inputShape(b, { inputShape: n.shape }, n.range);
    const mi: ModelInput = { id: n.id, shape };
    if (n.dtype === 'int32') mi.dtype = 'int';
    b.ids.set(n.id, 1);
    return mi;
  });
  const ordered = [...applies.keys()].sort((x, y) => x.seq - y.seq);
  for (const node of ordered) {
    const producerIds: string[] = [];
    for (const t of node.inputs) {
      if (t instanceof TensorRef) producerIds.push(t.node.id);
      else warn(b, node.callRange, `an input of layer '${node.layer.name}' could not be traced (${t.why})`, 'untraced-input');
    }
    b.ids.set(node.id, 1);
    const spec = specOf(b, node.layer, node.id, producerIds, node.callRange);
    if (node.layer.applications > 1) spec.weightKey = node.layer.name;
    b.layers.push(spec);
  }
  const outputs: string[] = [];
  for (const t of model.outputs) {
    if (t instanceof TensorRef) outputs.push(t.node.id);
    else warn(b, model.range, `an output of the model could not be traced (${t.why})`, 'untraced-output');
  }
  return { inputs: modelInputs, outputs };
}

/** One ModelSpec per model with at least one layer; names are made unique. */
export function buildModelSpecs(models: readonly ModelRef[], sf: ts.SourceFile): ModelSpec[] {
  const specs: ModelSpec[] = [];
  const usedNames = new Map<string, number>();
  for (const model of models) {
    const b: Builder = { layers: [], diagnostics: [], ids: new Map(), channelsFirst: false, opaqueCount: 0 };
    const { inputs, outputs } = model.kind === 'sequential' ? buildSequential(model, sf, b) : buildFunctional(model, sf, b);
    if (b.layers.length === 0) continue;
    const base = model.name ?? 'model';
    const n = (usedNames.get(base) ?? 0) + 1;
    usedNames.set(base, n);
    specs.push({
      name: n === 1 ? base : `${base}_${n}`,
      framework: 'tfjs',
      range: model.range,
      layout: b.channelsFirst ? 'channels_first' : 'channels_last',
      inputs,
      layers: b.layers,
      outputs,
      diagnostics: b.diagnostics,
    });
  }
  return specs;
}
