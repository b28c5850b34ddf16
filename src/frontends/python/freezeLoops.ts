/**
 * The loops fine-tuning scripts freeze with:
 *
 *     for p in model.backbone.parameters():
 *         p.requires_grad = False
 *
 *     for name, param in model.named_parameters():
 *         if not name.startswith("fc"):          # or `"classifier" not in name`,
 *             param.requires_grad = False        # `any(k in name for k in keep)`, elif/else…
 *
 *     for n, p in model.named_parameters():
 *         p.requires_grad = "lora_" in n
 *
 * The body is decided for each parameter by its name, as `named_parameters()`
 * would give it, without running anything: only `if`/`elif`/`else` on
 * conditions the evaluator computes, `p.requires_grad = …`,
 * `p.requires_grad_(…)`, `pass`, `continue` and printing are read. A body
 * with anything else is left to the interpreter (and, if it freezes, to the
 * warning frozenParameters.ts gives).
 *
 * Torch modules get their `frozen` marks here, module by module; a Hugging
 * Face model (or a submodule of one) keeps the loop as a freeze step applied
 * to its graph when it is built (transformersModules.ts).
 *
 * What reading a loop costs is bounded: a large MoE model lists tens of
 * thousands of parameters (DeepSeek-V3 about 45,000), so a body that sees the
 * name only through fixed strings is read once per name pattern
 * (freezeNamePatterns.ts), and every loop is read on a step budget of its own
 * (freezeLoopBudget.ts); one that spends it is applied to nothing and said.
 */
import type { RequiresGradVerdict } from '../freezing/freezeSteps';
import { UnreadFreezeStep, unreadStepDiagnostic } from '../freezing/unreadSteps';
import { joinParameterName, torchParameterNames } from '../freezing/parameterNames';
import { field, fields, namedChildren, rangeOf, type PyNode } from './ast';
import { evalExpr } from './expressions';
import { onLoopBudget } from './freezeLoopBudget';
import { decidedByPattern, namePattern } from './freezeNamePatterns';
import { markFreezeModelled } from './frozenParameters';
import { decideParameters } from './parameterStates';
import type { Interp } from './interpreter';
import { addHfFreezeStep } from './transformersModules';
import { isModule } from './torchRuntime';
import { UNKNOWN, str, truthy, type InstV, type ModV, type Scope, type Value } from './values';

/**
 * A loop over `E.parameters()` / `E.named_parameters()` whose body sets requires_grad in a way WAP can decide per
 * parameter: applied to E, and true (the caller skips the loop, which builds nothing). False for any other loop.
 *
 * A body that sees the name only through digit-free string tests is decided once per name pattern
 * (freezeNamePatterns.ts), else once per name; either way on the loop's own step budget (freezeLoopBudget.ts). A
 * loop whose names spend it is applied to nothing and said at the loop, the model marked incomplete.
 */
export function freezeLoop(interp: Interp, node: PyNode, scope: Scope): boolean {
  const loop = readLoop(interp, node);
  if (!loop) return false;
  // A Hugging Face model's loop is decided when its graph is built, after the file ran: the names its condition reads
  // (`keep = [...]`) must be the values they had when the loop ran, not what the script rebound them to later.
  const at = scopeAsNow(scope);
  const target = evalExpr(interp, loop.object, scope);
  const evaluate = (name: string): RequiresGradVerdict => {
    const inner: Scope = { vars: new Map<string, Value>([[loop.param, UNKNOWN]]), parent: at };
    if (loop.name) inner.vars.set(loop.name, str(name));
    const outcome = runBody(interp, loop.body, loop.param, inner, undefined);
    return outcome === 'unreadable' ? 'unreadable' : outcome.verdict;
  };
  const writeValue = (s: PyNode): PyNode | null | undefined => {
    const write = requiresGradWrite(interp, s, loop.param);
    return write ? (write.value ?? null) : undefined;
  };
  const byPattern = loop.name !== undefined && decidedByPattern(interp, { statements: loop.body, name: loop.name, writeValue }, at);
  const budgeted = onLoopBudget(interp, evaluate);
  try {
    // Without the name, the body cannot tell parameters apart: decided once.
    const decide = loop.name ? (byPattern ? perPattern(budgeted) : budgeted) : constant(budgeted(''));
    if (!loop.name && decide('') === 'unreadable') return false;
    if (target.k === 'hf' && (target.what === 'model' || target.what === 'module')) {
      addHfFreezeStep(target, decide, rangeOf(node));
    } else if (target.k === 'inst' || target.k === 'mod') {
      // Every verdict first: a loop that spends its budget halfway is applied to none of its parameters.
      const groups = parameterGroups(target).map((group) => ({ group, verdicts: new Map(group.own.map((n, i) => [n, decide(group.names[i])])) }));
      for (const { group, verdicts } of groups) decideParameters(interp, group.module, group.own, (n) => verdicts.get(n), group.path, rangeOf(node));
    } else return false;
  } catch (e) {
    if (!(e instanceof UnreadFreezeStep)) throw e;
    const parameters = target.k === 'inst' || target.k === 'mod' ? parameterGroups(target).reduce((n, g) => n + g.names.length, 0) : undefined;
    const d = unreadStepDiagnostic(e, parameters, rangeOf(node));
    (interp.graph?.diagnostics ?? interp.diagnostics).push(d);
  }
  for (const site of loop.writes) markFreezeModelled(interp, site);
  return true;
}

