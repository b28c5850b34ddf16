/**
 * Operations on symbolic tensors: torch.* and F.* functions and tensor methods
 * (.view, .transpose, .split…), each recorded as a node; Python operators are in
 * tensorArithmetic.ts. Shapes are tracked only as far as needed to resolve
 * `x.size()` for view.
 */
import { sizeValues, torchDims } from './batchFolding';
import { permute, reshape } from './tensorShaping';
import { makeArray } from './numericArrays';
import { castCall, CAST_METHODS, resultDtype, statedDtype } from './casts';
import { einsum } from './einsum';
import { elementwiseAttrs, perSample } from './elementwise';
import { reduction } from './reductions';
import { isLossFunction, LOSS_FUNCTIONS, recordLoss } from './losses';
import { routerOp } from './routerOps';
import { rmsUnaryStep, untag } from './rmsNormIdiom';
import { tensorBinary } from './tensorArithmetic';
import { unitAxisCall } from './unitAxes';
import { tensorSplit, unbind } from './tensorPieces';
import { rankValue } from './specialise';
import type { Attrs, OpKind, PinnedDtype, SourceRange } from '../../core/ir';
import type { PyNode } from './ast';
import type { Interp } from './interpreter';
import { bindArgs, buildTorchLayer, numArg } from './torchLayers';
import { UNKNOWN, int, iterItems, toNumber, truthy, type CallSite, type Dims, type TensorV, type Value } from './values';
import { toAttr } from './attrValues';
import { withProps } from '../../core/objects';

export interface OpRecord {
  name?: string;
  base: string;
  type: string;
  op: OpKind;
  attrs: Attrs;
  inputs: TensorV[];
  site: CallSite;
  /** Constructor range for modules; the call itself otherwise. */
  range?: SourceRange;
  weightKey?: string;
  shape?: Dims;
  dedupeKey?: string;
  /** The dtype the op itself writes (`F.softmax(x, dim=-1, dtype=torch.float32)`); else torch's promotion (casts.ts). */
  dtype?: PinnedDtype;
  /** A cast to the dtype another tensor has: that tensor's id (LayerSpec.dtypeLike). */
  dtypeLike?: string;
  /** A module whose parameters the code froze (LayerSpec.frozen). */
  frozen?: boolean;
}

export function recordOp(interp: Interp, r: OpRecord): Value {
  const g = interp.graph;
  if (!g) return UNKNOWN;
  if (r.dedupeKey) {
    const seen = g.memo.get(r.dedupeKey);
    if (seen) return seen;
  }
  const name = r.name ?? g.freshName(r.base);
  const layer = { name, type: r.type, op: r.op, attrs: r.attrs, inputs: r.inputs.filter((t) => t.id).map((t) => t.id), range: r.range ?? r.site.range } as Parameters<typeof g.add>[0];
  if (r.range) layer.callRange = r.site.range;
  if (r.weightKey) layer.weightKey = r.weightKey;
  if (r.dtypeLike) layer.dtypeLike = r.dtypeLike;
  if (r.frozen) layer.frozen = true;
  const dtype = r.dtype ?? resultDtype(r.op, r.attrs, r.inputs);
  if (dtype) layer.activationDtype = dtype;
  let t = g.add(layer, r.shape);
  if (dtype) t = withProps(t, { dtype });
  // Ops that keep the leading axes keep windows folded into the batch (shaping ops set it themselves).
  const first = r.inputs[0];
  if ((first?.fold || first?.front || first?.batchOne) && !['reshape', 'permute', 'flatten', 'split', 'gather'].includes(r.op)) t = withProps(t, { fold: first.fold, front: first.front, batchOne: first.batchOne });
  if (r.dedupeKey) g.memo.set(r.dedupeKey, t);
  return t;
}

/** Graph tensors among the values (lists and tuples flattened); constants excluded. */
export function tensorsIn(values: Value[]): TensorV[] {
  const out: TensorV[] = [];
  for (const v of values) {
    if (v.k === 'tensor') {
      if (v.id) out.push(v);
    } else if (v.k === 'list' || v.k === 'tuple') out.push(...tensorsIn(v.items));
  }
  return out;
}

export const isGraphTensor = (v: Value): v is TensorV => v.k === 'tensor' && v.id !== '';

export const matmulOf = (interp: Interp, a: TensorV, b: TensorV, site: CallSite): Value => matmul(interp, a, b, site, 'torch.einsum');

