/**
 * A plain-object copy of the tree-sitter syntax tree. Walking web-tree-sitter
 * nodes crosses into wasm on every property read; copying once with a cursor
 * and evaluating over plain objects keeps a 2,000-line file well under 30 ms.
 */
import type { Language, Tree, TreeCursor } from 'web-tree-sitter';
import type { Diagnostic, SourceRange } from '../../core/ir';

export interface PyNode {
  type: string;
  named: boolean;
  field: string | null;
  /** UTF-16 offsets into the source. */
  start: number;
  end: number;
  children: PyNode[];
  missing: boolean;
  /** Offsets where each line starts (shared by all nodes of one tree): rows/columns are computed on demand. */
  lines: number[];
  /** `namedChildren` computed once: evaluation reads the same nodes many times (a class built per model). */
  namedCache: readonly PyNode[] | undefined;
  /** rangeOf(node), made on first use (frozen: every caller gets this one object); cleared when the node moves. */
  rangeCache: Readonly<SourceRange> | undefined;
}

export interface ConvertedTree {
  root: PyNode;
  source: string;
  parseErrors: Diagnostic[];
}

function lineStarts(source: string): number[] {
  const out = [0];
  for (let i = source.indexOf('\n'); i >= 0; i = source.indexOf('\n', i + 1)) out.push(i + 1);
  return out;
}

/**
 * Converted top-level statements of an earlier tree, by type and text. A
 * statement whose text is unchanged parses to the same subtree, so after a
 * keystroke only the edited statement crosses into wasm again; the rest are
 * moved to their new offsets. Statements with syntax errors are never pooled.
 */
export type StatementPool = Map<string, PyNode[]>;

export interface ConvertOptions {
  /** Statements of the previous conversion of this file (consumed). */
  reuse?: StatementPool;
  /** Filled with this conversion's pooled statements, for the next edit. */
  pool?: StatementPool;
  /** Line-start table shared by all nodes of this file; updated in place so reused nodes see the new lines. */
  lines?: number[];
}

export function convertTree(tree: Tree, source: string, options: ConvertOptions = {}): ConvertedTree {
  const lines = options.lines ?? [];
  // Reused statements keep their cached ranges when their start has not moved (see keepsPosition).
  const previousLines = options.reuse ? lines.slice() : [];
  lines.length = 0;
  lines.push(...lineStarts(source));
  // Reading MISSING flags costs a wasm call per node: only pay it when the tree has errors.
  const hasErrors = tree.rootNode.hasError;
  const parseErrors: Diagnostic[] = [];
  const converter = new SubtreeConverter(tree, source, lines, hasErrors, parseErrors);
  const cursor = tree.walk();
  try {
    const root = converter.node(cursor);
    if (!cursor.gotoFirstChild()) return { root, source, parseErrors };
    do {
      const typeId = cursor.nodeTypeId;
      if (converter.isComment(typeId)) continue;
      const start = cursor.startIndex;
      const key = typeId + ':' + source.slice(start, cursor.endIndex);
      let node = takeReusable(options.reuse, key, hasErrors, cursor);
      let clean = true;
      if (node) {
        if (!keepsPosition(node, start, previousLines, lines)) shift(node, start - node.start, lines);
      } else {
        node = converter.subtree(cursor);
        clean = !converter.sawError;
      }
      root.children.push(node);
      if (options.pool && clean) {
        const same = options.pool.get(key);
        if (same) same.push(node);
        else options.pool.set(key, [node]);
      }
    } while (cursor.gotoNextSibling());
    return { root, source, parseErrors };
  } finally {
    cursor.delete();
  }
}

function takeReusable(pool: StatementPool | undefined, key: string, hasErrors: boolean, cursor: TreeCursor): PyNode | undefined {
  const candidates = pool?.get(key);
  if (!candidates?.length) return undefined;
  // In a tree with errors, recovery may have cut this statement differently even if its text is the same.
  if (hasErrors && cursor.currentNode.hasError) return undefined;
  return candidates.pop();
}

/**
 * Whether a reused statement sits where it sat, at the same line and column:
 * its text is unchanged, so then every offset, line and column inside it is
 * too, and its nodes' cached ranges still hold. The common case after a
 * keystroke (every statement above the edit, and below it when the edit kept
 * the length, as most one-character replacements do) and for the same text
 * analysed again.
 */
function keepsPosition(node: PyNode, start: number, previousLines: number[], lines: number[]): boolean {
  if (node.start !== start || node.lines !== lines) return false;
  const row = lineIndexAt(lines, start);
  return row === lineIndexAt(previousLines, start) && lines[row] === previousLines[row];
}

/** Moves a reused subtree to its new offsets (iteratively: deep trees must not overflow the stack). */
function shift(root: PyNode, delta: number, lines: number[]): void {
  const stack = [root];
  while (stack.length) {
    const n = stack.pop()!;
    n.start += delta;
    n.end += delta;
    n.lines = lines;
    // Even at the same offset the line may differ (an edit above added or removed a line break).
    n.rangeCache = undefined;
    for (const c of n.children) stack.push(c);
  }
}

/**
 * The grammar's node type and field names, as V8-internalised strings, and
 * which types are named; one per Language (a file's conversion reads them
 * for every node). web-tree-sitter decodes the names from wasm memory into
 * fresh strings; the evaluator compares them against literals on every node
 * it reads (node.type === 'call', field(node, 'function'), the switch in
 * evalExpr), and V8 compares a non-internalised string character by
 * character where two internalised ones compare by pointer.
 */
interface GrammarNames {
  types: string[];
  fields: Array<string | null>;
  namedById: Map<number, boolean>;
}

