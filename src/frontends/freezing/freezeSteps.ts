/**
 * Freezes decided by parameter name: what a fine-tuning script's
 * `for name, p in model.named_parameters(): if …: p.requires_grad = False`,
 * `model.fc.weight.requires_grad = False` or `model.bert.requires_grad_(False)`
 * on a Hugging Face model does to each parameter, applied in program order.
 *
 * Each parameter's state is kept (ParameterStates), so a weight frozen on one
 * line and its bias on the next leave the layer frozen whole. WAP plans a
 * layer frozen or trained as a whole: one whose parameters end split (BitFit
 * trains the biases of frozen Linears) is planned trained and said, which
 * over-states its work rather than under-stating it.
 *
 * `applyFreezeSteps` rewrites a model's IR by its layers' module paths, which
 * the Hugging Face builders name as transformers does; the Python frontend
 * keeps torch modules' states itself (frozenParameters.ts). Where a newer
 * transformers names the same parameters otherwise, stepNaming.ts says which
 * names each step reads.
 */
import { diagnosticAt, type Diagnostic, type LayerSpec, type ModelSpec, type SourceRange } from '../../core/ir';
import { joinParameterName, torchParameterNames } from './parameterNames';
import { releaseDependentMessage, stepReading, type ParameterRenaming, type ReleaseDependentStep } from './stepNaming';
import { UnreadFreezeStep, parametersUnder, unreadStepDiagnostic } from './unreadSteps';

/** What a step sets `requires_grad` to for one parameter: undefined leaves it; 'unreadable' when WAP cannot tell. */
export type RequiresGradVerdict = boolean | undefined | 'unreadable';

/** One freeze as the code wrote it, over the parameters under `prefix`. */
export interface FreezeStep {
  /** The module path the step's parameter names are relative to ('' for the whole model). */
  prefix: string;
  /** The step's verdict for a parameter, by its name relative to `prefix`, as `named_parameters()` would give it. */
  requiresGrad(relativeName: string): RequiresGradVerdict;
  range: SourceRange;
  /**
   * Where a newer transformers names the parameters otherwise (stepNaming.ts): which names `requiresGrad` reads, the
   * graph's or the newer release's, when the code reached the step's module by a path only one of them has; undefined
   * when both have it.
   */
  naming?: 'graph' | 'newer';
  /** The step's module path in the newer release's names; undefined where it has no such module (one expert). */
  newerPrefix?: string;
  /** A warning the step carries to every plan (a path that names other parameters in another release). */
  caveat?: string;
}

/** Whether each parameter of one layer requires grad, by its full name. */
export class ParameterStates {
  private readonly requires: Map<string, boolean>;

  constructor(names: readonly string[], frozen: boolean) {
    this.requires = new Map(names.map((n) => [n, !frozen]));
  }

  /** Applies a step's verdicts; a name it cannot decide leaves every state as it was and comes back. */
  apply(decide: (name: string) => RequiresGradVerdict): string | undefined {
    const next = this.decide(decide);
    if (typeof next === 'string') return next;
    this.commit(next);
    return undefined;
  }

  /** The states a step's verdicts give, not yet applied (`commit`); the first name it cannot decide instead. */
  decide(decide: (name: string) => RequiresGradVerdict): Map<string, boolean> | string {
    const next = new Map(this.requires);
    for (const name of this.requires.keys()) {
      const verdict = decide(name);
      if (verdict === 'unreadable') return name;
      if (verdict !== undefined) next.set(name, verdict);
    }
    return next;
  }

  commit(next: ReadonlyMap<string, boolean>): void {
    for (const [name, requires] of next) this.requires.set(name, requires);
  }

  /** Frozen when every parameter is; a split layer is planned trained. */
  get frozen(): boolean {
    return [...this.requires.values()].every((r) => !r);
  }

  /** One frozen and one trained parameter, when the layer is split. */
  split(): { frozen: string; trained: string } | undefined {
    const entries = [...this.requires];
    const frozen = entries.find(([, r]) => !r)?.[0];
    const trained = entries.find(([, r]) => r)?.[0];
    return frozen !== undefined && trained !== undefined ? { frozen, trained } : undefined;
  }
}

/** The warnings every plan repeats: layers left split (planned trained), and parameters a step could not decide. */
export function freezeDiagnostics(split: ReadonlyArray<{ frozen: string; trained: string; range: SourceRange }>, unreadable: ReadonlyArray<{ name: string; range: SourceRange }>): Diagnostic[] {
  const out: Diagnostic[] = [];
  if (split.length) {
    const first = split[0];
    const message = `This code freezes part of ${count(split.length, 'layer')} (e.g. \`${first.frozen}\` frozen, \`${first.trained}\` trained); WAP plans a layer frozen or trained as a whole, so ${split.length === 1 ? 'it is' : 'they are'} planned as trained, over-stating their gradients, optimizer state and weight-gradient compute`;
    out.push(carried(diagnosticAt('warning', 'frozen-parameters', message, first.range)));
  }
  if (unreadable.length) {
    const first = unreadable[0];
    const n = unreadable.length;
    out.push(carried(diagnosticAt('warning', 'frozen-parameters', `WAP cannot decide whether this code freezes \`${first.name}\` (the condition depends on something it cannot compute); ${count(n, 'layer')} keep${n === 1 ? 's' : ''} the state ${n === 1 ? 'it' : 'they'} had before this code`, first.range)));
  }
  return out;
}

