/**
 * PyTorch stand-ins: nn.* constructors build module values; assigning them to
 * `self.x` registers children; calling a module inside forward records layer
 * nodes named by module path (`layer1.0.conv1`).
 */
import type { PyNode } from './ast';
import { classLookup, isLightningModuleBase, libraryBase } from './access';
import { givenLabels } from './trainingLabels';
import { callMethod } from './calls';
import { dtypeAttr } from './casts';
import { arrayMethod } from './arrayOps';
import type { Interp } from './interpreter';
import { isArray } from './numericArrays';
import { constantNode } from './torchParameters';
import { sizeValues } from './batchFolding';
import { recordOp, tensorMethod, tensorsIn } from './tensorOps';
import { callComposite, COMPOSITE_TYPES, constructComposite } from './torchComposites';
import { lossModuleKind, recordLoss } from './losses';
import { buildTorchLayer } from './torchLayers';
import { NONE, UNKNOWN, int, iterItems, keyOf, namedEntries, native, str, toNumber, truthy, type CallSite, type Dims, type InstV, type ModV, type SplitV, type TensorV, type Value } from './values';
import { withProps } from '../../core/objects';

export type TorchInst = InstV & { children: Map<string, Value> };

export function isTorchModule(v: Value): v is TorchInst {
  return v.k === 'inst' && v.children !== undefined;
}

const isModule = (v: Value): boolean => v.k === 'mod' || isTorchModule(v);

/** `nn.X(...)`: a container, a known layer, or an opaque layer with an 'unknown layer' warning. */
export function constructTorchLayer(interp: Interp, type: string, args: Value[], kwargs: Map<string, Value>, site: CallSite): Value {
  const base: ModV = { k: 'mod', type, op: 'identity', attrs: {}, range: site.range };
  if (type === 'Sequential' || type === 'ModuleList' || type === 'ModuleDict') {
    base.container = type === 'Sequential' ? 'sequential' : type === 'ModuleList' ? 'list' : 'dict';
    base.children = new Map();
    const first = args[0];
    const named = type === 'ModuleDict' ? namedEntries(first) : undefined;
    if (named) for (const [k, v] of named) base.children.set(k, v);
    else if (first?.k === 'dict') for (const [, [k, v]] of first.map) base.children.set(k.k === 'str' ? k.v : String(base.children.size), v);
    else if (type !== 'Sequential' && first) for (const v of iterItems(first) ?? []) base.children.set(String(base.children.size), v);
    else for (const v of args) base.children.set(String(base.children.size), v);
    return base;
  }
  if (type === 'Parameter') {
    const t = args[0];
    return { k: 'param', owner: base, shape: t?.k === 'tensor' ? t.shape : undefined };
  }
  if (COMPOSITE_TYPES.has(type)) {
    const composite = constructComposite(type, args, kwargs, site);
    if (composite) return composite;
    const message = `nn.${type} needs literal sizes (d_model, nhead, num_layers) to be read`;
    return withProps(base, { op: 'opaque', attrs: { reason: message }, warning: message });
  }
  const built = buildTorchLayer(type, args, kwargs);
  if (built) return withProps(base, { op: built.op, attrs: built.attrs });
  const loss = lossModuleKind(type);
  if (loss) return withProps(base, { loss });
  const message = `unknown layer nn.${type}`;
  return withProps(base, { op: 'opaque', attrs: { reason: message }, warning: message });
}

const ATTR_ALIASES: Record<string, string> = {
  in_features: 'inFeatures',
  out_features: 'outFeatures',
  in_channels: 'inChannels',
  out_channels: 'outChannels',
  num_features: 'numFeatures',
  num_embeddings: 'numEmbeddings',
  embedding_dim: 'embeddingDim',
  kernel_size: 'kernel',
  stride: 'stride',
  hidden_size: 'hiddenSize',
  embed_dim: 'embedDim',
  num_heads: 'numHeads',
  normalized_shape: 'normalizedShape',
  p: 'rate',
};