/** One verdict per name pattern (freezeNamePatterns.ts): the body was found to decide every name as its pattern. */
function perPattern(decide: (name: string) => RequiresGradVerdict): (name: string) => RequiresGradVerdict {
  const verdicts = new Map<string, RequiresGradVerdict>();
  return (name) => {
    const pattern = namePattern(name);
    if (!verdicts.has(pattern)) verdicts.set(pattern, decide(pattern));
    return verdicts.get(pattern);
  };
}

/** The scope chain with each level's bindings copied as they are now (the values themselves are shared). */
function scopeAsNow(scope: Scope): Scope {
  return { ...scope, vars: new Map(scope.vars), ...(scope.parent ? { parent: scopeAsNow(scope.parent) } : {}) };
}

interface FreezeLoopSyntax {
  object: PyNode;
  /** The loop variable holding the parameter name (`named_parameters()`), if any. */
  name?: string;
  param: string;
  body: readonly PyNode[];
  /** The requires_grad writes in the body, which the warning scan then leaves alone. */
  writes: PyNode[];
}

function readLoop(interp: Interp, node: PyNode): FreezeLoopSyntax | undefined {
  const left = field(node, 'left');
  const right = field(node, 'right');
  const body = field(node, 'body');
  if (!left || !right || !body || right.type !== 'call') return undefined;
  const fn = field(right, 'function');
  const args = field(right, 'arguments');
  const object = fn?.type === 'attribute' ? field(fn, 'object') : undefined;
  if (!object || !args || namedChildren(args).length > 0) return undefined;
  const method = interp.text(field(fn!, 'attribute') ?? fn!);
  const names = left.type === 'identifier' ? [left] : namedChildren(left);
  if (!names.every((n) => n.type === 'identifier')) return undefined;
  const [nameNode, paramNode] = method === 'parameters' && names.length === 1 ? [undefined, names[0]] : method === 'named_parameters' && names.length === 2 ? names : [];
  if (!paramNode) return undefined;
  const param = interp.text(paramNode);
  const statements = namedChildren(body).filter((s) => s.type !== 'comment');
  const writes: PyNode[] = [];
  collectWrites(interp, statements, param, writes);
  if (writes.length === 0) return undefined;
  return { object, name: nameNode ? interp.text(nameNode) : undefined, param, body: statements, writes };
}

/** `p.requires_grad = …` assignments and `p.requires_grad_(…)` calls anywhere in the body. */
function collectWrites(interp: Interp, nodes: readonly PyNode[], param: string, out: PyNode[]): void {
  for (const n of nodes) {
    const write = requiresGradWrite(interp, n, param);
    if (write) out.push(write.node);
    else collectWrites(interp, namedChildren(n), param, out);
  }
}

/** A statement's requires_grad write on the parameter variable: the node and the expression it sets (absent: True). */
function requiresGradWrite(interp: Interp, statement: PyNode, param: string): { node: PyNode; value?: PyNode; call: boolean } | undefined {
  const s = statement.type === 'expression_statement' ? namedChildren(statement)[0] : statement;
  if (s?.type === 'assignment') {
    const left = field(s, 'left');
    const value = field(s, 'right');
    if (left?.type === 'attribute' && interp.text(left).replace(/\s+/g, '') === `${param}.requires_grad` && value) return { node: s, value, call: false };
  }
  if (s?.type === 'call') {
    const fn = field(s, 'function');
    if (fn && interp.text(fn).replace(/\s+/g, '') === `${param}.requires_grad_`) {
      const args = field(s, 'arguments');
      const given = args ? namedChildren(args) : [];
      const value = given.length === 1 ? (given[0].type === 'keyword_argument' ? field(given[0], 'value') : given[0]) : undefined;
      if (given.length > 1) return undefined;
      return { node: s, value, call: true };
    }
  }
  return undefined;
}

type Outcome = { verdict: RequiresGradVerdict; stop: boolean };

