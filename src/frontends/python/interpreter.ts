/**
 * The statement half of the partial evaluator: scopes, control flow, function
 * and class definitions (built in definitions.ts), calls. It never runs user
 * code for real: library calls go to stand-ins (library.ts), and anything it
 * cannot know is Unknown.
 * Step and depth budgets guarantee termination on any input.
 */
import type { AnalyzeOptions, Diagnostic, SourceRange } from '../../core/ir';
import { field, fields, foreignFiles, namedChildren, rangeOf, type PyNode } from './ast';
import { callValue } from './calls';
import { assignTarget, deleteTarget } from './assignment';
import { evalExpr } from './expressions';
import { binaryOp } from './operators';
import { importStatement } from './imports';
import { decideBranch, reportRaise } from './branches';
import { defineClass, defineFunction, execDecorated, makeFunction } from './definitions';
import { execTry, execWith } from './wrappingStatements';
import { execLoop, execScriptLoop } from './loops';
import { skippedEvaluationCall } from './evaluationPasses';
import { isMainGuard } from './moduleScope';
import { hydraConfigArgument } from './hydraRuntime';
import { MissingArgument, bindArguments, parametersOf, type ParamSpec } from './parameters';
import { noteBatchAssignment, noteBatchSplit } from './runBatch';
import { noteProcessCountAssert } from './runProcessCounts';
import { noteSubmoduleAlias } from './moduleListings';
import { RunFacts } from './runFacts';
import type { Graph } from './graph';
import type { ModuleLoader } from './modules';
import { BreakSignal, ContinueSignal, LimitSignal, RaiseSignal, ReturnSignal, isSignal } from './signals';
import { NONE, UNKNOWN, type CallSite, type FuncV, type Scope, type Value } from './values';

export class Interp {
  readonly globals: Scope = { vars: new Map() };
  steps = 0;
  depth = 0;
  maxSteps = 400_000;
  maxDepth = 120;
  /** Script loops (a module-level training loop) being run: evaluation inside them is skipped (evaluationPasses.ts). */
  scriptLoops = 0;
  /** Where layer calls are recorded; swapped per model. */
  graph: Graph | undefined;
  readonly diagnostics: Diagnostic[] = [];
  /** Framework hints from imports. */
  imports = { torch: false, keras: false };
  /** `from x import *` modules: unknown names resolve into them. */
  readonly wildcards: string[] = [];
  /** The file being read (for paths it names, e.g. from_pretrained('./folder')); undefined for unnamed text. */
  file: string | undefined = undefined;
  /** The analysed file's `if __name__ == "__main__":` bodies, deferred until the module is read. */
  readonly mainBlocks: PyNode[] = [];
  /**
   * Models handed to a trainer or a training wrapper (`Trainer(model=model)`, `accelerator.prepare(model)`, DDP), in
   * call order: a script's `main()` that builds its model as a local and trains it returns nothing (models.ts).
   */
  readonly trainedModels: Value[] = [];
  /**
   * What the file's models were read under that is not model code: the command line argparse was read with. Every
   * model of the file carries these, and a file without a model still says them (models.ts).
   */
  readonly runNotes: Diagnostic[] = [];
  /** `exec(…)` calls whose code was read (scriptExec.ts): rewrittenGlobals.ts warns about the others. */
  readonly execFollowed = new Set<PyNode>();
  /**
   * The last object each of the analysed module's names held: `model = torch.load(f)` after training (the word
   * language model example reloads its best checkpoint) leaves the name unknown, and the model trained is the one before.
   */
  readonly heldObjects = new Map<string, Value>();
  /** What the script states about the run that trains its model (runFacts.ts). */
  readonly run = new RunFacts();
  /** The analysed file's tree: an assert's divisor named earlier in it is looked up there (runProcessCounts.ts). */
  mainRoot: PyNode | undefined;
  /** The input the analysis was given: a forward that computes sizes from its input is read again at it (specialise.ts). */
  givenInput: AnalyzeOptions = {};
  /** Keras automatic-name counters (`conv2d`, `conv2d_1`); reset per model factory. */
  kerasNames = new Map<string, number>();
  /** Follows imports into other files (modules.ts); absent when the caller gave no import context. */
  loader: ModuleLoader | undefined;

  constructor(
    readonly source: string,
    /** The analysed file's line table: nodes with another one come from an imported module. */
    private readonly mainLines?: number[],
  ) {}

  /** The text of the file a node lies in (the analysed file, or an imported module). */
  sourceFor(node: PyNode): string {
    if (node.lines === this.mainLines) return this.source;
    // Evaluation stays in one imported file for long stretches: remember the last one looked up.
    if (node.lines === this.lastForeignLines) return this.lastForeignSource;
    const source = foreignFiles.get(node.lines)?.source ?? this.source;
    this.lastForeignLines = node.lines;
    this.lastForeignSource = source;
    return source;
  }

