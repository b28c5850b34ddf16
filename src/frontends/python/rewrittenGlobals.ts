/**
 * A script that rewrites its own module-level values as it runs: nanoGPT's train.py writes its defaults
 * (`n_layer = 12`, `batch_size = 12`), then `exec(open('configurator.py').read())` replaces them from a config file
 * and `--key=value` arguments on its command line. WAP reads code, never runs it, so the model it reads is the one
 * the written defaults build; a run with `config/train_shakespeare_char.py` trains another. Every model of such a
 * file carries a warning saying so, as unattributed freezes do (frozenParameters.ts): a plan of it is a plan of the
 * defaults.
 */
import type { Diagnostic } from '../../core/ir';
import { field, namedChildren, rangeOf, type PyNode } from './ast';
import type { Interp } from './interpreter';

/** Statements whose blocks run in the module's own scope. */
const MODULE_BLOCKS = new Set(['module', 'block', 'if_statement', 'elif_clause', 'else_clause', 'try_statement', 'except_clause', 'finally_clause', 'with_statement', 'ERROR']);

/** `exec(…)` at module level, or a write through `globals()` (`globals().update(…)`, `globals()[key] = …`). */
function rewritesGlobals(interp: Interp, stmt: PyNode): boolean {
  if (stmt.type !== 'expression_statement') return false;
  const expr = namedChildren(stmt)[0];
  if (!expr) return false;
  if (expr.type === 'call') {
    const callee = interp.text(field(expr, 'function') ?? expr);
    return callee === 'exec' || /^(globals|vars)\(\s*\)\.update$/.test(callee);
  }
  const left = expr.type === 'assignment' || expr.type === 'augmented_assignment' ? field(expr, 'left') : undefined;
  return left?.type === 'subscript' && /^(globals|vars)\(\s*\)$/.test(interp.text(field(left, 'value') ?? left));
}

/** The first module-level statement that rewrites globals, in source order; not inside functions or classes. */
function firstRewrite(interp: Interp, node: PyNode): PyNode | undefined {
  for (const child of namedChildren(node)) {
    if (rewritesGlobals(interp, child)) return child;
    if (!MODULE_BLOCKS.has(child.type)) continue;
    const found = firstRewrite(interp, child);
    if (found) return found;
  }
  return undefined;
}

/** The warning a file's models carry when its module-level values are rewritten as it runs; none otherwise. */
export function rewrittenGlobals(interp: Interp, root: PyNode): Diagnostic[] {
  // Read on every keystroke: a file without the words is not walked.
  if (!/\bexec\s*\(|\b(globals|vars)\s*\(\s*\)/.test(interp.source)) return [];
  const site = firstRewrite(interp, root);
  if (!site) return [];
  const r = rangeOf(site);
  const code = interp.text(site).replace(/\s+/g, ' ').slice(0, 60);
  return [
    {
      severity: 'warning',
      message: `\`${code}\` rewrites this script's module-level values as it runs (a config file or --key=value arguments on its command line, as nanoGPT's configurator.py does); WAP does not run it, so the model was read with the values the file writes, and a run given others trains another model`,
      line: r.line,
      column: r.column,
      endLine: r.endLine,
      endColumn: r.endColumn,
      code: 'rewritten-globals',
    },
  ];
}
