/**
 * A script's model class on a transformers base, as DeepSpeedExamples' HelloDeepSpeed writes it:
 * `class RobertaMLMModel(RobertaPreTrainedModel)` around a RobertaModel it is given. PreTrainedModel is an nn.Module
 * whose constructor keeps the config and builds no layers (modeling_utils.py, PreTrainedModel.__init__), so the
 * subclass's own __init__ and forward are the whole model, read as any nn.Module's; the transformers models it holds
 * are read where it calls them (transformersCalls.ts). A subclass of a part WAP builds (HelloDeepSpeed's
 * `RobertaLMHead` subclass, a `RobertaClassificationHead` subclass: transformersParts.ts) is that part, its
 * `super().forward` the part's and its submodules (`self.dense`) the part's; other parts'
 * layers are built by transformers' code, which WAP does not run, so a call of one is said to lose its layers.
 */
import { libraryBase } from './access';
import type { Interp } from './interpreter';
import type { Diagnostic, SourceRange } from '../../core/ir';
import { NONE, UNKNOWN, type CallSite, type HfV, type InstV, type Value } from './values';
import { constructPart, partOf } from './transformersParts';
import { callBuiltPart } from './transformersCalls';
import { hfGraph } from './transformersModels';

const PRETRAINED_MODEL = /^transformers\.(\w+\.)*\w*PreTrainedModel$/;

/** Whether a library base is transformers' PreTrainedModel or a model family's (RobertaPreTrainedModel). */
export const isPreTrainedModelBase = (base: string | undefined): boolean => base !== undefined && PRETRAINED_MODEL.test(base);

/** Whether a library base is a transformers part WAP builds (RobertaLMHead, BertLayer: transformersParts.ts). */
export const isBuiltPartBase = (base: string | undefined): boolean => base !== undefined && base.startsWith('transformers.') && partOf(base.slice(base.lastIndexOf('.') + 1)) !== undefined;

/** Where a subclass of a built part keeps the part its `super().__init__(config)` built. */
const BUILT_PART = '__wap_hf_part__';

/** The part a subclass instance holds, if it subclasses one. */
export function heldPart(self: InstV): HfV | undefined {
  const part = self.attrs.get(BUILT_PART);
  return part?.k === 'hf' ? part : undefined;
}

/**
 * PreTrainedModel's methods a subclass's constructor calls that build nothing WAP prices: weight initialisation and
 * tying (`post_init`, `init_weights`, `tie_weights`), which change values, not shapes.
 */
const INITIALISERS = new Set(['post_init', 'init_weights', 'tie_weights', '_init_weights', '_backward_compatibility_gradient_checkpointing']);

/** `super().__init__(config)` of a PreTrainedModel subclass: `self.config` is the config, as transformers sets it. */
export function preTrainedInit(self: InstV, args: Value[], kwargs: Map<string, Value>): Value {
  const config = args[0] ?? kwargs.get('config');
  if (config) self.attrs.set('config', config);
  return NONE;
}

/**
 * `super().__init__(config)` of a subclass of a part WAP builds (HelloDeepSpeed's `RobertaLMHead` subclass): the part,
 * kept on the instance; a config it cannot read is said at the call.
 */
export function builtPartInit(interp: Interp, self: InstV, args: Value[], kwargs: Map<string, Value>, site: CallSite): Value {
  const base = libraryBase(self.cls)!;
  const part = constructPart(base.slice(base.lastIndexOf('.') + 1), args, kwargs, site);
  if (part && 'error' in part) interp.warnAt(site.range, `${part.error}: ${self.cls.name}'s layers are missing`, 'unread-hf-part');
  else if (part) self.attrs.set(BUILT_PART, part);
  return NONE;
}

/**
 * transformers' own attributes on a subclass, undefined for names it leaves to nn.Module: PreTrainedModel's
 * initialisers; a built part's forward (`super().forward(features)`) and its submodules (`self.decoder`).
 */
