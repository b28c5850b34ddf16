/**
 * The statements that wrap a block, read as a script runs them: `with open(f) as fh:` binds the value of each item
 * that names a target (a file object's `__enter__` is itself); an item without one (`torch.no_grad()`, autocast) is
 * evaluated too, for what it says about the run (the autocast a training step runs under); `try` runs its body, then on a
 * raise in user code its first `except` (WAP does not match exception types: nanoGPT's configurator catches
 * literal_eval's ValueError to keep a word), else its `else`, then `finally`.
 */
import { field, namedChildren, type PyNode } from './ast';
import { assignTarget } from './assignment';
import { evalExpr } from './expressions';
import type { Interp } from './interpreter';
import { RaiseSignal } from './signals';
import { skipsEvaluationBlock } from './evaluationPasses';
import type { Scope } from './values';

export function execWith(interp: Interp, node: PyNode, scope: Scope): void {
  const clause = namedChildren(node).find((c) => c.type === 'with_clause');
  const contexts: PyNode[] = [];
  for (const item of clause ? namedChildren(clause) : []) {
    const value = field(item, 'value');
    const alias = value?.type === 'as_pattern' ? field(value, 'alias') : undefined;
    const target = alias && namedChildren(alias)[0];
    // The context is evaluated with or without `as`: `with torch.autocast(device_type="cuda", dtype=torch.bfloat16):`
    // is how most training steps state their precision.
    const expr = value?.type === 'as_pattern' ? namedChildren(value)[0] : value;
    if (expr) contexts.push(expr);
    const context = expr && evalExpr(interp, expr, scope);
    if (target && context) assignTarget(interp, target, context, scope);
  }
  const body = field(node, 'body');
  if (body && !skipsEvaluationBlock(interp, node, contexts, body, scope)) interp.exec(body, scope);
}

export function execTry(interp: Interp, node: PyNode, scope: Scope): void {
  const body = field(node, 'body');
  let raised = false;
  try {
    if (body) interp.exec(body, scope);
  } catch (e) {
    if (!(e instanceof RaiseSignal)) throw e;
    raised = true;
  }
  const clauses = namedChildren(node);
  const handler = raised ? clauses.find((c) => c.type === 'except_clause' || c.type === 'except_group_clause') : clauses.find((c) => c.type === 'else_clause');
  const block = handler && (field(handler, 'body') ?? namedChildren(handler).find((c) => c.type === 'block'));
  if (block) interp.exec(block, scope);
  for (const c of clauses) if (c.type === 'finally_clause') interp.execBlock(c.children, scope);
}
