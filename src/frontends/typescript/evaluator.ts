/**
 * A small, bounded interpreter over the TypeScript syntax tree: enough to
 * follow how TF.js models are usually written (consts, arrays, objects,
 * helper functions, loops, `model.add`, `.apply` chains) without running
 * anything. Whatever it cannot compute becomes `Unknown`; it never throws on
 * odd input (callers still guard) and stops at fixed step/loop/depth budgets.
 */
import * as ts from 'typescript';
import { Env, FuncRef, LayerRef, ModelRef, TensorRef, TfPath, Unknown, type Value } from './values';
import { TfjsApi } from './tfjsApi';
import { COMPOUND, arith, arrayMethod, isRecord, propertyKey, truthy } from './operators';

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

  private tick(): void {
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

  private nameModel(value: Value, name: string, from: 'variable' | 'function'): void {
    if (value instanceof ModelRef && value.name === undefined) {
      value.name = name;
      value.nameFrom = from;
    }
  }

  // ---------------------------------------------------------------- expressions

  eval(node: ts.Expression, env: Env): Value {
    this.tick();
    switch (node.kind) {
      case SK.NumericLiteral:
        return Number((node as ts.NumericLiteral).text);
      case SK.StringLiteral:
      case SK.NoSubstitutionTemplateLiteral:
        return (node as ts.StringLiteral).text;
      case SK.TemplateExpression: {
        const t = node as ts.TemplateExpression;
        let s = t.head.text;
        for (const span of t.templateSpans) {
          const v = this.eval(span.expression, env);
          if (v instanceof Unknown || (v !== null && typeof v === 'object')) return new Unknown(node, 'template');
          s += String(v) + span.literal.text;
        }
        return s;
      }
      case SK.ThisKeyword:
        return env.has('this') ? env.lookup('this') : new Unknown(node, 'this');
      case SK.TrueKeyword:
        return true;
      case SK.FalseKeyword:
        return false;
      case SK.NullKeyword:
        return null;
      case SK.Identifier: {
        const name = (node as ts.Identifier).text;
        if (name === 'undefined') return undefined;
        if (env.has(name)) return env.lookup(name);
        if (name === 'Math' || name === 'Array' || name === 'Object' || name === 'Number') return new TfPath(['$' + name]);
        return new Unknown(node, `'${name}' is not defined here`);
      }
      case SK.ParenthesizedExpression:
      case SK.AsExpression:
      case SK.NonNullExpression:
      case SK.SatisfiesExpression:
      case SK.TypeAssertionExpression:
      case SK.AwaitExpression:
        return this.eval((node as ts.ParenthesizedExpression).expression, env);
      case SK.ArrayLiteralExpression: {
        const out: Value[] = [];
        for (const el of (node as ts.ArrayLiteralExpression).elements) {
          if (ts.isSpreadElement(el)) {
            const v = this.eval(el.expression, env);
            if (Array.isArray(v)) out.push(...v);
            else out.push(new Unknown(el, 'spread of a non-array'));
          } else if (ts.isOmittedExpression(el)) out.push(undefined);
          else out.push(this.eval(el, env));
        }
        return out;
      }
      case SK.ObjectLiteralExpression:
        return this.evalObject(node as ts.ObjectLiteralExpression, env);
      case SK.PropertyAccessExpression: {
        const p = node as ts.PropertyAccessExpression;
        return this.member(this.eval(p.expression, env), p.name.text, node);
      }
      case SK.ElementAccessExpression: {
        const e = node as ts.ElementAccessExpression;
        const key = this.eval(e.argumentExpression, env);
        if (typeof key !== 'number' && typeof key !== 'string') return new Unknown(node, 'computed key');
        return this.member(this.eval(e.expression, env), key, node);
      }
      case SK.CallExpression:
        return this.evalCall(node as ts.CallExpression, env);
      case SK.NewExpression:
        return new Unknown(node, `new ${(node as ts.NewExpression).expression.getText(this.sf)}`);
      case SK.ArrowFunction:
      case SK.FunctionExpression:
        return new FuncRef(node as ts.ArrowFunction, env, undefined);
      case SK.PrefixUnaryExpression:
        return this.evalPrefix(node as ts.PrefixUnaryExpression, env);
      case SK.PostfixUnaryExpression: {
        const u = node as ts.PostfixUnaryExpression;
        const old = this.eval(u.operand, env);
        if (typeof old === 'number') this.assignTo(u.operand, u.operator === SK.PlusPlusToken ? old + 1 : old - 1, env);
        return old;
      }
      case SK.BinaryExpression:
        return this.evalBinary(node as ts.BinaryExpression, env);
      case SK.ConditionalExpression: {
        const c = node as ts.ConditionalExpression;
        const cond = this.eval(c.condition, env);
        if (cond instanceof Unknown) return this.eval(c.whenTrue, env);
        return truthy(cond) ? this.eval(c.whenTrue, env) : this.eval(c.whenFalse, env);
      }
      default:
        return new Unknown(node, 'unsupported expression');
    }
  }

  private evalObject(node: ts.ObjectLiteralExpression, env: Env): Value {
    const out: Record<string, Value> = {};
    for (const p of node.properties) {
      if (ts.isPropertyAssignment(p)) {
        const key = propertyKey(p.name);
        if (key !== undefined) out[key] = this.eval(p.initializer, env);
      } else if (ts.isShorthandPropertyAssignment(p)) {
        out[p.name.text] = this.eval(p.name, env);
      } else if (ts.isSpreadAssignment(p)) {
        const v = this.eval(p.expression, env);
        if (isRecord(v)) Object.assign(out, v);
      } else if (ts.isMethodDeclaration(p) && p.body) {
        const key = propertyKey(p.name);
        if (key !== undefined) out[key] = new FuncRef(p, env, key);
      }
    }
    return out;
  }

  private member(obj: Value, key: string | number, node: ts.Node): Value {
    if (obj instanceof TfPath) return obj.child(String(key));
    if (obj instanceof Unknown) return obj;
    if (Array.isArray(obj)) {
      if (key === 'length') return obj.length;
      if (typeof key === 'number') return obj[key];
      return new Unknown(node, `array .${key}`);
    }
    if (typeof obj === 'string' && key === 'length') return obj.length;
    if (isRecord(obj)) return Object.prototype.hasOwnProperty.call(obj, key) ? obj[key] : undefined;
    return new Unknown(node, `property '${key}'`);
  }

  private evalPrefix(u: ts.PrefixUnaryExpression, env: Env): Value {
    const v = this.eval(u.operand, env);
    switch (u.operator) {
      case SK.MinusToken:
        return typeof v === 'number' ? -v : new Unknown(u, 'negation');
      case SK.PlusToken:
        return typeof v === 'number' ? v : new Unknown(u, 'unary plus');
      case SK.ExclamationToken:
        return v instanceof Unknown ? v : !truthy(v);
      case SK.PlusPlusToken:
      case SK.MinusMinusToken: {
        if (typeof v !== 'number') return new Unknown(u, 'increment');
        const nv = u.operator === SK.PlusPlusToken ? v + 1 : v - 1;
        this.assignTo(u.operand, nv, env);
        return nv;
      }
      default:
        return new Unknown(u, 'unary operator');
    }
  }

  private evalBinary(b: ts.BinaryExpression, env: Env): Value {
    const op = b.operatorToken.kind;
    if (op === SK.EqualsToken) {
      const v = this.eval(b.right, env);
      this.assignTo(b.left, v, env);
      if (ts.isIdentifier(b.left)) this.nameModel(v, b.left.text, 'variable');
      else if (ts.isPropertyAccessExpression(b.left)) this.nameModel(v, b.left.name.text, 'variable');
      return v;
    }
    if (op === SK.AmpersandAmpersandToken || op === SK.BarBarToken || op === SK.QuestionQuestionToken) {
      const l = this.eval(b.left, env);
      if (l instanceof Unknown) return l;
      if (op === SK.AmpersandAmpersandToken) return truthy(l) ? this.eval(b.right, env) : l;
      if (op === SK.BarBarToken) return truthy(l) ? l : this.eval(b.right, env);
      return l ?? this.eval(b.right, env);
    }
    const base = COMPOUND.get(op);
    if (base !== undefined) {
      const v = arith(base, this.eval(b.left, env), this.eval(b.right, env), b);
      this.assignTo(b.left, v, env);
      return v;
    }
    return arith(op, this.eval(b.left, env), this.eval(b.right, env), b);
  }

  private assignTo(target: ts.Expression, value: Value, env: Env): void {
    if (ts.isIdentifier(target)) env.assign(target.text, value);
    else if (ts.isPropertyAccessExpression(target) || ts.isElementAccessExpression(target)) {
      const obj = this.eval(target.expression, env);
      const key = ts.isPropertyAccessExpression(target) ? target.name.text : this.eval(target.argumentExpression, env);
      if ((typeof key === 'string' || typeof key === 'number') && (isRecord(obj) || Array.isArray(obj))) {
        (obj as Record<string | number, Value>)[key] = value;
      }
    }
  }

  private evalCall(call: ts.CallExpression, env: Env): Value {
    const callee = call.expression;
    let self: Value;
    let fnValue: Value;
    let method: string | undefined;
    if (ts.isPropertyAccessExpression(callee)) {
      self = this.eval(callee.expression, env);
      method = callee.name.text;
      fnValue = self instanceof TfPath ? self.child(method) : undefined;
    } else {
      fnValue = this.eval(callee, env);
    }
    const args: Value[] = [];
    for (const a of call.arguments) {
      if (ts.isSpreadElement(a)) {
        const v = this.eval(a.expression, env);
        if (Array.isArray(v)) args.push(...v);
      } else args.push(this.eval(a, env));
    }
    if (fnValue instanceof TfPath) return this.api.call(fnValue, args, call, this);
    if (method !== undefined) return this.callMethod(self, method, args, call);
    if (fnValue instanceof FuncRef) return this.callFunction(fnValue, args, undefined);
    if (ts.isIdentifier(callee) && callee.text === 'require') return this.api.require(args[0], call);
    return new Unknown(call, `call of ${callee.getText(this.sf)}`);
  }

  private callMethod(self: Value, method: string, args: Value[], call: ts.CallExpression): Value {
    if (self instanceof LayerRef || self instanceof ModelRef) return this.api.callOn(self, method, args, call);
    if (isRecord(self) && self[method] instanceof FuncRef) return this.callFunction(self[method] as FuncRef, args, self);
    if (Array.isArray(self)) return arrayMethod(self, method, args, call, (fn, fnArgs) => this.callFunction(fn, fnArgs, undefined));
    if (self instanceof TensorRef) return new Unknown(call, `tensor .${method}()`);
    return new Unknown(call, `.${method}()`);
  }

}
