/**
 * A plan's throughput on variable-length data. The plan (parallelism, memory) is made at the model's longest
 * length, which every configuration must fit; the run then keeps that configuration while its batches come in at
 * the lengths lengthMix() gives. Each length group is priced by planning again at its length with the chosen
 * configuration pinned, and the step time is the groups' share-weighted mean: a step is a sum of micro-batches, so
 * its expected time is linear in the micro-batch mix.
 */
import type { LengthMixReport, ParallelPins, PlanOutcome, PlanReport, TrainingSetup } from '../../protocol/plan';
import { describeBatching, LengthMixError, type Batching, type LengthMix } from './lengthMix';

/** The configuration a plan chose, as pins, so that re-planning at another length keeps it. */
export function pinsOfSetup(setup: TrainingSetup): ParallelPins {
  return {
    dataParallel: setup.dataParallel,
    tensorParallel: setup.tensorParallel,
    pipelineStages: setup.pipelineStages,
    contextParallel: setup.contextParallel,
    expertParallel: setup.expertParallel,
    ...(setup.expertTensorParallel !== undefined ? { expertTensorParallel: setup.expertTensorParallel } : {}),
    virtualStages: setup.virtualStages,
    sequenceParallel: setup.sequenceParallel,
    zeroStage: setup.zeroStage,
    hybridShard: setup.hybridShard,
    recompute: setup.recompute,
    microBatch: setup.microBatch,
    cpuOffload: setup.cpuOffload,
    paramOffload: setup.paramOffload,
  };
}

/** Sequences per GPU per forward/backward in a plan: what one batch of the length mix holds. */
export function microBatchOf(base: PlanReport): number {
  const setup = base.plan.setup;
  if (setup) return setup.microBatch;
  return Math.max(1, Math.floor(base.batch / base.plan.gpus));
}

/**
 * `planAt(tokens)`: the same model and options at `tokens` per sequence, pinned to `base`'s configuration
 * (pinsOfSetup). Groups at the planned length reuse `base`.
 */
export async function priceOverLengths(base: PlanReport, mix: LengthMix, batching: Batching, planAt: (tokens: number) => Promise<PlanOutcome>, source?: string): Promise<LengthMixReport> {
  const planned = base.sequence?.tokens;
  if (planned === undefined) throw new LengthMixError('a length mix applies to sequence models: the plan has no sequence length');
  const notes: string[] = [];
  const groups: LengthMixReport['groups'] = [];
  for (const g of mix.groups) {
    if (g.tokens === planned) {
      groups.push({ ...g, stepTimeMs: base.plan.stepTimeMs });
      continue;
    }
    const out = await planAt(g.tokens);
    if (!out.feasible) {
      // Shorter batches need less of everything; if one still cannot be planned it is priced as the longest.
      notes.push(`${g.tokens}-token batches could not be planned (${out.reason}); priced as ${planned}-token ones`);
      groups.push({ ...g, stepTimeMs: base.plan.stepTimeMs });
      continue;
    }
    if (out.sequence?.tokens !== g.tokens) throw new LengthMixError(`planning again at ${g.tokens} tokens gave a model of ${out.sequence?.tokens ?? 'no'} tokens: its length is fixed where it is read (an example input in the code, --input), so it cannot be priced at other lengths`);
    if (out.plan.gpus !== base.plan.gpus) notes.push(`${g.tokens}-token batches were planned on ${out.plan.gpus} GPUs, not the plan's ${base.plan.gpus}`);
    groups.push({ ...g, stepTimeMs: out.plan.stepTimeMs });
  }
  if (!base.plan.setup) notes.push('the per-layer strategies were chosen again at each length (the plan reports no single configuration to pin)');
  const setup = base.plan.setup;
  if (batching.kind !== 'padded' && setup && setup.gradientAccumulation === 1 && setup.dataParallel > 1) {
    notes.push('each step waits for the longest micro-batch among the data-parallel ranks; priced as the mean (exact with gradient accumulation, where each rank sums many micro-batches)');
  }
  const stepTimeMs = groups.reduce((s, g) => s + g.share * g.stepTimeMs, 0);
  const samplesPerSec = (base.batch * 1000) / stepTimeMs;
  return {
    batching: describeBatching(batching),
    ...(source ? { source } : {}),
    sequences: mix.sequences,
    meanTokens: mix.meanTokens,
    meanPaddedTokens: mix.meanPaddedTokens,
    paddingFraction: mix.paddingFraction,
    truncatedFraction: mix.truncatedFraction,
    groups,
    stepTimeMs,
    samplesPerSec,
    tokensPerSec: samplesPerSec * mix.meanTokens,
    speedup: base.plan.stepTimeMs / stepTimeMs,
    notes,
  };
}
