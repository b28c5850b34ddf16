/**
 * nn.* modules as objects: `nn.X(...)` builds a module value, and a module's
 * attribute surface answers what __init__ and forward ask of it
 * (`self.layers.append`, `m.weight`, `self.register_buffer`, `self.modules()`).
 * Separate from torchRuntime.ts, which calls modules inside forward: this file
 * only builds and inspects them, and records no layer nodes.
 */
import type { PyNode } from './ast';
import { isLightningModuleBase, libraryBase } from './access';
import type { Interp } from './interpreter';
import { COMPOSITE_TYPES, constructComposite } from './torchComposites';
import { lossModuleKind } from './losses';
import { buildTorchLayer } from './torchLayers';
import { requiresGradCall } from './frozenParameters';
import { BUILTIN_LAYER, isModule } from './torchRuntime';
import { NONE, UNKNOWN, int, iterItems, namedEntries, native, str, toNumber, type CallSite, type InstV, type ModV, type Value } from './values';
import { withProps } from '../../core/objects';

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
    else if (type !== 'Sequential' && first) {
      const items = iterItems(first);
      // `nn.ModuleList([Block(c) for _ in range(c.n_layer)])` with n_layer unknown: the blocks would vanish without a word.
      if (!items) interp.warn(site.node, `\`${interp.text(site.node).slice(0, 80)}\` registers modules the evaluator could not list${first.k === 'unknown' && first.why ? ` (${first.why})` : ''}; they are missing`, 'unknown-module-name');
      for (const v of items ?? []) base.children.set(String(base.children.size), v);
    }
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
  // A size the code computes from something WAP cannot know: say what, where the layer's shape error would not.
  const why = [...args, ...kwargs.values()].map((v) => (v.k === 'unknown' ? v.why : undefined)).find((w) => w !== undefined);
  if (built) return withProps(base, { op: built.op, attrs: built.attrs, ...(why ? { sizeUnknown: `nn.${type} is built with a size WAP does not know: ${why}` } : {}) });
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

const returnsSelf = new Set(['to', 'cuda', 'cpu', 'eval', 'train', 'float', 'half', 'double', 'bfloat16', 'apply', 'type']);

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
  if (name === 'weight' || name === 'bias') return { k: 'param', owner: m.tiedTo ?? m, name };
  if (returnsSelf.has(name)) return native(name, () => m);
  if (name === 'requires_grad_') return native(name, (args, kwargs, site) => (requiresGradCall(interp, m, args, kwargs, site), m));
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

/** nn.Module's own attributes on user subclasses. */
export function torchBaseAttr(interp: Interp, inst: InstV, name: string): Value {
  const layer = inst.attrs.get(BUILTIN_LAYER);
  // `.to(device)` on a subclass of nn.Transformer hands back the subclass (its forward, its own layers), not the base.
  if (layer?.k === 'mod' && returnsSelf.has(name) && !layer.children?.has(name)) return native(name, () => inst);
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
      if (name === 'requires_grad_') return native(name, (args, kwargs, site) => (requiresGradCall(interp, inst, args, kwargs, site), inst));
      // A LightningModule's logging and bookkeeping inside training_step (`self.log("loss", loss)`) computes nothing.
      if (LIGHTNING_BOOKKEEPING.has(name) && isLightningModuleBase(libraryBase(inst.cls))) return native(name, () => NONE);
      void interp;
      return UNKNOWN;
  }
}

export function descendants(root: Value, out: Value[] = [], depth = 0): Value[] {
  if (depth > 40 || out.includes(root)) return out;
  out.push(root);
  const children = root.k === 'inst' || root.k === 'mod' ? root.children : undefined;
  for (const child of children?.values() ?? []) if (isModule(child)) descendants(child, out, depth + 1);
  return out;
}
