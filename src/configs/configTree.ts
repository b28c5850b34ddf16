/**
 * A literal in a config file's syntax tree, whatever the syntax (a Python dict, YAML, JSON): what kind of value it
 * is, where it is written, and a mapping's keys. Readers that mean the same thing in several syntaxes (an inline
 * DeepSpeed config, the Trainer's arguments in a recipe) read this view, and each syntax provides it once.
 */
import type { TextRange } from './types';

export interface TreeValue {
  /** 'int' is a whole number; 'other' anything the reader cannot take as a literal (an expression, an alias). */
  kind: 'map' | 'list' | 'string' | 'int' | 'number' | 'bool' | 'none' | 'other';
  /** A string's text, a number's value, a bool. */
  value?: string | number | boolean;
  range: TextRange;
  /** A list's items. */
  items?: TreeValue[];
  /** A key's value in a mapping (undefined when absent, or when this is no mapping). */
  get(key: string): TreeValue | undefined;
}
