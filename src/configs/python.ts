/**
 * Python syntax trees for the configs that live in training scripts
 * (Lightning's Trainer, Keras' MirroredStrategy). The parser is loaded once by
 * initConfigReaders(); afterwards parsing is synchronous. Values are edited by
 * their node ranges, so nothing outside the argument's value changes.
 */
import type { Node, Parser } from 'web-tree-sitter';
import { createPythonParser } from '../frontends/python/treeSitter';
import { MalformedConfig, type TextEdit, type TextRange } from './types';

let parser: Parser | undefined;
let loading: Promise<void> | undefined;

export function initPythonConfigs(): Promise<void> {
  loading ??= createPythonParser().then((p) => {
    parser = p;
  });
  return loading;
}

export function pythonReady(): boolean {
  return parser !== undefined;
}

/** Runs `fn` on the tree and frees the tree afterwards (wasm memory is not garbage-collected). */
export function withPythonTree<T>(text: string, fn: (root: Node) => T): T {
  if (!parser) throw new MalformedConfig('WAP: the Python config reader is not initialised (initConfigReaders() was not awaited)');
  const tree = parser.parse(text);
  if (!tree) throw new MalformedConfig('Python: the file could not be parsed');
  try {
    return fn(tree.rootNode);
  } finally {
    tree.delete();
  }
}

/**
 * The `if` a node sits under that decides whether it runs, other than the script guard; undefined when none. Code
 * behind a flag (`if args.channels_last:`) is the user's choice per run, so hints report it rather than assume it.
 */
