/**
 * Keras stand-ins: layer objects named at construction (explicit `name=` or
 * Keras' automatic `conv2d`, `conv2d_1`…), called on symbolic tensors in the
 * functional API; Sequential models as ordered layer lists; keras.Model.
 */
import { classLookup, libraryBase } from './access';
import { callMethod } from './calls';
import type { Interp } from './interpreter';
import { buildKerasLayer, kerasSnake } from './kerasLayers';
import { recordOp, tensorsIn } from './tensorOps';
import { NONE, UNKNOWN, iterItems, native, toNumber, type CallSite, type Dims, type InstV, type KLayerV, type KModelV, type Value } from './values';

/** Keras' automatic layer name: snake_case class name plus a per-name counter. */
export function autoName(interp: Interp, base: string): string {
  const n = interp.kerasNames.get(base) ?? 0;
  interp.kerasNames.set(base, n + 1);
  return n === 0 ? base : `${base}_${n}`;
}

function shapeArg(v: Value | undefined): Dims | undefined {
  const items = v ? iterItems(v) : undefined;
  return items?.map((d) => toNumber(d));
}

export function constructKerasLayer(interp: Interp, type: string, args: Value[], kwargs: Map<string, Value>, site: CallSite): Value {
  const nameArg = kwargs.get('name');
  let built = buildKerasLayer(type, args, kwargs);
  let warning: string | undefined;
  if (type === 'Bidirectional' && args[0]?.k === 'klayer') built = { op: 'rnn', attrs: { ...args[0].attrs, bidirectional: true } };
  if (!built) {
    warning = `unknown layer layers.${type}`;
    built = { op: 'opaque', attrs: { reason: warning } };
  }
  const layer: KLayerV = {
    k: 'klayer',
    type,
    op: built.op,
    attrs: built.attrs,
    name: nameArg?.k === 'str' ? nameArg.v : autoName(interp, kerasSnake(type)),
    range: site.range,
    calls: 0,
    warning,
  };
  const inputShape = shapeArg(kwargs.get('input_shape'));
  if (inputShape) layer.inputShape = inputShape;
  else if (kwargs.has('input_dim') && type === 'Dense') layer.inputShape = [toNumber(kwargs.get('input_dim'))];
  return layer;
}

export function kerasInput(interp: Interp, args: Value[], kwargs: Map<string, Value>, site: CallSite): Value {
  const shape = shapeArg(args[0] ?? kwargs.get('shape'));
  const nameArg = kwargs.get('name');
  const name = nameArg?.k === 'str' ? nameArg.v : autoName(interp, 'input_layer');
  const g = interp.graph;
  if (!g) return UNKNOWN;
  const known = shape && shape.every((d) => d !== undefined) ? (shape as number[]) : undefined;
  const dtype = kwargs.get('dtype');
  const t = g.addInput(name, shape ? [undefined, ...shape] : undefined, 'keras', known);
  if (dtype?.k === 'str' && /int/.test(dtype.v)) g.inputs[g.inputs.length - 1].dtype = 'int';
  void site;
  return t;
}

export function callKerasLayer(interp: Interp, layer: KLayerV, args: Value[], kwargs: Map<string, Value>, site: CallSite): Value {
  const inputs = tensorsIn(layer.op === 'mha' ? [...args, kwargs.get('value') ?? NONE] : [args[0] ?? kwargs.get('inputs') ?? NONE]);
  if (!inputs.length || !interp.graph) return UNKNOWN;
  if (layer.warning && !interp.graph.calls.has(layer)) interp.warnAt(layer.range, layer.warning, 'unknown-layer');
  interp.graph.calls.set(layer, (interp.graph.calls.get(layer) ?? 0) + 1);
  layer.calls++;
  return recordOp(interp, { name: layer.name, base: layer.name, type: layer.type, op: layer.op, attrs: layer.attrs, inputs, site, range: layer.range, weightKey: layer.name });
}

