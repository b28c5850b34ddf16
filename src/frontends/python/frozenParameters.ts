/**
 * Code that freezes parameters: a fine-tuning script's
 * `module.requires_grad_(False)`, its freeze loops (freezeLoops.ts), or PEFT's
 * LoRA (`get_peft_model`, which freezes the base model and trains small
 * adapters).
 *
 * Where the evaluator reaches a freeze and knows the module, it marks that
 * module and everything under it frozen, in program order: a head replaced
 * after the freeze (`model.fc = nn.Linear(…)`, the torchvision fine-tuning
 * recipe) is a new, trainable module. The layers those modules record carry
 * `frozen`, and the analysis takes their gradients, optimizer state and
 * weight-gradient compute away (core/frozenParameters.ts). A Hugging Face
 * model's freezes are kept as steps applied to its graph
 * (transformersModules.ts).
 *
 * A freeze the evaluator cannot attribute (a condition it cannot compute, a
 * module it cannot reach) stays a warning at its line, repeated by every plan:
 * those parameters are planned as trained.
 * PEFT (peftCalls.ts) freezes its base model here too; adapters it could not
 * read (another method than LoRA, adapters loaded from disk) get a warning.
 */
import type { Diagnostic } from '../../core/ir';
import { field, namedChildren, rangeOf, type ConvertedTree, type PyNode } from './ast';
import type { Interp } from './interpreter';
import { descendants } from './torchModuleValues';
import { decideParameters, parameterStateDiagnostics, resetParameterStates } from './parameterStates';
import { addHfFreezeStep, hfParameterRequiresGrad } from './transformersModules';
import { torchParameterNames } from '../freezing/parameterNames';
import { truthy, type CallSite, type Value } from './values';

/** Freeze sites the evaluator attributed to modules, per file read. */
const attributed = new WeakMap<Interp, Set<PyNode>>();

/** A freeze site the evaluator modelled (peftCalls.ts marks PEFT calls whose adapters it read). */
export function markFreezeModelled(interp: Interp, node: PyNode): void {
  let sites = attributed.get(interp);
  if (!sites) attributed.set(interp, (sites = new Set()));
  sites.add(node);
}

/**
 * Sets (or clears) `frozen` on a module, every module under it and their nn.Parameters (ViT's class token and
 * position embedding); a Hugging Face model or submodule gets a freeze step at `site`. False when `v` is neither.
 */
export function setFrozen(v: Value, frozen: boolean, site?: CallSite): boolean {
  if (v.k === 'hf' && (v.what === 'model' || v.what === 'module') && site) {
    addHfFreezeStep(v, () => !frozen, site.range);
    return true;
  }
  if (v.k !== 'mod' && v.k !== 'inst') return false;
  for (const m of descendants(v)) {
    if (m.k !== 'mod' && m.k !== 'inst') continue;
    m.frozen = frozen;
    resetParameterStates(m);
    if (m.k !== 'inst') continue;
    for (const a of m.attrs.values()) {
      if (a.k !== 'param' || a.owner.k !== 'mod' || a.owner.type !== 'Parameter') continue;
      a.owner.frozen = frozen;
      resetParameterStates(a.owner);
    }
  }
  return true;
}

/**
 * `model.fc.weight.requires_grad = False` (or `.requires_grad_(False)`), also on a Hugging Face layer's parameter:
 * an nn.Parameter freezes alone; a module's weight or bias is kept per parameter (parameterStates.ts), so the
 * module is frozen once all its parameters are, and one left split is planned trained and said.
 */
export function parameterRequiresGrad(interp: Interp, p: Value, flag: Value, node: PyNode): void {
  const requires = truthy(flag);
  if (requires === undefined) return;
  if (p.k === 'hf' && p.what === 'parameter') {
    hfParameterRequiresGrad(p, requires, rangeOf(node));
  } else if (p.k === 'param') {
    const owner = p.owner;
    // The module as the code names it (`model.fc` of `model.fc.weight.requires_grad`), for the message.
    const label = interp.text(node).replace(/\s+/g, '').replace(/\.requires_grad_?(\(.*\))?$/, '').replace(/\.(weight|bias)$/, '');
    const own = p.name && owner.k === 'mod' ? (torchParameterNames(owner.op, owner.attrs) ?? [p.name]) : [p.name ?? ''];
    decideParameters(interp, owner, own, (n) => (n === (p.name ?? '') ? requires : undefined), label, rangeOf(node));
  } else return;
  markFreezeModelled(interp, node);
}

/** `module.requires_grad_(False)` / `requires_grad_(requires_grad=False)`: freezes when the flag is known. */
export function requiresGradCall(interp: Interp, module: Value, args: Value[], kwargs: Map<string, Value>, site: CallSite): void {
  const flag = args[0] ?? kwargs.get('requires_grad');
  const requires = flag === undefined ? true : truthy(flag);
  if (requires === undefined) return;
  if (setFrozen(module, !requires, site) && !requires) markFreezeModelled(interp, site.node);
}

function firstUnattributedFreeze(node: PyNode, text: (n: PyNode) => string, done: Set<PyNode>): { node: PyNode; how: string } | undefined {
  // An assignment is attributed as a whole or through its target (`fc.weight.requires_grad = False`: setAttr's node).
  const target = node.type === 'assignment' ? field(node, 'left') : undefined;
  if (!done.has(node) && !(target && done.has(target))) {
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
  const out: Diagnostic[] = parameterStateDiagnostics(interp);
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
