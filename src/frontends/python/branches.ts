/**
 * Conditions the evaluator cannot decide. Model code branches mostly on its
 * own arguments, and those are known when the model is built with its
 * defaults (`weights is None` when `weights=None`); what stays unknown is
 * usually input validation (`if not isinstance(setting, Sequence): raise …`)
 * or a data-dependent check. The rule: a branch that only raises is taken to
 * be validation and skipped whenever another way on exists; otherwise the
 * first possible branch is followed, and an info diagnostic says that a guess
 * decided the model. A `raise` that is really reached is reported too: the
 * call it aborts has an unknown result, which must never be silent.
 */
import { field, namedChildren, type PyNode } from './ast';
import { asksTheGpu } from './cudaQueries';
import { evalExpr } from './expressions';
import { forgetUnreadEffects } from './unreadCode';
import type { Interp } from './interpreter';
import type { RaiseSignal } from './signals';
import { truthy, type FuncV, type Scope, type Value } from './values';

export interface Branch {
  /** Undefined for `else`. */
  cond?: PyNode;
  body?: PyNode;
}

/** Statements of a block that is only a guard: it raises and never returns. */
function onlyRaises(body: PyNode | undefined): boolean {
  if (!body) return false;
  const statements = namedChildren(body).filter((s) => s.type !== 'comment');
  return statements.some((s) => s.type === 'raise_statement') && !statements.some((s) => s.type === 'return_statement');
}

/** Which branch of an if/elif/else chain to run; undefined when none. */
export function decideBranch(interp: Interp, branches: Branch[], scope: Scope): number | undefined {
  for (let i = 0; i < branches.length; i++) {
    const { cond, body } = branches[i];
    const known = cond ? truthy(evalExpr(interp, cond, scope)) : true;
    if (known === false) continue;
    if (known === true) return i;
    if (onlyRaises(body)) continue;
    if (asksTheGpu(interp, cond!)) {
      note(interp, cond!, `\`${short(interp.text(cond!))}\` asks what the run's GPU can do, which depends on the GPU the plan is for: WAP read neither branch, and what they assign is unknown.`, 'gpu-query', 'info');
      const bodies = branches.map((b) => b.body).filter((b): b is PyNode => b !== undefined);
      forgetUnreadEffects(interp, bodies, `\`${short(interp.text(cond!))}\` depends on the GPU the plan is for, and WAP read neither branch`, scope);
      return undefined;
    }
    note(interp, cond!, `Could not decide \`${short(interp.text(cond!))}\` while reading the model; took this branch (the first one that does not only raise).`, 'guessed-branch', 'info');
    return i;
  }
  return undefined;
}

/** A `raise` that aborted a user function: its caller gets Unknown, and the model says so. */
export function reportRaise(interp: Interp, fn: FuncV, signal: RaiseSignal): void {
  const where = signal.node ?? field(fn.node, 'name') ?? fn.node;
  note(interp, where, `\`${short(interp.text(where))}\` is reached in ${fn.name}() while reading the model; what it returns is unknown.`, 'raise-reached', 'warning');
}

const reported = new WeakMap<object, Set<PyNode>>();

/** A node with no call in it: reading it changes nothing, so both sides of a conditional may be read. */
function callFree(node: PyNode): boolean {
  return node.type !== 'call' && namedChildren(node).every(callFree);
}

const sameValue = (x: Value, y: Value): boolean => x.k === y.k && (x.k === 'none' || ((x.k === 'num' || x.k === 'str' || x.k === 'bool') && x.v === (y as typeof x).v));

/**
 * Which side of `a if cond else b` to read. An undecided condition takes the side before its `if`, as an undecided
 * `if` statement takes its first branch, and says so, unless both sides are plain values that agree; one that asks
 * the run's GPU reads neither ('neither').
 */
export function decideConditional(interp: Interp, node: PyNode, scope: Scope): 'a' | 'b' | 'neither' {
  const [a, cond, b] = namedChildren(node);
  const known = cond ? truthy(evalExpr(interp, cond, scope)) : undefined;
  if (known !== undefined || !cond) return known === false ? 'b' : 'a';
  if (asksTheGpu(interp, cond)) return 'neither';
  if (a && b && callFree(a) && callFree(b) && sameValue(evalExpr(interp, a, scope), evalExpr(interp, b, scope))) return 'a';
  note(interp, cond, `Could not decide \`${short(interp.text(cond))}\` while reading the model; took the value before its \`if\` (\`${short(a ? interp.text(a) : '')}\`).`, 'guessed-branch', 'info');
  return 'a';
}

function note(interp: Interp, node: PyNode, message: string, code: string, severity: 'info' | 'warning'): void {
  const key = interp.graph ?? interp;
  let seen = reported.get(key);
  if (!seen) reported.set(key, (seen = new Set()));
  if (seen.has(node)) return;
  seen.add(node);
  interp.warn(node, message, code, severity);
}

/** Code quoted in a message: one line, at most 80 characters. */
export function short(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > 80 ? line.slice(0, 77) + '…' : line;
}
