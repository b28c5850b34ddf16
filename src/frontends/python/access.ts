/**
 * Attribute and item access: instances and classes (method resolution through
 * bases defined in the file), library paths, containers, and the torch/keras
 * stand-ins, plus `super()`.
 */
import type { PyNode } from './ast';
import { methodOf } from './valueMethods';
import type { Interp } from './interpreter';
import { moduleListing, noteSubmodule } from './moduleListings';
import { canonicalPath } from './imports';
import { kerasAttr } from './kerasRuntime';
import { transformersAttr, transformersSetAttr } from './transformersRuntime';
import { hfModuleItem } from './transformersModules';
import { builtPartInit, isBuiltPartBase, isPreTrainedModelBase, transformersBaseAttr, preTrainedInit } from './transformersBases';
import { parameterRequiresGrad } from './frozenParameters';
import { libraryAttr } from './library';
import { scriptArgv } from './commandLine';
import { readParameter } from './torchParameters';
import { arrayGetItem, arraySetItem } from './arrayIndexing';
import { isArray } from './numericArrays';
import { indexTensor } from './tensorIndexing';
import { BUILTIN_LAYER, isTorchModule } from './torchRuntime';
import { constructTorchLayer, torchBaseAttr, torchModAttr, torchSetModAttr } from './torchModuleValues';
import { splitPart, tensorAttr } from './tensorAttributes';
import { noteConvolutionTf32, noteTf32 } from './runPrecision';
import { ScopeDict } from './scopeDict';
import { NONE, TRUE, UNKNOWN, int, str, iterItems, keyOf, namedEntries, native, toNumber, type CallSite, type ClassV, type FuncV, type InstV, type Scope, type TensorV, type Value } from './values';
import { withProps } from '../../core/objects';

/** Which class a method was defined in (for `super()`), by function identity. */
export const methodOwner = new WeakMap<FuncV, ClassV>();

/** Depth-first, left-to-right linearisation of the bases defined in the file (close to C3 for the usual trees). */
export function mro(cls: ClassV): readonly Value[] {
  // Bases are fixed when the class statement runs, so the order is computed once per class.
  const cached = mroCache.get(cls);
  if (cached) return cached;
  const out: Value[] = [];
  const seen = new Set<Value>();
  const visit = (c: Value, depth: number): void => {
    if (seen.has(c) || depth > 30) return;
    seen.add(c);
    out.push(c);
    if (c.k === 'class') for (const b of c.bases) visit(b, depth + 1);
  };
  visit(cls, 0);
  mroCache.set(cls, out);
  return out;
}

const mroCache = new WeakMap<ClassV, Value[]>();

export function classLookup(cls: ClassV, name: string, after?: ClassV): Value | undefined {
  if (!after && cls.bases.length === 0) return cls.attrs.get(name);
  const chain = mro(cls);
  let start = 0;
  if (after) start = chain.indexOf(after) + 1;
  for (let i = start; i < chain.length; i++) {
    const c = chain[i];
    if (c.k === 'class') {
      const v = c.attrs.get(name);
      if (v !== undefined) return v;
    }
  }
  return undefined;
}

/** The first library base (nn.Module, keras.Model…) in the class's ancestry. */
export function libraryBase(cls: ClassV): string | undefined {
  for (const c of mro(cls)) if (c.k === 'lib') return c.path;
  return undefined;
}

/**
 * Lightning's LightningModule is an nn.Module (lightning/pytorch/core/module.py). Lightning is never read from source
 * (imports/policy.ts), so it stays a library path: `L.LightningModule`, `pl.LightningModule`, or imported from its module.
 */
const LIGHTNING_MODULE = /^(lightning(\.pytorch)?|pytorch_lightning)(\.core(\.module|\.lightning)?)?\.LightningModule$/;

export const isLightningModuleBase = (base: string | undefined): boolean => base !== undefined && LIGHTNING_MODULE.test(base);