  /** What each diagnostics list was already told (warnAt). */
  private readonly said = new WeakMap<Diagnostic[], Set<string>>();

  private lastForeignLines: number[] | undefined;
  private lastForeignSource = '';

  text(node: PyNode): string {
    return this.sourceFor(node).slice(node.start, node.end);
  }

  site(node: PyNode, calleeText = ''): CallSite {
    return new LazySite(node, calleeText);
  }

  tick(): void {
    if (++this.steps > this.maxSteps) throw new LimitSignal('evaluation step budget exhausted');
  }

  warn(node: PyNode, message: string, code: string, severity: Diagnostic['severity'] = 'warning'): void {
    this.warnAt(rangeOf(node), message, code, severity);
  }

  warnAt(r: SourceRange, message: string, code: string, severity: Diagnostic['severity'] = 'warning', into: Diagnostic[] = this.graph?.diagnostics ?? this.diagnostics): void {
    const diag: Diagnostic = { severity, message, line: r.line, column: r.column, endLine: r.endLine, endColumn: r.endColumn, code };
    if (r.file) diag.file = r.file;
    // A loop says the same thing on every iteration: once is enough.
    const key = `${diag.file ?? ''}:${diag.line}:${diag.column}-${diag.endLine}:${diag.endColumn}:${code}:${message}`;
    let said = this.said.get(into);
    if (!said) this.said.set(into, (said = new Set()));
    if (said.has(key)) return;
    said.add(key);
    into.push(diag);
  }

  // ---- scopes ----

  lookup(name: string, scope: Scope): Value | undefined {
    for (let s: Scope | undefined = scope; s; s = s.parent) {
      const v = s.vars.get(name);
      if (v !== undefined) return v;
    }
    return undefined;
  }

  bind(name: string, value: Value, scope: Scope): void {
    if (scope === this.globals && (value.k === 'inst' || value.k === 'mod' || value.k === 'hf' || value.k === 'kmodel')) this.heldObjects.set(name, value);
    if (scope.outer?.has(name)) {
      for (let s = scope.parent; s; s = s.parent) {
        if (s.vars.has(name) || !s.parent) {
          s.vars.set(name, value);
          return;
        }
      }
    }
    scope.vars.set(name, value);
  }

  // ---- statements ----

  execBlock(nodes: PyNode[], scope: Scope): void {
    for (const node of nodes) {
      if (!node.named) continue;
      try {
        this.exec(node, scope);
      } catch (e) {
        if (isSignal(e)) throw e;
        // An internal failure on one statement must not lose the rest of the file.
        if (e instanceof RangeError) throw new LimitSignal('evaluation too deep');
      }
    }
  }

  exec(node: PyNode, scope: Scope): void {
    this.tick();
    switch (node.type) {
      case 'module':
      case 'block':
      case 'ERROR':
        // Statements tree-sitter could not fit into the grammar still run: a half-typed line must not hide the rest.
        return this.execBlock(node.children, scope);
      case 'expression_statement':
        for (const c of namedChildren(node)) this.execExpressionStatement(c, scope);
        return;
      case 'if_statement':
        return this.execIf(node, scope);
      case 'for_statement':
      case 'while_statement':
        return scope === this.globals ? execScriptLoop(this, node, scope) : execLoop(this, node, scope);
      case 'function_definition':
        return defineFunction(this, node, scope, []);
      case 'class_definition':
        return defineClass(this, node, scope, []);
      case 'decorated_definition':
        return execDecorated(this, node, scope);
      case 'return_statement': {
        const arg = namedChildren(node)[0];
        throw new ReturnSignal(arg ? evalExpr(this, arg, scope) : NONE);
      }
      case 'break_statement':
        throw new BreakSignal();
      case 'continue_statement':
        throw new ContinueSignal();
      case 'raise_statement':
        throw new RaiseSignal(node);
      case 'import_statement':
      case 'import_from_statement':
        return importStatement(this, node, scope);
      case 'with_statement':
        return execWith(this, node, scope);
      case 'try_statement':
        return execTry(this, node, scope);
      case 'delete_statement':
        for (const c of namedChildren(node)) deleteTarget(this, c, scope);
        return;
      case 'global_statement':
      case 'nonlocal_statement':
        scope.outer ??= new Set();
        for (const c of namedChildren(node)) scope.outer.add(this.text(c));
        return;
      case 'assert_statement':
        return noteProcessCountAssert(this, node, scope);
      default:
        return; // pass, print >>: nothing to evaluate
    }
  }

