/**
 * A recipe file that holds the Trainer's arguments by name (`bf16: true`, `"per_device_train_batch_size": 4`), as
 * HfArgumentParser's parse_yaml_file / parse_json_file, TrlParser's `--config` and LLaMA-Factory load it, seen as
 * an ArgumentSource (trainerArgumentSetup.ts), so it means what the same argument means on a command line.
 *
 * What the parsers hand the dataclass: YAML's and JSON's own bools, numbers, strings and lists, unconverted
 * (parse_dict does not run argparse's string_to_bool). A string where a bool or a count belongs ("true", "4") is
 * read differently by TrlParser (argparse converts string defaults) and parse_yaml_file (the string is passed on,
 * truthy), so it states nothing. `fsdp` is a string of words, a list of them or a bool; `deepspeed` a JSON's path
 * or the config itself as a mapping.
 */
import type { TreeValue } from './configTree';
import { readInlineDeepSpeedConfig } from './inlineDeepSpeed';
import type { StatedSetup } from './setup';
import type { ArgumentSource, DeepSpeedArgument, FsdpArgument } from './trainerArgumentSetup';
import type { TrainerFlag } from './trainingArguments';
import type { TextEdit, TextRange } from './types';

/** A parsed recipe: its top-level mapping, read through TreeValue, and edits in the file's own syntax. */
export interface RecipeDoc {
  text: string;
  top: TreeValue;
  /** How the file names a key in messages: `deepspeed:` in YAML, `"deepspeed":` in JSON. */
  keyword(key: string): string;
  keyRange(key: string): TextRange | undefined;
  /**
   * Edits that make a top-level key hold `value`, in place where the key is there, else as a new top-level entry;
   * a list keeps the list form the file writes. Undefined where the file cannot be written mechanically.
   */
  set(key: string, value: boolean | number | string | string[]): TextEdit[] | undefined;
  remove(key: string): TextEdit[];
  rename(from: string, to: string): TextEdit[];
}

/** The value a key holds, absent for a key written with no value (`key:` alone, null), as the dataclass default is. */
export function given(doc: RecipeDoc, key: string): TreeValue | undefined {
  const v = doc.top.get(key);
  return v && v.kind !== 'none' ? v : undefined;
}

/** A bool the parsers hand over as one; anything else the run decides (a string parsers read differently). */
export function recipeBool(doc: RecipeDoc, key: string): TrainerFlag {
  const v = given(doc, key);
  return !v ? undefined : v.kind === 'bool' ? (v.value as boolean) : 'run';
}

/** `fsdp`: "full_shard auto_wrap", [full_shard, auto_wrap], or true (full_shard); written back in the same form. */
function recipeFsdp(doc: RecipeDoc): FsdpArgument | undefined {
  const v = given(doc, 'fsdp');
  const items = v?.kind === 'list' ? v.items ?? [] : undefined;
  if (items && items.some((i) => i.kind !== 'string')) return undefined;
  const current = !v ? [] : items ? items.map((i) => i.value as string)
    : v.kind === 'string' ? (v.value as string).split(/\s+/).filter(Boolean)
      : v.kind === 'bool' ? (v.value ? ['full_shard'] : []) : undefined;
  if (!current) return undefined;
  return {
    words: current, stated: !!v, range: v?.range,
    write: (words) => (words.length === 0 ? (v ? doc.remove('fsdp') : []) : doc.set('fsdp', items ? words : words.join(' '))),
  };
}

/** `deepspeed`: a path (an empty one is none), or the config as a mapping, read as the Trainer reads its inline dict. */
function recipeDeepSpeed(doc: RecipeDoc): DeepSpeedArgument | undefined {
  const v = given(doc, 'deepspeed');
  if (!v || (v.kind === 'string' && v.value === '')) return undefined;
  if (v.kind === 'string') return { path: v.value as string, range: v.range };
  const key = doc.keyword('deepspeed');
  return {
    inline: (stated: StatedSetup) => {
      if (v.kind === 'map' && readInlineDeepSpeedConfig(v, stated, `${key} `)) return;
      (stated.unmodelled ??= []).push({
        range: v.range, short: 'DeepSpeed config WAP cannot read',
        message: `${key} is ${v.kind === 'map' ? 'a DeepSpeed config whose zero_optimization.stage is not a number WAP can read' : 'neither a DeepSpeed JSON\'s path nor a DeepSpeed config'}: its ZeRO stage and offload are unknown to WAP, so this config's plan leaves them to the search`,
      });
    },
  };
}

/** The recipe as an ArgumentSource: every argument it leaves out takes transformers' default. */
export function recipeArguments(doc: RecipeDoc, anchor: TextRange): ArgumentSource {
  const bool = (name: string): TrainerFlag => recipeBool(doc, name);
  return {
    text: doc.text, anchor, unsetIsDefault: true, where: 'in a recipe', namesDeepSpeed: doc.keyword('deepspeed'),
    has: (name) => !!given(doc, name),
    bool,
    count: (name) => {
      const v = given(doc, name);
      return v?.kind === 'int' && (v.value as number) >= 1 ? (v.value as number) : undefined;
    },
    nameRange: (name) => {
      const key = doc.keyRange(name);
      const value = given(doc, name);
      return key && { start: key.start, end: value?.range.end ?? key.end };
    },
    valueRange: (name) => given(doc, name)?.range,
    fsdp: () => recipeFsdp(doc),
    deepspeed: () => recipeDeepSpeed(doc),
    setBool: (name, on) => (bool(name) === on || (!on && !given(doc, name)) ? [] : doc.set(name, on)),
    setNumber: (name, n) => doc.set(name, n),
    rename: (from, to) => doc.rename(from, to),
  };
}
