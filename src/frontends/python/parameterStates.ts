/**
 * Whether each parameter of a torch module requires grad, once a freeze
 * decided by parameter (a loop over `named_parameters()` with a condition on
 * the name, `model.fc.weight.requires_grad = False`) reached it: the module's
 * `frozen` mark follows (frozen when all its parameters are; a split module is
 * planned trained), and the split ones are said once the file is read.
 * Whole-module freezes (`requires_grad_(False)`) reset what was kept here.
 */
import type { Diagnostic, SourceRange } from '../../core/ir';
import { ParameterStates, freezeDiagnostics, type RequiresGradVerdict } from '../freezing/freezeSteps';
import { joinParameterName } from '../freezing/parameterNames';
import type { Interp } from './interpreter';
import type { InstV, ModV } from './values';

type Holder = ModV | InstV;

interface Entry {
  /** The module's parameter names of its own (`weight`, `bias`; '' for an nn.Parameter). */
  own: string[];
  states: ParameterStates;
  /** How the code names the module, for messages (`backbone.0`, `model.fc`). */
  label: string;
  range: SourceRange;
}

const entries = new WeakMap<Holder, Entry>();
/** Per file read: the modules reached, in order, and the parameters a freeze could not decide. */
const reached = new WeakMap<Interp, { modules: Holder[]; unreadable: Array<{ name: string; range: SourceRange }> }>();

function readOf(interp: Interp) {
  let r = reached.get(interp);
  if (!r) reached.set(interp, (r = { modules: [], unreadable: [] }));
  return r;
}

/** Applies a freeze's verdicts (by own parameter name) to one module; its `frozen` mark follows its parameters. */
export function decideParameters(interp: Interp, module: Holder, own: string[], decide: (ownName: string) => RequiresGradVerdict, label: string, range: SourceRange): void {
  let entry = entries.get(module);
  if (!entry || entry.own.join() !== own.join()) {
    entry = { own, states: new ParameterStates(own, module.frozen === true), label, range };
    entries.set(module, entry);
    readOf(interp).modules.push(module);
  }
  const lost = entry.states.apply(decide);
  if (lost !== undefined) {
    readOf(interp).unreadable.push({ name: joinParameterName(label, lost), range });
    return;
  }
  entry.label = label;
  entry.range = range;
  module.frozen = entry.states.frozen;
}

/** A whole-module freeze or thaw: what was kept per parameter no longer holds. */
export function resetParameterStates(module: Holder): void {
  entries.delete(module);
}

/** The warnings a file's per-parameter freezes leave: modules still split, parameters no freeze could decide. */
export function parameterStateDiagnostics(interp: Interp): Diagnostic[] {
  const r = reached.get(interp);
  if (!r) return [];
  const split: Array<{ frozen: string; trained: string; range: SourceRange }> = [];
  for (const module of new Set(r.modules)) {
    const entry = entries.get(module);
    const parts = entry?.states.split();
    if (entry && parts) split.push({ frozen: joinParameterName(entry.label, parts.frozen), trained: joinParameterName(entry.label, parts.trained), range: entry.range });
  }
  return freezeDiagnostics(split, r.unreadable);
}
