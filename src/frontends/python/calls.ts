/**
 * Calling values: user functions and methods, classes (instantiation with
 * __init__, dataclasses), library stand-ins, modules and layers.
 */
import { noteDatasetSample } from './datasetSamples';
import { classLookup, isTorchModuleBase, libraryBase, libraryInit, methodOwner, mro } from './access';
import type { Interp } from './interpreter';
import { callKerasLayer, callKerasModel } from './kerasRuntime';
import { callLibrary } from './library';
import { opaqueCall } from './opaqueCalls';
import { callModule, isTorchModule } from './torchRuntime';
import { callHfModel } from './transformersCalls';
import { callUnreadPart, isBuiltPartBase } from './transformersBases';
import { UNKNOWN, type CallSite, type ClassV, type FuncV, type InstV, type Value } from './values';

export function callValue(interp: Interp, callee: Value, args: Value[], kwargs: Map<string, Value>, site: CallSite): Value {
  interp.tick();
  switch (callee.k) {
    case 'native':
      return callee.fn(args, kwargs, site);
    case 'func':
      return interp.callFunction(callee, args, kwargs);
    case 'bound':
      if (callee.fn.k === 'native') return callee.fn.fn([callee.self, ...args], kwargs, site);
      return callMethod(interp, callee.fn, callee.self, args, kwargs);
    case 'class':
      noteDatasetSample(interp, callee, args, kwargs, site);
      return instantiate(interp, callee, args, kwargs, site);
    case 'lib': {
      const result = callLibrary(interp, callee.path, args, kwargs, site);
      return result.k === 'unknown' ? opaqueCall(interp, callee, args, kwargs, site, result) : result;
    }
    case 'mod':
      return callModule(interp, callee, args, kwargs, site);
    case 'inst': {
      if (isTorchModule(callee)) return callModule(interp, callee, args, kwargs, site);
      const base = libraryBase(callee.cls);
      if (base?.startsWith('keras.')) return callKerasModel(interp, callee, args, kwargs, site);
      const part = callUnreadPart(interp, callee, site);
      if (part) return part;
      const call = classLookup(callee.cls, '__call__');
      return call?.k === 'func' ? callMethod(interp, call, callee, args, kwargs) : UNKNOWN;
    }
    case 'hf':
      return callHfModel(interp, callee, args, kwargs, site);
    case 'klayer':
      return callKerasLayer(interp, callee, args, kwargs, site);
    case 'kmodel':
      return callKerasModel(interp, callee, args, kwargs, site);
    case 'unknown':
      return opaqueCall(interp, callee, args, kwargs, site);
    default:
      return UNKNOWN;
  }
}

export function callMethod(interp: Interp, fn: FuncV, self: Value, args: Value[], kwargs: Map<string, Value>): Value {
  const extra = new Map<string, Value>([['__self__', self]]);
  const owner = methodOwner.get(fn);
  if (owner) extra.set('__class__', owner);
  return interp.callFunction(fn, [self, ...args], kwargs, extra);
}

const CONTAINERS: Readonly<Record<string, InstV['container']>> = { 'torch.nn.Sequential': 'sequential', 'torch.nn.ModuleList': 'list', 'torch.nn.ModuleDict': 'dict' };

function instantiate(interp: Interp, cls: ClassV, args: Value[], kwargs: Map<string, Value>, site: CallSite): Value {
  const base = libraryBase(cls);
  if (base && !isTorchModuleBase(base) && !base.startsWith('keras.') && !base.startsWith('object')) {
    // Enum, NamedTuple, typing classes: nothing we model.
    if (/^(enum|typing|collections)\./.test(base)) return UNKNOWN;
  }
  const inst: InstV = { k: 'inst', cls, attrs: new Map(), range: site.range };
  if (isTorchModuleBase(base)) {
    inst.children = new Map();
    inst.attrs.set('training', { k: 'bool', v: true });
    inst.container = CONTAINERS[base!];
  }
  if (cls.dataclass) bindDataclassFields(interp, inst, args, kwargs);
  const init = classLookup(cls, '__init__');
  if (init?.k === 'func') callMethod(interp, init, inst, args, kwargs);
  else if (!cls.dataclass && base) {
    // No __init__ in the file: the library's own constructor (nn.Sequential subclasses register their args; a
    // subclass of a transformers part WAP builds, `class Head(RobertaClassificationHead)`, builds the part).
    if (/^torch\.nn\.[A-Z]/.test(base) || isBuiltPartBase(base)) libraryInit(interp, inst, args, kwargs, site);
    else registerLibraryArgs(inst, base, args);
  }
  const post = classLookup(cls, '__post_init__');
  if (post?.k === 'func') callMethod(interp, post, inst, [], new Map());
  return inst;
}

function registerLibraryArgs(inst: InstV, base: string, args: Value[]): void {
  if (!inst.children || (base !== 'torch.nn.Sequential' && base !== 'torch.nn.ModuleList')) return;
  for (const a of args) inst.children.set(String(inst.children.size), a);
}

function bindDataclassFields(interp: Interp, inst: InstV, args: Value[], kwargs: Map<string, Value>): void {
  const all: Array<{ name: string; default?: Value }> = [];
  for (const c of [...mro(inst.cls)].reverse()) if (c.k === 'class' && c.dataclass) all.push(...c.fields);
  all.forEach((f, i) => {
    const v = i < args.length ? args[i] : kwargs.get(f.name) ?? f.default ?? UNKNOWN;
    inst.attrs.set(f.name, v);
  });
  void interp;
}
