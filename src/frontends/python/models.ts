/**
 * Which models a file defines, and their graphs. After evaluating the module
 * (never running it), the candidates are: module-level instances (`model =
 * GPT(GPTConfig())`), public factories callable without arguments (`def vgg16(**kw)`),
 * and nn.Module / keras.Model classes buildable with defaults that are not parts of
 * another reported model. PyTorch graphs come from evaluating forward on a
 * symbolic input; Keras graphs from the layer calls already recorded.
 */
import { resolve as resolvePath } from 'node:path';
import type { AnalyzeOptions, Diagnostic, FrontendResult, ModelSpec, SourceRange } from '../../core/ir';
import { field, foreignFiles, namedChildren, rangeOf, type ConvertedTree, type PyNode } from './ast';
import { classLookup, getAttr, isTorchModuleBase, iterate, libraryBase, mro, setAttr } from './access';
import { attrBuiltins, callingBuiltins } from './builtins';
import { callValue } from './calls';
import { Graph } from './graph';
import { Interp } from './interpreter';
import { ModuleLoader, type ImportContext } from './modules';
import { isKerasModelInstance } from './kerasRuntime';
import { isBareLayer, isModelValue, trainedModel } from './trainedModel';
import { runMainBlocks, untrainedMainNote } from './scriptMain';
import { hfSpec } from './transformersModels';
import { ownDefaultConfig, ownDefaultNote, requiredArguments, skippedClassesNote, skippedWhy, type OwnDefault, type SkippedClass } from './classDefaults';
import { unreadBaseNote, unreadLibraryBase } from './transformersBases';
import { guarded, kerasSpec, kerasSubclassSpec, torchSpec, type Candidate } from './candidateSpecs';
import { unmodelledFreezes } from './frozenParameters';
import { isMainGuard, moduleScopeStatements } from './moduleScope';
import { rewrittenGlobals } from './rewrittenGlobals';
import { scriptBuiltins } from './scriptExec';
import { noteModuleSequence, withRunSequence } from './runSequence';
import { readRunBatch, withRunBatch } from './runBatch';
import { withRunProcessCounts } from './runProcessCounts';
import { withRunSample } from './datasetSamples';
import { withRunPrecision } from './runPrecision';
import { loraOf } from './peftCalls';
import { withLoraAdapters } from '../peft/lora';
import { hfTrainedGraph } from './transformersModules';
import { NONE, type CallSite, type ClassV, type FuncV, type Scope, type Value } from './values';
import { noteNextLoader } from './runLoaderBatch';


/**
 * A model the run trains, named by its class, as the class read at its defaults would be: it replaces that candidate
 * (the run's arguments win) and takes its range. A name another candidate holds stays the function's.
 */
function nameByClass(candidates: Candidate[], candidate: Candidate): void {
  // A single layer the run trains (the DDP tutorial's nn.Linear) is named by its type, as a class instance by its class;
  // a container (nn.Sequential) keeps the function's name.
  const root = candidate.root;
  const className = root.k === 'inst' ? root.cls.name : isBareLayer(root) ? root.type : undefined;
  if (!className) return;
  const same = candidates.findIndex((c) => c.kind === 'class' && c.name === className);
  if (same >= 0) {
    candidate.range = candidates[same]!.range;
    candidates.splice(same, 1);
  }
  if (!candidates.some((c) => c !== candidate && c.name === className)) candidate.name = className;
}

/** Info diagnostics that say a guess decided a value: kept wherever they are raised. */
const GUESSES = new Set(['guessed-branch', 'gpu-query']);