const grammarNames = new WeakMap<Language, GrammarNames>();

function namesOf(language: Language): GrammarNames {
  let names = grammarNames.get(language);
  if (!names) {
    names = { types: language.types.map(internalised), fields: language.fields.map((f) => (f === null ? null : internalised(f))), namedById: new Map() };
    grammarNames.set(language, names);
  }
  return names;
}

/** Property keys are always internalised, so reading one back yields the internalised copy. */
function internalised(name: string): string {
  return Object.keys({ [name]: true })[0];
}

class SubtreeConverter {
  private readonly language: Language;
  private readonly types: string[];
  private readonly fieldNames: Array<string | null>;
  private readonly namedById: Map<number, boolean>;
  /** Whether the last converted subtree contained an ERROR or MISSING node. */
  sawError = false;

  constructor(
    tree: Tree,
    private readonly source: string,
    private readonly lines: number[],
    private readonly checkMissing: boolean,
    private readonly parseErrors: Diagnostic[],
  ) {
    this.language = tree.language;
    ({ types: this.types, fields: this.fieldNames, namedById: this.namedById } = namesOf(this.language));
  }

  isComment(typeId: number): boolean {
    return this.types[typeId] === 'comment';
  }

  node(cursor: TreeCursor): PyNode {
    const typeId = cursor.nodeTypeId;
    let named = this.namedById.get(typeId);
    if (named === undefined) this.namedById.set(typeId, (named = this.language.nodeTypeIsNamed(typeId)));
    const fieldId = cursor.currentFieldId;
    return {
      type: this.types[typeId] || 'ERROR',
      named,
      field: fieldId ? (this.fieldNames[fieldId] ?? null) : null,
      start: cursor.startIndex,
      end: cursor.endIndex,
      children: [],
      missing: this.checkMissing && cursor.nodeIsMissing,
      lines: this.lines,
      namedCache: undefined,
      rangeCache: undefined,
    };
  }

  /** Converts the node under the cursor and everything below it; leaves the cursor on that node. */
  subtree(cursor: TreeCursor): PyNode {
    this.sawError = false;
    const top = this.node(cursor);
    this.check(top);
    const stack: PyNode[] = [top];
    // Iterative pre-order walk: deep expressions must not overflow the JS stack.
    if (!cursor.gotoFirstChild()) return top;
    for (;;) {
      const node = this.node(cursor);
      const parent = stack[stack.length - 1];
      if (node.type !== 'comment') parent.children.push(node);
      this.check(node);
      if (node.type !== 'comment' && cursor.gotoFirstChild()) {
        stack.push(node);
        continue;
      }
      while (!cursor.gotoNextSibling()) {
        cursor.gotoParent();
        stack.pop();
        if (stack.length === 0) return top;
      }
    }
  }

  private check(node: PyNode): void {
    if (node.type !== 'ERROR' && !node.missing) return;
    this.sawError = true;
    reportSyntaxError(node, this.source, this.parseErrors);
  }
}

function reportSyntaxError(node: PyNode, source: string, out: Diagnostic[]): void {
  if (out.length >= 20) return;
  // Not rangeOf: an imported module's tree is converted before its file is registered in foreignFiles,
  // and a range cached now would lack the file.
  const r = positionsOf(node);
  const snippet = source.slice(node.start, Math.min(node.end, node.start + 30)).split('\n')[0];
  const message = node.missing
    ? `Syntax error: missing '${node.type}'`
    : `Syntax error${snippet ? ` near '${snippet}'` : ''}`;
  out.push({ severity: 'error', message, line: r.line, column: r.column, endLine: r.endLine, endColumn: r.endColumn, code: 'parse-error' });
}

/** 0-based index of the line holding `offset`, by binary search over a line-start table. */
export function lineIndexAt(lines: number[], offset: number): number {
  let lo = 0;
  let hi = lines.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (lines[mid] <= offset) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

function position(lines: number[], offset: number): [number, number] {
  const index = lineIndexAt(lines, offset);
  return [index + 1, offset - lines[index] + 1];
}

/**
 * Trees of modules followed through imports (modules.ts): their line tables
 * identify the file and text each node came from, so ranges and node texts
 * stay right when code from another file is evaluated.
 */
export const foreignFiles = new WeakMap<number[], { file: string; source: string }>();

/**
 * 1-based line/column range of a node; `file` is set for nodes of an imported
 * module. One frozen object per node, shared by every layer, site and
 * diagnostic that points at the node (as a module's range already is by each
 * of its calls): a fresh object per call survived into the results, so V8
 * allocated them straight in old space, and that was ~5% of a warm analysis.
 */
export function rangeOf(node: PyNode): SourceRange {
  let range = node.rangeCache;
  if (!range) {
    const foreign = foreignFiles.get(node.lines);
    const p = positionsOf(node);
    range = node.rangeCache = Object.freeze(foreign ? { line: p.line, column: p.column, endLine: p.endLine, endColumn: p.endColumn, file: foreign.file } : p);
  }
  return range;
}

function positionsOf(node: PyNode): SourceRange {
  const [line, column] = position(node.lines, node.start);
  const [endLine, endColumn] = position(node.lines, node.end);
  return { line, column, endLine, endColumn };
}

export function field(node: PyNode, name: string): PyNode | undefined {
  for (const c of node.children) if (c.field === name) return c;
  return undefined;
}

export function fields(node: PyNode, name: string): PyNode[] {
  return node.children.filter((c) => c.field === name);
}

export function namedChildren(node: PyNode): readonly PyNode[] {
  return (node.namedCache ??= node.children.filter((c) => c.named));
}

export function textOf(node: PyNode, source: string): string {
  return source.slice(node.start, node.end);
}