export function kerasSequential(interp: Interp, args: Value[], kwargs: Map<string, Value>, site: CallSite): Value {
  const nameArg = kwargs.get('name');
  const model: KModelV = {
    k: 'kmodel',
    name: nameArg?.k === 'str' ? nameArg.v : autoName(interp, 'sequential'),
    kind: 'sequential',
    inputs: [],
    outputs: [],
    layers: [],
    range: site.range,
  };
  for (const item of iterItems(args[0] ?? kwargs.get('layers') ?? NONE) ?? []) addToSequential(model, item);
  return model;
}

function addToSequential(model: KModelV, item: Value): void {
  if (item.k === 'klayer') {
    if (!model.layers.length && item.inputShape) model.inputShape = item.inputShape;
    model.layers.push(item);
  } else if (item.k === 'tensor' && item.shape) model.inputShape = item.shape.slice(1);
  else if (item.k === 'kmodel') model.layers.push(...item.layers);
}

export function kerasModel(interp: Interp, args: Value[], kwargs: Map<string, Value>, site: CallSite): Value {
  const nameArg = kwargs.get('name');
  const ins = args[0] ?? kwargs.get('inputs') ?? NONE;
  const outs = args[1] ?? kwargs.get('outputs') ?? NONE;
  return {
    k: 'kmodel',
    name: nameArg?.k === 'str' ? nameArg.v : autoName(interp, 'functional'),
    kind: 'functional',
    inputs: tensorsIn([ins]),
    outputs: tensorsIn([outs]),
    layers: [],
    range: site.range,
    graph: interp.graph,
  };
}

/** `class M(keras.Model)` (not keras.layers.Layer subclasses, which are parts): read like a PyTorch module. */
export function isKerasModelInstance(v: Value): v is InstV {
  return v.k === 'inst' && libraryBase(v.cls) === 'keras.Model';
}

/** A subclassed model or layer called: its `call` method runs on the symbolic inputs, recording the layers it calls. */
function callKerasSubclass(interp: Interp, inst: InstV, args: Value[], kwargs: Map<string, Value>): Value {
  const first = args[0] ?? kwargs.get('inputs');
  if (!inst.inputShape && first?.k === 'tensor' && first.shape) inst.inputShape = first.shape.slice(1);
  const call = classLookup(inst.cls, 'call');
  return call?.k === 'func' ? callMethod(interp, call, inst, args, kwargs) : UNKNOWN;
}

/** A model used as a layer: a Sequential chains its layers; a functional model becomes one opaque node; a subclassed one runs `call`. */
export function callKerasModel(interp: Interp, model: KModelV | InstV, args: Value[], kwargs: Map<string, Value>, site: CallSite): Value {
  if (model.k === 'inst') return callKerasSubclass(interp, model, args, kwargs);
  if (model.kind === 'sequential') {
    let x: Value = args[0] ?? UNKNOWN;
    for (const layer of model.layers) x = callKerasLayer(interp, layer, [x], new Map(), site);
    return x;
  }
  const inputs = tensorsIn(args);
  if (!inputs.length) return UNKNOWN;
  void kwargs;
  return recordOp(interp, { name: model.name, base: model.name, type: 'Functional', op: 'opaque', attrs: { reason: 'nested functional model' }, inputs, site, range: model.range });
}

export function kerasAttr(interp: Interp, obj: Value, name: string): Value {
  if (obj.k === 'kmodel') {
    switch (name) {
      case 'add':
        return native(name, ([v]) => (v && addToSequential(obj, v), NONE));
      case 'output':
        return obj.outputs[0] ?? UNKNOWN;
      case 'input':
        return obj.inputs[0] ?? UNKNOWN;
      case 'layers':
        return { k: 'list', items: obj.layers };
      case 'name':
        return { k: 'str', v: obj.name };
      default:
        return native(name, () => NONE);
    }
  }
  if (obj.k === 'klayer' && name === 'name') return { k: 'str', v: obj.name };
  if (obj.k === 'inst' && name === 'build') {
    return native(name, ([shape]) => {
      const dims = shapeArg(shape);
      if (dims) obj.inputShape = dims.slice(1);
      return NONE;
    });
  }
  void interp;
  return UNKNOWN;
}