  private execExpressionStatement(node: PyNode, scope: Scope): void {
    if (node.type === 'assignment') {
      const right = field(node, 'right');
      if (!right) return; // annotation only: `x: int`
      const left = field(node, 'left');
      noteBatchAssignment(this, node, scope);
      const value = right.type === 'assignment' ? this.chainedAssign(right, scope) : evalExpr(this, right, scope);
      if (left) assignTarget(this, left, value, scope);
      if (left?.type === 'identifier') noteSubmoduleAlias(value, right, this.text(left));
      return;
    }
    if (node.type === 'augmented_assignment') {
      const left = field(node, 'left');
      const right = field(node, 'right');
      const op = node.children.find((c) => c.field === 'operator');
      if (!left || !right || !op) return;
      const current = evalExpr(this, left, scope);
      noteBatchSplit(this, node, () => current);
      const result = binaryOp(this, this.text(op).slice(0, -1), current, evalExpr(this, right, scope), node);
      assignTarget(this, left, result, scope);
      return;
    }
    evalExpr(this, node, scope);
  }

  private chainedAssign(node: PyNode, scope: Scope): Value {
    const right = field(node, 'right');
    const value = !right ? UNKNOWN : right.type === 'assignment' ? this.chainedAssign(right, scope) : evalExpr(this, right, scope);
    const left = field(node, 'left');
    if (left) assignTarget(this, left, value, scope);
    return value;
  }

  private execIf(node: PyNode, scope: Scope): void {
    const cond = field(node, 'condition');
    if (isMainGuard(node, (n) => this.text(n))) {
      // The analysed file's script part runs after everything else, on its own terms (models.ts runMainBlocks).
      const body = field(node, 'consequence');
      if (body && scope === this.globals) this.mainBlocks.push(body);
      return;
    }
    const branches: Array<{ cond?: PyNode; body?: PyNode }> = [{ cond, body: field(node, 'consequence') }];
    for (const alt of fields(node, 'alternative')) {
      if (alt.type === 'else_clause') branches.push({ body: field(alt, 'body') });
      else branches.push({ cond: field(alt, 'condition'), body: field(alt, 'consequence') });
    }
    const taken = decideBranch(this, branches, scope);
    const body = taken === undefined ? undefined : branches[taken].body;
    if (body) this.exec(body, scope);
  }

  /** Builds a function value (lambdas too, from expressions.ts); the work lives in definitions.ts. */
  makeFunction(node: PyNode, name: string, scope: Scope): FuncV {
    return makeFunction(this, node, name, scope);
  }

  params(fnNode: PyNode): readonly ParamSpec[] {
    return parametersOf(fnNode, this.sourceFor(fnNode));
  }

  // ---- calls ----

  callValue(callee: Value, args: Value[], kwargs: Map<string, Value>, site: CallSite): Value {
    return callValue(this, callee, args, kwargs, site);
  }

  /** Calls a user function with bound arguments; `self` already prepended for methods. */
  callFunction(fn: FuncV, args: Value[], kwargs: Map<string, Value>, extra?: Map<string, Value>): Value {
    if (this.depth >= this.maxDepth) throw new LimitSignal('recursion too deep');
    const skipped = skippedEvaluationCall(this, fn);
    if (skipped) return skipped;
    const scope: Scope = { vars: new Map(extra), parent: fn.closure };
    // `main()` under @hydra.main: Hydra supplies the config it composes.
    if (fn.hydraMain && args.length === 0 && kwargs.size === 0) args = [hydraConfigArgument(this, fn.hydraMain)];
    bindArguments(fn, this.params(fn.node), args, kwargs, scope.vars);
    const body = field(fn.node, 'body');
    if (!body) return UNKNOWN;
    this.depth++;
    try {
      if (fn.node.type === 'lambda') return evalExpr(this, body, scope);
      this.exec(body, scope);
      return NONE;
    } catch (e) {
      if (e instanceof ReturnSignal) return e.value;
      if (e instanceof RaiseSignal) {
        reportRaise(this, fn, e);
        return UNKNOWN;
      }
      if (e instanceof MissingArgument) return UNKNOWN;
      throw e;
    } finally {
      this.depth--;
    }
  }
}

/** Most calls never need their range (str methods, builtins, arithmetic helpers): compute it on first use. */
class LazySite implements CallSite {
  private cached: SourceRange | undefined;
  constructor(
    readonly node: PyNode,
    readonly calleeText: string,
  ) {}
  get range(): SourceRange {
    return (this.cached ??= rangeOf(this.node));
  }
}
