/**
 * Freezes decided by parameter name: what a fine-tuning script's
 * `for name, p in model.named_parameters(): if …: p.requires_grad = False`
 * (or `model.bert.requires_grad_(False)` on a Hugging Face model) does to
 * each parameter, applied in program order.
 *
 * WAP plans a layer frozen or trained as a whole. A step that leaves a
 * layer's parameters split (BitFit trains the biases of frozen Linears) keeps
 * the layer as it was and says so: over-stating the trained work is the
 * honest side of that approximation.
 *
 * `applyFreezeSteps` rewrites a model's IR by its layers' module paths, which
 * the Hugging Face builders name as transformers does; the Python frontend
 * decides torch module values with `moduleVerdict` directly.
 */
import { diagnosticAt, type Diagnostic, type LayerSpec, type ModelSpec, type SourceRange } from '../../core/ir';
import { joinParameterName, torchParameterNames } from './parameterNames';

/** What a step sets `requires_grad` to for one parameter: undefined leaves it; 'unreadable' when WAP cannot tell. */
export type RequiresGradVerdict = boolean | undefined | 'unreadable';

/** One freeze as the code wrote it, over the parameters under `prefix`. */
export interface FreezeStep {
  /** The module path the step's parameter names are relative to ('' for the whole model). */
  prefix: string;
  /** The step's verdict for a parameter, by its name relative to `prefix`, as `named_parameters()` would give it. */
  requiresGrad(relativeName: string): RequiresGradVerdict;
  range: SourceRange;
}

export type ModuleVerdict = { kind: 'frozen' | 'trained' } | { kind: 'partial'; frozen: string; trained: string } | { kind: 'unreadable'; name: string };

/**
 * A module's state after a step, from its parameters' verdicts (full names) and its state before: a name the step
 * leaves keeps the module's state. Parameters ending split make it 'partial' (the caller keeps the module as it was).
 */
export function moduleVerdict(names: readonly string[], frozenBefore: boolean, requiresGrad: (name: string) => RequiresGradVerdict): ModuleVerdict {
  let frozen: string | undefined;
  let trained: string | undefined;
  for (const name of names) {
    const verdict = requiresGrad(name);
    if (verdict === 'unreadable') return { kind: 'unreadable', name };
    const requires = verdict ?? !frozenBefore;
    if (requires) trained ??= name;
    else frozen ??= name;
  }
  if (frozen !== undefined && trained !== undefined) return { kind: 'partial', frozen, trained };
  return { kind: frozen !== undefined ? 'frozen' : trained !== undefined ? 'trained' : frozenBefore ? 'frozen' : 'trained' };
}

/** A step's verdict function over full names: names outside its prefix are left. */
export function withinPrefix(step: FreezeStep): (name: string) => RequiresGradVerdict {
  if (!step.prefix) return (name) => step.requiresGrad(name);
  const head = step.prefix + '.';
  return (name) => (name === step.prefix ? step.requiresGrad('') : name.startsWith(head) ? step.requiresGrad(name.slice(head.length)) : undefined);
}

/** Tallies what steps did, for the warnings every plan repeats. */
export class FreezeReport {
  private partial: Array<{ module: string; frozen: string; trained: string; frozenKept: boolean }> = [];
  private unreadable: Array<{ name: string; range: SourceRange }> = [];

  /** Records a module a step left split or could not decide; true when the module keeps its state. */
  note(module: string, verdict: ModuleVerdict, frozenBefore: boolean, range: SourceRange): boolean {
    if (verdict.kind === 'partial') this.partial.push({ module, frozen: verdict.frozen, trained: verdict.trained, frozenKept: frozenBefore });
    else if (verdict.kind === 'unreadable') this.unreadable.push({ name: verdict.name, range });
    return verdict.kind === 'partial' || verdict.kind === 'unreadable';
  }

  diagnostics(range: SourceRange): Diagnostic[] {
    const out: Diagnostic[] = [];
    if (this.partial.length) {
      const first = this.partial[0];
      const trainedCount = this.partial.filter((p) => !p.frozenKept).length;
      out.push(
        carried(
          diagnosticAt(
            'warning',
            'frozen-parameters',
            `This code freezes part of ${count(this.partial.length, 'layer')} (e.g. \`${first.frozen}\` frozen, \`${first.trained}\` trained); WAP plans a layer frozen or trained as a whole, so ${trainedCount === this.partial.length ? 'they are' : `${trainedCount} of them are`} planned as trained, over-stating their gradients, optimizer state and weight-gradient compute`,
            range,
          ),
        ),
      );
    }
    if (this.unreadable.length) {
      const first = this.unreadable[0];
      const n = this.unreadable.length;
      out.push(carried(diagnosticAt('warning', 'frozen-parameters', `WAP cannot decide whether this code freezes \`${first.name}\` (the condition depends on something it cannot compute); ${count(n, 'layer')} keep${n === 1 ? 's' : ''} the state ${n === 1 ? 'it' : 'they'} had before this code`, first.range)));
    }
    return out;
  }
}

/**
 * A model with the steps applied to its layers, in order, by module path (a tied weight is named by its owner, as
 * `named_parameters()` lists a shared parameter once).
 */
export function applyFreezeSteps(spec: ModelSpec, steps: readonly FreezeStep[]): ModelSpec {
  if (steps.length === 0) return spec;
  const layers: LayerSpec[] = spec.layers.map((l) => ({ ...l }));
  const named = layers.map((l) => ({ layer: l, names: parameterNamesOf(l) })).filter((e) => e.names && e.names.length > 0) as Array<{ layer: LayerSpec; names: string[] }>;
  const diagnostics: Diagnostic[] = [];
  for (const step of steps) {
    const decide = withinPrefix(step);
    const under = (n: string): boolean => !step.prefix || n === step.prefix || n.startsWith(step.prefix + '.');
    const report = new FreezeReport();
    for (const { layer, names } of named) {
      if (!names.some(under)) continue;
      const before = layer.frozen === true;
      const verdict = moduleVerdict(names, before, decide);
      if (report.note(layer.name, verdict, before, step.range)) continue;
      if (verdict.kind === 'frozen') layer.frozen = true;
      else delete layer.frozen;
    }
    diagnostics.push(...report.diagnostics(step.range));
  }
  return { ...spec, layers, diagnostics: [...spec.diagnostics, ...diagnostics] };
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
