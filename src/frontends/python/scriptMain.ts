/**
 * The analysed file's `if __name__ == "__main__":` part, run as a script would run it, for what it does to the
 * module's models: a check call `model(torch.randn(8, 3, 32, 32))` states the input (torchRuntime.ts), and a model
 * built and trained there (llm.c's GPT, minGPT's chargpt.py handing GPT to its own Trainer) is found. It runs on the
 * file's step budget, since building a 12-layer GPT takes more than a check call; a loop at its top level (the
 * training loop) is cut as the module's are (loops.ts execScriptLoop). Its names are put back afterwards (a model
 * rebuilt there is not the one the file defines), and its diagnostics are not the models': argument parsing, data
 * loading and training loops are not model code.
 */
import type { Diagnostic, SourceRange } from '../../core/ir';
import { rangeOf } from './ast';
import { guarded, type Root } from './candidateSpecs';
import { Graph } from './graph';
import type { Interp } from './interpreter';
import { isModelValue, trainedModel } from './trainedModel';

/** What the `__main__` part did with models: the one it trains, else one it builds and leaves at a module-level name. */
export interface MainPart {
  trained?: Root;
  built?: { name: string; root: Root };
  range: SourceRange;
}

export function runMainBlocks(interp: Interp): MainPart | undefined {
  const first = interp.mainBlocks[0];
  if (!first) return undefined;
  const names = new Map(interp.globals.vars);
  const trainedBefore = interp.trainedModels.length;
  const [graph, maxSteps] = [interp.graph, interp.maxSteps];
  interp.graph = new Graph('keras');
  interp.steps = 0;
  interp.maxSteps = maxSteps;
  let built: MainPart['built'];
  try {
    for (const body of interp.mainBlocks) guarded(interp, () => interp.exec(body, interp.globals), [], rangeOf(body));
  } finally {
    for (const [name, v] of interp.globals.vars) if (!built && names.get(name) !== v && isModelValue(v)) built = { name, root: v };
    interp.graph = graph;
    interp.maxSteps = maxSteps;
    interp.globals.vars.clear();
    for (const [k, v] of names) interp.globals.vars.set(k, v);
  }
  return { trained: trainedModel(interp.trainedModels.slice(trainedBefore)), built, range: rangeOf(first) };
}

/**
 * A model the `__main__` part builds but WAP saw nothing train (no Trainer, DDP/FSDP, accelerate or optimizer built
 * from its parameters reached it): where nothing else in the file is a model, it is read, and this says so rather
 * than "no model found" without a reason.
 */
export function untrainedMainNote(className: string, variable: string, range: SourceRange): Diagnostic {
  const message = `${className} is read as the model \`${variable}\` the \`__main__\` part builds; WAP did not see it trained (handed to a Trainer, DDP/FSDP, accelerate or an optimizer built from its parameters), so the script may train it in a way WAP does not read`;
  return { severity: 'info', code: 'main-model-untrained', message, line: range.line, column: range.column, endLine: range.endLine, endColumn: range.endColumn };
}