/**
 * `torch.where(cond, x, y)`: one select kernel. With one activation operand (`torch.where(mask, scores, -inf)`) it is
 * a fill by a mask, as masked_fill is; with two it reads both and writes one, the traffic of an add, which it is
 * recorded as (the trial workers time an add). The condition is a mask, which its backward keeps.
 */
function select(interp: Interp, a: Value, b: Value, site: CallSite): Value | undefined {
  const ins = [a, b].filter((v): v is TensorV => isGraphTensor(v) && perSample(v));
  const rec = (op: OpKind, attrs: Attrs, inputs: TensorV[], shape: Dims | undefined) => recordOp(interp, { base: 'where', type: site.calleeText, op, attrs, inputs, site, shape });
  if (ins.length === 1) return rec('activation', { fn: 'masked_fill' }, ins, ins[0]!.shape);
  if (ins.length === 2) return rec('add', { operator: 'where' }, ins, ins[0]!.shape && ins[1]!.shape && ins[0]!.shape.length >= ins[1]!.shape.length ? ins[0]!.shape : ins[1]!.shape);
  return undefined;
}

export function matmul(interp: Interp, a: TensorV, b: TensorV, site: CallSite, type: string): Value {
  const shape = a.shape && b.shape ? [...a.shape.slice(0, -1), b.shape[b.shape.length - 1]] : undefined;
  return recordOp(interp, { base: 'matmul', type, op: 'matmul', attrs: {}, inputs: [a, b], site, shape });
}

const ACTIVATIONS = new Set(['relu', 'relu6', 'gelu', 'silu', 'sigmoid', 'tanh', 'softmax', 'log_softmax', 'leaky_relu', 'elu', 'hardswish', 'hardsigmoid', 'softplus']);
const PASSTHROUGH = new Set([
  'contiguous', 'to', 'float', 'half', 'double', 'bfloat16', 'type_as', 'detach', 'clone', 'cuda', 'cpu', 'unsqueeze', 'squeeze', 'expand', 'expand_as',
  'repeat', 'masked_fill', 'masked_fill_', 'long', 'int', 'bool', 'requires_grad_', 'abs', 'sqrt', 'exp', 'pow', 'clamp', 'tril', 'triu',
  'index_select', 'gather', 'roll', 'narrow', 'select', 'neg', 'rsqrt', 'square', 'where',
]);
const CONSTANT_MAKERS = new Set(['zeros', 'ones', 'randn', 'rand', 'empty', 'full', 'tensor', 'zeros_like', 'ones_like', 'randn_like', 'empty_like', 'eye', 'linspace']);


/** A tensor method call `t.name(args)`. */
export function tensorMethod(interp: Interp, t: TensorV, name: string, args: Value[], kwargs: Map<string, Value>, site: CallSite): Value {
  // Labels are reshaped, shifted and cast (`targets.view(-1)`) on their way to the loss, which reads no shape of them.
  if (t.labels) return name === 'size' || name === 'dim' ? UNKNOWN : t;
  if (name === 'size' && interp.graph?.concrete) {
    const sizes = sizeValues(t);
    const dim = toNumber(args[0] ?? kwargs.get('dim'));
    if (!sizes) return UNKNOWN;
    if (dim === undefined) return { k: 'tuple', items: sizes };
    return sizes[dim < 0 ? dim + sizes.length : dim] ?? UNKNOWN;
  }
  if (name === 'size') {
    const dim = toNumber(args[0] ?? kwargs.get('dim'));
    if (dim === undefined) return t.shape ? { k: 'tuple', items: t.shape.map((d) => (d === undefined ? UNKNOWN : int(d))) } : UNKNOWN;
    const d = t.shape?.[dim < 0 ? dim + t.shape.length : dim];
    return d === undefined ? UNKNOWN : int(d);
  }
  if (name === 'dim') return rankValue(interp.graph, t);
  // `x.new_zeros((H, W))` (Swin's attention mask): a constant of known values, not a graph tensor.
  if (name === 'new_zeros' || name === 'new_ones' || name === 'new_full') {
    const dims = (args.length && (args[0].k === 'tuple' || args[0].k === 'list') ? args[0].items : name === 'new_full' ? [] : args).map(toNumber);
    const fill = name === 'new_ones' ? 1 : name === 'new_full' ? toNumber(args[1]) : 0;
    const n = dims.reduce<number | undefined>((p, d) => (p === undefined || d === undefined ? undefined : p * d), 1);
    if (n === undefined || fill === undefined || n > 1_000_000 || !dims.length) return { k: 'tensor', id: '', shape: undefined, framework: 'pytorch' };
    return makeArray(dims as number[], new Array<number>(n).fill(fill), 'f32', 'torch');
  }
  if (name === 'view' || name === 'reshape') {
    const dims = args.length === 1 && (args[0].k === 'tuple' || args[0].k === 'list') ? args[0].items : args;
    return reshape(interp, t, dims, site);
  }
  if (name === 'permute') {
    const dims = args.length === 1 && (args[0].k === 'tuple' || args[0].k === 'list') ? args[0].items : args;
    return permute(interp, t, dims.map((d) => toNumber(d)), site);
  }
  return torchFunction(interp, name, [t, ...args], kwargs, site, true) ?? t;
}