export function readModels(tree: ConvertedTree, imports?: ImportContext, fileName?: string, givenInput: AnalyzeOptions = {}): FrontendResult {
  const interp = new Interp(tree.source, tree.root.lines);
  interp.file = fileName;
  interp.mainRoot = tree.root;
  interp.givenInput = givenInput;
  if (imports) {
    interp.loader = new ModuleLoader(interp, imports);
    interp.loader.registerMain(interp.globals);
  }
  for (const [name, value] of attrBuiltins(
    (obj, name) => getAttr(interp, obj, name, tree.root),
    (obj, name, v) => setAttr(interp, obj, name, v, tree.root),
  ))
    interp.globals.vars.set(name, value);
  const dunder = (obj: Value, name: string): Value | undefined => (obj.k === 'inst' && !obj.children && classLookup(obj.cls, name) ? getAttr(interp, obj, name, tree.root) : undefined);
  const drawn = (iterable: Value | undefined, site: CallSite) => noteNextLoader(interp, iterable, site);
  for (const [name, value] of callingBuiltins((fn, args, site) => interp.callValue(fn, args, new Map(), site), (v) => iterate(interp, v), dunder, drawn)) interp.globals.vars.set(name, value);
  for (const [name, value] of scriptBuiltins(interp)) interp.globals.vars.set(name, value);
  // The analysed file runs as a script would: its classes' `__module__` is '__main__'.
  if (!interp.globals.vars.has('__name__')) interp.globals.vars.set('__name__', { k: 'str', v: '__main__' });
  // And knows where it is, as an absolute path (Python ≥ 3.9 makes the main module's `__file__` absolute):
  // `sys.path.append(os.path.join(os.path.dirname(__file__), '..'))` (sysPath.ts).
  if (interp.file && !interp.globals.vars.has('__file__')) interp.globals.vars.set('__file__', { k: 'str', v: resolvePath(interp.file) });

  const moduleGraph = new Graph('keras');
  interp.graph = moduleGraph;
  const fileDiagnostics: Diagnostic[] = [...tree.parseErrors];
  guarded(interp, () => interp.exec(tree.root, interp.globals), fileDiagnostics, rangeOf(tree.root));
  interp.loader?.finishMain();
  const mainPart = runMainBlocks(interp);
  const trainedInMain = mainPart?.trained;

  const definitions = topLevelDefinitions(interp, tree.root);
  const candidates: Candidate[] = [];
  const seen = new Set<Value>();
  const trainedRoots = new Set<Value>();

  // 1. Module-level instances, named after the variable.
  for (const [name, range] of definitions.assignments) {
    const now = interp.globals.vars.get(name);
    const v = now?.k === 'unknown' ? interp.heldObjects.get(name) : now;
    // A single layer is a model where the script trains it (the DDP tutorial's `torch.nn.Linear(20, 1)`).
    const trainedLayer = isBareLayer(v) && interp.trainedModels.includes(v);
    if (!v || !(trainedLayer || isModelValue(v)) || seen.has(v)) continue;
    seen.add(v);
    candidates.push({ name, range, root: v, kind: 'instance', graphDiagnostics: moduleGraph.diagnostics });
  }
  // 2. Public factories callable without arguments.
  const onlyTrained: Candidate[] = [];
  for (const [name, range] of definitions.functions) {
    const fn = interp.globals.vars.get(name);
    if (name.startsWith('_') || fn?.k !== 'func' || requiresArgs(interp, fn, 0)) continue;
    const trainedBefore = interp.trainedModels.length;
    const built = build(interp, () => interp.callFunction(fn, [], new Map()), fileDiagnostics, range);
    // `def main(): model = …; Trainer(model=model).train()` returns nothing: the model it trains is its model.
    const trained = trainedModel(interp.trainedModels.slice(trainedBefore));
    const root = isModelValue(built.value) ? built.value : trained;
    if (trained) trainedRoots.add(trained);
    if (root && !seen.has(root)) {
      seen.add(root);
      const candidate: Candidate = { name, range, root, kind: 'factory', graphDiagnostics: built.graph.diagnostics };
      candidates.push(candidate);
      if (root === trained && !isModelValue(built.value)) onlyTrained.push(candidate);
    }
  }
  // 3. Classes buildable with defaults, or with the default config the class gives itself (classDefaults.ts).
  const skipped: SkippedClass[] = [];
  const unreadBases: Array<{ name: string; base: string; range: SourceRange }> = [];
  for (const [name, range] of definitions.classes) {
    const cls = interp.globals.vars.get(name);
    if (cls?.k !== 'class' || name.startsWith('_')) continue;
    const base = libraryBase(cls);
    const unread = unreadLibraryBase(base);
    if (unread) unreadBases.push({ name, base: unread, range });
    if (!base || !(isTorchModuleBase(base) || base === 'keras.Model')) continue;
    const required = requiredArguments(interp, classLookup(cls, '__init__'));
    // The config is read on a budget of its own, as a class build is.
    const read: { own?: OwnDefault } = {};
    if (required.length) build(interp, () => ((read.own = ownDefaultConfig(interp, cls, required)), NONE), fileDiagnostics, range);
    const own = read.own;
    if (required.length && (!own || !('config' in own))) {
      skipped.push({ name, cls, range, why: skippedWhy(required, own) });
      continue;
    }
    const args = own && 'config' in own ? [own.config] : [];
    const built = build(interp, () => callValue(interp, cls, args, new Map(), interp.site(tree.root)), fileDiagnostics, range);
    if (own && 'config' in own) built.graph.diagnostics.push(ownDefaultNote(name, own.method, required[0]!, range));
    if (isModelValue(built.value)) candidates.push({ name, range, root: built.value, kind: 'class', graphDiagnostics: built.graph.diagnostics });
  }

  // A function that trains a model and returns nothing (`def main(): model = Net(width=2048); …`) is named by the
  // model's class, as the __main__ part's model is below, and replaces that class read at its defaults.
  for (const c of onlyTrained) nameByClass(candidates, c);

  // 4. Nothing in the file builds a model: offer the models it imports (`from torchvision.models import vit_b_16`).
  // A function that trains one (`main()` handing it to an optimizer, a Trainer, DDP) builds it: an imported class at
  // its defaults is then not the run's model (below, with 5).
  // 5. The model the `__main__` part trains (trl's sft.py parses its arguments there and calls main(…); llm.c's
  // train_gpt2.py builds its GPT there) is the run's: ahead of a class buildable with its defaults (llm.c's NewGELU,
  // then only a part of it) and of the imports at their defaults.
  const runModelFound = candidates.some((c) => c.kind === 'instance' || (c.kind === 'factory' && trainedRoots.has(c.root)));
  // A model the `__main__` part builds without WAP seeing it trained is read only where the file has no other.
  const builtInMain = !trainedInMain && candidates.length === 0 ? mainPart?.built : undefined;
  const mainModel = trainedInMain ?? builtInMain?.root;
  if (!runModelFound && mainPart && mainModel && !seen.has(mainModel)) {
    seen.add(mainModel);
    const candidate: Candidate = { name: '__main__', range: mainPart.range, root: mainModel, kind: 'factory', graphDiagnostics: [] };
    candidates.unshift(candidate);
    nameByClass(candidates, candidate);
    if (builtInMain) candidate.graphDiagnostics = [untrainedMainNote(candidate.name, builtInMain.name, mainPart.range)];
  } else if (!runModelFound) candidates.push(...importedCandidates(interp, definitions.imported, fileDiagnostics, seen));

  const parts = new Set<ClassV>();
  for (const c of candidates) collectParts(c.root, c.kind !== 'class', parts);
  const reported = candidates.filter((c) => c.kind !== 'class' || (c.root.k === 'inst' && !parts.has(c.root.cls)));
  // Where only classes read at their defaults are left, the ones not read may be the file's model: said on each.
  const onlyClasses = reported.every((c) => c.kind === 'class');
  const skippedNote = onlyClasses ? skippedClassesNote(skipped.filter((s) => !parts.has(s.cls))) : undefined;

  const models: ModelSpec[] = [];
  const runBatch = readRunBatch(interp, tree.root);
  noteModuleSequence(interp);
  for (const c of reported) {
    const spec =
      c.root.k === 'hf'
        ? hfSpec(c.root, c.name, c.graphDiagnostics, hfTrainedGraph(c.root))
        : c.root.k === 'kmodel' ? kerasSpec(interp, c, fileDiagnostics) : isKerasModelInstance(c.root) ? kerasSubclassSpec(interp, c, c.root) : torchSpec(interp, c, fileDiagnostics);
    const lora = loraOf(c.root);
    if (spec && (spec.layers.length > 0 || c.kind !== 'class')) models.push(withRunProcessCounts(withRunSample(interp, withRunBatch(withRunPrecision(interp, withRunSequence(interp, lora ? withLoraAdapters(spec, lora) : spec)), runBatch)), interp));
  }
  // Freezing the evaluator could not attribute, values the run rewrites, and the command line argparse was read with change what any plan of this file's models means: each model carries them.
  // A syntax error in the file leaves every model read from it partial: Python would not run any of it.
  const unparsed = tree.parseErrors.slice(0, 1).map((d): Diagnostic => ({ ...d, incomplete: true }));
  const carried = [...unparsed, ...(skippedNote ? [skippedNote] : []), ...unmodelledFreezes(interp, tree), ...rewrittenGlobals(interp, tree.root), ...interp.runNotes];
  for (const spec of models) spec.diagnostics = [...(spec.diagnostics ?? []), ...carried];
  if (models.length === 0) {
    fileDiagnostics.push(...carried);
    const unreadNote = unreadBaseNote(unreadBases);
    if (unreadNote) fileDiagnostics.push(unreadNote);
  }
  fileDiagnostics.push(...interp.diagnostics);
  // Module-level warnings must not vanish when no instance model carries them, nor a guess that decided a value the
  // classes may be built with (`WIDTH = 512 if os.environ.get('LARGE') else 256`).
  if (!candidates.some((c) => c.graphDiagnostics === moduleGraph.diagnostics)) fileDiagnostics.push(...moduleGraph.diagnostics.filter((d) => d.severity !== 'info' || GUESSES.has(d.code ?? '')));
  if (interp.loader) fileDiagnostics.push(...interp.loader.diagnostics);
  const framework = interp.imports.keras && !interp.imports.torch ? 'keras' : (models[0]?.framework ?? 'pytorch');
  return { framework, models, diagnostics: fileDiagnostics };
}