/** A library base that makes a class a torch module: torch.nn's, or Lightning's module. */
export function isTorchModuleBase(base: string | undefined): boolean {
  return base !== undefined && (base.startsWith('torch.nn') || LIGHTNING_MODULE.test(base) || isPreTrainedModelBase(base) || isBuiltPartBase(base));
}

function bindMember(interp: Interp, self: Value, member: Value, site: PyNode): Value {
  if (member.k !== 'func') return member;
  if (member.kind === 'static') return member;
  if (member.kind === 'property') return interp.callValue({ k: 'bound', self, fn: member }, [], new Map(), interp.site(site));
  if (member.kind === 'class') return { k: 'bound', self: self.k === 'inst' ? self.cls : self, fn: member };
  return { k: 'bound', self, fn: member };
}

export function getAttr(interp: Interp, obj: Value, name: string, node: PyNode): Value {
  // A module's parameters and submodules as lists: whose parameters an optimizer is built from says which model is trained.
  const listing = moduleListing(obj, name, node, (n) => interp.text(n));
  if (listing) return listing;
  switch (obj.k) {
    case 'inst': {
      if (name === '__class__') return obj.cls;
      // `self.__dict__.update(kwargs)` (minGPT's CfgNode, yacs-style configs) writes attributes: a live view of them.
      if (name === '__dict__') return { k: 'dict', map: new ScopeDict({ vars: obj.attrs }) };
      const own = obj.attrs.get(name) ?? obj.children?.get(name);
      if (own?.k === 'param' && obj.children) return readParameter(interp, obj, name, own);
      if (own !== undefined) return noteSubmodule(obj, own, node);
      const member = classLookup(obj.cls, name);
      if (member !== undefined) return bindMember(interp, obj, member, node);
      if (isTorchModule(obj)) return transformersBaseAttr(interp, obj, name) ?? torchBaseAttr(interp, obj, name);
      return kerasAttr(interp, obj, name);
    }
    case 'class': {
      if (name === '__name__' || name === '__qualname__') return { k: 'str', v: obj.name };
      const member = classLookup(obj, name);
      if (member?.k === 'func' && member.kind === 'class') return { k: 'bound', self: obj, fn: member };
      return member ?? UNKNOWN;
    }
    case 'lib': {
      const path = canonicalPath(obj.path + '.' + name);
      // The run's command line, as argparse and HfArgumentParser read it (hfArgumentParser.ts).
      return path === 'sys.argv' ? scriptArgv(interp) : libraryAttr(path);
    }
    case 'module':
      if (name === '__dict__' && interp.loader) return { k: 'dict', map: new ScopeDict(interp.loader.load(obj.mod).scope) };
      return interp.loader?.attribute(obj.mod, name) ?? { k: 'unknown', why: `${obj.mod.name} has no attribute '${name}'` };
    case 'mod':
      return noteSubmodule(obj, torchModAttr(interp, obj, name), node);
    case 'tensor':
      return obj.framework === 'pytorch' ? tensorAttr(interp, obj, name) : kerasAttr(interp, obj, name);
    case 'klayer':
    case 'kmodel':
      return kerasAttr(interp, obj, name);
    case 'hf':
      return transformersAttr(interp, obj, name);
    case 'param':
      if (name === 'shape' && obj.shape) return { k: 'tuple', items: obj.shape.map((d) => (d === undefined ? UNKNOWN : int(d))) };
      // `qkv_bias = qkv_bias.clone()` (Swin V2): still the parameter, whose size the functional op counts.
      if (['clone', 'detach', 'contiguous', 'to', 'float'].includes(name)) return native(name, () => obj);
      if (name === 'data') return obj;
      if (name === 'requires_grad_') return native(name, (args, kwargs, site) => (parameterRequiresGrad(interp, obj, args[0] ?? kwargs.get('requires_grad') ?? TRUE, site.node), obj));
      return UNKNOWN;
    case 'dict': {
      // A DictConfig's keys are its attributes, and shadow the mapping's methods as OmegaConf's do.
      const key = obj.attributes ? obj.map.get(`s:${name}`) : undefined;
      if (key) return key[1];
      if (obj.modelOutput) return methodOf(obj, name) ?? { k: 'unknown', why: `${obj.modelOutput}'s output has no field '${name}' in this call` };
      return methodOf(obj, name) ?? (obj.attributes ? { k: 'unknown', why: `the config has no key '${name}'` } : UNKNOWN);
    }
    case 'str':
    case 'list':
    case 'tuple':
      return methodOf(obj, name) ?? UNKNOWN;
    default:
      // `cfg.model.n_layer` of an unknown `cfg` keeps the reason it is unknown.
      return obj.k === 'unknown' && obj.why ? obj : UNKNOWN;
  }
}