/** torch.X / F.X / tensor method X with the tensor first; undefined when the name is not one we know. */
export function torchFunction(interp: Interp, rawName: string, args: Value[], kwargs: Map<string, Value>, site: CallSite, method = false): Value | undefined {
  const name = rawName.endsWith('_') && !rawName.startsWith('_') ? rawName.slice(0, -1) : rawName;
  const x = args[0];
  if (CONSTANT_MAKERS.has(name)) {
    const dims = (args.length === 1 && (x.k === 'tuple' || x.k === 'list') ? x.items : args).map((d) => toNumber(d));
    return { k: 'tensor', id: '', shape: name === 'tensor' || name.endsWith('_like') ? undefined : dims, framework: 'pytorch' };
  }
  if (name === 'randint') {
    // torch.randint(low=0, high, size): token ids for an example call, `model(torch.randint(0, vocab, (8, 512)))`.
    const size = kwargs.get('size') ?? args.at(-1);
    const dims = size && (size.k === 'tuple' || size.k === 'list') ? size.items.map((d) => toNumber(d)) : undefined;
    return { k: 'tensor', id: '', shape: dims, framework: 'pytorch' };
  }
  if (name === 'arange') {
    // Positions over the sequence of the first model input (nanoGPT's `pos`): alias that input.
    const first = interp.graph?.inputs[0];
    return first ? { k: 'tensor', id: first.id, shape: [undefined, undefined], framework: 'pytorch', positions: true } : UNKNOWN;
  }
  if (name === 'einsum') return einsum(interp, args, site);
  if (name === 'cat' || name === 'concat' || name === 'concatenate' || name === 'stack') {
    const a = bindArgs(['tensors', 'dim'], args, kwargs);
    const inputs = tensorsIn([a.get('tensors') ?? UNKNOWN]);
    if (!inputs.length) return UNKNOWN;
    return recordOp(interp, { base: name, type: site.calleeText, op: 'concat', attrs: { axis: numArg(a, 'dim', 0) ?? 0 }, inputs, site });
  }
  if (name === 'where' && args.length >= 3) return select(interp, args[1]!, args[2]!, site);
  if ((name === 'where' && args.length === 1) || name === 'nonzero' || name === 'argwhere') {
    // A hand-written MoE's `idx, nth = torch.where(selected == i)`: which tokens an expert gets is data.
    interp.warn(site.node, `${site.calleeText}(condition) returns indices that depend on the data (an MoE router's tokens for one expert); what they pick is not modelled`, 'unknown-op', 'info');
    return UNKNOWN;
  }
  if (!x || !isGraphTensor(x)) {
    if (name === 'scaled_dot_product_attention' || ACTIVATIONS.has(name) || isLossFunction(name)) return UNKNOWN;
    return undefined;
  }
  if (!method && isLossFunction(name)) return recordLoss(interp, LOSS_FUNCTIONS[name]!, x, site, site.calleeText);
  const rec = (op: OpKind, attrs: Attrs, shape: Dims | undefined = x.shape, inputs: TensorV[] = [x], dtype?: PinnedDtype): Value =>
    recordOp(interp, { base: name, type: method ? `Tensor.${name}` : site.calleeText, op, attrs, inputs, site, shape, dtype });
  if (ACTIVATIONS.has(name)) {
    const attrs: Attrs = { fn: name };
    if (name !== 'softmax' && name !== 'log_softmax') return rec('activation', attrs);
    attrs.axis = numArg(bindArgs(['input', 'dim'], args, kwargs), 'dim', -1) ?? -1;
    // transformers' eager attention: `softmax(w, dim=-1, dtype=torch.float32)` writes fp32 from one kernel, no
    // separate upcast (ATen's half_to_float path); it is priced as fp32 on both sides, which its 16-bit read is not.
    return rec('activation', attrs, x.shape, [x], statedDtype(kwargs.get('dtype')));
  }
  // unsqueeze(0) on a batch-less tensor: its placeholder 1 becomes the dim it broadcasts over as a batch.
  if (name === 'unsqueeze' && x.unbatched && toNumber(args[1] ?? kwargs.get('dim')) === 0) return withProps(x, { unbatched: false, param: undefined });
  if (method && CAST_METHODS.has(name)) {
    const cast = castCall(interp, site.node, name, x, args, kwargs, (attrs, dtypeLike) => recordOp(interp, { base: name, type: `Tensor.${name}`, op: 'activation', attrs, inputs: [x], site, shape: x.shape, ...(dtypeLike ? { dtypeLike } : {}) }));
    if (cast) return cast;
  }
  // An eager RMSNorm's steps are recorded as the ops they are, and taken back in if the norm completes.
  const asWritten = () => graphTensorCall(interp, name, x, args, kwargs, site, rec);
  return rmsUnaryStep(name, x, args, kwargs, asWritten) ?? asWritten();
}

