/**
 * What a script walks a torch module with: `model.parameters()`, `model.named_parameters()`, `model.modules()` and
 * `model.named_modules()`, as lists in torch's order and under torch's names (a tied weight once, under its first
 * name: freezeLoops.ts `parameterGroups`, which the freeze loops read names from too).
 *
 * Every listed parameter remembers the model it was listed from (through the expression: `model.fc.parameters()`
 * is `model`'s, whose head alone is stepped). An optimizer built from them then says which model
 * the run trains (optimizerModels.ts), however the script sorts them first: minGPT's and nanoGPT's
 * `configure_optimizers` walk `self.named_modules()` and `m.named_parameters()` to split weight decay by name, then
 * build `torch.optim.AdamW([{"params": [param_dict[pn] for pn in sorted(decay)], …}, …])` from
 * `param_dict = {pn: p for pn, p in self.named_parameters()}`. While these listings were unknown, such an optimizer
 * was tied to no model, and a script that trains its model only through one had "no model found".
 *
 * The tensors are not modelled: a parameter is a `param` value whose requires_grad writes reach the layer that holds
 * it (frozenParameters.ts). A Hugging Face model's parameters are not listed (its graph is built later, from its
 * config), nor a listing WAP cannot give whole (`parameters(recurse=False)`): those stay unknowns that still
 * remember the model.
 */
import { joinParameterName } from '../freezing/parameterNames';
import { field, type PyNode } from './ast';
import { parameterGroups } from './freezeLoops';
import { descendants } from './torchModuleValues';
import { isModule, isTorchModule } from './torchRuntime';
import { native, str, truthy, type InstV, type ModV, type Value } from './values';

/** The module whose listing a value (a parameter, or the listing itself) came from. */
const listedFrom = new WeakMap<Value, Value>();
/** The module that was listed (`model.fc` of `model.fc.parameters()`), where it is a part of the model above. */
const listedPart = new WeakMap<Value, Value>();

export const listingOwner = (v: Value): Value | undefined => listedFrom.get(v);
export const listingPart = (v: Value): Value | undefined => listedPart.get(v);

/**
 * The module a submodule was last read from as an attribute, the expression that read it (`model.fc`), and the name
 * that read was bound to, where a plain assignment bound it (`fc = model.fc`).
 */
const reachedFrom = new WeakMap<Value, { parent: Value; via: PyNode; alias?: string }>();

/** `parent.<name>` read `child` at `via`: remembered where both are torch modules, for modelListedFrom. Returns `child`. */
export function noteSubmodule(parent: Value, child: Value, via: PyNode): Value {
  if (child !== parent && isModule(parent) && isModule(child)) reachedFrom.set(child, { parent, via });
  return child;
}

/**
 * `name = <right>` bound `value`: where `right` is the attribute read that reached the submodule (`fc = model.fc`),
 * the name is an alias of that read, which modelListedFrom climbs through as through the read itself.
 */
export function noteSubmoduleAlias(value: Value, right: PyNode, name: string): void {
  const reached = reachedFrom.get(value);
  if (reached && reached.via === right) reached.alias = name;
}

/**
 * The model a listing is taken from: `SGD(model.fc.parameters())` (linear probing) steps a part of `model`, which is
 * the model trained, not a model of one Linear. Climbed only along the expression itself (`model.fc` is the object of
 * `model.fc.parameters`) or a name bound to that very read (`fc = model.fc; SGD(fc.parameters())`), so a module read
 * from another elsewhere (`ema.module` handed on through a function) stays its own.
 */
function modelListedFrom(module: Value, access: PyNode, textOf: (n: PyNode) => string): Value {
  let owner = module;
  let expr = field(access, 'object');
  for (let depth = 0; expr && depth < 40; depth++) {
    const reached = reachedFrom.get(owner);
    const aliased = expr.type === 'identifier' && reached?.alias !== undefined && textOf(expr) === reached.alias;
    if (!reached || (reached.via !== expr && !aliased)) break;
    owner = reached.parent;
    expr = field(reached.via, 'object');
  }
  return owner;
}

const LISTINGS = new Set(['parameters', 'named_parameters', 'modules', 'named_modules']);

/** `obj.<name>` where it is one of the listings above on a torch module (or a Hugging Face model's parameters); else undefined. */
export function moduleListing(obj: Value, name: string, access: PyNode, textOf: (n: PyNode) => string): Value | undefined {
  if (!LISTINGS.has(name)) return undefined;
  const isParameters = name === 'parameters' || name === 'named_parameters';
  if (obj.k === 'hf' && obj.what === 'model' && isParameters) return native(name, () => unlisted(obj, name));
  if (obj.k !== 'mod' && !isTorchModule(obj)) return undefined;
  const root = obj as ModV | InstV;
  if (name === 'modules') return native(name, () => ({ k: 'list', items: descendants(root) }));
  if (name === 'named_modules') return native(name, () => ({ k: 'list', items: namedModules(root).map(([path, m]) => pair(str(path), m)) }));
  const model = modelListedFrom(root, access, textOf);
  return native(name, (_args, kwargs) => {
    const recurse = kwargs.get('recurse');
    if (recurse && truthy(recurse) !== true) return unlisted(model, name);
    const listed = listParameters(root, model);
    const items = name === 'parameters' ? listed.map(([, p]) => p) : listed.map(([n, p]) => pair(str(n), p));
    if (root !== model) for (const v of [...items, ...listed.map(([, p]) => p)]) listedPart.set(v, root);
    const list = remember({ k: 'list', items }, model);
    if (root !== model) listedPart.set(list, root);
    return list;
  });
}

function remember<V extends Value>(v: V, owner: Value): V {
  listedFrom.set(v, owner);
  return v;
}

const pair = (a: Value, b: Value): Value => ({ k: 'tuple', items: [a, b] });

function unlisted(owner: Value, name: string): Value {
  return remember({ k: 'unknown', why: `${name}() of a model whose parameters WAP does not list` }, owner);
}

/** (name, parameter) in torch's order; each parameter a fresh value that remembers `model`. */
function listParameters(root: ModV | InstV, model: Value): Array<[string, Value]> {
  const out: Array<[string, Value]> = [];
  for (const group of parameterGroups(root)) {
    group.own.forEach((own, i) => out.push([group.names[i], remember({ k: 'param', owner: group.module, ...(own ? { name: own } : {}) }, model)]));
  }
  return out;
}

/** (path, module) for the module and every module under it, each once, in registration order (torch's named_modules). */
function namedModules(root: Value): Array<[string, Value]> {
  const out: Array<[string, Value]> = [];
  const seen = new Set<Value>();
  const visit = (m: Value, path: string, depth: number): void => {
    if (depth > 40 || seen.has(m)) return;
    seen.add(m);
    out.push([path, m]);
    const children = m.k === 'inst' || m.k === 'mod' ? m.children : undefined;
    for (const [key, child] of children ?? []) if (isModule(child)) visit(child, joinParameterName(path, key), depth + 1);
  };
  visit(root, '', 0);
  return out;
}