/** LightningModule methods a training_step calls for logging and bookkeeping (lightning/pytorch/core/module.py). */
const LIGHTNING_BOOKKEEPING = new Set(['log', 'log_dict', 'print', 'save_hyperparameters', 'toggle_optimizer', 'untoggle_optimizer', 'manual_backward']);

const returnsSelf = new Set(['to', 'cuda', 'cpu', 'eval', 'train', 'float', 'half', 'double', 'bfloat16', 'requires_grad_', 'apply', 'type']);

export function torchModAttr(interp: Interp, m: ModV, name: string): Value {
  if (m.children) {
    const child = m.children.get(name);
    if (child) return child;
    const reg = (key: string, v: Value): void => void m.children!.set(key, v);
    switch (name) {
      case 'append':
        return native(name, ([v]) => (v && reg(String(m.children!.size), v), m));
      case 'extend':
        return native(name, ([v]) => {
          for (const item of (v && (v.k === 'mod' && v.children ? [...v.children.values()] : iterItems(v))) ?? []) reg(String(m.children!.size), item);
          return m;
        });
      case 'insert':
        return native(name, ([i, v]) => {
          const entries = [...m.children!.values()];
          entries.splice(toNumber(i) ?? entries.length, 0, v ?? UNKNOWN);
          m.children!.clear();
          entries.forEach((e, idx) => reg(String(idx), e));
          return NONE;
        });
      case 'add_module':
      case 'register_module':
        return native(name, ([k, v], _kw, site) => {
          if (k?.k === 'str' && v) reg(k.v, v);
          else if (v && isModule(v)) unnamedChild(interp, site);
          return NONE;
        });
      case 'update':
        return native(name, ([d]) => {
          for (const [k, v] of namedEntries(d) ?? []) reg(k, v);
          return NONE;
        });
      case 'items':
        return native(name, () => ({ k: 'list', items: [...m.children!].map(([k, v]) => ({ k: 'tuple', items: [str(k), v] })) }));
      // torchvision's IntermediateLayerGetter walks a Sequential backbone (MobileNetV3's `features`) by name.
      case 'named_children':
        return native(name, () => ({ k: 'list', items: [...m.children!].filter(([, v]) => isModule(v)).map(([k, v]) => ({ k: 'tuple', items: [str(k), v] })) }));
      case 'keys':
        return native(name, () => ({ k: 'list', items: [...m.children!.keys()].map(str) }));
      case 'values':
      case 'children':
        return native(name, () => ({ k: 'list', items: [...m.children!.values()] }));
    }
  }
  if (name === 'weight' || name === 'bias') return { k: 'param', owner: m.tiedTo ?? m };
  if (returnsSelf.has(name)) return native(name, () => m);
  if (name === 'training') return { k: 'bool', v: true };
  const attr = m.attrs[ATTR_ALIASES[name] ?? name];
  if (typeof attr === 'number') return { k: 'num', v: attr, float: !Number.isInteger(attr) };
  if (Array.isArray(attr)) return { k: 'tuple', items: attr.map((x) => (typeof x === 'number' ? int(x) : UNKNOWN)) };
  void interp;
  return UNKNOWN;
}

export function torchSetModAttr(interp: Interp, m: ModV, name: string, value: Value, node: PyNode): void {
  if ((name === 'weight' || name === 'bias') && value.k === 'param' && value.owner !== m) {
    if (name === 'weight') m.tiedTo = value.owner;
    return;
  }
  if (m.children && isModule(value)) m.children.set(name, value);
  void interp;
  void node;
}

/** add_module with a name the evaluator could not compute: the child (and its parameters) would vanish without a word. */
function unnamedChild(interp: Interp, site: CallSite): void {
  interp.warn(site.node, `\`${interp.text(site.node).slice(0, 80)}\` registers a module under a name the evaluator could not compute; that module is missing`, 'unknown-module-name');
}

