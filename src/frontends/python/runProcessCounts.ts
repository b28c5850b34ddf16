/**
 * The process counts a training script can start with, as its own asserts state them. nanoGPT asserts
 * `gradient_accumulation_steps % ddp_world_size == 0` before it divides its 40 accumulation steps over the processes,
 * so it runs on 1, 2, 4, 5 or 8 GPUs and stops on 3; llm.c and build-nanogpt assert that their token budget is a
 * multiple of `B * T * ddp_world_size`. A plan on a GPU count the script refuses is a wrong answer, so the planner
 * keeps to these counts (planner/runGpuCounts.ts). Read where the assert runs, with the values it sees: nanoGPT's
 * accumulation is 40 there and unknown after the division. An assert WAP cannot evaluate states no rule and is said.
 */
import type { ProcessCountRule } from '../../core/runFacts';
import { PROCESS_COUNT } from '../../core/batchOptions';
import { field, namedChildren, rangeOf, type PyNode } from './ast';
import { binaryOperator, divisorFactors } from './productFactors';
import { evalExpr } from './expressions';
import type { Interp } from './interpreter';
import { positiveWhole, type Scope } from './values';
import { short } from './branches';
import { fileLabel } from './runFacts';

/** The operands of `<dividend> % <divisor> == 0` (either side of the `==`), or undefined for any other condition. */
function moduloIsZero(interp: Interp, cond: PyNode): { dividend: PyNode; divisor: PyNode } | undefined {
  if (cond.type !== 'comparison_operator') return undefined;
  const parts = namedChildren(cond);
  const ops = cond.children.filter((c) => !c.named).map((c) => interp.text(c));
  if (parts.length !== 2 || ops.length !== 1 || ops[0] !== '==') return undefined;
  const zeroAt = parts.findIndex((p) => p.type === 'integer' && interp.text(p) === '0');
  if (zeroAt < 0) return undefined;
  let modulo = parts[1 - zeroAt];
  while (modulo.type === 'parenthesized_expression' && namedChildren(modulo).length === 1) modulo = namedChildren(modulo)[0];
  if (binaryOperator(interp, modulo) !== '%') return undefined;
  const dividend = field(modulo, 'left');
  const divisor = field(modulo, 'right');
  return dividend && divisor ? { dividend, divisor } : undefined;
}

/** The assert's rule, when its divisor is a product with exactly one process count and every other factor is known. */
function ruleOf(interp: Interp, node: PyNode, scope: Scope): ProcessCountRule | 'unread' | undefined {
  const cond = namedChildren(node)[0];
  const parts = cond && moduloIsZero(interp, cond);
  if (!parts) return undefined;
  const factors = divisorFactors(interp, parts.divisor, node);
  const counts = factors.filter((f) => PROCESS_COUNT.test(interp.text(f)));
  if (counts.length !== 1) return undefined;
  const dividend = positiveWhole(evalExpr(interp, parts.dividend, scope));
  let factor = 1;
  for (const f of factors) {
    if (f === counts[0]) continue;
    const n = positiveWhole(evalExpr(interp, f, scope));
    if (n === undefined) return 'unread';
    factor *= n;
  }
  if (dividend === undefined) return 'unread';
  const file = fileLabel(interp.file);
  const values = factors.length > 1 ? ` (${interp.text(parts.dividend)} ${dividend}, the other factors ${factor})` : ` (${interp.text(parts.dividend)} ${dividend})`;
  return { dividend, factor, said: `${file}:${rangeOf(node).line} asserts \`${short(interp.text(cond))}\`${values}` };
}

/** An `assert` the run reaches: a rule on its process count is kept (the first time each assert is read). */
export function noteProcessCountAssert(interp: Interp, node: PyNode, scope: Scope): void {
  if (node.lines !== interp.mainRoot?.lines) return; // an imported module's assert is not the run's
  const rule = ruleOf(interp, node, scope);
  if (rule === undefined) return;
  if (rule === 'unread') {
    interp.warn(node, `\`${short(interp.text(namedChildren(node)[0]))}\` limits the GPU counts this script runs on, but WAP could not read its numbers: the plan may pick a count the script refuses`, 'process-count-unread', 'info');
    return;
  }
  if (!interp.run.processCounts.some((r) => r.said === rule.said)) interp.run.processCounts.push(rule);
}

/** The spec with the run's process-count rules, when the script states some. */
export function withRunProcessCounts<T extends { processCountRules?: ProcessCountRule[] }>(spec: T, interp: Interp): T {
  return interp.run.processCounts.length > 0 && !spec.processCountRules ? { ...spec, processCountRules: [...interp.run.processCounts] } : spec;
}
