/**
 * The batch the model's own training code states (ModelSpec.runBatch, frontends/python/runBatch.ts), planned where
 * nothing explicit chose one: a flag, a setting or a launch that states a global batch each win. A global batch
 * (nanoGPT's accumulation split over its processes) is planned as it is. A per-process one is multiplied by the
 * replicas the launch that trains the model starts (`torchrun --nproc_per_node 8`); with no launch to say, by every
 * GPU the plan may use, and the batch stays assumed: the report says which GPU count made it.
 */
import type { AnalyzedModel } from '../core/ir';
import type { PlanOptions } from '../protocol/planOptions';

export function withCodeBatch(model: AnalyzedModel, gpusAvailable: number, options: PlanOptions): PlanOptions {
  const run = model.runBatch;
  // A batchSource beside batchAssumed says launches disagree: which one is the run is the user's to say.
  if (!run || !options.batchAssumed || options.batchSource) return options;
  if (!run.perProcess) return stated(options, run.samples, run.source);
  const replicas = options.launchReplicas;
  if (replicas) return stated(options, run.samples * replicas.count, `${run.source} × ${replicas.count} data-parallel replicas (${replicas.source})`);
  const gpus = options.gpus ?? Math.min(options.maxGpus ?? gpusAvailable, gpusAvailable);
  return {
    ...options, batch: run.samples * gpus,
    batchSource: `${run.source}; no launch beside it says how many processes run it, so one per GPU of the ${gpus} the plan may use (pass --batch for the global batch)`,
  };
}

function stated(options: PlanOptions, batch: number, source: string): PlanOptions {
  const out: PlanOptions = { ...options, batch, batchSource: source };
  delete out.batchAssumed;
  return out;
}
