/**
 * A freeze step WAP stopped reading: its condition on parameter names needed more evaluation than WAP gives one
 * loop (DeepSeek-V3 lists 45,337 parameters, 256 experts × 3 projections in each of 58 MoE layers, and a condition
 * WAP cannot decide by name pattern is read name by name). Such a step is dropped whole, never half applied: a half-applied
 * freeze would be a wrong answer nobody is told of, while a dropped one leaves those parameters as they were before
 * the loop, which the warning says and the model carries as incomplete.
 */
import { diagnosticAt, type Diagnostic, type SourceRange } from '../../core/ir';

/**
 * Thrown by a step's verdict function (python/freezeLoopBudget.ts) when its budget is spent; the caller
 * (freezeSteps.ts `applyFreezeSteps`, python/freezeLoops.ts) drops the step and says so with `unreadStepDiagnostic`.
 * An Error, so that anything that still reaches a generic catch prints its message.
 */
export class UnreadFreezeStep extends Error {
  constructor(
    /** Why reading stopped, in words ('after 2,000,000 evaluation steps'). */
    readonly why: string,
    /** How many distinct names (or name patterns) were decided before it stopped. */
    readonly decided: number,
  ) {
    super(`freeze loop not read: ${why}`);
    this.name = 'UnreadFreezeStep';
  }
}

/** Parameters (full names) a step over `prefix` reaches: its loop's iterations over `named_parameters()`. */
export function parametersUnder(prefix: string, names: Iterable<string>): number {
  let n = 0;
  for (const name of names) if (!prefix || name === prefix || name.startsWith(prefix + '.')) n++;
  return n;
}

/**
 * The warning at the loop: how many iterations it runs (`parameters`, where the caller can count them), why WAP
 * stopped, and that none of its freezes is applied.
 */
export function unreadStepDiagnostic(unread: UnreadFreezeStep, parameters: number | undefined, range: SourceRange): Diagnostic {
  const runs = parameters ? `runs ${parameters.toLocaleString('en-US')} iterations` : 'runs more iterations';
  const message =
    `This loop ${runs} over the model's parameters, more than WAP reads: ` +
    `its condition was decided for ${unread.decided.toLocaleString('en-US')} parameter names before reading stopped (${unread.why}); ` +
    `its freezes are not applied, so those parameters are planned as they were before the loop (trained unless frozen earlier), ` +
    `over-stating their gradients, optimizer state and backward work. A condition that tests the name only against fixed strings ` +
    `(\`"experts" in name\`, \`name.startswith(…)\`, \`any(k in name for k in keep)\`) is read once per name pattern and fits`;
  return { ...diagnosticAt('warning', 'frozen-parameters', message, range), incomplete: true, carriesToPlan: true };
}