/** Where a subclass of a built-in layer keeps the layer it extends (see access.ts libraryInit). */
export const BUILTIN_LAYER = '__wap_builtin_layer__';

/** nn.Module's own attributes on user subclasses. */
export function torchBaseAttr(interp: Interp, inst: InstV, name: string): Value {
  const layer = inst.attrs.get(BUILTIN_LAYER);
  if (layer?.k === 'mod' && name !== 'add_module' && name !== 'register_module') return torchModAttr(interp, layer, name);
  switch (name) {
    case 'training':
      return { k: 'bool', v: true };
    case 'add_module':
    case 'register_module':
      return native(name, ([k, v], _kw, site) => {
        if (k?.k === 'str' && v && isModule(v)) inst.children!.set(k.v, v);
        else if (v && isModule(v)) unnamedChild(interp, site);
        return NONE;
      });
    case 'register_buffer':
      // A buffer is a constant: `self.relative_position_index` reads back what was registered.
      return native(name, ([k, v]) => {
        if (k?.k === 'str' && v) inst.attrs.set(k.v, v);
        return NONE;
      });
    case 'register_parameter':
      return native(name, () => NONE);
    // Weight-init loops (`for m in self.modules(): if isinstance(m, nn.Conv2d): …`) walk the module tree.
    case 'modules':
      return native(name, () => ({ k: 'list', items: descendants(inst) }));
    case 'children':
      return native(name, () => ({ k: 'list', items: [...inst.children!.values()].filter(isModule) }));
    case 'named_children':
      return native(name, () => ({ k: 'list', items: [...inst.children!].filter(([, v]) => isModule(v)).map(([k, v]) => ({ k: 'tuple', items: [str(k), v] })) }));
    case 'append':
      return native(name, ([v]) => (v && inst.children!.set(String(inst.children!.size), v), inst));
    // nn.ModuleDict / nn.Sequential subclasses filled with add_module and walked in their forward (DenseNet's _DenseBlock).
    case 'items':
      return native(name, () => ({ k: 'list', items: [...inst.children!].filter(([, v]) => isModule(v)).map(([k, v]) => ({ k: 'tuple', items: [str(k), v] })) }));
    case 'keys':
      return native(name, () => ({ k: 'list', items: [...inst.children!].filter(([, v]) => isModule(v)).map(([k]) => str(k)) }));
    case 'values':
      return native(name, () => ({ k: 'list', items: [...inst.children!.values()].filter(isModule) }));
    default:
      if (returnsSelf.has(name)) return native(name, () => inst);
      // A LightningModule's logging and bookkeeping inside training_step (`self.log("loss", loss)`) computes nothing.
      if (LIGHTNING_BOOKKEEPING.has(name) && isLightningModuleBase(libraryBase(inst.cls))) return native(name, () => NONE);
      void interp;
      return UNKNOWN;
  }
}

/** Assigns module paths from the root by registration order (first path wins for shared modules). */
export function assignPaths(paths: Map<object, string>, root: Value, prefix = '', depth = 0): void {
  if (depth > 40) return;
  const children = root.k === 'mod' ? root.children : root.k === 'inst' ? root.children : undefined;
  if (!children) return;
  for (const [name, child] of children) {
    if (!isModule(child) || paths.has(child)) continue;
    const path = prefix ? `${prefix}.${name}` : name;
    paths.set(child, path);
    assignPaths(paths, child, path, depth + 1);
  }
}

const lostReported = new WeakSet<object>();

