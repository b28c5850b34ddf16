/**
 * Code that freezes parameters: a fine-tuning script's
 * `for p in model.backbone.parameters(): p.requires_grad = False`,
 * `module.requires_grad_(False)`, or PEFT's LoRA (`get_peft_model`, which
 * freezes the base model and trains small adapters).
 *
 * Where the evaluator reaches a freeze and knows the module, it marks that
 * module and everything under it frozen, in program order: a head replaced
 * after the freeze (`model.fc = nn.Linear(…)`, the torchvision fine-tuning
 * recipe) is a new, trainable module. The layers those modules record carry
 * `frozen`, and the analysis takes their gradients, optimizer state and
 * weight-gradient compute away (core/frozenParameters.ts).
 *
 * A freeze the evaluator cannot attribute (a loop over `named_parameters()`
 * with a condition on the name, a module it cannot compute) stays a warning at
 * its line, repeated by every plan: those parameters are planned as trained.
 * PEFT (peftCalls.ts) freezes its base model here too; adapters it could not
 * read (another method than LoRA, adapters loaded from disk) get a warning.
 */
import type { Diagnostic } from '../../core/ir';
import { field, namedChildren, rangeOf, type ConvertedTree, type PyNode } from './ast';
import { evalExpr } from './expressions';
import type { Interp } from './interpreter';
import { descendants } from './torchModuleValues';
import { truthy, type CallSite, type Scope, type Value } from './values';

/** Freeze sites the evaluator attributed to modules, per file read. */
const attributed = new WeakMap<Interp, Set<PyNode>>();

/** A freeze site the evaluator modelled (peftCalls.ts marks PEFT calls whose adapters it read). */
export function markFreezeModelled(interp: Interp, node: PyNode): void {
  let sites = attributed.get(interp);
  if (!sites) attributed.set(interp, (sites = new Set()));
  sites.add(node);
}

/** Sets (or clears) `frozen` on a module and every module under it; false when `v` is not a module. */
export function setFrozen(v: Value, frozen: boolean): boolean {
  if (v.k !== 'mod' && v.k !== 'inst') return false;
  for (const m of descendants(v)) if (m.k === 'mod' || m.k === 'inst') m.frozen = frozen;
  return true;
}

/** `module.requires_grad_(False)` / `requires_grad_(requires_grad=False)`: freezes when the flag is known. */
export function requiresGradCall(interp: Interp, module: Value, args: Value[], kwargs: Map<string, Value>, site: CallSite): void {
  const flag = args[0] ?? kwargs.get('requires_grad');
  const requires = flag === undefined ? true : truthy(flag);
  if (requires === undefined) return;
  if (setFrozen(module, !requires) && !requires) markFreezeModelled(interp, site.node);
}

/**
 * `for p in E.parameters(): p.requires_grad = False` (or `for n, p in E.named_parameters()`, or
 * `p.requires_grad_(False)`), with that one statement as the body: freezes E. True when the loop was that and
 * E a module; the caller then skips the loop (it builds nothing).
 */
export function freezeLoop(interp: Interp, node: PyNode, scope: Scope): boolean {
  const left = field(node, 'left');
  const right = field(node, 'right');
  const body = field(node, 'body');
  if (!left || !right || !body || right.type !== 'call') return false;
  const fn = field(right, 'function');
  const args = field(right, 'arguments');
  if (fn?.type !== 'attribute' || !args || namedChildren(args).length > 0) return false;
  const method = interp.text(field(fn, 'attribute') ?? fn);
  const names = left.type === 'identifier' ? [left] : namedChildren(left);
  const param = method === 'parameters' && names.length === 1 ? names[0] : method === 'named_parameters' && names.length === 2 ? names[1] : undefined;
  if (param?.type !== 'identifier') return false;
  const statements = namedChildren(body).filter((s) => s.type !== 'comment');
  if (statements.length !== 1 || !freezesName(statements[0], interp.text(param), (n) => interp.text(n))) return false;
  const object = field(fn, 'object');
  if (!object || !setFrozen(evalExpr(interp, object, scope), true)) return false;
  markFreezeModelled(interp, statements[0].type === 'expression_statement' ? (namedChildren(statements[0])[0] ?? statements[0]) : statements[0]);
  return true;
}