function build(interp: Interp, make: () => Value, diagnostics: Diagnostic[], range: SourceRange): { value: Value | undefined; graph: Graph } {
  const graph = new Graph('keras');
  interp.graph = graph;
  interp.steps = 0;
  interp.kerasNames = new Map();
  let value: Value | undefined;
  guarded(interp, () => void (value = make()), diagnostics, range);
  return { value, graph };
}

function requiresArgs(interp: Interp, fn: FuncV, skip: number): boolean {
  return interp
    .params(fn.node)
    // Hydra supplies a @hydra.main function's config.
    .slice(skip + (fn.hydraMain ? 1 : 0))
    .some((p) => (p.kind === 'pos' || p.kind === 'kwonly') && !p.defaultNode);
}

function topLevelDefinitions(interp: Interp, root: PyNode) {
  const assignments = new Map<string, SourceRange>();
  const functions = new Map<string, SourceRange>();
  const classes = new Map<string, SourceRange>();
  const imported = new Map<string, SourceRange>();
  const branchAssigned = new Map<string, SourceRange>();
  const statements = (n: PyNode): PyNode[] => n.children.flatMap((c) => (c.type === 'ERROR' ? statements(c) : [c]));
  for (const stmt of statements(root)) {
    const def = stmt.type === 'decorated_definition' ? field(stmt, 'definition') : stmt;
    const name = def && field(def, 'name');
    if (def?.type === 'function_definition' && name) functions.set(interp.text(name), rangeOf(stmt));
    else if (def?.type === 'class_definition' && name) classes.set(interp.text(name), rangeOf(stmt));
    else if (stmt.type === 'import_from_statement') {
      for (const n of namedChildren(stmt)) {
        if (n.field !== 'name') continue;
        imported.set(interp.text(n.type === 'aliased_import' ? (field(n, 'alias') ?? n) : n), rangeOf(n));
      }
    }
    else if (stmt.type === 'expression_statement') for (const name of assignedNames(interp, stmt)) assignments.set(name, rangeOf(stmt));
    else if (BRANCHING.has(stmt.type)) assignedInBranches(interp, stmt, branchAssigned);
  }
  // A name assigned at the top level is ranged there (its last assignment); one assigned only in a branch, at its first.
  for (const [name, range] of branchAssigned) if (!assignments.has(name)) assignments.set(name, range);
  return { assignments, functions, classes, imported };
}

