/**
 * Freeze loops decided once per name pattern rather than once per parameter. DeepSeek-V3 lists 45,337 parameters
 * (256 routed experts × 3 projections in each of 58 MoE layers, …), and Qwen3-30B-A3B 18,867; their names differ
 * mostly in numbers: `model.layers.7.mlp.experts.113.up_proj.weight`. A name's pattern writes each
 * component that is a number as one stand-in character (`model.layers.\uE000.mlp.experts.\uE000.up_proj.weight`),
 * and a body whose verdict can only see the name through the tests below decides every name as it decides its
 * pattern. DeepSeek-V3 then has 24 patterns to read, not 45,000 names.
 *
 * Why the verdicts agree: every string the name is compared with holds no digit and no stand-in. Take a name and its
 * pattern and cut both at their digits and stand-ins: the pieces between are the same strings in the same order (only
 * whole-number components were replaced, so `w1`, `fc2`, `conv2d` are untouched and cut alike). Then
 * - `s in name` holds for one iff for the other: a digit-free `s` can only occur inside one piece;
 * - `name.startswith(s)` / `endswith(s)` likewise: `s` must fit in the first (last) piece of both;
 * - `name == s` and `name in [s, …]` (equality) differ only for a name without numbers, which is its own pattern;
 * and `not`, `and`, `or` and `any(…)` / `all(…)` over fixed digit-free strings compose these. Anything else that
 * reads the name (`name.split(".")[2]`, `int(…)`, `re.search`, `len(name)`, an f-string with a number) may see its
 * numbers, and such a body is read name by name, on the loop's budget (freezeLoopBudget.ts).
 */
import { field, fields, namedChildren, type PyNode } from './ast';
import { builtinNames } from './builtins';
import { evalExpr } from './expressions';
import type { Interp } from './interpreter';
import type { Scope, Value } from './values';

/** What a whole-number name component becomes in a pattern: a private-use character no script writes. */
export const NUMBER_STAND_IN = '\uE000';

/** A parameter name with each whole-number component written as NUMBER_STAND_IN. */
export function namePattern(name: string): string {
  if (!/\d/.test(name)) return name;
  return name
    .split('.')
    .map((part) => (/^\d+$/.test(part) ? NUMBER_STAND_IN : part))
    .join('.');
}

/** The loop as freezeLoops.ts reads it: its statements, the name variable, and the expression each write sets. */
export interface PatternedLoop {
  statements: readonly PyNode[];
  name: string;
  /** The value a statement's requires_grad write sets (null for `requires_grad_()`, True), undefined when it is no write. */
  writeValue(statement: PyNode): PyNode | null | undefined;
}

/** Whether every name gets its pattern's verdict: the body sees the name only through digit-free string tests. */
export function decidedByPattern(interp: Interp, loop: PatternedLoop, scope: Scope): boolean {
  return new PatternCheck(interp, loop, scope).statements(loop.statements);
}

class PatternCheck {
  constructor(
    private readonly interp: Interp,
    private readonly loop: PatternedLoop,
    private readonly scope: Scope,
  ) {}

  /** The expressions freezeLoops.ts evaluates (conditions, the values writes set) all pass; other statements read nothing. */
  statements(nodes: readonly PyNode[]): boolean {
    for (const s of nodes) {
      if (s.type === 'if_statement') {
        const branches = [s, ...fields(s, 'alternative')];
        for (const b of branches) {
          const cond = field(b, 'condition');
          const body = field(b, 'consequence') ?? field(b, 'body');
          if (cond && !this.truth(cond, new Set())) return false;
          if (body && !this.statements(namedChildren(body))) return false;
        }
        continue;
      }
      const value = this.loop.writeValue(s);
      if (value && !this.truth(value, new Set())) return false;
    }
    return true;
  }

  /** An expression whose truth is the same for a name and its pattern. `fixed` holds comprehension variables over digit-free strings. */
  private truth(node: PyNode, fixed: ReadonlySet<string>): boolean {
    if (!this.mentions(node, this.loop.name)) return true;
    switch (node.type) {
      case 'identifier':
        // The name itself: never empty, spelt either way.
        return true;
      case 'parenthesized_expression':
        return namedChildren(node).length === 1 && this.truth(namedChildren(node)[0], fixed);
      case 'not_operator': {
        const arg = field(node, 'argument');
        return !!arg && this.truth(arg, fixed);
      }
      case 'boolean_operator': {
        const [l, r] = [field(node, 'left'), field(node, 'right')];
        return !!l && !!r && this.truth(l, fixed) && this.truth(r, fixed);
      }
      case 'comparison_operator':
        return this.comparison(node, fixed);
      case 'call':
        return this.call(node, fixed);
      default:
        return false;
    }
  }

  /** `s in name`, `name in [s, …]`, `name == s` and their negations, one operator. */
  private comparison(node: PyNode, fixed: ReadonlySet<string>): boolean {
    const operands = node.children.filter((c) => c.named);
    const ops = node.children.filter((c) => !c.named).map((c) => c.type);
    if (operands.length !== 2) return false;
    const op = ops.join(' ');
    const [a, b] = operands;
    if (op === 'in' || op === 'not in') return (this.isName(b) && this.digitFree(a, fixed)) || (this.isName(a) && this.digitFreeStrings(b, fixed));
    if (op === '==' || op === '!=') return (this.isName(a) && this.digitFree(b, fixed)) || (this.isName(b) && this.digitFree(a, fixed));
    return false;
  }