/** Calling a module (inside forward): containers chain, leaves record a layer, user modules run forward. */
export function callModule(interp: Interp, m: ModV | InstV, args: Value[], kwargs: Map<string, Value>, site: CallSite): Value {
  const g = interp.graph;
  if (!g || g.framework !== 'pytorch') {
    // Outside any forward: a script running the model on an example (`model(torch.randn(8, 3, 32, 32))`).
    if (m.k === 'inst') noteExampleInput(interp, m, args[0], site);
    return UNKNOWN;
  }
  if (m.k === 'inst') {
    const path = g.paths.get(m) ?? '';
    const forward = classLookup(m.cls, 'forward');
    const leaf = !!path && m.children!.size === 0;
    if (leaf) g.leafPaths.add(path);
    g.scope.push(path);
    try {
      if (forward?.k === 'func') {
        const from = g.layers.length;
        const out = callMethod(interp, forward, m, args, kwargs);
        if (!leaf || out.k !== 'tensor' || !out.id) return out;
        // A leaf called again (StochasticDepth after attention and after the MLP) is `path#2`, as layers are.
        const n = g.calls.get(m) ?? 0;
        g.calls.set(m, n + 1);
        const id = g.nameLeafOutput(from, out.id, path, m.cls.name, m.range ?? site.range, n ? `${path}#${n + 1}` : path);
        return withProps(out, { id, shape: g.shapes.get(id) ?? out.shape });
      }
      const layer = m.attrs.get(BUILTIN_LAYER);
      if (layer?.k === 'mod') {
        if (path) g.paths.set(layer, path);
        return callModule(interp, layer, args, kwargs, site);
      }
      const base = libraryBase(m.cls);
      // A LightningModule without forward trains what its training_step computes (Lightning calls it with a batch
      // and its index): the batch is read as (input, target), the layout of a DataLoader over (x, y) pairs.
      const step = isLightningModuleBase(base) ? classLookup(m.cls, 'training_step') : undefined;
      if (step?.k === 'func') {
        interp.warn(m.cls.node, `${m.cls.name} has no forward: read from training_step, with its batch as (input, target)`, 'no-forward-step', 'info');
        return callMethod(interp, step, m, [{ k: 'tuple', items: [args[0] ?? UNKNOWN, givenLabels()] }, int(0)], new Map());
      }
      if (base !== 'torch.nn.Sequential') interp.warn(m.cls.node, `${m.cls.name} has no forward we can read; its children are chained in registration order`, 'no-forward');
      return chain(interp, [...m.children!.values()], args, kwargs, site);
    } finally {
      g.scope.pop();
    }
  }
  if (m.composite) {
    g.scope.push(g.paths.get(m) ?? '');
    try {
      return callComposite(interp, m, args, kwargs, site, callModule);
    } finally {
      g.scope.pop();
    }
  }
  if (m.container === 'sequential') return chain(interp, [...m.children!.values()], args, kwargs, site);
  if (m.children) return UNKNOWN;
  if (m.loss) {
    const prediction = tensorsIn([args[0] ?? kwargs.get('input') ?? UNKNOWN])[0];
    return prediction ? recordLoss(interp, m.loss, prediction, site, m.type, g.paths.get(m)) : UNKNOWN;
  }
  const inputs = tensorsIn(args).concat(tensorsIn([...kwargs.values()]));
  const constant = inputs.length === 0 && isArray(args[0]) ? constantNode(interp, args[0].shape, site) : undefined;
  if (constant) inputs.push(constant);
  if (inputs.length === 0) {
    // Its input could not be computed: the layer (and what follows) would vanish without a word.
    if (!g.calls.has(m) && !lostReported.has(g)) interp.warnAt(site.range, `${g.paths.get(m) ?? m.type} (${m.type}) is called on a value the evaluator could not compute; it and the layers after it are missing`, 'lost-tensor');
    lostReported.add(g);
    return UNKNOWN;
  }
  const path = g.paths.get(m);
  const owner = m.tiedTo ?? m;
  if (m.warning && !g.calls.has(m)) interp.warnAt(m.range, m.warning, 'unknown-layer');
  g.calls.set(m, (g.calls.get(m) ?? 0) + 1);
  const unflatten = m.type === 'Unflatten' ? unflattenCall(m, inputs[0].shape) : undefined;
  const out = recordOp(interp, {
    name: path,
    base: snake(m.type),
    type: m.type,
    op: m.op,
    attrs: m.op === 'mha' ? { ...m.attrs, needWeights: needWeights(args, kwargs) } : (unflatten?.attrs ?? m.attrs),
    inputs: m.op === 'mha' ? inputs : [inputs[0]],
    site,
    range: m.range,
    weightKey: g.paths.get(owner) ?? path,
    shape: unflatten ? unflatten.shape : moduleOutShape(m, inputs[0].shape),
  });
  if (m.op === 'mha' || m.op === 'rnn') return { k: 'tuple', items: [out, UNKNOWN] };
  // nanoGPT's `self.transformer.wpe(pos)`: the table holds config.block_size positions, the length the model trains at.
  const positions = m.op === 'embedding' && inputs[0].positions ? m.attrs.numEmbeddings : undefined;
  if (typeof positions === 'number' && g.inputs[0] && !g.inputs[0].maxLength) g.inputs[0].maxLength = { tokens: positions, what: `${path ?? m.type} holds` };
  return out;
}