export function setAttr(interp: Interp, obj: Value, name: string, value: Value, node: PyNode): void {
  if (obj.k === 'param' && name === 'requires_grad') return parameterRequiresGrad(interp, obj, value, node);
  if (obj.k === 'inst') {
    const isModuleValue = value.k === 'mod' || (value.k === 'inst' && isTorchModule(value));
    if (obj.children && isModuleValue) {
      obj.attrs.delete(name);
      obj.children.set(name, value);
      return;
    }
    if (obj.children?.has(name)) {
      if (value.k === 'none') obj.children.delete(name);
      else if (value.k === 'param') {
        // Tying the weight of a user-defined child module: rare; keep the child.
        return;
      }
    }
    obj.attrs.set(name, value);
    return;
  }
  if (obj.k === 'dict' && obj.attributes) {
    obj.map.set(`s:${name}`, [str(name), value]);
    return;
  }
  if (obj.k === 'mod') return torchSetModAttr(interp, obj, name, value, node);
  if (obj.k === 'hf') return transformersSetAttr(interp, obj, name, value, node);
  if (obj.k === 'class') obj.attrs.set(name, value);
  // `torch.backends.cuda.matmul.allow_tf32 = True`: the run's fp32 matmuls run on TF32 tensor cores.
  if (obj.k === 'lib' && obj.path === 'torch.backends.cuda.matmul' && name === 'allow_tf32' && value.k === 'bool') noteTf32(interp, value.v, interp.site(node), `torch.backends.cuda.matmul.allow_tf32 = ${value.v ? 'True' : 'False'}`);
  // `torch.backends.cudnn.allow_tf32 = False`: its fp32 convolutions leave the TF32 tensor cores PyTorch uses by default.
  if (obj.k === 'lib' && obj.path === 'torch.backends.cudnn' && name === 'allow_tf32' && value.k === 'bool') noteConvolutionTf32(interp, value.v, interp.site(node));
}

function isSlice(v: Value): v is { k: 'tuple'; items: Value[] } {
  return v.k === 'tuple' && v.items.length === 4 && v.items[0].k === 'str' && v.items[0].v === '__slice__';
}

export function sliceIndices(key: { items: Value[] }, length: number): number[] {
  const step = toNumber(key.items[3]) ?? 1;
  if (step === 0) return [];
  const norm = (v: Value, dflt: number): number => {
    const n = toNumber(v);
    if (n === undefined) return dflt;
    const i = n < 0 ? n + length : n;
    return Math.max(step > 0 ? 0 : -1, Math.min(i, step > 0 ? length : length - 1));
  };
  const start = norm(key.items[1], step > 0 ? 0 : length - 1);
  const stop = norm(key.items[2], step > 0 ? length : -1);
  const out: number[] = [];
  for (let i = start; step > 0 ? i < stop : i > stop; i += step) out.push(i);
  return out;
}

