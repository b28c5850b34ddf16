/**
 * A small, bounded interpreter over the TypeScript syntax tree: enough to
 * follow how TF.js models are usually written (consts, arrays, objects,
 * helper functions, loops, `model.add`, `.apply` chains) without running
 * anything. Whatever it cannot compute becomes `Unknown`; it never throws on
 * odd input (callers still guard) and stops at fixed step/loop/depth budgets.
 *
 * This file holds the interpreter's state (budgets, call frames), statements
 * and function calls; expressions are evaluated in ./expressions.
 */
import * as ts from 'typescript';
import { Env, FuncRef, ModelRef, TfPath, Unknown, type Value } from './values';
import { TfjsApi } from './tfjsApi';
import { isRecord, truthy } from './operators';
import { evalExpression } from './expressions';

// `ts.SyntaxKind` behind a bundler's namespace getter is slow in hot switches: read it once.
const SK = ts.SyntaxKind;

const MAX_STEPS = 2_000_000;
const MAX_LOOP = 10_000;
const MAX_DEPTH = 48;

type Completion = undefined | { kind: 'return'; value: Value } | { kind: 'break' } | { kind: 'continue' };


class BudgetExceeded extends Error {}

export class Evaluator {
  private steps = 0;
  private depth = 0;
  private frameCounter = 0;
  private frame = 0;
  budgetHit = false;
  internalError: string | undefined;
  /** Functions declared anywhere at top level (incl. class methods), for the "uncalled factory" pass. */
  readonly topLevelFunctions: FuncRef[] = [];

  constructor(
    readonly sf: ts.SourceFile,
    readonly api: TfjsApi,
  ) {
    api.frameOf = () => this.frame;
  }

