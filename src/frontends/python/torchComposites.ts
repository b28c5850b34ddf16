/**
 * torch.nn modules made of other modules: nn.TransformerEncoderLayer,
 * nn.TransformerEncoder, their decoder twins and nn.Transformer. They become
 * containers of canonical layers (mha, linear, layernorm, dropout) under
 * PyTorch's own child names (`layers.0.self_attn`, `layers.0.linear1`,
 * `norm1`, `decoder.layers.0.multihead_attn`…), so module paths and parameter
 * counts match `model.named_parameters()`; calling one records the forward
 * PyTorch runs (post-norm by default, pre-norm with norm_first=True), the
 * decoder's cross-attention reading the encoder's output (its memory).
 */
import type { Interp } from './interpreter';
import { recordOp, tensorsIn } from './tensorOps';
import { activationName } from './kerasLayers';
import { bindArgs, boolArg, buildTorchLayer, numArg } from './torchLayers';
import { NONE, UNKNOWN, int, num, type CallSite, type InstV, type ModV, type Value } from './values';
import { withProps } from '../../core/objects';

const ENCODER_LAYER_PARAMS = ['d_model', 'nhead', 'dim_feedforward', 'dropout', 'activation', 'layer_norm_eps', 'batch_first', 'norm_first', 'bias'];
const ENCODER_PARAMS = ['encoder_layer', 'num_layers', 'norm', 'enable_nested_tensor', 'mask_check'];
const DECODER_PARAMS = ['decoder_layer', 'num_layers', 'norm'];
const TRANSFORMER_PARAMS = ['d_model', 'nhead', 'num_encoder_layers', 'num_decoder_layers', 'dim_feedforward', 'dropout', 'activation', 'custom_encoder', 'custom_decoder', 'layer_norm_eps', 'batch_first', 'norm_first', 'bias'];

export const COMPOSITE_TYPES = new Set(['TransformerEncoderLayer', 'TransformerEncoder', 'TransformerDecoderLayer', 'TransformerDecoder', 'Transformer']);

type CallModule = (interp: Interp, m: ModV | InstV, args: Value[], kwargs: Map<string, Value>, site: CallSite) => Value;

function layer(type: string, args: Value[], kwargs: Map<string, Value>, site: CallSite): ModV {
  const built = buildTorchLayer(type, args, kwargs)!;
  return { k: 'mod', type, op: built.op, attrs: built.attrs, range: site.range };
}

/** Builds the container; undefined when a required size is not a literal we can read. */
export function constructComposite(type: string, args: Value[], kwargs: Map<string, Value>, site: CallSite): ModV | undefined {
  switch (type) {
    case 'TransformerEncoderLayer':
      return encoderLayer(args, kwargs, site, false);
    case 'TransformerDecoderLayer':
      return encoderLayer(args, kwargs, site, true);
    case 'TransformerEncoder':
      return stack(ENCODER_PARAMS, 'encoder_layer', 'TransformerEncoder', 'transformer_encoder', args, kwargs, site);
    case 'TransformerDecoder':
      return stack(DECODER_PARAMS, 'decoder_layer', 'TransformerDecoder', 'transformer_decoder', args, kwargs, site);
    default:
      return transformer(args, kwargs, site);
  }
}