export function getItem(interp: Interp, obj: Value, key: Value, node: PyNode, unpackCount?: number): Value {
  switch (obj.k) {
    case 'list':
    case 'tuple':
    case 'str': {
      const items = obj.k === 'str' ? [...obj.v] : obj.items;
      if (isSlice(key)) {
        const picked = sliceIndices(key, items.length).map((i) => items[i]);
        if (obj.k === 'str') return { k: 'str', v: (picked as string[]).join('') };
        return { k: obj.k, items: picked as Value[] };
      }
      const i = toNumber(key);
      if (i === undefined) return UNKNOWN;
      const item = items[i < 0 ? i + items.length : i];
      if (item === undefined) return UNKNOWN;
      return typeof item === 'string' ? { k: 'str', v: item } : item;
    }
    case 'dict': {
      // ModelOutput indexes by position too (`outputs[0]` is its first field that is not None: to_tuple()).
      const position = obj.modelOutput ? toNumber(key) : undefined;
      if (position !== undefined) return [...obj.map.values()][position < 0 ? position + obj.map.size : position]?.[1] ?? UNKNOWN;
      return obj.map.get(keyOf(key))?.[1] ?? UNKNOWN;
    }
    case 'hf':
      return hfModuleItem(obj, key, isSlice(key) ? (length) => sliceIndices(key, length) : undefined) ?? UNKNOWN;
    case 'range': {
      const i = toNumber(key);
      return i === undefined ? UNKNOWN : int(obj.start + i * obj.step);
    }
    case 'mod': {
      if (!obj.children) return UNKNOWN;
      const children = [...obj.children.entries()];
      if (isSlice(key)) {
        const picked = sliceIndices(key, children.length).map((i) => children[i]);
        return withProps(obj, { children: new Map(picked) });
      }
      if (obj.container === 'dict') return obj.children.get(String(key.k === 'str' ? key.v : '')) ?? UNKNOWN;
      const i = toNumber(key);
      if (i === undefined) return UNKNOWN;
      return children[i < 0 ? i + children.length : i]?.[1] ?? UNKNOWN;
    }
    case 'tensor':
      if (isArray(obj)) return arrayGetItem(obj, key) ?? { k: 'unknown', why: 'an index into a constant array that is not modelled' };
      return obj.framework === 'pytorch' && obj.id ? indexTensor(interp, obj, key, node) : obj;
    case 'splitres':
      return splitPart(interp, obj, toNumber(key), unpackCount);
    default:
      // An unknown keeps its reason through `cfg['model']`: the warning where it is used says why.
      return obj.k === 'unknown' && obj.why ? obj : UNKNOWN;
  }
}

/**
 * What a `for` or a comprehension walks: the items iterItems knows, and the parts of a split whose count is known
 * (`qkv.chunk(3, dim=-1)` walked by `[rearrange(t, …) for t in qkv]` or `map(…, qkv)`).
 */
export function iterate(interp: Interp, v: Value): Value[] | undefined {
  if (v.k === 'splitres') {
    const count = v.sections?.length ?? v.chunks;
    return count === undefined ? undefined : Array.from({ length: count }, (_, i) => splitPart(interp, v, i, count));
  }
  return iterItems(v);
}

export function setItem(interp: Interp, obj: Value, key: Value, value: Value): void {
  if (obj.k === 'list') {
    const i = toNumber(key);
    if (i !== undefined && obj.items[i < 0 ? i + obj.items.length : i] !== undefined) obj.items[i < 0 ? i + obj.items.length : i] = value;
  } else if (obj.k === 'dict') obj.map.set(keyOf(key), [key, value]);
  else if (isArray(obj)) {
    // A write that is not modelled leaves the values unknown (the shape stays): never stale values.
    if (!arraySetItem(obj, key, value)) delete (obj as TensorV).values;
  }
  else if (obj.k === 'mod' && obj.children && key.k === 'str') obj.children.set(key.v, value);
  else if (obj.k === 'mod' && obj.children) {
    const i = toNumber(key);
    const entry = i === undefined ? undefined : [...obj.children.keys()][i];
    if (entry !== undefined) obj.children.set(entry, value);
  }
}