/**
 * Whether an nn.MultiheadAttention call returns its attention weights
 * (forward's need_weights, the fifth argument, True by default). Only a call
 * with need_weights=False runs scaled_dot_product_attention; otherwise PyTorch
 * computes the T×T weights explicitly (multi_head_attention_forward), whatever
 * kernel the plan assumes. A value the evaluator cannot read counts as True.
 */
function needWeights(args: Value[], kwargs: Map<string, Value>): boolean {
  const v = kwargs.get('need_weights') ?? args[4];
  return v === undefined || truthy(v) !== false;
}

/**
 * nn.Unflatten(dim, sizes) is a reshape whose target depends on the input's rank:
 * the other dims are kept (-1 where the code does not tell us their size).
 */
function unflattenCall(m: ModV, input: Dims | undefined): { attrs: { shape: number[] }; shape: Dims | undefined } {
  const dim = typeof m.attrs.dim === 'number' ? m.attrs.dim : 1;
  const sizes = Array.isArray(m.attrs.sizes) ? (m.attrs.sizes as number[]) : [];
  // Rank unknown: the usual decoder case, [batch, features] → [batch, …sizes].
  const rank = input?.length ?? 2;
  const at = dim < 0 ? dim + rank : dim;
  const rest: Dims = input ? input.slice(1) : [undefined];
  const out: Dims = [...rest.slice(0, at - 1), ...sizes.map((s) => (s === -1 ? undefined : s)), ...rest.slice(at)];
  return { attrs: { shape: out.map((d) => d ?? -1) }, shape: [input?.[0], ...out] };
}

function chain(interp: Interp, children: Value[], args: Value[], kwargs: Map<string, Value>, site: CallSite): Value {
  let x: Value = args[0] ?? UNKNOWN;
  let first = true;
  for (const child of children) {
    x = interp.callValue(child, first ? args : [x], first ? kwargs : new Map(), site);
    first = false;
  }
  return x;
}

const snakeCache = new Map<string, string>();

export function snake(type: string): string {
  let s = snakeCache.get(type);
  if (s === undefined) snakeCache.set(type, (s = snakeCase(type)));
  return s;
}

function snakeCase(type: string): string {
  return type.replace(/([a-z0-9])([A-Z])/g, '$1_$2').replace(/([A-Z])([A-Z][a-z])/g, '$1_$2').toLowerCase();
}

function moduleOutShape(m: ModV, s: Dims | undefined): Dims | undefined {
  switch (m.op) {
    case 'linear':
      return s ? [...s.slice(0, -1), m.attrs.outFeatures as number] : undefined;
    case 'embedding':
      return [...(s ?? [undefined, undefined]), m.attrs.embeddingDim as number];
    case 'layernorm':
    case 'dropout':
    case 'activation':
    case 'identity':
    case 'mha':
      return s;
    default:
      return undefined;
  }
}

