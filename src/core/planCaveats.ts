/**
 * Model diagnostics that change what any plan of the model means, not which layers it has: parameters planned as
 * trained that the code freezes in a way WAP cannot attribute, PEFT adapters it does not model, module-level values
 * the script rewrites as it runs (the model read is the one its written defaults build), and the command line its
 * argparse was read with (the defaults, or a launch script's arguments, size the model). The editor shows
 * them at their lines; a plan is read elsewhere (the CLI, the plan view, an exported report), so it repeats them.
 */
import type { Diagnostic } from './ir';

const PLAN_CAVEAT_CODES: ReadonlySet<string> = new Set(['frozen-parameters', 'peft-adapters', 'rewritten-globals', 'script-arguments', 'script-arguments-unknown']);

/** The model's diagnostics a plan of it repeats, once each. */
export function planCaveats(diagnostics: readonly Diagnostic[]): Diagnostic[] {
  const seen = new Set<string>();
  return diagnostics.filter((d) => d.code !== undefined && PLAN_CAVEAT_CODES.has(d.code) && !seen.has(d.message) && seen.add(d.message) !== undefined);
}