/** One encoder or decoder layer: the decoder's adds cross-attention (multihead_attn) and a third norm and dropout. */
function encoderLayer(args: Value[], kwargs: Map<string, Value>, site: CallSite, decoder: boolean): ModV | undefined {
  const a = bindArgs(ENCODER_LAYER_PARAMS, args, kwargs);
  const dModel = numArg(a, 'd_model');
  const heads = numArg(a, 'nhead');
  if (dModel === undefined || heads === undefined) return undefined;
  const ff = numArg(a, 'dim_feedforward', 2048) ?? 2048;
  const p = num(numArg(a, 'dropout', 0.1) ?? 0.1, true);
  const bias = a.get('bias') ?? { k: 'bool', v: true };
  const eps = a.get('layer_norm_eps') ?? NONE;
  const none = new Map<string, Value>();
  const attention = () => layer('MultiheadAttention', [int(dModel), int(heads)], new Map([['dropout', p], ['bias', bias]]), site);
  const norm = () => layer('LayerNorm', [int(dModel), eps], new Map([['bias', bias]]), site);
  const dropout = () => layer('Dropout', [p], none, site);
  // Registration order is PyTorch's (torch/nn/modules/transformer.py), so paths and parameter order match.
  const children = new Map<string, Value>([
    ['self_attn', attention()],
    ...(decoder ? [['multihead_attn', attention()] as [string, Value]] : []),
    ['linear1', layer('Linear', [int(dModel), int(ff)], new Map([['bias', bias]]), site)],
    ['dropout', dropout()],
    ['linear2', layer('Linear', [int(ff), int(dModel)], new Map([['bias', bias]]), site)],
    ['norm1', norm()],
    ['norm2', norm()],
    ...(decoder ? [['norm3', norm()] as [string, Value]] : []),
    ['dropout1', dropout()],
    ['dropout2', dropout()],
    ...(decoder ? [['dropout3', dropout()] as [string, Value]] : []),
  ]);
  const activation = a.get('activation');
  // A module passed as activation (nn.GELU()) is a registered child, as in PyTorch; a string or function is not.
  if (activation?.k === 'mod') children.set('activation', activation);
  return {
    k: 'mod',
    type: decoder ? 'TransformerDecoderLayer' : 'TransformerEncoderLayer',
    op: 'identity',
    attrs: { normFirst: boolArg(a, 'norm_first', false), activation: activationName(activation) ?? 'relu' },
    range: site.range,
    children,
    composite: decoder ? 'transformer_decoder_layer' : 'transformer_encoder_layer',
  };
}

/** TransformerEncoder / TransformerDecoder: `num_layers` deep copies of the layer given, then an optional norm. */
function stack(params: string[], layerKey: string, type: string, composite: 'transformer_encoder' | 'transformer_decoder', args: Value[], kwargs: Map<string, Value>, site: CallSite): ModV | undefined {
  const a = bindArgs(params, args, kwargs);
  const proto = a.get(layerKey);
  const n = numArg(a, 'num_layers');
  if (!proto || (proto.k !== 'mod' && proto.k !== 'inst') || n === undefined || n < 0 || n > 1000) return undefined;
  // PyTorch deep-copies the prototype: every copy has its own weights.
  const layers = new Map<string, Value>();
  for (let i = 0; i < n; i++) layers.set(String(i), cloneModule(proto));
  const list: ModV = { k: 'mod', type: 'ModuleList', op: 'identity', attrs: {}, range: site.range, children: layers, container: 'list' };
  const children = new Map<string, Value>([['layers', list]]);
  const norm = a.get('norm');
  if (norm && (norm.k === 'mod' || norm.k === 'inst')) children.set('norm', norm);
  return { k: 'mod', type, op: 'identity', attrs: {}, range: site.range, children, composite };
}

