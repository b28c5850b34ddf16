/**
 * The batch a training script trains at, as the run computes it: the samples each process takes per forward
 * (`batch_size`, `per_device_train_batch_size`…, core/batchOptions.ts) times the micro-steps it accumulates, read
 * from the analysed script's module level (nanoGPT's globals after its configurator), its command line (argparse,
 * HfArgumentParser) or its `TrainingArguments(…)`. Per process unless the script splits one of them over its
 * processes: nanoGPT divides `gradient_accumulation_steps` by the world size, so that number is the whole run's and the
 * product is the global batch; the ImageNet example divides `args.batch_size` by its GPUs per node, so that one is a
 * node's, times the nodes the script computes its world from (runBatchSplit.ts).
 * WAP's first question is asked at a fixed global batch (configs/launchedSetupHint.ts says why); the planner
 * multiplies a per-process batch by the launch's replicas (planner/codeBatch.ts). A loop that accumulates under a
 * name WAP does not read states no batch: half of one would be a wrong number.
 */
import type { ModelSpec } from '../../core/ir';
import type { RunBatch } from '../../core/runFacts';
import { ACCUMULATION_NAMES, MICRO_BATCH_NAMES, OTHER_ACCUMULATION } from '../../core/batchOptions';
import { field, namedChildren, type PyNode } from './ast';
import type { Interp } from './interpreter';
import { evalExpr } from './expressions';
import { TRAINING_ARGUMENTS } from './runPrecision';
import { noteTokenBudget } from './runTokenBudget';
import { positiveWhole, type CallSite, type Scope, type Value } from './values';
import { fileLabel } from './runFacts';
import { noteNodeCount, perNodeWords, splitOf, targetName, type BatchSplit } from './runBatchSplit';
import { drawnLoaderBatch } from './runLoaderBatch';

/** The names a batch or its accumulation goes by (core/batchOptions.ts). */
export const BATCH_NAMES: ReadonlySet<string> = new Set([...MICRO_BATCH_NAMES, ...ACCUMULATION_NAMES]);

/** TrainingArguments' own defaults (transformers' training_args.py). */
const HF_DEFAULTS: Readonly<Record<string, number>> = { per_device_train_batch_size: 8, gradient_accumulation_steps: 1 };

export interface BatchValue {
  value: number;
  /** How the report names it: "--batch_size 32 from run.sh", "batch_size 12 in train.py". */
  said: string;
}

/** Before an assignment runs: what it says of the run's batch (a split over the processes, or a budget's accumulation). */
export function noteBatchAssignment(interp: Interp, node: PyNode, scope: Scope): void {
  const left = field(node, 'left');
  if (!left) return;
  noteBatchSplit(interp, node, () => evalExpr(interp, left, scope));
  noteNodeCount(interp, node, scope);
  const name = targetName(interp, left);
  if (name && ACCUMULATION_NAMES.includes(name)) noteTokenBudget(interp, node, name, scope);
}

/**
 * Before an assignment runs: where it splits a batch name over the processes, the value it divides is the whole run's
 * (nanoGPT's accumulation before `//= ddp_world_size`, which makes it unknown here).
 */
export function noteBatchSplit(interp: Interp, node: PyNode, current: () => Value): void {
  const name = targetName(interp, field(node, 'left'));
  if (!name || !BATCH_NAMES.has(name) || interp.run.batchSplit.has(name) || !splitOf(interp, node, name)) return;
  const value = positiveWhole(current());
  // The value divided is often the command line's (ImageNet's -b): said as the parse said it.
  const parsed = interp.run.batchOptions.get(name);
  if (value !== undefined) interp.run.batchSplit.set(name, parsed?.value === value ? parsed : { value, said: `${name} ${value}` });
}

/** An option a parse read (argparse's dest, an HfArgumentParser field): the first parse's value counts. */
export function noteBatchOption(interp: Interp, name: string, value: Value, givenBy: string | undefined): void {
  const n = positiveWhole(value);
  if (!BATCH_NAMES.has(name) || n === undefined || interp.run.batchOptions.has(name)) return;
  interp.run.batchOptions.set(name, { value: n, said: givenBy ? `--${name} ${n} from ${givenBy}` : `${name} ${n} (the parser's default)` });
}

/** `TrainingArguments(per_device_train_batch_size=…, …)` as the run has it; a keyword not given is transformers' default. */
export function noteTrainingArgumentsBatch(interp: Interp, path: string, kwargs: Map<string, Value>, site: CallSite): void {
  if (!TRAINING_ARGUMENTS.test(path)) return;
  const splat = interp.text(site.node).includes('**');
  for (const [name, fallback] of Object.entries(HF_DEFAULTS)) {
    const given = kwargs.get(name);
    if (given === undefined && splat) continue;
    const value = given === undefined ? fallback : positiveWhole(given);
    if (value !== undefined && !interp.run.batchOptions.has(name)) interp.run.batchOptions.set(name, { value, said: `${name} ${value}${given === undefined ? ' (transformers\' default)' : ''}` });
  }
}

