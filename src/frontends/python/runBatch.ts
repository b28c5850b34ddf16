/**
 * The batch a training script trains at, as the run computes it: the samples each process takes per forward
 * (`batch_size`, `per_device_train_batch_size`…, core/batchOptions.ts) times the micro-steps it accumulates, read
 * from the analysed script's module level (nanoGPT's globals after its configurator), its command line (argparse,
 * HfArgumentParser) or its `TrainingArguments(…)`. Per process unless the script splits one of them over its
 * processes: nanoGPT divides `gradient_accumulation_steps` by the world size and the ImageNet example divides
 * `args.batch_size` by its GPUs per node, so that number is the whole run's and the product is the global batch.
 * WAP's first question is asked at a fixed global batch (configs/launchedSetupHint.ts says why); the planner
 * multiplies a per-process batch by the launch's replicas (planner/codeBatch.ts). A loop that accumulates under a
 * name WAP does not read states no batch: half of one would be a wrong number.
 */
import type { ModelSpec, RunBatch } from '../../core/ir';
import { ACCUMULATION_NAMES, MICRO_BATCH_NAMES, OTHER_ACCUMULATION, PROCESS_COUNT } from '../../core/batchOptions';
import { field, namedChildren, type PyNode } from './ast';
import type { Interp } from './interpreter';
import { evalExpr } from './expressions';
import { TRAINING_ARGUMENTS } from './runPrecision';
import { noteTokenBudget } from './runTokenBudget';
import { positiveWhole, type CallSite, type Scope, type Value } from './values';
import { fileLabel } from './runFacts';

const BATCH_NAMES = new Set([...MICRO_BATCH_NAMES, ...ACCUMULATION_NAMES]);

/** TrainingArguments' own defaults (transformers' training_args.py). */
const HF_DEFAULTS: Readonly<Record<string, number>> = { per_device_train_batch_size: 8, gradient_accumulation_steps: 1 };

export interface BatchValue {
  value: number;
  /** How the report names it: "--batch_size 32 from run.sh", "batch_size 12 in train.py". */
  said: string;
}

/** The name an assignment writes: `x` or the attribute of `args.x`. */
function targetName(interp: Interp, left: PyNode | undefined): string | undefined {
  if (left?.type === 'identifier') return interp.text(left);
  if (left?.type === 'attribute') return interp.text(field(left, 'attribute') ?? left);
  return undefined;
}

/** Whether `node` (an assignment) splits a batch name over the processes: `n //= world_size`, `n = n // ngpus`. */
function splitsOverProcesses(interp: Interp, node: PyNode, name: string): boolean {
  const right = field(node, 'right');
  if (!right || !PROCESS_COUNT.test(interp.text(right))) return false;
  if (node.type === 'augmented_assignment') return /^(\/\/=|\/=)$/.test(interp.text(node.children.find((c) => c.field === 'operator') ?? node));
  return /\//.test(interp.text(right)) && new RegExp(`\\b${name}\\b`).test(interp.text(right));
}

/** Before an assignment runs: what it says of the run's batch (a split over the processes, or a budget's accumulation). */
export function noteBatchAssignment(interp: Interp, node: PyNode, scope: Scope): void {
  const left = field(node, 'left');
  if (!left) return;
  noteBatchSplit(interp, node, () => evalExpr(interp, left, scope));
  const name = targetName(interp, left);
  if (name && ACCUMULATION_NAMES.includes(name)) noteTokenBudget(interp, node, name, scope);
}

/**
 * Before an assignment runs: where it splits a batch name over the processes, the value it divides is the whole run's
 * (nanoGPT's accumulation before `//= ddp_world_size`, which makes it unknown here).
 */
export function noteBatchSplit(interp: Interp, node: PyNode, current: () => Value): void {
  const name = targetName(interp, field(node, 'left'));
  if (!name || !BATCH_NAMES.has(name) || interp.run.batchSplit.has(name) || !splitsOverProcesses(interp, node, name)) return;
  const value = positiveWhole(current());
  if (value !== undefined) interp.run.batchSplit.set(name, { value, said: `${name} ${value}` });
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
function splitNames(interp: Interp, root: PyNode): Set<string> {
  const out = new Set<string>();
  const visit = (node: PyNode): void => {
    if (node.type === 'assignment' || node.type === 'augmented_assignment') {
      const name = targetName(interp, field(node, 'left'));
      if (name && BATCH_NAMES.has(name) && splitsOverProcesses(interp, node, name)) out.add(name);
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
  if (interp.run.budget) return { samples: interp.run.budget.samples, perProcess: false, source: interp.run.budget.source };
  const first = (names: readonly string[]): [string, BatchValue] | undefined => {
    for (const name of names) {
      const v = valueOf(interp, interp.globals, name);
      if (v) return [name, v];
    }
    return undefined;
  };
  // Lightning's per-process batch is the loader trainer.fit trains on, whatever else the script calls batch_size.
  const micro: [string, BatchValue] | undefined = interp.run.fitLoader ? ['DataLoader', interp.run.fitLoader] : first(MICRO_BATCH_NAMES);
  if (!micro) return undefined;
  const accumulation = first(ACCUMULATION_NAMES);
  if (!accumulation && OTHER_ACCUMULATION.test(interp.source)) return undefined;
  const split = splitNames(interp, root);
  const splitMicro = split.has(micro[0]);
  const splitAccumulation = !!accumulation && split.has(accumulation[0]);
  // Both divided by the processes: what one process trains on is no longer their product's share; not read.
  if (splitMicro && splitAccumulation) return undefined;
  const steps = accumulation?.[1].value ?? 1;
  const how = `${micro[1].said}${accumulation ? ` × ${accumulation[1].said}` : ''}`;
  const file = fileLabel(interp.file);
  if (splitMicro || splitAccumulation) {
    const which = splitMicro ? micro[0] : accumulation![0];
    return { samples: micro[1].value * steps, perProcess: false, source: `${file}: ${how}, ${which} split over the processes by the script` };
  }
  return { samples: micro[1].value * steps, perProcess: true, source: `${file}: ${how} per process` };
}

/** The spec with the run's batch, when the script states one. */
export function withRunBatch(spec: ModelSpec, run: RunBatch | undefined): ModelSpec {
  return run && !spec.runBatch ? { ...spec, runBatch: run } : spec;
}
