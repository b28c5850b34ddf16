/**
 * torch.nn modules made of other modules: nn.TransformerEncoderLayer and
 * nn.TransformerEncoder. They become containers of canonical layers (mha,
 * linear, layernorm, dropout) under PyTorch's own child names
 * (`layers.0.self_attn`, `layers.0.linear1`, `norm1`…), so module paths and
 * parameter counts match `model.named_parameters()`; calling one records the
 * forward PyTorch runs (post-norm by default, pre-norm with norm_first=True).
 */
import type { Interp } from './interpreter';
import { recordOp, tensorsIn } from './tensorOps';
import { activationName } from './kerasLayers';
import { bindArgs, boolArg, buildTorchLayer, numArg } from './torchLayers';
import { NONE, UNKNOWN, int, num, type CallSite, type InstV, type ModV, type Value } from './values';
import { withProps } from '../../core/objects';

const ENCODER_LAYER_PARAMS = ['d_model', 'nhead', 'dim_feedforward', 'dropout', 'activation', 'layer_norm_eps', 'batch_first', 'norm_first', 'bias'];
const ENCODER_PARAMS = ['encoder_layer', 'num_layers', 'norm', 'enable_nested_tensor', 'mask_check'];

export const COMPOSITE_TYPES = new Set(['TransformerEncoderLayer', 'TransformerEncoder']);

type CallModule = (interp: Interp, m: ModV | InstV, args: Value[], kwargs: Map<string, Value>, site: CallSite) => Value;

function layer(type: string, args: Value[], kwargs: Map<string, Value>, site: CallSite): ModV {
  const built = buildTorchLayer(type, args, kwargs)!;
  return { k: 'mod', type, op: built.op, attrs: built.attrs, range: site.range };
}

/** Builds the container; undefined when a required size is not a literal we can read. */
export function constructComposite(type: string, args: Value[], kwargs: Map<string, Value>, site: CallSite): ModV | undefined {
  return type === 'TransformerEncoderLayer' ? encoderLayer(args, kwargs, site) : encoder(args, kwargs, site);
}

function encoderLayer(args: Value[], kwargs: Map<string, Value>, site: CallSite): ModV | undefined {
  const a = bindArgs(ENCODER_LAYER_PARAMS, args, kwargs);
  const dModel = numArg(a, 'd_model');
  const heads = numArg(a, 'nhead');
  if (dModel === undefined || heads === undefined) return undefined;
  const ff = numArg(a, 'dim_feedforward', 2048) ?? 2048;
  const p = num(numArg(a, 'dropout', 0.1) ?? 0.1, true);
  const bias = a.get('bias') ?? { k: 'bool', v: true };
  const eps = a.get('layer_norm_eps') ?? NONE;
  const none = new Map<string, Value>();
  const children = new Map<string, Value>([
    ['self_attn', layer('MultiheadAttention', [int(dModel), int(heads)], new Map([['dropout', p], ['bias', bias]]), site)],
    ['linear1', layer('Linear', [int(dModel), int(ff)], new Map([['bias', bias]]), site)],
    ['dropout', layer('Dropout', [p], none, site)],
    ['linear2', layer('Linear', [int(ff), int(dModel)], new Map([['bias', bias]]), site)],
    ['norm1', layer('LayerNorm', [int(dModel), eps], new Map([['bias', bias]]), site)],
    ['norm2', layer('LayerNorm', [int(dModel), eps], new Map([['bias', bias]]), site)],
    ['dropout1', layer('Dropout', [p], none, site)],
    ['dropout2', layer('Dropout', [p], none, site)],
  ]);
  const activation = a.get('activation');
  // A module passed as activation (nn.GELU()) is a registered child, as in PyTorch; a string or function is not.
  if (activation?.k === 'mod') children.set('activation', activation);
  return {
    k: 'mod',
    type: 'TransformerEncoderLayer',
    op: 'identity',
    attrs: { normFirst: boolArg(a, 'norm_first', false), activation: activationName(activation) ?? 'relu' },
    range: site.range,
    children,
    composite: 'transformer_encoder_layer',
  };
}

