/**
 * What reading one freeze loop's condition may cost. A Hugging Face model's freeze loop is decided when its graph is
 * built (transformersModules.ts `hfTrainedGraph`), after the file was read and outside every guard that turns the
 * interpreter's step budget into a warning: spending the file's budget there threw a LimitSignal, a plain object,
 * up to the frontend's last catch, and the whole file became "internal error ([object Object])". Each loop therefore
 * gets a budget of its own, and running out of it is an UnreadFreezeStep (../freezing/unreadSteps.ts): the loop is
 * dropped whole with a warning at it, and the model is still reported, marked incomplete.
 */
import type { RequiresGradVerdict } from '../freezing/freezeSteps';
import { UnreadFreezeStep } from '../freezing/unreadSteps';
import type { Interp } from './interpreter';
import { LimitSignal, isSignal } from './signals';

/**
 * Evaluation steps one freeze loop may spend deciding its names, every name (or name pattern, freezeNamePatterns.ts)
 * charged one more. A condition read once per name pattern spends a few hundred (DeepSeek-V3's `"experts" in name`:
 * 24 patterns, 104 steps); one read name by name spends about 20 a name, DeepSeek-V3's 45,453 names (4.x's and
 * transformers 5's) about 885,000 for `int(name.split(".")[2]) < 30`, which fits, in about a second. A condition that
 * costs much more per name, on a model that size, is said and not applied.
 */
export const FREEZE_LOOP_STEPS = 2_000_000;

/**
 * `evaluate` run on the loop's own budget: the interpreter's steps and limit are set aside for each call and put back
 * after it. A `raise` or `return` escaping the condition leaves that name undecided ('unreadable'); a spent budget or
 * a depth limit throws UnreadFreezeStep.
 */
export function onLoopBudget(interp: Interp, evaluate: (name: string) => RequiresGradVerdict, budget = FREEZE_LOOP_STEPS): (name: string) => RequiresGradVerdict {
  let spent = 0;
  let decided = 0;
  return (name) => {
    const [steps, maxSteps] = [interp.steps, interp.maxSteps];
    interp.steps = 0;
    interp.maxSteps = budget - spent;
    try {
      interp.tick();
      const verdict = evaluate(name);
      decided++;
      return verdict;
    } catch (e) {
      if (e instanceof LimitSignal) throw new UnreadFreezeStep(spent + interp.steps > budget ? `after ${budget.toLocaleString('en-US')} evaluation steps` : e.why, decided);
      if (isSignal(e)) return 'unreadable';
      throw e;
    } finally {
      spent += interp.steps;
      interp.steps = steps;
      interp.maxSteps = maxSteps;
    }
  };
}
