/**
 * One call's keyword arguments as a training script gives them: written in the call, through a name the script
 * assigns once (`mixed_precision=mp`), or in a dict literal it unpacks (torchtitan's `fully_shard(block,
 * **fsdp_config)`). A keyword the call may hold unseen (an unread `**kwargs`) is unknown, not absent. Writing a
 * keyword replaces its value where the script states it (the assignment a name comes from, the dict entry), else
 * adds it to the call. Everything kept is offsets, so the edits stay right after the tree is freed.
 */
import type { Node } from 'web-tree-sitter';
import { argsLayout, callArgs, insertKeyword, nodeRange, replaceRange, singleAssignment, stringLiteral, throughName } from './python';
import type { TextEdit, TextRange } from './types';

export interface CallKeywords {
  /** The keyword's value (through a name assigned once); undefined when the call does not give it. */
  get(name: string): Node | undefined;
  /** Positional arguments as written. */
  positional: Node[];
  /** Whether the call may give keywords WAP cannot see (`**kwargs` it cannot read): an absent one is then unknown. */
  hidden: boolean;
  /** Edits that make `name` say `value`; undefined when it may sit in an unread `**kwargs`. */
  write(name: string, value: string): TextEdit[] | undefined;
}

/** The entries of a dict the call unpacks, when it is a literal the script never changes afterwards. */
function unpackedDict(root: Node, text: string, splat: Node): Map<string, Node> | undefined {
  const inner = splat.namedChildren[0];
  if (!inner) return undefined;
  let dict: Node | undefined = inner;
  if (inner.type === 'identifier') {
    // `cfg["offload_policy"] = …` or `cfg.update(…)` later changes what the call unpacks.
    const name = inner.text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    if (new RegExp(`\\b${name}\\s*(\\[|\\.(update|setdefault|pop)\\s*\\()`).test(text)) return undefined;
    dict = singleAssignment(root, inner.text)?.value;
  }
  if (dict?.type !== 'dictionary') return undefined;
  const entries = new Map<string, Node>();
  for (const pair of dict.namedChildren) {
    if (!pair || pair.type === 'comment') continue;
    const key = pair.type === 'pair' ? pair.childForFieldName('key') : undefined;
    const value = pair.childForFieldName('value');
    const name = key ? stringLiteral(key) : undefined;
    if (name === undefined || !value) return undefined;
    entries.set(name, value);
  }
  return entries;
}

/** Where a written value really sits: the assignment its name comes from, else where it is written. */
const valueRange = (root: Node, n: Node): TextRange => nodeRange(throughName(root, n));

export function callKeywords(root: Node, text: string, call: Node): CallKeywords | undefined {
  const args = callArgs(call);
  if (!args) return undefined;
  const layout = argsLayout(args);
  const given = new Map<string, Node>(args.keywords);
  let hidden = false;
  for (const splat of args.list.namedChildren) {
    if (splat?.type === 'list_splat') hidden = true;
    if (splat?.type !== 'dictionary_splat') continue;
    const entries = unpackedDict(root, text, splat);
    if (!entries) hidden = true;
    else for (const [k, v] of entries) if (!given.has(k)) given.set(k, v);
  }
  const ranges = new Map<string, TextRange>([...given].map(([k, v]) => [k, valueRange(root, v)]));
  return {
    get: (name) => {
      const n = given.get(name);
      return n && throughName(root, n);
    },
    positional: args.positional.filter((n) => n.type !== 'dictionary_splat' && n.type !== 'list_splat'),
    hidden,
    write(name, value) {
      const at = ranges.get(name);
      if (at) return replaceRange(at, value);
      return hidden ? undefined : insertKeyword(text, layout, name, value);
    },
  };
}

/** Edits from several calls, each once (calls that share one `cfg = …` write it once); undefined when one cannot. */
export function editsOnce(parts: Array<TextEdit[] | undefined>): TextEdit[] | undefined {
  if (parts.some((p) => p === undefined)) return undefined;
  const out: TextEdit[] = [];
  for (const e of parts.flat() as TextEdit[]) if (!out.some((o) => o.start === e.start && o.end === e.end && o.newText === e.newText)) out.push(e);
  return out;
}