export function transformersBaseAttr(interp: Interp, self: InstV, name: string): Value | undefined {
  const base = libraryBase(self.cls);
  if (isPreTrainedModelBase(base)) return INITIALISERS.has(name) ? { k: 'native', name, fn: () => NONE } : undefined;
  const part = heldPart(self);
  if (!part?.module) return undefined;
  if (name === 'forward') return { k: 'native', name, fn: (args, kwargs, site) => callBuiltPart(interp, part, args, kwargs, site, interp.graph?.paths.get(self)) };
  const path = `${part.module.path}.${name}`;
  const root = part.module.root;
  if (!hfGraph(root).layers.some((l) => l.name === path || l.name.startsWith(`${path}.`))) return undefined;
  // The submodule is the subclass's own (`head.dense`, as torch names it), not a model's that holds it.
  const submodule: HfV = { ...root, what: 'module', module: { root, path, own: true } };
  const held = interp.graph?.paths.get(self);
  if (held !== undefined) interp.graph!.paths.set(submodule, held ? `${held}.${name}` : name);
  return submodule;
}

/**
 * Calling an instance of a script's subclass of a transformers part WAP does not build (`BartClassificationHead`):
 * its layers are built in transformers' code, so they and the layers after the call are missing, said at the call.
 * Undefined when the class has no such base.
 */
export function callUnreadPart(interp: Interp, inst: InstV, site: CallSite): Value | undefined {
  const part = unreadLibraryBase(libraryBase(inst.cls));
  if (!part || isPreTrainedModelBase(libraryBase(inst.cls)) || isBuiltPartBase(libraryBase(inst.cls))) return undefined;
  const path = interp.graph?.paths.get(inst);
  interp.warnAt(site.range, `${path ? `${path} (${inst.cls.name})` : inst.cls.name} subclasses transformers' ${part}, whose layers transformers' own code builds and WAP does not read: it and the layers after it are missing. Write it with torch.nn, or use a transformers model class WAP builds from its config`, 'unread-hf-part');
  return UNKNOWN;
}

/**
 * transformers' model classes and their parts are nn.Modules WAP builds from their configs (the Hugging Face
 * catalogue: `RobertaModel(RobertaConfig(…))`), never as a base class whose constructor and forward live in
 * transformers' own code. A script's subclass of one (`class MyHead(BartClassificationHead)`) is therefore not
 * read, and a file with no other model says so; PreTrainedModel, which builds no layers, is read as nn.Module, and a
 * subclass of a part WAP builds (transformersParts.ts) as that part.
 */
const TRANSFORMERS_MODEL_BASE = /^transformers\.((modeling_utils\.)?PreTrainedModel|\w*PreTrainedModel|models\.\w+\.modeling_\w+\.[A-Z]\w*|[A-Z]\w*(Model|For[A-Z]\w+))$/;

export function unreadLibraryBase(base: string | undefined): string | undefined {
  if (base === undefined || isPreTrainedModelBase(base) || isBuiltPartBase(base)) return undefined;
  return TRANSFORMERS_MODEL_BASE.test(base) && !base.endsWith('Output') ? base.replace(/^.*\./, '') : undefined;
}

/** The note a file with no model carries for its classes that subclass a transformers model class. */
export function unreadBaseNote(classes: ReadonlyArray<{ name: string; base: string; range: SourceRange }>): Diagnostic | undefined {
  const first = classes[0];
  if (!first) return undefined;
  const listed = classes.map((c) => `${c.name} subclasses transformers' ${c.base}`).join('; ');
  const message = `${listed}: WAP builds transformers' models from their configs (RobertaModel(RobertaConfig(…)), AutoModelForCausalLM.from_config(…)), not as base classes of the script's own, so ${classes.length === 1 ? 'its' : 'their'} layers are not read. Analyse the model as a transformers class with its config, or write it with torch.nn`;
  const r = first.range;
  return { severity: 'warning', code: 'unread-model-base', message, line: r.line, column: r.column, endLine: r.endLine, endColumn: r.endColumn };
}