/** Statements whose blocks run in the module's own scope: a script builds its model in `if init_from == 'scratch':`. */
const BRANCHING = new Set(['if_statement', 'try_statement', 'with_statement']);

/** The names an assignment statement binds: `model = …`, and each name of `model, optimizer = accelerator.prepare(…)`. */
function assignedNames(interp: Interp, stmt: PyNode): string[] {
  const a = namedChildren(stmt)[0];
  const left = a?.type === 'assignment' ? field(a, 'left') : undefined;
  if (left?.type === 'identifier') return [interp.text(left)];
  if (left && ['pattern_list', 'tuple_pattern', 'list_pattern'].includes(left.type)) return namedChildren(left).filter((n) => n.type === 'identifier').map((n) => interp.text(n));
  return [];
}

/** Assignments inside a module-level if/try/with (nested ones too), in source order; not the `__main__` part, run apart. */
function assignedInBranches(interp: Interp, stmt: PyNode, out: Map<string, SourceRange>): void {
  if (isMainGuard(stmt, (n) => interp.text(n))) return;
  for (const s of moduleScopeStatements(stmt, (n) => isMainGuard(n, (c) => interp.text(c)))) {
    if (s.type === 'expression_statement') for (const name of assignedNames(interp, s)) if (!out.has(name)) out.set(name, rangeOf(s));
  }
}

