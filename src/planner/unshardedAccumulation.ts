/**
 * What FSDP's no_sync costs a plan in memory, said on the plan (PlanOptions.unshardedAccumulationStages; priced by
 * both searches: cost/tableBuilder.ts, simulator/iteration.ts, search/parallel3d/estimate.ts). Accumulating unsharded
 * spares the micro-steps before the last their reduce-scatters but holds every trained parameter's full gradient on
 * each GPU until the last; accelerate's GradientAccumulationPlugin(sync_each_batch=True) says it "may reduce memory
 * requirements when using gradient accumulation with distributed training, at expense of speed"
 * (accelerate utils/dataclasses.py). So a plan priced with no_sync says what its gradients take, and where no_sync is
 * what keeps it from fitting (nothing fits, or it fits only through recompute or offload) while reducing each
 * micro-step fits, the plan says that too: the search is run again with every micro-step reducing to find out.
 */
import type { PlanDiagnostic, PlanOutcome, TrainingSetup } from '../protocol/plan';
import type { PlanOptions } from '../protocol/planOptions';

type Search = Generator<[number, number] | void, PlanOutcome, void>;

const gb = (bytes: number): string => `${(bytes / 1e9).toFixed(2)} GB`;

const SYNC_EACH_BATCH = "sync_each_batch=True (accelerate's GradientAccumulationPlugin; the Trainer's accelerator_config gradient_accumulation_kwargs)";

/** The note on a plan that accumulates unsharded: the gradients it holds whole, and what reducing each micro-step would hold. */
export function unshardedGradientsNote(s: TrainingSetup): PlanDiagnostic | undefined {
  if (s.gradientAccumulationSync !== 'unsharded' || !s.shardGroup) return undefined;
  const held = s.memoryPerGpu.gradients;
  return {
    severity: 'info',
    message: `gradients accumulated unsharded over the ${s.gradientAccumulation} micro-steps (${s.gradientAccumulationSyncReason}): ` +
      `each GPU holds ${gb(held)} of full gradients until the last micro-step's reduce-scatter, where reducing every micro-step would keep a 1/${s.shardGroup} shard (${gb(held / s.shardGroup)}) for ${s.gradientAccumulation - 1} more reduce-scatters; ${SYNC_EACH_BATCH} does that`,
  };
}

/** Whether an outcome is one no_sync may have forced: nothing fits, or it fits only through a memory saver. */
function strained(outcome: PlanOutcome): boolean {
  return !outcome.feasible || !!outcome.plan.setup?.fitsThrough;
}

function summary(o: PlanOutcome & { feasible: true }): string {
  const s = o.plan.setup!;
  return `${o.plan.gpus} GPUs, ZeRO-${s.zeroStage}, recompute ${s.recompute}, ${s.gradientAccumulation} micro-steps, ${o.plan.samplesPerSec.toFixed(1)} samples/s`;
}

/**
 * The outcome with the notes: the gradients' size when it accumulates unsharded, and, when it is strained, whether
 * reducing every micro-step would fit where no_sync does not (or without the memory saver it needed). `search` plans
 * with other options (its progress counts are passed on as plain checkpoints).
 */
export function* withUnshardedAccumulationNotes(outcome: PlanOutcome, options: PlanOptions, search: (o: PlanOptions) => Search): Generator<[number, number] | void, PlanOutcome, void> {
  const notes: PlanDiagnostic[] = [];
  const own = outcome.feasible && outcome.plan.setup ? unshardedGradientsNote(outcome.plan.setup) : undefined;
  if (own) notes.push(own);
  if (options.unshardedAccumulationStages?.length && strained(outcome)) {
    const run = search({ ...options, unshardedAccumulationStages: [], unshardedAccumulationSource: 'reducing every micro-step' });
    let step = run.next();
    while (!step.done) {
      yield;
      step = run.next();
    }
    const synced = step.value;
    const why = options.unshardedAccumulationSource ?? 'the training framework';
    if (synced.feasible && (!outcome.feasible || !synced.plan.setup?.fitsThrough)) {
      const before = outcome.feasible ? `fits only through ${outcome.plan.setup!.fitsThrough}` : 'nothing fits';
      notes.push({
        severity: 'warning',
        message: `with gradients accumulated unsharded (FSDP no_sync: ${why}) ${before}; reducing every micro-step, ${SYNC_EACH_BATCH}, fits: ${summary(synced)}`,
      });
    }
  }
  return notes.length ? { ...outcome, diagnostics: [...outcome.diagnostics, ...notes] } : outcome;
}