  /** Runs the file's top level, then every uncalled top-level function that builds a model. */
  run(globals: Env): void {
    try {
      this.execStatements(this.sf.statements, globals);
      for (const fn of this.topLevelFunctions) {
        if (fn.invoked || !/\b(sequential|model)\s*\(/.test(fn.node.getText(this.sf))) continue;
        const args = fn.node.parameters.map((p) => new Unknown(p, 'parameter of an uncalled function'));
        this.callFunction(fn, args, undefined);
      }
    } catch (err) {
      // Keep what was built so far: a partial graph beats none.
      if (err instanceof BudgetExceeded) this.budgetHit = true;
      else this.internalError = err instanceof Error ? err.message : String(err);
    }
  }

  /** Counts one step; not private because ./expressions ticks too. */
  tick(): void {
    if (++this.steps > MAX_STEPS) throw new BudgetExceeded();
  }

  // ---------------------------------------------------------------- statements

  execStatements(statements: readonly ts.Statement[], env: Env): Completion {
    // Hoist function declarations so calls before the definition work, as in JS.
    for (const s of statements) {
      if (ts.isFunctionDeclaration(s) && s.name && s.body) {
        const fn = new FuncRef(s, env, s.name.text);
        env.declare(s.name.text, fn);
        if (this.frame === 0) this.topLevelFunctions.push(fn);
      }
    }
    for (const s of statements) {
      const c = this.exec(s, env);
      if (c) return c;
    }
    return undefined;
  }

  private exec(node: ts.Statement, env: Env): Completion {
    this.tick();
    switch (node.kind) {
      case SK.VariableStatement:
        this.declareList((node as ts.VariableStatement).declarationList, env);
        return undefined;
      case SK.ExpressionStatement:
        this.eval((node as ts.ExpressionStatement).expression, env);
        return undefined;
      case SK.ReturnStatement: {
        const e = (node as ts.ReturnStatement).expression;
        return { kind: 'return', value: e ? this.eval(e, env) : undefined };
      }
      case SK.Block:
        return this.execStatements((node as ts.Block).statements, new Env(env));
      case SK.IfStatement: {
        const s = node as ts.IfStatement;
        const cond = this.eval(s.expression, env);
        // An unknown condition takes the then-branch: models are usually built on the "normal" path.
        if (cond instanceof Unknown || truthy(cond)) return this.exec(s.thenStatement, env);
        return s.elseStatement ? this.exec(s.elseStatement, env) : undefined;
      }
      case SK.ForStatement:
        return this.execFor(node as ts.ForStatement, env);
      case SK.ForOfStatement:
        return this.execForOf(node as ts.ForOfStatement, env);
      case SK.WhileStatement: {
        const s = node as ts.WhileStatement;
        for (let i = 0; i < MAX_LOOP; i++) {
          const cond = this.eval(s.expression, env);
          if (cond instanceof Unknown || !truthy(cond)) break;
          const c = this.exec(s.statement, new Env(env));
          if (c?.kind === 'break') break;
          if (c?.kind === 'return') return c;
        }
        return undefined;
      }
      case SK.BreakStatement:
        return { kind: 'break' };
      case SK.ContinueStatement:
        return { kind: 'continue' };
      case SK.TryStatement:
        return this.exec((node as ts.TryStatement).tryBlock, env);
      case SK.ClassDeclaration:
        this.collectMethods(node as ts.ClassDeclaration, env);
        return undefined;
      case SK.ImportDeclaration:
        this.api.bindImport(node as ts.ImportDeclaration, env);
        return undefined;
      case SK.ExportAssignment: {
        const value = this.eval((node as unknown as ts.ExportAssignment).expression, env);
        this.nameModel(value, 'default', 'variable');
        return undefined;
      }
      case SK.LabeledStatement:
        return this.exec((node as ts.LabeledStatement).statement, env);
      default:
        return undefined;
    }
  }

  /** Methods share one instance object as `this`, so `this.model = tf.sequential()` then `this.model.add(...)` works. */
  private collectMethods(cls: ts.ClassDeclaration, env: Env): void {
    const self: Record<string, Value> = {};
    for (const m of cls.members) {
      if ((ts.isMethodDeclaration(m) || ts.isConstructorDeclaration(m)) && m.body) {
        const name = m.name && ts.isIdentifier(m.name) ? m.name.text : cls.name?.text;
        const fn = new FuncRef(m, env, name, self);
        if (ts.isMethodDeclaration(m) && name) self[name] = fn;
        this.topLevelFunctions.push(fn);
      }
    }
  }

  private declareList(list: ts.VariableDeclarationList, env: Env): void {
    for (const d of list.declarations) {
      const value = d.initializer ? this.eval(d.initializer, env) : undefined;
      this.bindName(d.name, value, env);
      if (ts.isIdentifier(d.name)) {
        this.nameModel(value, d.name.text, 'variable');
        if (value instanceof FuncRef && value.name === undefined) value.name = d.name.text;
        if (value instanceof FuncRef && this.frame === 0) this.topLevelFunctions.push(value);
      }
    }
  }

  private bindName(name: ts.BindingName, value: Value, env: Env): void {
    if (ts.isIdentifier(name)) {
      env.declare(name.text, value);
      return;
    }
    if (ts.isObjectBindingPattern(name)) {
      for (const el of name.elements) {
        const key = el.propertyName && ts.isIdentifier(el.propertyName) ? el.propertyName.text : ts.isIdentifier(el.name) ? el.name.text : undefined;
        let v: Value;
        if (key !== undefined && isRecord(value)) v = value[key];
        else if (key !== undefined && value instanceof TfPath) v = value.child(key);
        else if (value instanceof Unknown) v = value;
        if (v === undefined && el.initializer) v = this.eval(el.initializer, env);
        if (value instanceof Unknown && v === undefined) v = value;
        this.bindName(el.name, v, env);
      }
      return;
    }
    name.elements.forEach((el, i) => {
      if (ts.isOmittedExpression(el)) return;
      let v: Value = Array.isArray(value) ? (el.dotDotDotToken ? value.slice(i) : value[i]) : value instanceof Unknown ? value : undefined;
      if (v === undefined && el.initializer) v = this.eval(el.initializer, env);
      this.bindName(el.name, v, env);
    });
  }

  private execFor(s: ts.ForStatement, outer: Env): Completion {
    const env = new Env(outer);
    if (s.initializer) {
      if (ts.isVariableDeclarationList(s.initializer)) this.declareList(s.initializer, env);
      else this.eval(s.initializer, env);
    }
    for (let i = 0; i < MAX_LOOP; i++) {
      if (s.condition) {
        const cond = this.eval(s.condition, env);
        if (cond instanceof Unknown || !truthy(cond)) break;
      }
      const c = this.exec(s.statement, new Env(env));
      if (c?.kind === 'break') break;
      if (c?.kind === 'return') return c;
      if (s.incrementor) this.eval(s.incrementor, env);
    }
    return undefined;
  }

  private execForOf(s: ts.ForOfStatement, outer: Env): Completion {
    const items = this.eval(s.expression, outer);
    if (!Array.isArray(items)) return undefined;
    for (const item of items.slice(0, MAX_LOOP)) {
      const env = new Env(outer);
      const init = s.initializer;
      if (ts.isVariableDeclarationList(init)) this.bindName(init.declarations[0].name, item, env);
      else if (ts.isIdentifier(init)) env.assign(init.text, item);
      const c = this.exec(s.statement, env);
      if (c?.kind === 'break') break;
      if (c?.kind === 'return') return c;
    }
    return undefined;
  }

  // ---------------------------------------------------------------- functions

  callFunction(fn: FuncRef, args: Value[], _self: Value): Value {
    fn.invoked = true;
    if (this.depth >= MAX_DEPTH) return new Unknown(fn.node, 'call depth limit');
    const env = new Env(fn.env);
    if (fn.self) env.declare('this', fn.self);
    fn.node.parameters.forEach((p, i) => {
      let v: Value = p.dotDotDotToken ? args.slice(i) : args[i];
      if (v === undefined && p.initializer) v = this.eval(p.initializer, env);
      this.bindName(p.name, v, env);
    });
    const savedFrame = this.frame;
    this.depth++;
    this.frame = ++this.frameCounter;
    const myFrame = this.frame;
    try {
      const body = fn.node.body;
      if (!body) return new Unknown(fn.node, 'function without a body');
      let result: Value;
      if (ts.isBlock(body)) {
        const c = this.execStatements(body.statements, env);
        result = c?.kind === 'return' ? c.value : undefined;
      } else {
        result = this.eval(body, env);
      }
      if (result instanceof ModelRef && result.frame === myFrame && result.nameFrom !== 'function' && fn.name) {
        result.name = fn.name;
        result.nameFrom = 'function';
      }
      return result;
    } finally {
      this.depth--;
      this.frame = savedFrame;
    }
  }

  /** Not private because assignments in ./expressions name models too. */
  nameModel(value: Value, name: string, from: 'variable' | 'function'): void {
    if (value instanceof ModelRef && value.name === undefined) {
      value.name = name;
      value.nameFrom = from;
    }
  }

  // ---------------------------------------------------------------- expressions

  /** Kept as a method so statements here and the TF.js API model need not know where expressions live. */
  eval(node: ts.Expression, env: Env): Value {
    return evalExpression(this, node, env);
  }
}
