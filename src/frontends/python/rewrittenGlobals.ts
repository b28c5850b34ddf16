/**
 * A script that rewrites its own module-level values with code WAP could not read: nanoGPT's train.py writes its
 * defaults (`n_layer = 12`), then `exec(open('configurator.py').read())` replaces them from a config file and
 * `--key=value` arguments on its command line. Where the exec'd code is a file or string WAP knows, it is read
 * (scriptExec.ts) with the run's arguments; where it is not (a path built at run time, no import context), the model
 * read is the one the written defaults build, and every model of the file carries a warning saying so, as
 * unattributed freezes do (frozenParameters.ts): a plan of it is a plan of the defaults.
 */
import type { Diagnostic } from '../../core/ir';
import { field, namedChildren, rangeOf, type PyNode } from './ast';
import type { Interp } from './interpreter';
import { moduleScopeStatements } from './moduleScope';

/** `exec(…)` at module level whose code was not read. */
function rewritesGlobals(interp: Interp, stmt: PyNode): boolean {
  const expr = stmt.type === 'expression_statement' ? namedChildren(stmt)[0] : undefined;
  return expr?.type === 'call' && interp.text(field(expr, 'function') ?? expr) === 'exec' && !interp.execFollowed.has(expr);
}

/** The first module-level statement that rewrites globals, in source order; not inside functions or classes. */
function firstRewrite(interp: Interp, root: PyNode): PyNode | undefined {
  for (const s of moduleScopeStatements(root)) if (rewritesGlobals(interp, s)) return s;
  return undefined;
}

/** The warning a file's models carry when its module-level values are rewritten as it runs; none otherwise. */
export function rewrittenGlobals(interp: Interp, root: PyNode): Diagnostic[] {
  // Read on every keystroke: a file without the words is not walked.
  if (!/\bexec\s*\(/.test(interp.source)) return [];
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
