/**
 * The batch a run draws from its DataLoader, where no option names it. Lightning: each process takes the
 * `batch_size` of the DataLoader that `trainer.fit` is given (as `train_dataloaders`, or by a LightningDataModule's
 * `train_dataloader()`), and the Trainer's `accumulate_grad_batches` micro-steps; Lightning starts one process per
 * device (its Trainer is the launch). A plain loop: the loader a `for` loop that steps backward iterates
 * (`for x, y in loader: … loss.backward()`), else the one `next()` draws from (minGPT's Trainer: `next(data_iter)`).
 * Either is a per-process batch the launch's replicas multiply (runBatch.ts, planner/codeBatch.ts).
 * A loader whose batch WAP cannot read (a `batch_sampler`, a computed size) states none.
 */
import { positiveWhole, type CallSite, type Value } from './values';
import type { BatchValue } from './runBatch';
import { fileLabel } from './runFacts';
import { classLookup } from './access';
import { callMethod } from './calls';
import type { Interp } from './interpreter';
import { rangeOf, type PyNode } from './ast';

const LOADER = /^torch\.utils\.data(\.dataloader)?\.DataLoader$/;

/** Each DataLoader the run builds, with the batch it yields; a loader stays an unknown value otherwise. */
const loaderBatches = new WeakMap<Value, { value: number; where: string }>();

/** `DataLoader(dataset, batch_size=…)`: an unknown value that remembers its batch (torch's default is 1). */
export function dataLoaderCall(interp: Interp, path: string, args: Value[], kwargs: Map<string, Value>, site: CallSite): Value | undefined {
  if (!LOADER.test(path)) return undefined;
  const loader: Value = { k: 'unknown', why: 'a DataLoader' };
  if (kwargs.has('batch_sampler')) return loader;
  const given = kwargs.get('batch_size') ?? args[1];
  // `DataLoader(ds, **loader_args)` with arguments WAP could not spread may set it: torch's default 1 is then a guess.
  if (given === undefined && /[(,]\s*\*{1,2}[\w(]/.test(interp.text(site.node))) return loader;
  const value = given === undefined ? 1 : positiveWhole(given);
  if (value !== undefined) loaderBatches.set(loader, { value, where: `${fileLabel(site.range.file ?? interp.file)}:${site.range.line}` });
  return loader;
}

/** Whether a loop body runs a training step: a backward pass (`loss.backward()`, `accelerator.backward(loss)`). */
const STEPS_BACKWARD = /\bbackward\s*\(/;

/** `for … in <iterable>: <body>`: a loop over a loader whose body steps backward draws the run's training batches. */
export function noteLoopLoader(interp: Interp, iterable: Value, loop: PyNode, body: PyNode): void {
  const batch = loaderBatches.get(iterable);
  // Each epoch runs the loop again: one record per batch is all the choice needs.
  if (!batch || interp.run.drawnLoaders.some((d) => d.training && d.batch.value === batch.value) || !STEPS_BACKWARD.test(interp.text(body))) return;
  const at = rangeOf(loop);
  interp.run.drawnLoaders.push({ batch: { value: batch.value, said: `DataLoader batch_size ${batch.value} (${batch.where}) the training loop at ${fileLabel(at.file ?? interp.file)}:${at.line} iterates` }, training: true });
}

/** `next(<loader or iter(loader)>)`: a batch drawn by hand, the training one where no training loop says otherwise. */
export function noteNextLoader(interp: Interp, iterable: Value | undefined, site: CallSite): void {
  const batch = iterable && loaderBatches.get(iterable);
  // A loop of next() calls draws from one loader: recorded once, not once per draw.
  if (!batch || interp.run.drawnLoaders.some((d) => !d.training && d.batch.value === batch.value)) return;
  interp.run.drawnLoaders.push({ batch: { value: batch.value, said: `DataLoader batch_size ${batch.value} (${batch.where}) drawn by next() at ${fileLabel(site.range.file ?? interp.file)}:${site.range.line}` }, training: false });
}

/**
 * The batch the run draws for training: its training loops' loader, else the one next() draws from, where every such
 * loader yields the same batch (a script drawing two sizes leaves which one trains to the user).
 */
export function drawnLoaderBatch(interp: Interp): BatchValue | undefined {
  const training = interp.run.drawnLoaders.filter((d) => d.training);
  const candidates = training.length > 0 ? training : interp.run.drawnLoaders;
  if (candidates.length === 0 || candidates.some((d) => d.batch.value !== candidates[0]!.batch.value)) return undefined;
  return candidates[0]!.batch;
}

/** The loader `trainer.fit(model, …)` trains on: its train_dataloaders, else its datamodule's train_dataloader(). */
function trainingLoader(interp: Interp, args: Value[], kwargs: Map<string, Value>): Value | undefined {
  const given = kwargs.get('train_dataloaders') ?? kwargs.get('datamodule') ?? args[1];
  if (given?.k !== 'inst') return given;
  const method = classLookup(given.cls, 'train_dataloader');
  return method?.k === 'func' ? callMethod(interp, method, given, [], new Map()) : undefined;
}

/** `trainer.fit(model, loader | datamodule=…)`, or LightningCLI's own fit: the loader's batch is the run's per-process batch. */
export function noteFitLoader(interp: Interp, args: Value[], kwargs: Map<string, Value>, site: CallSite, caller = 'trainer.fit'): void {
  const loader = trainingLoader(interp, args, kwargs);
  const batch = loader && loaderBatches.get(loader);
  if (!batch || interp.run.fitLoader) return;
  interp.run.fitLoader = { value: batch.value, said: `DataLoader batch_size ${batch.value} (${batch.where}) given to ${caller} at line ${rangeOf(site.node).line}` };
}

/** `Trainer(accumulate_grad_batches=…)`: the micro-steps a Lightning run accumulates, where it says (the default is 1). */
export function noteTrainerAccumulation(interp: Interp, kwargs: Map<string, Value>): void {
  const steps = positiveWhole(kwargs.get('accumulate_grad_batches'));
  if (steps !== undefined && !interp.run.batchOptions.has('accumulate_grad_batches')) interp.run.batchOptions.set('accumulate_grad_batches', { value: steps, said: `accumulate_grad_batches ${steps}` });
}