export function guardOf(node: Node): Node | undefined {
  for (let n: Node | null = node.parent; n; n = n.parent) {
    if (n.type === 'if_statement' || n.type === 'conditional_expression' || n.type === 'elif_clause' || n.type === 'else_clause') {
      const condition = n.type === 'if_statement' ? n.childForFieldName('condition')?.text.replace(/\s+/g, '') : undefined;
      if (condition && /^__name__==['"]__main__['"]$/.test(condition)) continue;
      return n;
    }
  }
  return undefined;
}

/** Calls whose callee is `name` or `<anything>.name`, e.g. `Trainer(` and `pl.Trainer(`. */
export function findCalls(root: Node, name: string): Node[] {
  return root.descendantsOfType('call').filter((call): call is Node => {
    const fn = call?.childForFieldName('function');
    if (!fn) return false;
    if (fn.type === 'identifier') return fn.text === name;
    return fn.type === 'attribute' && fn.childForFieldName('attribute')?.text === name;
  });
}

export interface CallArgs {
  keywords: Map<string, Node>;
  positional: Node[];
  /** The argument list node, for inserting a missing keyword. */
  list: Node;
}

export function callArgs(call: Node): CallArgs | undefined {
  const list = call.childForFieldName('arguments');
  if (!list || list.type !== 'argument_list') return undefined;
  const keywords = new Map<string, Node>();
  const positional: Node[] = [];
  for (const arg of list.namedChildren) {
    if (!arg || arg.type === 'comment') continue;
    if (arg.type === 'keyword_argument') {
      const name = arg.childForFieldName('name')?.text;
      const value = arg.childForFieldName('value');
      if (name && value) keywords.set(name, value);
    } else positional.push(arg);
  }
  return { keywords, positional, list };
}

export const nodeRange = (n: Node): TextRange => ({ start: n.startIndex, end: n.endIndex });
/** An edit replacing a range: what an edit made after the tree is freed must use (offsets, not nodes). */
export const replaceRange = (range: TextRange, newText: string): TextEdit[] => [{ start: range.start, end: range.end, newText }];
export const replaceWith = (n: Node, newText: string): TextEdit[] => replaceRange(nodeRange(n), newText);

/** The content of a plain string literal ('x' or "x", no f-string or concatenation), else undefined. */
export function stringLiteral(n: Node): string | undefined {
  if (n.type !== 'string') return undefined;
  const parts = n.namedChildren.filter((c) => c && c.type !== 'string_start' && c.type !== 'string_end');
  if (parts.some((c) => c!.type !== 'string_content')) return undefined;
  const start = n.namedChildren.find((c) => c?.type === 'string_start')?.text ?? '';
  if (/[fFbB]/.test(start)) return undefined;
  return parts.map((c) => c!.text).join('');
}

/** The quote the user wrote, so a rewritten string looks like theirs. */
export function quoteOf(n: Node): string {
  const m = /^[rRuU]?("""|'''|"|')/.exec(n.text);
  return m?.[1] && m[1].length === 1 ? m[1] : '"';
}

export function intLiteral(n: Node): number | undefined {
  if (n.type !== 'integer' || !/^\d+$/.test(n.text)) return undefined;
  return Number(n.text);
}

export function malformedIfBroken(call: Node, what: string): void {
  if (call.hasError) throw new MalformedConfig(`Python: syntax error inside the ${what} call`, nodeRange(call));
}

/**
 * Where a call's arguments sit, as plain offsets. The syntax tree is freed when
 * its reader returns, and a freed node reports offset 0 for everything, so an
 * edit made later (a StatedSetup's `set`) must be built from this, never from nodes.
 */
export interface ArgsLayout {
  keywords: Map<string, TextRange>;
  /** The arguments in order, comments left out, each with the row it starts on. */
  items: Array<TextRange & { row: number }>;
  /** The offset of the closing ')'. */
  close: number;
}

export function argsLayout(args: CallArgs): ArgsLayout {
  const keywords = new Map<string, TextRange>();
  for (const [name, value] of args.keywords) keywords.set(name, nodeRange(value));
  const items = args.list.namedChildren
    .filter((c): c is Node => !!c && c.type !== 'comment')
    .map((c) => ({ ...nodeRange(c), row: c.startPosition.row }));
  return { keywords, items, close: args.list.endIndex - 1 };
}

/** Sets a keyword of a call: replaces its value, or inserts it as the last argument. */
export function setKeyword(text: string, args: ArgsLayout, name: string, value: string): TextEdit[] {
  const range = args.keywords.get(name);
  return range ? replaceRange(range, value) : insertKeyword(text, args, name, value);
}

/**
 * Inserts `name=value` as the call's last argument, in the call's own layout:
 * on a line of its own with the arguments' indentation when they are one per
 * line (after the last argument's comma and comment), else inline.
 */
export function insertKeyword(text: string, args: ArgsLayout, name: string, value: string): TextEdit[] {
  const items = args.items;
  const last = items[items.length - 1];
  const close = args.close;
  if (!last) return [{ start: close, end: close, newText: `${name}=${value}` }];
  const multiline = text.slice(last.end, close).includes('\n') || items.some((c, i) => i > 0 && c.row !== items[i - 1]!.row);
  if (!multiline) return [{ start: last.end, end: last.end, newText: `, ${name}=${value}` }];
  const lineStart = text.lastIndexOf('\n', last.start - 1) + 1;
  const indent = text.slice(lineStart, last.start);
  const after = text.slice(last.end);
  const comma = /^[ \t]*,/.exec(after);
  if (!comma || /\S/.test(indent)) return [{ start: last.end, end: last.end, newText: `, ${name}=${value}` }];
  const nl = text.indexOf('\n', last.end);
  if (nl < 0 || nl > close) return [{ start: last.end + comma[0].length, end: last.end + comma[0].length, newText: ` ${name}=${value},` }];
  return [{ start: nl + 1, end: nl + 1, newText: `${indent}${name}=${value},\n` }];
}

/** The callee's last name: `FSDPStrategy` for `L.strategies.FSDPStrategy(…)`. */
export function calleeName(call: Node): string | undefined {
  const fn = call.childForFieldName('function');
  return fn?.type === 'attribute' ? fn.childForFieldName('attribute')?.text : fn?.text;
}

/** Nodes a name can sit inside while still being the target of an assignment or loop (`a, b = …`, `for i, (x, y) in …`). */
const PATTERN = new Set(['pattern_list', 'tuple_pattern', 'list_pattern', 'tuple', 'list', 'parenthesized_expression', 'list_splat_pattern']);
const TARGET_OF = new Set(['assignment', 'augmented_assignment', 'for_statement', 'for_in_clause']);
const NAMED_BY = new Set([
  'parameters', 'default_parameter', 'typed_parameter', 'typed_default_parameter', 'list_splat_pattern', 'dictionary_splat_pattern', 'lambda_parameters',
  'as_pattern_target', 'aliased_import', 'dotted_name', 'global_statement', 'nonlocal_statement', 'named_expression', 'function_definition', 'class_definition',
]);

/**
 * Whether an identifier gives its name a value (an assignment's or loop's target, a parameter, an import, `with …
 * as`, a def) rather than reading it. A keyword argument's name and an attribute's name (`x.mesh`) are neither.
 */
function bindsName(id: Node): boolean {
  let n: Node = id;
  while (n.parent && PATTERN.has(n.parent.type)) n = n.parent;
  const parent = n.parent;
  if (!parent) return false;
  if (TARGET_OF.has(parent.type)) return parent.childForFieldName('left')?.startIndex === n.startIndex && parent.childForFieldName('left')?.endIndex === n.endIndex;
  if (parent.type === 'default_parameter' || parent.type === 'typed_default_parameter' || parent.type === 'named_expression') return parent.childForFieldName('name')?.startIndex === id.startIndex;
  if (parent.type === 'function_definition' || parent.type === 'class_definition') return parent.childForFieldName('name')?.startIndex === id.startIndex;
  if (parent.type === 'typed_parameter') return parent.namedChildren[0]?.startIndex === id.startIndex;
  return NAMED_BY.has(parent.type);
}

/** Whether an identifier is a use of its name: not a binding, a keyword argument's name or an attribute's name. */
function readsName(id: Node): boolean {
  const parent = id.parent;
  if (!parent || bindsName(id)) return false;
  if (parent.type === 'keyword_argument' && parent.childForFieldName('name')?.startIndex === id.startIndex) return false;
  return !(parent.type === 'attribute' && parent.childForFieldName('attribute')?.startIndex === id.startIndex);
}

/**
 * The one value a script gives `name`: `name = value`, bound nowhere else in the file (no second assignment, `+=`,
 * loop target, parameter, import or `with … as`), else undefined. Scripts pass settings through variables
 * (`mp = MixedPrecision(…)` then `FSDP(model, mixed_precision=mp)`); a name bound twice is decided as the code runs.
 */
export function singleAssignment(root: Node, name: string): { value: Node; statement: Node } | undefined {
  const bindings = root.descendantsOfType('identifier').filter((id): id is Node => !!id && id.text === name && bindsName(id));
  const only = bindings.length === 1 ? bindings[0]!.parent : undefined;
  const value = only?.type === 'assignment' ? only.childForFieldName('right') : undefined;
  return value && value.type !== 'assignment' ? { value, statement: only! } : undefined;
}

/** Whether an assignment statement sits at the module's top level (not in a function, class, loop or `if`). */
export function atModuleLevel(assignment: Node): boolean {
  return assignment.parent?.type === 'expression_statement' && assignment.parent.parent?.type === 'module';
}

/** Whether the script reads `name` inside a `for` or `while` loop (a training loop's accumulation count). */
export function readInLoop(root: Node, name: string): boolean {
  return root.descendantsOfType('identifier').some((id) => {
    if (!id || id.text !== name || !readsName(id)) return false;
    for (let n = id.parent; n; n = n.parent) if (n.type === 'for_statement' || n.type === 'while_statement') return true;
    return false;
  });
}

/**
 * What an argument holds when it is a name the script assigns once (`mixed_precision=mp`): that assignment's value;
 * otherwise the argument itself.
 */
export function throughName(root: Node, n: Node): Node {
  return n.type === 'identifier' ? singleAssignment(root, n.text)?.value ?? n : n;
}