type Recorder = (op: OpKind, attrs: Attrs, shape?: Dims, inputs?: TensorV[]) => Value;

/** A torch function or tensor method `name` on graph tensor x, recorded by `rec`; undefined when the name is unknown. */
function graphTensorCall(interp: Interp, name: string, x: TensorV, args: Value[], kwargs: Map<string, Value>, site: CallSite, rec: Recorder): Value | undefined {
  const math = perSample(x) ? elementwiseAttrs(name, args, kwargs) : undefined;
  if (math) return rec('activation', math);
  const unitAxis = unitAxisCall(interp, name, x, args, kwargs, site);
  if (unitAxis) return unitAxis;
  if (PASSTHROUGH.has(name)) return untag(name, x);
  // Weights and biases passed to functional ops are the parameters themselves (their sizes make the layer's params).
  const withTensor = (params: string[]) => {
    const bound = bindArgs(['input', ...params], args, kwargs);
    for (const [k, v] of bound) if (k !== 'input' && v.k === 'tensor' && v.param) bound.set(k, v.param);
    return bound;
  };
  const routed = routerOp(interp, name, x, args, kwargs, site, rec);
  if (routed) return routed;
  switch (name) {
    case 'flatten': {
      const a = withTensor(['start_dim', 'end_dim']);
      return rec('flatten', { startDim: numArg(a, 'start_dim', 0) ?? 0, endDim: numArg(a, 'end_dim', -1) ?? -1 }, undefined);
    }
    case 'reshape':
      return reshape(interp, x, iterItems(args[1] ?? UNKNOWN) ?? [], site);
    case 'permute':
      return permute(interp, x, (iterItems(args[1] ?? UNKNOWN) ?? []).map(toNumber), site);
    case 'transpose':
    case 'swapaxes': {
      const a = withTensor(['dim0', 'dim1']);
      const rank = torchDims(x)?.length;
      const d0 = numArg(a, 'dim0');
      const d1 = numArg(a, 'dim1');
      const unread = d0 === undefined || d1 === undefined;
      if (unread || (rank === undefined && (x.fold || x.front || x.unbatched || d0 === 0 || d1 === 0))) {
        // Said, not guessed: the shapes after this point are the input's.
        interp.warn(site.node, `${name} ${unread ? 'of dims we cannot compute' : 'of a tensor whose layout WAP does not track here'} is taken as a pass-through; shapes after it may be wrong`, 'partial-eval');
        return x;
      }
      // The rank is not known here (a Linear's output before inference): the core swaps the two dims once it is.
      if (rank === undefined) return recordOp(interp, { base: 'permute', type: 'Tensor.transpose', op: 'permute', attrs: { swap: [d0, d1] }, inputs: [x], site, shape: undefined });
      const dims = Array.from({ length: rank }, (_, i) => i);
      const i0 = d0 < 0 ? d0 + rank : d0;
      const i1 = d1 < 0 ? d1 + rank : d1;
      [dims[i0], dims[i1]] = [dims[i1], dims[i0]];
      return permute(interp, x, dims, site);
    }
    case 'split':
    case 'chunk': {
      const a = withTensor([name === 'split' ? 'split_size_or_sections' : 'chunks', 'dim']);
      const axis = numArg(a, 'dim', 0) ?? 0;
      if (name === 'chunk') return { k: 'splitres', src: x, axis, chunks: numArg(a, 'chunks'), site };
      const s = a.get('split_size_or_sections') ?? a.get('split_size');
      const sections = s && (s.k === 'list' || s.k === 'tuple') ? s.items.map((i) => toNumber(i) ?? 0) : undefined;
      return { k: 'splitres', src: x, axis, size: sections ? undefined : toNumber(s), sections, chunks: sections?.length, site };
    }
    case 'unbind':
      return unbind(interp, x, args, kwargs, site);
    case 'tensor_split':
      return tensorSplit(interp, x, args, kwargs, site);
    case 'add':
    case 'sub':
    case 'mul':
    case 'div':
    case 'matmul':
    case 'mm':
    case 'bmm': {
      const y = args[1];
      if (!y || !isGraphTensor(y)) return x;
      const op = { add: '+', sub: '-', mul: '*', div: '/' }[name as 'add'] ?? '@';
      return tensorBinary(interp, op, x, y, site.node);
    }
    case 'scaled_dot_product_attention': {
      const a = withTensor(['key', 'value', 'attn_mask', 'dropout_p', 'is_causal', 'scale']);
      const inputs = [x, a.get('key'), a.get('value')].filter((t): t is TensorV => !!t && isGraphTensor(t));
      const v = inputs[2];
      const shape = x.shape && v?.shape ? [...x.shape.slice(0, -1), v.shape[v.shape.length - 1]] : x.shape;
      return rec('sdpa', { causal: truthy(a.get('is_causal') ?? { k: 'bool', v: false }) === true }, shape, inputs);
    }
    case 'linear':
      return functionalLinear(interp, x, withTensor(['weight', 'bias']), site);
    case 'dropout':
    case 'dropout1d':
    case 'dropout2d':
    case 'dropout3d':
      return rec('dropout', { rate: numArg(withTensor(['p', 'training', 'inplace']), 'p', 0.5) ?? 0.5 });
    case 'layer_norm':
    case 'rms_norm': {
      const rms = name === 'rms_norm';
      const a = withTensor(rms ? ['normalized_shape', 'weight', 'eps'] : ['normalized_shape', 'weight', 'bias', 'eps']);
      const shape = toAttr(a.get('normalized_shape'));
      const attrs: Attrs = { scale: isPresent(a.get('weight')), center: !rms && isPresent(a.get('bias')), ...(rms ? { rms: true } : {}) };
      if (Array.isArray(shape) && shape.every((d) => typeof d === 'number')) attrs.normalizedShape = shape;
      else if (typeof shape === 'number') attrs.normalizedShape = [shape];
      const scope = interp.graph?.scope;
      const owner = scope?.length ? scope[scope.length - 1] : undefined;
      return recordOp(interp, { base: name, type: site.calleeText, op: 'layernorm', attrs, inputs: [x], site, shape: x.shape, weightKey: owner || undefined, frozen: isFrozenParameter(a.get('weight')) });
    }
    case 'pad': {
      const pads = iterItems(args[1] ?? kwargs.get('pad') ?? UNKNOWN) ?? [];
      // Padding by nothing (Swin pads a feature map to a multiple of its window: 0 when it already is).
      if (pads.length && pads.every((p) => toNumber(p) === 0)) return x;
      // Channels last ([B, H, W, C] padded on H and W, C by 0 — Swin): pad as channels first between two permutes.
      const ns = pads.map(toNumber);
      if (x.shape?.length === 4 && !x.fold && ns.length === 6 && ns[0] === 0 && ns[1] === 0 && ns.every((n) => n !== undefined)) {
        const toFirst = permute(interp, x, [0, 3, 1, 2], site);
        const built2 = buildTorchLayer('ZeroPad2d', [{ k: 'tuple', items: pads.slice(2) }], new Map());
        if (toFirst.k !== 'tensor' || !built2) return x;
        const padded = recordOp(interp, { base: name, type: site.calleeText, op: built2.op, attrs: built2.attrs, inputs: [toFirst], site, shape: undefined });
        return padded.k === 'tensor' ? permute(interp, padded, [0, 2, 3, 1], site) : x;
      }
      const built = buildTorchLayer(`ZeroPad${Math.max(1, Math.min(3, pads.length / 2))}d`, [{ k: 'tuple', items: pads }], new Map());
      return built ? rec(built.op, built.attrs, undefined) : x;
    }
    case 'interpolate':
    case 'upsample': {
      // torchvision's segmentation heads upsample back to `x.shape[-2:]`: only a reading for a known input has it.
      const size = args[1] ?? kwargs.get('size');
      const scale = args[2] ?? kwargs.get('scale_factor');
      const sizes = size && size.k !== 'none' ? (iterItems(size) ?? [size]).map(toNumber) : [];
      if (sizes.includes(undefined) && (!scale || scale.k === 'none') && interp.graph && !interp.graph.concrete) {
        interp.graph.starved = true;
        interp.warn(site.node, `${site.calleeText}'s size is computed from the input's shape, known only for a given input size`, 'partial-eval');
      }
      const built = buildTorchLayer('Upsample', args.slice(1), kwargs);
      return built ? rec(built.op, built.attrs, undefined) : x;
    }
    case 'mean': {
      const dims = (iterItems(args[1] ?? kwargs.get('dim') ?? UNKNOWN) ?? []).map(toNumber);
      const spatialMean = dims.length === 2 && ((dims[0] === 2 && dims[1] === 3) || (dims[0] === -2 && dims[1] === -1));
      const keepDims = truthy(args[2] ?? kwargs.get('keepdim') ?? { k: 'bool', v: false }) === true;
      if (!spatialMean) return reduction(interp, name, x, args, kwargs, site, rec);
      return rec('pool', { rank: 2, mode: 'avg', global: true, keepDims }, undefined);
    }
    case 'sum':
    case 'norm':
    case 'vector_norm':
    case 'amax':
    case 'amin':
    case 'max':
    case 'min':
      return reduction(interp, name, x, args, kwargs, site, rec);
  }
  const pooled = /^(adaptive_)?(max|avg)_pool([123])d$/.exec(name);
  if (pooled) {
    const type = `${pooled[1] ? 'Adaptive' : ''}${pooled[2] === 'max' ? 'Max' : 'Avg'}Pool${pooled[3]}d`;
    const built = buildTorchLayer(type, args.slice(1), kwargs);
    return built ? rec(built.op, built.attrs, undefined) : x;
  }
  return undefined;
}

