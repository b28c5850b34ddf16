/**
 * `for` and `while`, read as a script runs them, and the one rule that makes a script readable at all: a loop at the
 * analysed file's module level (a training loop) runs on a budget of its own and is cut, so the statements after it
 * still run. While such a loop runs, `Interp.scriptLoops` says so: evaluation inside it is skipped (evaluationPasses.ts).
 */
import { field, rangeOf, type PyNode } from './ast';
import { iterate } from './access';
import { assignTarget } from './assignment';
import { evalExpr } from './expressions';
import { freezeLoop } from './freezeLoops';
import { forgetLoopEffects } from './unreadCode';
import { oneMicroStep } from './accumulationLoop';
import type { Interp } from './interpreter';
import { BreakSignal, ContinueSignal, LimitSignal } from './signals';
import { truthy, type Scope } from './values';
import { noteLoopLoader } from './runLoaderBatch';

const MAX_WHILE_ITERATIONS = 10_000;

/**
 * Steps a script part of the analysed file may take (its `__main__` block, a loop at its module level): enough for a
 * check call or a loop that builds layers, not for a training loop's iterations, which would spend the file's budget.
 */
export const SCRIPT_PART_STEPS = 20_000;

export function execLoop(interp: Interp, node: PyNode, scope: Scope): void {
  if (node.type === 'for_statement') execFor(interp, node, scope);
  else execWhile(interp, node, scope);
}

/**
 * A loop at the analysed file's module level (imported modules run in scopes of their own): a script's training
 * loop (nanoGPT's `while True:`) is cut after SCRIPT_PART_STEPS, and the statements after it still run.
 */
export function execScriptLoop(interp: Interp, node: PyNode, scope: Scope): void {
  const fileBudget = interp.maxSteps;
  interp.maxSteps = Math.min(fileBudget, interp.steps + SCRIPT_PART_STEPS);
  const loopBudget = interp.maxSteps;
  interp.scriptLoops++;
  try {
    execLoop(interp, node, scope);
  } catch (e) {
    const cut = e instanceof LimitSignal && interp.steps > loopBudget && loopBudget < fileBudget;
    if (!cut) throw e;
    interp.warn(node, `The loop at line ${rangeOf(node).line} runs on past what reading the model needs (a training or evaluation loop): WAP read its first iterations, then went on with the statements after it`, 'script-loop-cut', 'info');
  } finally {
    interp.scriptLoops--;
    interp.maxSteps = fileBudget;
  }
}

function execFor(interp: Interp, node: PyNode, scope: Scope): void {
  const left = field(node, 'left');
  const right = field(node, 'right');
  const body = field(node, 'body');
  if (!left || !right || !body || freezeLoop(interp, node, scope)) return;
  const iterable = evalExpr(interp, right, scope);
  noteLoopLoader(interp, iterable, node, body);
  const known = iterate(interp, iterable) ?? (iterable.k === 'unknown' ? oneMicroStep(interp, right) : undefined);
  // A loop over something unknown builds nothing: say so, or the layers it would create vanish silently.
  if (!known && iterable.k !== 'tensor') {
    interp.warn(right, `Cannot iterate \`${interp.text(right).slice(0, 80)}\` while reading the model (its value is unknown); the loop is skipped`, 'unknown-loop');
    forgetLoopEffects(interp, body, right, scope);
  }
  const items = known ?? [];
  let broke = false;
  for (const item of items) {
    interp.tick();
    assignTarget(interp, left, item, scope);
    try {
      interp.exec(body, scope);
    } catch (e) {
      if (e instanceof BreakSignal) {
        broke = true;
        break;
      }
      if (!(e instanceof ContinueSignal)) throw e;
    }
  }
  const orelse = field(node, 'alternative');
  if (!broke && orelse) interp.execBlock(orelse.children, scope);
}

function execWhile(interp: Interp, node: PyNode, scope: Scope): void {
  const cond = field(node, 'condition');
  const body = field(node, 'body');
  if (!cond || !body) return;
  for (let i = 0; i < MAX_WHILE_ITERATIONS; i++) {
    if (truthy(evalExpr(interp, cond, scope)) !== true) return;
    try {
      interp.exec(body, scope);
    } catch (e) {
      if (e instanceof BreakSignal) return;
      if (!(e instanceof ContinueSignal)) throw e;
    }
  }
}
