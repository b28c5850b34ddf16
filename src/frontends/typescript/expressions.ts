/**
 * Expression evaluation for the TF.js script evaluator: literals, names,
 * member access, operators, assignments and calls. It lives apart from
 * ./evaluator because it needs none of the interpreter's frame bookkeeping,
 * only the budget tick, model naming and function calls, which it reaches
 * through the Evaluator passed in. The import of Evaluator is type-only, so
 * the two files call each other without a cycle at module load.
 */
import * as ts from 'typescript';
import { type Env, FuncRef, LayerRef, ModelRef, TensorRef, TfPath, Unknown, type Value } from './values';
import type { Evaluator } from './evaluator';
import { COMPOUND, arith, arrayMethod, isRecord, propertyKey, truthy } from './operators';

// `ts.SyntaxKind` behind a bundler's namespace getter is slow in hot switches: read it once.
const SK = ts.SyntaxKind;

/** Evaluates one expression, counting a step against the evaluator's budget. */
export function evalExpression(ev: Evaluator, node: ts.Expression, env: Env): Value {
  ev.tick();
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
        const v = evalExpression(ev, span.expression, env);
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
      return evalExpression(ev, (node as ts.ParenthesizedExpression).expression, env);
    case SK.ArrayLiteralExpression: {
      const out: Value[] = [];
      for (const el of (node as ts.ArrayLiteralExpression).elements) {
        if (ts.isSpreadElement(el)) {
          const v = evalExpression(ev, el.expression, env);
          if (Array.isArray(v)) out.push(...v);
          else out.push(new Unknown(el, 'spread of a non-array'));
        } else if (ts.isOmittedExpression(el)) out.push(undefined);
        else out.push(evalExpression(ev, el, env));
      }
      return out;
    }
    case SK.ObjectLiteralExpression:
      return evalObject(ev, node as ts.ObjectLiteralExpression, env);
    case SK.PropertyAccessExpression: {
      const p = node as ts.PropertyAccessExpression;
      return member(evalExpression(ev, p.expression, env), p.name.text, node);
    }
    case SK.ElementAccessExpression: {
      const e = node as ts.ElementAccessExpression;
      const key = evalExpression(ev, e.argumentExpression, env);
      if (typeof key !== 'number' && typeof key !== 'string') return new Unknown(node, 'computed key');
      return member(evalExpression(ev, e.expression, env), key, node);
    }
    case SK.CallExpression:
      return evalCall(ev, node as ts.CallExpression, env);
    case SK.NewExpression:
      return new Unknown(node, `new ${(node as ts.NewExpression).expression.getText(ev.sf)}`);
    case SK.ArrowFunction:
    case SK.FunctionExpression:
      return new FuncRef(node as ts.ArrowFunction, env, undefined);
    case SK.PrefixUnaryExpression:
      return evalPrefix(ev, node as ts.PrefixUnaryExpression, env);
    case SK.PostfixUnaryExpression: {
      const u = node as ts.PostfixUnaryExpression;
      const old = evalExpression(ev, u.operand, env);
      if (typeof old === 'number') assignTo(ev, u.operand, u.operator === SK.PlusPlusToken ? old + 1 : old - 1, env);
      return old;
    }
    case SK.BinaryExpression:
      return evalBinary(ev, node as ts.BinaryExpression, env);
    case SK.ConditionalExpression: {
      const c = node as ts.ConditionalExpression;
      const cond = evalExpression(ev, c.condition, env);
      if (cond instanceof Unknown) return evalExpression(ev, c.whenTrue, env);
      return truthy(cond) ? evalExpression(ev, c.whenTrue, env) : evalExpression(ev, c.whenFalse, env);
    }
    default:
      return new Unknown(node, 'unsupported expression');
  }
}

function evalObject(ev: Evaluator, node: ts.ObjectLiteralExpression, env: Env): Value {
  const out: Record<string, Value> = {};
  for (const p of node.properties) {
    if (ts.isPropertyAssignment(p)) {
      const key = propertyKey(p.name);
      if (key !== undefined) out[key] = evalExpression(ev, p.initializer, env);
    } else if (ts.isShorthandPropertyAssignment(p)) {
      out[p.name.text] = evalExpression(ev, p.name, env);
    } else if (ts.isSpreadAssignment(p)) {
      const v = evalExpression(ev, p.expression, env);
      if (isRecord(v)) Object.assign(out, v);
    } else if (ts.isMethodDeclaration(p) && p.body) {
      const key = propertyKey(p.name);
      if (key !== undefined) out[key] = new FuncRef(p, env, key);
    }
  }
  return out;
}