/**
 * A model with the steps applied to its layers, in order, by module path. A tied weight is one parameter, named by
 * its owner (`model.embed_tokens.weight`), as `named_parameters()` lists a shared parameter once; a step over a module
 * that reuses it without holding its owner (`lm_head.requires_grad_(False)` on a tied model) reaches it by that
 * module's own name, as torch does, and so freezes the owner's layer too. With `renaming`, a newer transformers'
 * names of the same parameters, each step reads the names stepNaming.ts chooses. A step WAP stops reading
 * (unreadSteps.ts) is applied to no layer and said, the model marked incomplete.
 */
export function applyFreezeSteps(spec: ModelSpec, steps: readonly FreezeStep[], renaming?: ParameterRenaming): ModelSpec {
  if (steps.length === 0) return spec;
  const layers: LayerSpec[] = spec.layers.map((l) => ({ ...l }));
  const states = new Map<LayerSpec, { names: string[]; states: ParameterStates; range?: SourceRange }>();
  for (const layer of layers) {
    const names = parameterNamesOf(layer);
    if (names?.length) states.set(layer, { names, states: new ParameterStates(names, layer.frozen === true) });
  }
  const aliases = tiedWeightAliases(layers);
  const namesOf = (name: string): string[] => [name, ...(aliases.get(name) ?? [])];
  const unreadable: Array<{ name: string; range: SourceRange }> = [];
  const dependent: ReleaseDependentStep[] = [];
  const caveats = new Map<string, SourceRange>();
  const allNames = renaming ? [...states.values()].flatMap((e) => e.names) : [];
  const unread: Diagnostic[] = [];
  for (const step of steps) {
    // Every verdict first, then the states: a step WAP stops reading halfway (unreadSteps.ts) is applied to nothing.
    const said: ReleaseDependentStep[] = [];
    let decided: Array<{ entry: { states: ParameterStates; range?: SourceRange }; next: Map<string, boolean> | string }>;
    try {
      // The owner's name first: a step over both the owner and a reuser sees the parameter once, by the owner's name.
      const reading = stepReading(step, allNames, namesOf, renaming, (d) => said.push(d));
      decided = [...states.values()].filter((entry) => entry.names.some(reading.covers)).map((entry) => ({ entry, next: entry.states.decide(reading.verdict) }));
    } catch (e) {
      if (!(e instanceof UnreadFreezeStep)) throw e;
      unread.push(unreadStepDiagnostic(e, parametersUnder(step.prefix, [...states.values()].flatMap((entry) => entry.names)), step.range));
      continue;
    }
    dependent.push(...said);
    for (const { entry, next } of decided) {
      if (typeof next === 'string') unreadable.push({ name: next, range: step.range });
      else {
        entry.states.commit(next);
        entry.range = step.range;
      }
    }
    if (decided.length && step.caveat && !caveats.has(step.caveat)) caveats.set(step.caveat, step.range);
  }
  const split: Array<{ frozen: string; trained: string; range: SourceRange }> = [];
  for (const [layer, entry] of states) {
    if (!entry.range) continue;
    const parts = entry.states.split();
    if (parts) split.push({ ...parts, range: entry.range });
    if (entry.states.frozen) layer.frozen = true;
    else delete layer.frozen;
  }
  const namingNotes = [
    ...dependent.map((d) => diagnosticAt('warning', 'frozen-parameters', releaseDependentMessage(d), d.range)),
    ...[...caveats].map(([message, range]) => diagnosticAt('warning', 'frozen-parameters', message, range)),
  ].map(carried);
  return { ...spec, layers, diagnostics: [...spec.diagnostics, ...freezeDiagnostics(split, unreadable), ...namingNotes, ...unread] };
}

/** The other names of each tied weight, by its owner's name: the path of every layer that reuses it (`lm_head.weight`). */
function tiedWeightAliases(layers: readonly LayerSpec[]): Map<string, string[]> {
  const aliases = new Map<string, string[]>();
  for (const layer of layers) {
    if (layer.weightKey === undefined || layer.weightKey === layer.name || !torchParameterNames(layer.op, layer.attrs)?.includes('weight')) continue;
    const owner = joinParameterName(layer.weightKey, 'weight');
    aliases.set(owner, [...(aliases.get(owner) ?? []), joinParameterName(layer.name, 'weight')]);
  }
  return aliases;
}

/** A layer's parameters by their full names; undefined where WAP does not know them. */
function parameterNamesOf(layer: LayerSpec): string[] | undefined {
  const own = torchParameterNames(layer.op, layer.attrs);
  if (!own) return undefined;
  // A tied layer's weight is its owner's, listed once under the owner's path.
  const tied = layer.weightKey !== undefined && layer.weightKey !== layer.name;
  return own.filter((n) => !(tied && n === 'weight')).map((n) => joinParameterName(layer.name, n)).concat(tied && own.includes('weight') ? [joinParameterName(layer.weightKey!, 'weight')] : []);
}

const carried = (d: Diagnostic): Diagnostic => ({ ...d, carriesToPlan: true });
const count = (n: number, what: string): string => `${n} ${what}${n === 1 ? '' : 's'}`;