/** nn.Transformer: an encoder and a decoder of its own layers, each ending in a LayerNorm, as PyTorch builds them. */
function transformer(args: Value[], kwargs: Map<string, Value>, site: CallSite): ModV | undefined {
  const a = bindArgs(TRANSFORMER_PARAMS, args, kwargs);
  if (a.has('custom_encoder') || a.has('custom_decoder')) return undefined;
  const dModel = numArg(a, 'd_model', 512) ?? 512;
  const layerArgs = new Map<string, Value>([['d_model', int(dModel)], ['nhead', int(numArg(a, 'nhead', 8) ?? 8)]]);
  for (const k of ['dim_feedforward', 'dropout', 'activation', 'layer_norm_eps', 'batch_first', 'norm_first', 'bias']) if (a.has(k)) layerArgs.set(k, a.get(k)!);
  const normArgs = new Map<string, Value>([['bias', a.get('bias') ?? { k: 'bool', v: true }]]);
  const eps = a.get('layer_norm_eps') ?? NONE;
  const part = (decoder: boolean, key: string, fallback: number): ModV | undefined => {
    const proto = encoderLayer([], layerArgs, site, decoder);
    const n = numArg(a, key, fallback) ?? fallback;
    if (!proto) return undefined;
    const kw = new Map<string, Value>([[decoder ? 'decoder_layer' : 'encoder_layer', proto], ['num_layers', int(n)], ['norm', layer('LayerNorm', [int(dModel), eps], normArgs, site)]]);
    return stack(decoder ? DECODER_PARAMS : ENCODER_PARAMS, decoder ? 'decoder_layer' : 'encoder_layer', decoder ? 'TransformerDecoder' : 'TransformerEncoder', decoder ? 'transformer_decoder' : 'transformer_encoder', [], kw, site);
  };
  const encoder = part(false, 'num_encoder_layers', 6);
  const decoder = part(true, 'num_decoder_layers', 6);
  if (!encoder || !decoder) return undefined;
  return { k: 'mod', type: 'Transformer', op: 'identity', attrs: {}, range: site.range, children: new Map<string, Value>([['encoder', encoder], ['decoder', decoder]]), composite: 'transformer' };
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
  const x = tensorsIn([args[0] ?? kwargs.get('src') ?? kwargs.get('tgt') ?? UNKNOWN])[0];
  if (!x) return UNKNOWN;
  const child = (name: string, inputs: Value[]): Value => {
    const c = m.children!.get(name);
    if (!c || (c.k !== 'mod' && c.k !== 'inst')) return UNKNOWN;
    const out = callModule(interp, c, inputs, new Map(), site);
    return out.k === 'tuple' ? (out.items[0] ?? UNKNOWN) : out;
  };
  // The decoder's second input: forward(tgt, memory) for a decoder and its layers, forward(src, tgt) for nn.Transformer.
  const second = args[1] ?? kwargs.get('memory') ?? kwargs.get('tgt') ?? UNKNOWN;
  if (m.composite === 'transformer') {
    const memory = child('encoder', [x]);
    // forward(src, tgt): without a tgt the decoder cannot run, and half the model would vanish without a word.
    if (!tensorsIn([second])[0]) interp.warnAt(site.range, `${m.type}'s forward needs tgt (forward(src, tgt)); without it the decoder is missing`, 'lost-tensor');
    return child('decoder', [second, memory]);
  }
  if (m.composite === 'transformer_encoder' || m.composite === 'transformer_decoder') {
    let y: Value = x;
    const layers = m.children!.get('layers');
    for (const l of layers?.k === 'mod' ? (layers.children?.values() ?? []) : []) {
      if (l.k === 'mod' || l.k === 'inst') y = callModule(interp, l, m.composite === 'transformer_decoder' ? [y, second] : [y], new Map(), site);
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
  const decoder = m.composite === 'transformer_decoder_layer';
  const cross = (v: Value): Value => child('dropout2', [child('multihead_attn', [v, second, second])]);
  const feedForward = (v: Value): Value => child(decoder ? 'dropout3' : 'dropout2', [child('linear2', [child('dropout', [activate(child('linear1', [v]))])])]);
  const ffNorm = decoder ? 'norm3' : 'norm2';
  if (m.attrs.normFirst === true) {
    let h = add(x, attention(child('norm1', [x])));
    if (decoder) h = add(h, cross(child('norm2', [h])));
    return add(h, feedForward(child(ffNorm, [h])));
  }
  let h = child('norm1', [add(x, attention(x))]);
  if (decoder) h = child('norm2', [add(h, cross(h))]);
  return child(ffNorm, [add(h, feedForward(h))]);
}