/**
 * Builders and model classes imported from followed modules, built with their
 * defaults (`def resnet50(*, weights=None, progress=True, **kwargs)`, `GPT`
 * when its config is fully defaulted). Named as imported, ranged on the import.
 */
function importedCandidates(interp: Interp, imported: Map<string, SourceRange>, fileDiagnostics: Diagnostic[], seen: Set<Value>): Candidate[] {
  const out: Candidate[] = [];
  if (!interp.loader) return out;
  for (const [name, range] of imported) {
    const v = interp.globals.vars.get(name);
    if (name.startsWith('_') || !v || (v.k !== 'func' && v.k !== 'class') || !foreignFiles.has(v.node.lines)) continue;
    if (v.k === 'func') {
      if (requiresArgs(interp, v, 0)) continue;
      const built = build(interp, () => interp.callFunction(v, [], new Map()), fileDiagnostics, range);
      if (isModelValue(built.value) && !seen.has(built.value)) {
        seen.add(built.value);
        out.push({ name, range, root: built.value, kind: 'factory', graphDiagnostics: built.graph.diagnostics });
      }
      continue;
    }
    const base = libraryBase(v);
    if (!base || !(isTorchModuleBase(base) || base === 'keras.Model')) continue;
    const init = classLookup(v, '__init__');
    let args: Value[] = [];
    if (init?.k === 'func' && requiresArgs(interp, init, 1)) {
      // `GPT(config)` with a fully defaulted `GPTConfig` beside it: built as `GPT(GPTConfig())`.
      // The config is built on a budget of its own: the script's own statements may have spent the file's.
      const config = build(interp, () => defaultedConfigFor(interp, init) ?? NONE, fileDiagnostics, range).value;
      if (!config || config.k === 'none') continue;
      args = [config];
    }
    const built = build(interp, () => callValue(interp, v, args, new Map(), { node: v.node, range, calleeText: name }), fileDiagnostics, range);
    if (isModelValue(built.value)) out.push({ name, range, root: built.value, kind: 'factory', graphDiagnostics: built.graph.diagnostics });
  }
  return out;
}

/**
 * A config instance for a constructor whose one required parameter is a
 * config (`def __init__(self, config)`): the dataclass named `…Config` in the
 * constructor's module when every field has a default. Undefined otherwise.
 */
function defaultedConfigFor(interp: Interp, init: FuncV): Value | undefined {
  const required = interp.params(init.node).slice(1).filter((p) => (p.kind === 'pos' || p.kind === 'kwonly') && !p.defaultNode);
  if (required.length !== 1 || !/^(config|cfg|conf|args)$/i.test(required[0].name)) return undefined;
  for (let s: Scope | undefined = init.closure; s; s = s.parent) {
    for (const [n, c] of s.vars) {
      if (c.k !== 'class' || !c.dataclass || !/Config$/.test(n) || c.fields.some((f) => f.default === undefined)) continue;
      return callValue(interp, c, [], new Map(), { node: c.node, range: rangeOf(c.node), calleeText: n });
    }
  }
  return undefined;
}

function collectParts(root: Value, includeRoot: boolean, out: Set<ClassV>, depth = 0): void {
  if (depth > 40) return;
  if (root.k === 'inst') {
    // Base classes of any module in the tree are building blocks, not models of their own.
    for (const c of mro(root.cls).slice(includeRoot ? 0 : 1)) if (c.k === 'class') out.add(c);
  }
  const children = root.k === 'inst' || root.k === 'mod' ? root.children : undefined;
  for (const child of children?.values() ?? []) collectParts(child, true, out, depth + 1);
  // Keras subclasses keep their layers as plain attributes (single or in lists).
  if (root.k === 'inst' && !root.children) {
    for (const v of root.attrs.values()) {
      for (const item of v.k === 'list' || v.k === 'tuple' ? v.items : [v]) if (item.k === 'inst') collectParts(item, true, out, depth + 1);
    }
  }
}

