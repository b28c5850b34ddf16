/**
 * The statements that run in a module's own scope, in source order: its top level and the blocks of its
 * if/elif/else, try/except/else/finally and with statements, nested; never a function's or a class's body. A script
 * builds its model inside `if init_from == 'scratch':` (models.ts) and execs its configurator at that level
 * (rewrittenGlobals.ts); both walk the module this way.
 */
import { field, namedChildren, type PyNode } from './ast';

const MODULE_BLOCKS = new Set(['module', 'block', 'if_statement', 'elif_clause', 'else_clause', 'try_statement', 'except_clause', 'finally_clause', 'with_statement', 'ERROR']);

/** `if __name__ == "__main__":`, whose part models.ts runs apart. */
export function isMainGuard(node: PyNode, text: (n: PyNode) => string): boolean {
  const condition = node.type === 'if_statement' ? field(node, 'condition') : undefined;
  return !!condition && /^__name__\s*==\s*['"]__main__['"]$/.test(text(condition));
}

/** Every statement under `node` that runs in the module's scope; `skip` leaves out a compound statement and its blocks. */
export function* moduleScopeStatements(node: PyNode, skip: (n: PyNode) => boolean = () => false): Generator<PyNode> {
  for (const child of namedChildren(node)) {
    if (skip(child)) continue;
    yield child;
    if (MODULE_BLOCKS.has(child.type)) yield* moduleScopeStatements(child, skip);
  }
}