  /** `name.startswith(s | (s, …))`, `name.endswith(…)`, and `any(…)` / `all(…)` over a comprehension of digit-free strings. */
  private call(node: PyNode, fixed: ReadonlySet<string>): boolean {
    const fn = field(node, 'function');
    const args = field(node, 'arguments');
    if (!fn || !args) return false;
    if (fn.type === 'attribute') {
      const method = this.interp.text(field(fn, 'attribute') ?? fn);
      const object = field(fn, 'object');
      const given = namedChildren(args);
      if (!object || !this.isName(object) || (method !== 'startswith' && method !== 'endswith') || args.type !== 'argument_list' || given.length !== 1) return false;
      return this.digitFree(given[0], fixed) || this.digitFreeTuple(given[0]);
    }
    if (fn.type !== 'identifier' || !this.isBuiltin(fn, ['any', 'all'])) return false;
    const only = args.type === 'generator_expression' ? args : namedChildren(args).length === 1 ? namedChildren(args)[0] : undefined;
    return !!only && (only.type === 'generator_expression' || only.type === 'list_comprehension') && this.comprehension(only, fixed);
  }

  /** `(test for k in keep if test)`: one loop over fixed digit-free strings, tests that pass with `k` among them. */
  private comprehension(node: PyNode, fixed: ReadonlySet<string>): boolean {
    const clauses = namedChildren(node).filter((c) => c.type === 'for_in_clause');
    const ifs = namedChildren(node).filter((c) => c.type === 'if_clause');
    const body = field(node, 'body');
    if (clauses.length !== 1 || !body) return false;
    const variable = field(clauses[0], 'left');
    const over = field(clauses[0], 'right');
    if (variable?.type !== 'identifier' || !over || this.interp.text(variable) === this.loop.name || !this.digitFreeStrings(over, fixed)) return false;
    const inner = new Set([...fixed, this.interp.text(variable)]);
    return this.truth(body, inner) && ifs.every((c) => namedChildren(c).every((cond) => this.truth(cond, inner)));
  }

  /** A string with no digit, fixed before the loop runs (a literal, a constant, `args.keep`), or a comprehension variable over such. */
  private digitFree(node: PyNode, fixed: ReadonlySet<string>): boolean {
    if (node.type === 'identifier' && fixed.has(this.interp.text(node))) return true;
    const v = this.constant(node, fixed);
    return v?.k === 'str' && isDigitFree(v.v);
  }

  private digitFreeTuple(node: PyNode): boolean {
    const v = this.constant(node, new Set());
    return v?.k === 'tuple' && v.items.every((i) => i.k === 'str' && isDigitFree(i.v));
  }

  /** A list, tuple, set or string of digit-free strings, fixed before the loop runs. */
  private digitFreeStrings(node: PyNode, fixed: ReadonlySet<string>): boolean {
    const v = this.constant(node, fixed);
    if (v?.k === 'str') return isDigitFree(v.v);
    return (v?.k === 'list' || v?.k === 'tuple') && v.items.every((i) => i.k === 'str' && isDigitFree(i.v));
  }

  /** The value of an expression that reads neither the name nor a comprehension variable, nor calls anything; else undefined. */
  private constant(node: PyNode, fixed: ReadonlySet<string>): Value | undefined {
    if (!CONSTANT_FORMS.has(node.type) || this.mentions(node, this.loop.name) || [...fixed].some((v) => this.mentions(node, v))) return undefined;
    if (!namedChildren(node).every((c) => c.type === 'identifier' || c.type === 'string_content' || c.type === 'escape_sequence' || c.type === 'string_start' || c.type === 'string_end' || c.type === 'integer' || this.constant(c, fixed) !== undefined)) return undefined;
    return evalExpr(this.interp, node, this.scope);
  }

  private isName(node: PyNode): boolean {
    if (node.type === 'parenthesized_expression' && namedChildren(node).length === 1) return this.isName(namedChildren(node)[0]);
    return node.type === 'identifier' && this.interp.text(node) === this.loop.name;
  }

  /** `any` / `all` as Python's builtins, not a function the script defines by that name. */
  private isBuiltin(node: PyNode, names: readonly string[]): boolean {
    const name = this.interp.text(node);
    if (!names.includes(name)) return false;
    const v = this.interp.lookup(name, this.scope) ?? this.interp.globals.vars.get(name) ?? builtinNames.get(name);
    return v?.k === 'native' && v.name === name;
  }

  /** Whether `name` is read as a variable anywhere in the expression (not as an attribute or keyword name). */
  private mentions(node: PyNode, name: string): boolean {
    if (node.type === 'identifier') return this.interp.text(node) === name;
    for (const c of namedChildren(node)) {
      if (node.type === 'attribute' && c.field === 'attribute') continue;
      if (node.type === 'keyword_argument' && c.field === 'name') continue;
      if (this.mentions(c, name)) return true;
    }
    return false;
  }
}

/** Expressions read as constants: literals, names, attribute and item reads, and containers of them; never a call. */
const CONSTANT_FORMS = new Set(['string', 'concatenated_string', 'identifier', 'attribute', 'subscript', 'list', 'tuple', 'set', 'parenthesized_expression', 'integer']);

const isDigitFree = (s: string): boolean => !/[0-9\uE000]/.test(s);
