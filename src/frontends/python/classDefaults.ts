/**
 * A model class the file defines, read where nothing in the file builds it: with its constructor's defaults, or,
 * where the constructor needs only a config, with the config the class itself says is its default
 * (`GPT.get_default_config()`, minGPT's convention). A class neither way builds is not read, and the file says which
 * and why: minGPT's model.py has GPT, Block and CausalSelfAttention, each needing `config`, and only NewGELU (an
 * activation without parameters) builds with defaults; planning NewGELU without a word looked like a plan of the
 * file's model.
 */
import type { Diagnostic, SourceRange } from '../../core/ir';
import { rangeOf } from './ast';
import { classLookup } from './access';
import type { Interp } from './interpreter';
import type { ClassV, FuncV, Value } from './values';

/** The arguments a constructor needs that have no default (after `self`). */
export function requiredArguments(interp: Interp, init: Value | undefined): string[] {
  if (init?.k !== 'func') return [];
  return interp
    .params(init.node)
    .slice(1)
    .filter((p) => (p.kind === 'pos' || p.kind === 'kwonly') && !p.defaultNode)
    .map((p) => p.name);
}

/** What the class's own default config gives: the config to build with, or why it cannot be built with it. */
export type OwnDefault = { config: Value; method: string } | { why: string };

/** The method a class offers its default config by, called without arguments. */
const DEFAULT_CONFIG_METHOD = 'get_default_config';

/**
 * A constructor that needs one argument, given the class's own `get_default_config()`: usable when every setting it
 * gives is set. minGPT's leaves n_layer, n_head, n_embd, vocab_size and block_size None, "to be filled in
 * externally" by the script; a model built from it would have no blocks and no vocabulary, so it is not built.
 */
export function ownDefaultConfig(interp: Interp, cls: ClassV, required: string[]): OwnDefault | undefined {
  if (required.length !== 1) return undefined;
  const method = classLookup(cls, DEFAULT_CONFIG_METHOD);
  if (method?.k !== 'func' || (method.kind !== 'static' && method.kind !== 'class')) return undefined;
  const called = `${cls.name}.${DEFAULT_CONFIG_METHOD}()`;
  if (requiredArguments(interp, method).length > (method.kind === 'static' ? 0 : 1)) return { why: `${called} needs arguments` };
  const callee: Value = method.kind === 'class' ? { k: 'bound', self: cls, fn: method as FuncV } : method;
  const site = { node: method.node, range: rangeOf(cls.node), calleeText: called };
  const config = interp.callValue(callee, [], new Map(), site);
  const settings = settingsOf(config);
  if (!settings) return { why: `${called} returns nothing WAP can read` };
  const unset = settings.filter(([, v]) => v.k === 'none' || v.k === 'unknown').map(([k]) => k);
  if (unset.length) return { why: `${called} leaves ${unset.join(', ')} unset, for the script that builds it to fill in` };
  return { config, method: called };
}

/** A config's settings by name: an object's attributes (CfgNode, a dataclass) or a dict's string keys. */
function settingsOf(config: Value): Array<[string, Value]> | undefined {
  if (config.k === 'inst') return [...config.attrs];
  if (config.k === 'dict') return [...config.map].filter(([k]) => k.startsWith('s:')).map(([k, [, v]]) => [k.slice(2), v]);
  return undefined;
}

/** The note a model read with its class's own default config carries: the size is the class's default, not a run's. */
export function ownDefaultNote(className: string, method: string, required: string, range: SourceRange): Diagnostic {
  const message = `${className} needs \`${required}\`, which nothing in this file gives: it is read with ${method}, the class's own default; a script that builds it with other settings trains another size (analyse that script)`;
  return { severity: 'info', code: 'class-default-config', message, line: range.line, column: range.column, endLine: range.endLine, endColumn: range.endColumn };
}

/** A model class not read, and why. */
export interface SkippedClass {
  name: string;
  cls: ClassV;
  range: SourceRange;
  why: string;
}

export const skippedWhy = (required: string[], own?: { why: string }): string =>
  `its constructor needs ${required.map((r) => `\`${r}\``).join(', ')}${own ? `, and ${own.why}` : ''}`;

/**
 * The file's model classes WAP did not read, said on every model read from it (a plan repeats it): what is planned
 * may be only a part of the file's model (NewGELU for minGPT's GPT). Undefined when none was skipped.
 */
export function skippedClassesNote(skipped: readonly SkippedClass[]): Diagnostic | undefined {
  const first = skipped[0];
  if (!first) return undefined;
  const listed = skipped.map((s) => `${s.name} (${s.why})`).join('; ');
  const message = `Model classes in this file that WAP did not read, since nothing in it builds them: ${listed}. Analyse a script that builds the model, or build it in this file (\`model = …\`)`;
  const r = first.range;
  return { severity: 'warning', code: 'model-classes-skipped', carriesToPlan: true, message, line: r.line, column: r.column, endLine: r.endLine, endColumn: r.endColumn };
}