/** Runs the body's statements for one parameter; 'unreadable' on anything but the forms the file comment lists. */
function runBody(interp: Interp, statements: readonly PyNode[], param: string, scope: Scope, verdict: RequiresGradVerdict): Outcome | 'unreadable' {
  for (const s of statements) {
    if (s.type === 'comment' || s.type === 'pass_statement') continue;
    if (s.type === 'continue_statement') return { verdict, stop: true };
    const write = requiresGradWrite(interp, s, param);
    if (write) {
      const value = write.value ? truthy(evalExpr(interp, write.value, scope)) : true;
      if (value === undefined) return 'unreadable';
      verdict = value;
      continue;
    }
    if (s.type === 'if_statement') {
      const branch = takenBranch(interp, s, scope);
      if (branch === 'unreadable') return 'unreadable';
      if (!branch) continue;
      const outcome = runBody(interp, namedChildren(branch), param, scope, verdict);
      if (outcome === 'unreadable' || outcome.stop) return outcome;
      verdict = outcome.verdict;
      continue;
    }
    if (!isHarmless(interp, s)) return 'unreadable';
  }
  return { verdict, stop: false };
}

/** The block an if statement runs, undefined when none does; 'unreadable' when a condition is unknown. */
function takenBranch(interp: Interp, node: PyNode, scope: Scope): PyNode | undefined | 'unreadable' {
  const branches: Array<{ cond?: PyNode; body?: PyNode }> = [{ cond: field(node, 'condition'), body: field(node, 'consequence') }];
  for (const alt of fields(node, 'alternative')) {
    if (alt.type === 'else_clause') branches.push({ body: field(alt, 'body') });
    else branches.push({ cond: field(alt, 'condition'), body: field(alt, 'consequence') });
  }
  for (const b of branches) {
    if (!b.cond) return b.body;
    const taken = truthy(evalExpr(interp, b.cond, scope));
    if (taken === undefined) return 'unreadable';
    if (taken) return b.body;
  }
  return undefined;
}

/** Statements that change nothing a plan reads: a docstring, printing and logging. */
function isHarmless(interp: Interp, statement: PyNode): boolean {
  if (statement.type !== 'expression_statement') return false;
  const e = namedChildren(statement)[0];
  if (e?.type === 'string') return true;
  if (e?.type !== 'call') return false;
  const fn = interp.text(field(e, 'function') ?? e);
  return /^(print|(logger|logging|log|warnings)\.\w+)$/.test(fn);
}

const constant =
  (v: RequiresGradVerdict) =>
  (): RequiresGradVerdict =>
    v;

/** A module that owns parameters, with their names as `named_parameters()` on the loop's object lists them. */
export interface ParameterGroup {
  module: ModV | InstV;
  path: string;
  /** Full names (as the loop's `named_parameters()` gives them) and, at the same index, the module's own names. */
  names: string[];
  own: string[];
}

/**
 * The parameters under a torch module value, grouped by the module (or nn.Parameter) whose `frozen` mark the layers
 * read. A weight two modules share (tying) is named once, by the first module that holds it in registration order, as
 * torch's `named_parameters()` lists it (nanoGPT's tied weight is `transformer.wte.weight`, not `lm_head.weight`).
 */
export function parameterGroups(root: ModV | InstV): ParameterGroup[] {
  const groups = new Map<ModV | InstV, ParameterGroup>();
  const add = (module: ModV | InstV, path: string, own: string): void => {
    const name = joinParameterName(path, own);
    const group = groups.get(module);
    if (group) {
      group.names.push(name);
      group.own.push(own);
    } else groups.set(module, { module, path, names: [name], own: [own] });
  };
  const seen = new Set<Value>();
  const namedWeights = new Set<ModV | InstV>();
  const visit = (v: Value, path: string, depth: number): void => {
    if (depth > 40 || seen.has(v)) return;
    seen.add(v);
    if (v.k === 'inst') {
      for (const [key, a] of v.attrs) if (a.k === 'param' && a.owner.k === 'mod' && a.owner.type === 'Parameter') add(a.owner, joinParameterName(path, key), '');
    }
    if ((v.k === 'inst' || v.k === 'mod') && v.children) {
      for (const [key, child] of v.children) if (isModule(child)) visit(child, joinParameterName(path, key), depth + 1);
      return;
    }
    if (v.k !== 'mod') return;
    for (const name of torchParameterNames(v.op, v.attrs) ?? []) {
      const owner: ModV | InstV = name === 'weight' ? (v.tiedTo ?? v) : v;
      if (name === 'weight') {
        if (namedWeights.has(owner)) continue;
        namedWeights.add(owner);
      }
      add(owner, path, name);
    }
  };
  visit(root, '', 0);
  return [...groups.values()];
}