function member(obj: Value, key: string | number, node: ts.Node): Value {
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

function evalPrefix(ev: Evaluator, u: ts.PrefixUnaryExpression, env: Env): Value {
  const v = evalExpression(ev, u.operand, env);
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
      assignTo(ev, u.operand, nv, env);
      return nv;
    }
    default:
      return new Unknown(u, 'unary operator');
  }
}

function evalBinary(ev: Evaluator, b: ts.BinaryExpression, env: Env): Value {
  const op = b.operatorToken.kind;
  if (op === SK.EqualsToken) {
    const v = evalExpression(ev, b.right, env);
    assignTo(ev, b.left, v, env);
    if (ts.isIdentifier(b.left)) ev.nameModel(v, b.left.text, 'variable');
    else if (ts.isPropertyAccessExpression(b.left)) ev.nameModel(v, b.left.name.text, 'variable');
    return v;
  }
  if (op === SK.AmpersandAmpersandToken || op === SK.BarBarToken || op === SK.QuestionQuestionToken) {
    const l = evalExpression(ev, b.left, env);
    if (l instanceof Unknown) return l;
    if (op === SK.AmpersandAmpersandToken) return truthy(l) ? evalExpression(ev, b.right, env) : l;
    if (op === SK.BarBarToken) return truthy(l) ? l : evalExpression(ev, b.right, env);
    return l ?? evalExpression(ev, b.right, env);
  }
  const base = COMPOUND.get(op);
  if (base !== undefined) {
    const v = arith(base, evalExpression(ev, b.left, env), evalExpression(ev, b.right, env), b);
    assignTo(ev, b.left, v, env);
    return v;
  }
  return arith(op, evalExpression(ev, b.left, env), evalExpression(ev, b.right, env), b);
}

function assignTo(ev: Evaluator, target: ts.Expression, value: Value, env: Env): void {
  if (ts.isIdentifier(target)) env.assign(target.text, value);
  else if (ts.isPropertyAccessExpression(target) || ts.isElementAccessExpression(target)) {
    const obj = evalExpression(ev, target.expression, env);
    const key = ts.isPropertyAccessExpression(target) ? target.name.text : evalExpression(ev, target.argumentExpression, env);
    if ((typeof key === 'string' || typeof key === 'number') && (isRecord(obj) || Array.isArray(obj))) {
      (obj as Record<string | number, Value>)[key] = value;
    }
  }
}

function evalCall(ev: Evaluator, call: ts.CallExpression, env: Env): Value {
  const callee = call.expression;
  let self: Value;
  let fnValue: Value;
  let method: string | undefined;
  if (ts.isPropertyAccessExpression(callee)) {
    self = evalExpression(ev, callee.expression, env);
    method = callee.name.text;
    fnValue = self instanceof TfPath ? self.child(method) : undefined;
  } else {
    fnValue = evalExpression(ev, callee, env);
  }
  const args: Value[] = [];
  for (const a of call.arguments) {
    if (ts.isSpreadElement(a)) {
      const v = evalExpression(ev, a.expression, env);
      if (Array.isArray(v)) args.push(...v);
    } else args.push(evalExpression(ev, a, env));
  }
  if (fnValue instanceof TfPath) return ev.api.call(fnValue, args, call, ev);
  if (method !== undefined) return callMethod(ev, self, method, args, call);
  if (fnValue instanceof FuncRef) return ev.callFunction(fnValue, args, undefined);
  if (ts.isIdentifier(callee) && callee.text === 'require') return ev.api.require(args[0], call);
  return new Unknown(call, `call of ${callee.getText(ev.sf)}`);
}

function callMethod(ev: Evaluator, self: Value, method: string, args: Value[], call: ts.CallExpression): Value {
  if (self instanceof LayerRef || self instanceof ModelRef) return ev.api.callOn(self, method, args, call);
  if (isRecord(self) && self[method] instanceof FuncRef) return ev.callFunction(self[method] as FuncRef, args, self);
  if (Array.isArray(self)) return arrayMethod(self, method, args, call, (fn, fnArgs) => ev.callFunction(fn, fnArgs, undefined));
  if (self instanceof TensorRef) return new Unknown(call, `tensor .${method}()`);
  return new Unknown(call, `.${method}()`);
}