function encoder(args: Value[], kwargs: Map<string, Value>, site: CallSite): ModV | undefined {
  const a = bindArgs(ENCODER_PARAMS, args, kwargs);
  const proto = a.get('encoder_layer');
  const n = numArg(a, 'num_layers');
  if (!proto || (proto.k !== 'mod' && proto.k !== 'inst') || n === undefined || n < 0 || n > 1000) return undefined;
  // PyTorch deep-copies the prototype: every copy has its own weights.
  const layers = new Map<string, Value>();
  for (let i = 0; i < n; i++) layers.set(String(i), cloneModule(proto));
  const list: ModV = { k: 'mod', type: 'ModuleList', op: 'identity', attrs: {}, range: site.range, children: layers, container: 'list' };
  const children = new Map<string, Value>([['layers', list]]);
  const norm = a.get('norm');
  if (norm && (norm.k === 'mod' || norm.k === 'inst')) children.set('norm', norm);
  return { k: 'mod', type: 'TransformerEncoder', op: 'identity', attrs: {}, range: site.range, children, composite: 'transformer_encoder' };
}

/** copy.deepcopy of a module tree: new objects for every module, shared nothing. */
export function cloneModule<T extends Value>(v: T, depth = 0): T {
  if (depth > 40) return v;
  if (v.k === 'mod') {
    const copy: ModV = withProps(v as ModV, { attrs: { ...v.attrs } });
    if (v.children) copy.children = cloneChildren(v.children, depth);
    return copy as T;
  }
  if (v.k === 'inst') {
    const copy: InstV = withProps(v as InstV, { attrs: new Map(v.attrs) });
    if (v.children) copy.children = cloneChildren(v.children, depth);
    return copy as T;
  }
  return v;
}

function cloneChildren(children: Map<string, Value>, depth: number): Map<string, Value> {
  const out = new Map<string, Value>();
  for (const [k, c] of children) out.set(k, cloneModule(c, depth + 1));
  return out;
}

/** The forward of a composite, recording its layers; `callModule` records each child. */
export function callComposite(interp: Interp, m: ModV, args: Value[], kwargs: Map<string, Value>, site: CallSite, callModule: CallModule): Value {
  const x = tensorsIn([args[0] ?? kwargs.get('src') ?? UNKNOWN])[0];
  if (!x) return UNKNOWN;
  const child = (name: string, inputs: Value[]): Value => {
    const c = m.children!.get(name);
    if (!c || (c.k !== 'mod' && c.k !== 'inst')) return UNKNOWN;
    const out = callModule(interp, c, inputs, new Map(), site);
    return out.k === 'tuple' ? (out.items[0] ?? UNKNOWN) : out;
  };
  if (m.composite === 'transformer_encoder') {
    let y: Value = x;
    const layers = m.children!.get('layers');
    for (const l of layers?.k === 'mod' ? (layers.children?.values() ?? []) : []) {
      if (l.k === 'mod' || l.k === 'inst') y = callModule(interp, l, [y], new Map(), site);
    }
    return m.children!.has('norm') ? child('norm', [y]) : y;
  }
  const add = (a: Value, b: Value): Value => {
    const [ta, tb] = tensorsIn([a, b]);
    if (!ta || !tb) return ta ?? UNKNOWN;
    return recordOp(interp, { base: 'add', type: 'add', op: 'add', attrs: {}, inputs: [ta, tb], site, shape: ta.shape });
  };
  const activate = (v: Value): Value => {
    if (m.children!.has('activation')) return child('activation', [v]);
    const t = tensorsIn([v])[0];
    if (!t) return UNKNOWN;
    const fn = String(m.attrs.activation ?? 'relu');
    return recordOp(interp, { base: fn, type: `F.${fn}`, op: 'activation', attrs: { fn }, inputs: [t], site, shape: t.shape });
  };
  const attention = (v: Value): Value => child('dropout1', [child('self_attn', [v, v, v])]);
  const feedForward = (v: Value): Value => child('dropout2', [child('linear2', [child('dropout', [activate(child('linear1', [v]))])])]);
  if (m.attrs.normFirst === true) {
    const h = add(x, attention(child('norm1', [x])));
    return add(h, feedForward(child('norm2', [h])));
  }
  const h = child('norm1', [add(x, attention(x))]);
  return child('norm2', [add(h, feedForward(h))]);
}