/**
 * F.linear(x, weight, bias): a linear layer when the weight's size is known — an
 * nn.Parameter of literal shape [out, in], or another layer's weight (tied, so
 * the parameters count once) — and an opaque node saying why otherwise.
 */
function functionalLinear(interp: Interp, x: TensorV, a: Map<string, Value>, site: CallSite): Value {
  const g = interp.graph;
  const w = a.get('weight');
  const bias = isPresent(a.get('bias'));
  let size: [number | undefined, number | undefined] | undefined;
  const owner = w?.k === 'param' ? w.owner : undefined;
  if (w?.k === 'param' && owner?.k === 'mod') {
    if (owner.type === 'Parameter') size = w.shape?.length === 2 ? [w.shape[0], w.shape[1]] : undefined;
    else if (owner.op === 'linear') size = [numAttr(owner.attrs.outFeatures), numAttr(owner.attrs.inFeatures)];
    else if (owner.op === 'embedding') size = [numAttr(owner.attrs.numEmbeddings), numAttr(owner.attrs.embeddingDim)];
  }
  // A layer's weight shares that layer's key; a bare nn.Parameter is keyed by its first F.linear.
  const weightKey = owner ? g?.paths.get(owner) : undefined;
  const [outFeatures, inFeatures] = size ?? [];
  if (outFeatures === undefined || inFeatures === undefined) {
    const why =
      w?.k === 'param'
        ? 'F.linear: the weight is a parameter whose size the code does not state as literals, so its parameters and FLOPs are not counted'
        : 'F.linear: the weight is a tensor computed at run time, not a parameter of known size, so its parameters and FLOPs are not counted';
    return recordOp(interp, { base: 'linear', type: site.calleeText, op: 'opaque', attrs: { reason: why }, inputs: [x], site });
  }
  const shape = x.shape ? [...x.shape.slice(0, -1), outFeatures] : undefined;
  const t = recordOp(interp, { base: 'linear', type: site.calleeText, op: 'linear', attrs: { inFeatures, outFeatures, bias }, inputs: [x], site, shape, weightKey, frozen: owner?.frozen === true });
  if (owner && !weightKey && t.k === 'tensor') g?.paths.set(owner, t.id);
  return t;
}

const numAttr = (v: unknown): number | undefined => (typeof v === 'number' ? v : undefined);

/** A functional op's weight the code froze (an nn.Parameter, or a frozen module's weight). */
export const isFrozenParameter = (v: Value | undefined): boolean => v?.k === 'param' && v.owner.frozen === true;

const isPresent = (v: Value | undefined): boolean => !!v && v.k !== 'none' && v.k !== 'unknown';