export function tensorAttr(interp: Interp, t: TensorV, name: string): Value {
  if (isArray(t)) {
    if (name === 'shape') return { k: 'tuple', items: t.shape.map(int) };
    if (name === 'ndim') return int(t.shape.length);
    // A method whose values are not modelled: Unknown, never the array unchanged.
    return native(name, (args, kwargs) => arrayMethod(t, name, args, kwargs) ?? { k: 'unknown', why: `Tensor.${name} on a constant array is not modelled` });
  }
  // A parameter's shape is its own (no batch): F.layer_norm(x, self.weight.shape, …) in nanoGPT.
  if (t.param && name === 'shape') return t.param.shape ? { k: 'tuple', items: t.param.shape.map((d) => (d === undefined ? UNKNOWN : int(d))) } : UNKNOWN;
  if (name === 'shape' && interp.graph?.concrete && t.id) {
    const sizes = sizeValues(t);
    return sizes ? { k: 'tuple', items: sizes } : UNKNOWN;
  }
  if (name === 'shape') return t.shape ? { k: 'tuple', items: t.shape.map((d) => (d === undefined ? UNKNOWN : int(d))) } : UNKNOWN;
  if (name === 'T' || name === 'mT') return t;
  if (name === 'dtype') return dtypeAttr(t);
  if (name === 'device') return UNKNOWN;
  if (name === 'ndim') return t.shape ? int(t.shape.length) : UNKNOWN;
  return native(name, (args, kwargs, site) => tensorMethod(interp, t, name, args, kwargs, site));
}

/** One output of `x.split(…)` / `x.chunk(…)`: a split node per output. */
export function splitPart(interp: Interp, s: SplitV, index: number | undefined, count?: number): Value {
  if (index === undefined) return UNKNOWN;
  const chunks = s.chunks ?? count;
  const attrs: Record<string, number | number[]> = { axis: s.axis, index };
  if (s.sections) attrs.sizes = s.sections;
  else if (s.chunks !== undefined) attrs.chunks = s.chunks;
  else if (s.size !== undefined && chunks !== undefined) attrs.sizes = Array(chunks).fill(s.size);
  else if (chunks !== undefined) attrs.chunks = chunks;
  let shape = s.src.shape ? [...s.src.shape] : undefined;
  if (shape) {
    const ax = s.axis < 0 ? s.axis + shape.length : s.axis;
    const d = shape[ax];
    shape[ax] = s.sections?.[index] ?? s.size ?? (d !== undefined && chunks ? Math.ceil(d / chunks) : undefined);
  }
  const type = /^(torch|F)\./.test(s.site.calleeText) ? s.site.calleeText : `Tensor.${s.chunks !== undefined && !s.sections ? 'chunk' : 'split'}`;
  return recordOp(interp, { base: 'split', type, op: 'split', attrs, inputs: [s.src], site: s.site, shape, dedupeKey: keyOf(s) + ':' + index });
}


function descendants(root: Value, out: Value[] = [], depth = 0): Value[] {
  if (depth > 40 || out.includes(root)) return out;
  out.push(root);
  const children = root.k === 'inst' || root.k === 'mod' ? root.children : undefined;
  for (const child of children?.values() ?? []) if (isModule(child)) descendants(child, out, depth + 1);
  return out;
}

/** The first constant of known shape a script calls the module on is the input it is meant for (batch dropped). */
function noteExampleInput(interp: Interp, m: InstV, x: Value | undefined, site: CallSite): void {
  if (m.inputShape || x?.k !== 'tensor' || x.id !== '' || !x.shape || x.shape.length < 2) return;
  if (x.shape.some((d) => d === undefined || !Number.isInteger(d) || d <= 0)) return;
  m.inputShape = x.shape.slice(1);
  const call = site.node ? interp.text(site.node).split('\n')[0]!.slice(0, 80) : site.calleeText;
  m.inputShapeFrom = `the call ${call} at line ${site.range.line}`;
}