/** Whether a statement is `<name>.requires_grad = False` or `<name>.requires_grad_(False)`. */
function freezesName(statement: PyNode, name: string, text: (n: PyNode) => string): boolean {
  const s = statement.type === 'expression_statement' ? namedChildren(statement)[0] : statement;
  return !!s && /^(\w+)\s*\.\s*requires_grad(\s*=\s*False|_\(\s*(requires_grad\s*=\s*)?False\s*\))$/.exec(text(s))?.[1] === name;
}

function firstUnattributedFreeze(node: PyNode, text: (n: PyNode) => string, done: Set<PyNode>): { node: PyNode; how: string } | undefined {
  if (!done.has(node)) {
    if (node.type === 'assignment') {
      const left = field(node, 'left');
      const right = field(node, 'right');
      if (left?.type === 'attribute' && text(field(left, 'attribute') ?? left) === 'requires_grad' && right && text(right) === 'False') return { node, how: '`requires_grad = False`' };
    }
    if (node.type === 'call') {
      const fn = field(node, 'function');
      const args = field(node, 'arguments');
      const name = fn ? text(fn) : '';
      if (/\.requires_grad_$/.test(name) && args && /^\(\s*(requires_grad\s*=\s*)?False\s*\)$/.test(text(args))) return { node, how: '`requires_grad_(False)`' };
    }
  }
  for (const child of namedChildren(node)) {
    const found = firstUnattributedFreeze(child, text, done);
    if (found) return found;
  }
  return undefined;
}

/** The first PEFT wrapper call whose adapters were not read (by the name it is called by: `get_peft_model`, `peft.…`). */
function firstPeftCall(node: PyNode, text: (n: PyNode) => string, done: Set<PyNode>): PyNode | undefined {
  if (node.type === 'call' && !done.has(node)) {
    const fn = field(node, 'function');
    if (fn && PEFT_NAMES.test(text(fn))) return node;
  }
  for (const child of namedChildren(node)) {
    const found = firstPeftCall(child, text, done);
    if (found) return found;
  }
  return undefined;
}

/** Words without which a file freezes nothing (the tree walks below look for their calls and assignments). */
const FREEZE_WORDS = /requires_grad|get_peft_model|PeftModel/;

/** PEFT's entry points as a script names them. */
const PEFT_NAMES = /(^|\.)(get_peft_model|PeftModel\.from_pretrained)$/;

const atNode = (node: PyNode, message: string, code: string): Diagnostic => {
  const r = rangeOf(node);
  return { severity: 'warning', code, carriesToPlan: true, line: r.line, column: r.column, endLine: r.endLine, endColumn: r.endColumn, message };
};

/**
 * What the file's freezing leaves unmodelled, once it has been read: the first freeze the evaluator could not
 * attribute to a module, and PEFT's adapters. Each carries to every plan.
 */
export function unmodelledFreezes(interp: Interp, tree: ConvertedTree): Diagnostic[] {
  // Read on every keystroke: a file that never mentions freezing is not walked again.
  if (!FREEZE_WORDS.test(tree.source)) return [];
  const root = tree.root;
  const text = (n: PyNode): string => interp.text(n);
  const out: Diagnostic[] = [];
  const done = attributed.get(interp) ?? new Set<PyNode>();
  const unread = firstUnattributedFreeze(root, text, done);
  if (unread) {
    out.push(atNode(unread.node, `This code freezes parameters (${unread.how}) that WAP cannot attribute to a module; it plans them as trained, with their gradients, optimizer state and weight-gradient compute, so memory and backward time are over-stated for them`, 'frozen-parameters'));
  }
  const peft = firstPeftCall(root, text, done);
  if (peft) {
    const fn = text(field(peft, 'function') ?? peft).split('.').pop();
    out.push(atNode(peft, `PEFT (\`${fn}\`) freezes the base model, which WAP plans frozen; the adapters it trains are not modelled (WAP reads LoRA from a LoraConfig written in the code)`, 'peft-adapters'));
  }
  return out;
}
