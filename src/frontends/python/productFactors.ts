/**
 * The factors a training script divides by when it shares a whole-run number over its processes: llm.c's
 * `tokens_per_fwdbwd = B * T * ddp_world_size`, build-nanogpt's `(B * T * ddp_world_size)`. An assert on the process
 * count (runProcessCounts.ts) and an accumulation computed from a budget (runTokenBudget.ts) both read them.
 */
import { PROCESS_COUNT } from '../../core/batchOptions';
import { field, namedChildren, rangeOf, type PyNode } from './ast';
import type { Interp } from './interpreter';

/** The operator of a binary expression as written (`*`, `%`, `//`), or undefined for any other node. */
export function binaryOperator(interp: Interp, node: PyNode): string | undefined {
  const op = node.type === 'binary_operator' ? node.children.find((c) => c.field === 'operator') : undefined;
  return op && interp.text(op);
}

/** The factors of a product, through parentheses: `B * T * ddp_world_size` → [B, T, ddp_world_size]. */
function factorsOf(interp: Interp, node: PyNode): PyNode[] {
  if (node.type === 'parenthesized_expression' && namedChildren(node).length === 1) return factorsOf(interp, namedChildren(node)[0]);
  if (binaryOperator(interp, node) === '*') {
    const left = field(node, 'left');
    const right = field(node, 'right');
    if (left && right) return [...factorsOf(interp, left), ...factorsOf(interp, right)];
  }
  return [node];
}

/** What `name` was assigned last before `before` in the analysed file. */
function assignedBefore(interp: Interp, name: string, before: PyNode): PyNode | undefined {
  let found: PyNode | undefined;
  const line = rangeOf(before).line;
  const visit = (node: PyNode): void => {
    if (node.type === 'assignment' && rangeOf(node).line < line) {
      const left = field(node, 'left');
      const right = field(node, 'right');
      if (left && right && interp.text(left) === name) found = right;
    }
    for (const child of namedChildren(node)) visit(child);
  };
  if (interp.mainRoot) visit(interp.mainRoot);
  return found;
}

/** How many named products a divisor is followed through: nanochat's takes two; more than a few is no script's way. */
const MAX_NAMED_HOPS = 8;

/**
 * The factors of a divisor read at `at`, each name that stands for a product replaced by that product's factors, as
 * the file assigned it before (llm.c divides by `tokens_per_fwdbwd`, a product named a line earlier; nanochat by
 * `world_tokens_per_fwdbwd = tokens_per_fwdbwd * ddp_world_size`, whose first factor is `device_batch_size *
 * max_seq_len`). A process count is never expanded (it is the factor the readers look for), nor a name assigned
 * anything but a product (`B = 64` stays `B`, which the readers name and evaluate).
 */
export function divisorFactors(interp: Interp, divisor: PyNode, at: PyNode): PyNode[] {
  let hops = 0;
  const expand = (node: PyNode, before: PyNode): PyNode[] =>
    factorsOf(interp, node).flatMap((factor) => {
      if (factor.type !== 'identifier' || PROCESS_COUNT.test(interp.text(factor)) || hops >= MAX_NAMED_HOPS) return [factor];
      const assigned = assignedBefore(interp, interp.text(factor), before);
      if (!assigned || factorsOf(interp, assigned).length < 2) return [factor];
      hops++;
      // The product's own names were assigned before it: looked up from its own line.
      return expand(assigned, assigned);
    });
  return expand(divisor, at);
}