/** Every name the file splits over its processes, whether or not the statement ran (mp.spawn's worker does not). */
function splitsIn(interp: Interp, root: PyNode): Map<string, BatchSplit> {
  const out = new Map<string, BatchSplit>();
  const visit = (node: PyNode): void => {
    if (node.type === 'assignment' || node.type === 'augmented_assignment') {
      const name = targetName(interp, field(node, 'left'));
      const split = name && BATCH_NAMES.has(name) && !out.has(name) ? splitOf(interp, node, name) : undefined;
      if (split) out.set(name!, split);
    }
    for (const child of namedChildren(node)) visit(child);
  };
  visit(root);
  return out;
}

/** A batch name's value: the analysed module's own (nanoGPT's globals), the value a split divided, or a parse's. */
function valueOf(interp: Interp, globals: Scope, name: string): BatchValue | undefined {
  const own = positiveWhole(globals.vars.get(name));
  if (own !== undefined) return { value: own, said: `${name} ${own}` };
  return interp.run.batchSplit.get(name) ?? interp.run.batchOptions.get(name);
}

/** The run's batch, where the script trains a model and states both numbers (or plainly does not accumulate). */
export function readRunBatch(interp: Interp, root: PyNode): RunBatch | undefined {
  if (interp.trainedModels.length === 0) return undefined;
  // The engine's own config is what it trains with, whatever names the script also binds.
  if (interp.run.engineBatch) return interp.run.engineBatch;
  if (interp.run.budget) return { samples: interp.run.budget.samples, perProcess: false, source: interp.run.budget.source };
  const first = (names: readonly string[]): [string, BatchValue] | undefined => {
    for (const name of names) {
      const v = valueOf(interp, interp.globals, name);
      if (v) return [name, v];
    }
    return undefined;
  };
  // Lightning's per-process batch is the loader trainer.fit trains on, whatever else the script calls batch_size.
  // A plain loop's loader comes last: a name the script (or its command line) gives the batch says it as the user does.
  const drawn = interp.run.fitLoader ? undefined : drawnLoaderBatch(interp);
  const micro: [string, BatchValue] | undefined = interp.run.fitLoader ? ['DataLoader', interp.run.fitLoader] : (first(MICRO_BATCH_NAMES) ?? (drawn && ['DataLoader', drawn]));
  if (!micro) return undefined;
  const accumulation = first(ACCUMULATION_NAMES);
  if (!accumulation && OTHER_ACCUMULATION.test(interp.source)) return undefined;
  const splits = splitsIn(interp, root);
  const splitMicro = splits.get(micro[0]);
  const splitAccumulation = accumulation && splits.get(accumulation[0]);
  // Both divided by the processes: what one process trains on is no longer their product's share; not read.
  if (splitMicro && splitAccumulation) return undefined;
  const steps = accumulation?.[1].value ?? 1;
  const how = `${micro[1].said}${accumulation ? ` × ${accumulation[1].said}` : ''}`;
  const file = fileLabel(interp.file);
  const split = splitMicro ?? splitAccumulation;
  if (split?.perNode) {
    // One node's batch: the run's is it times the nodes, where the script says how many.
    const nodes = interp.run.nodes;
    const words = `${file}: ${how}, ${perNodeWords(interp, split)}`;
    if (nodes) return { samples: micro[1].value * steps * nodes.value, perProcess: false, source: `${words} × ${nodes.said}` };
    return { samples: micro[1].value * steps, perProcess: false, source: `${words}: one node's batch, as the script states no node count WAP could read (a run over N nodes trains N × it; pass --batch for the global batch)` };
  }
  // What one process takes per forward, unless the script divides it over the processes (then it is not this number).
  const perForward = splitMicro ? {} : { perForward: { samples: micro[1].value, said: `${file}'s ${micro[1].said}` } };
  if (split) {
    const which = splitMicro ? micro[0] : accumulation![0];
    return { samples: micro[1].value * steps, perProcess: false, source: `${file}: ${how}, ${which} split over the processes by the script`, ...perForward };
  }
  return { samples: micro[1].value * steps, perProcess: true, source: `${file}: ${how} per process`, ...perForward };
}

/** The spec with the run's batch, when the script states one. */
export function withRunBatch(spec: ModelSpec, run: RunBatch | undefined): ModelSpec {
  return run && !spec.runBatch ? { ...spec, runBatch: run } : spec;
}
