/**
 * PyTorch modules at forward time: what counts as a module value, the module
 * paths layers are named by (`layer1.0.conv1`), and calling a module inside
 * forward — containers chain, leaves record a layer node, user modules run
 * their forward. Building nn.* modules and their attribute surface live in
 * torchModuleValues.ts; tensor attributes in tensorAttributes.ts.
 */
import { classLookup, isLightningModuleBase, libraryBase } from './access';
import { givenLabels } from './trainingLabels';
import { callMethod } from './calls';
import type { Interp } from './interpreter';
import { isArray } from './numericArrays';
import { constantNode } from './torchParameters';
import { recordOp, tensorsIn } from './tensorOps';
import { callComposite } from './torchComposites';
import { recordLoss } from './losses';
import { heldPart } from './transformersBases';
import { callBuiltPart } from './transformersCalls';
import { UNKNOWN, int, truthy, type CallSite, type Dims, type InstV, type ModV, type Value } from './values';
import { withProps } from '../../core/objects';

export type TorchInst = InstV & { children: Map<string, Value> };

export function isTorchModule(v: Value): v is TorchInst {
  return v.k === 'inst' && v.children !== undefined;
}

export const isModule = (v: Value): boolean => v.k === 'mod' || isTorchModule(v);

/** Where a subclass of a built-in layer keeps the layer it extends (see access.ts libraryInit). */
export const BUILTIN_LAYER = '__wap_builtin_layer__';

/** Assigns module paths from the root by registration order (first path wins for shared modules). */
export function assignPaths(paths: Map<object, string>, root: Value, prefix = '', depth = 0): void {
  if (depth > 40) return;
  const children = root.k === 'mod' ? root.children : root.k === 'inst' ? root.children : undefined;
  if (!children) return;
  // A transformers model or part held by a module is one of its submodules to torch: its layers are named under it.
  const heldHf = (v: Value): boolean => v.k === 'hf' && (v.what === 'model' || v.module?.own === true);
  const held = root.k === 'inst' ? [...root.attrs, ...children] : [...children];
  for (const [name, v] of held) if (heldHf(v) && !paths.has(v)) paths.set(v, prefix ? `${prefix}.${name}` : name);
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
    if (m.k === 'inst' || m.container === 'sequential') noteExampleInput(interp, m, args[0], site);
    return UNKNOWN;
  }
  if (m.k === 'inst') {
    const path = g.paths.get(m) ?? '';
    const forward = classLookup(m.cls, 'forward');
    // A subclass of a transformers part holds its layers in the part, not as children: not a leaf.
    const leaf = !!path && m.children!.size === 0 && !heldPart(m);
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
      const part = heldPart(m);
      if (part) return callBuiltPart(interp, part, args, kwargs, site, path || undefined);
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
  if (m.sizeUnknown && !g.calls.has(m)) interp.warnAt(m.range, m.sizeUnknown, 'unknown-size');
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
    frozen: m.frozen === true || owner.frozen === true,
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

/** The first constant of known shape a script calls the module on is the input it is meant for (batch dropped). */
function noteExampleInput(interp: Interp, m: InstV | ModV, x: Value | undefined, site: CallSite): void {
  if (m.inputShape || x?.k !== 'tensor' || x.id !== '' || !x.shape || x.shape.length < 2) return;
  if (x.shape.some((d) => d === undefined || !Number.isInteger(d) || d <= 0)) return;
  m.inputShape = x.shape.slice(1);
  const call = site.node ? interp.text(site.node).split('\n')[0]!.slice(0, 80) : site.calleeText;
  m.inputShapeFrom = `the call ${call} at line ${site.range.line}`;
}