/** `super().name`: the next definition of `name` after the method's own class in self's ancestry. */
export function superProxy(interp: Interp, scope: Scope, name: string): Value {
  const self = interp.lookup('__self__', scope);
  const owner = interp.lookup('__class__', scope);
  if (!self || self.k !== 'inst' || !owner || owner.k !== 'class') return UNKNOWN;
  const member = classLookup(self.cls, name, owner);
  if (member !== undefined) return bindMember(interp, self, member, owner.node);
  if (name === '__init__') {
    // The __init__ a @dataclass base generates: bind its fields from the arguments.
    const chain = mro(self.cls);
    const parent = chain.slice(chain.indexOf(owner) + 1).find((c): c is ClassV => c.k === 'class' && c.dataclass);
    if (parent) return native('super.__init__', (args, kwargs) => bindFields(self, parent, args, kwargs));
    return native('super.__init__', (args, kwargs, site) => libraryInit(interp, self, args, kwargs, site));
  }
  return isTorchModule(self) ? (transformersBaseAttr(interp, self, name) ?? torchBaseAttr(interp, self, name)) : UNKNOWN;
}

/** nn.Sequential / nn.ModuleList subclasses register their constructor arguments as children. */
export function libraryInit(interp: Interp, self: InstV, args: Value[], kwargs: Map<string, Value>, site: CallSite): Value {
  const base = libraryBase(self.cls);
  if (isPreTrainedModelBase(base)) return preTrainedInit(self, args, kwargs);
  if (isBuiltPartBase(base)) return builtPartInit(interp, self, args, kwargs, site);
  // A subclass of a built-in layer (`class LayerNorm2d(nn.LayerNorm)`): the layer it extends holds its
  // attributes and weights (`self.weight`, `self.normalized_shape`), and runs when it has no forward of its own.
  const layerType = base?.match(/^torch\.nn\.([A-Z]\w*)$/)?.[1];
  if (self.children && layerType && !['Module', 'Sequential', 'ModuleList', 'ModuleDict'].includes(layerType)) {
    self.attrs.set(BUILTIN_LAYER, constructTorchLayer(interp, layerType, args, kwargs, site));
    return NONE;
  }
  if (self.children && base === 'torch.nn.ModuleDict') {
    // torchvision's IntermediateLayerGetter: `super().__init__(layers)` with an OrderedDict of the backbone's children.
    const given = args[0] ?? kwargs.get('modules');
    const entries = namedEntries(given);
    if (given && !entries) interp.warn(site.node, `\`${interp.text(site.node).slice(0, 80)}\` registers modules the evaluator could not list; they are missing`, 'unknown-module-name');
    for (const [k, v] of entries ?? []) self.children.set(k, v);
    return NONE;
  }
  if (self.children && (base === 'torch.nn.Sequential' || base === 'torch.nn.ModuleList')) {
    const items = args.length === 1 && (args[0].k === 'list' || args[0].k === 'dict') ? args[0] : undefined;
    if (items?.k === 'dict') for (const [, [k, v]] of items.map) self.children.set(k.k === 'str' ? k.v : String(self.children.size), v);
    else for (const a of items?.k === 'list' ? items.items : args) self.children.set(String(self.children.size), a);
  }
  return NONE;
}

function bindFields(self: InstV, cls: ClassV, args: Value[], kwargs: Map<string, Value>): Value {
  const fields: Array<{ name: string; default?: Value }> = [];
  for (const c of [...mro(cls)].reverse()) if (c.k === 'class' && c.dataclass) fields.push(...c.fields);
  fields.forEach((f, i) => self.attrs.set(f.name, i < args.length ? args[i] : (kwargs.get(f.name) ?? f.default ?? UNKNOWN)));
  return NONE;
}
