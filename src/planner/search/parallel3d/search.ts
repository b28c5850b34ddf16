/**
 * The 3D search: for each candidate GPU count, every (tp, cp, pp, dp) the
 * block stack admits, every micro-batch size, stage layout, interleaving
 * depth, sequence-parallel flag, ZeRO stage (HSDP where the group spans
 * nodes) and recompute mode, pinned ones fixed; optimizer offload to host
 * memory only where nothing fits without it. Memory is checked before time, so configurations that cannot fit
 * are never timed; the few best at each count are kept for the simulator.
 */
import type { ParallelPins, RecomputeMode, ZeroStage } from '../../../protocol/plan';
import { expertLayoutFits } from './expertLayout';
import { estimateWith, costsFor, degreesOf, hostCapOf, linksFor, type Config3D, type Estimate, type EstimateContext } from './estimate';
import { hsdpPossible } from './sharding';
import { deepestZero, frameworkRuns, pinOutsideFramework, type OffloadKind } from '../frameworkLimits';
import type { FrameworkLimits } from '../../../protocol/planOptions';
import { degreeTuples, divisorsOf, microBatchSizes, stageLayouts, virtualStageCounts, type SpaceContext } from './space';

export interface Scored {
  config: Config3D;
  est: Estimate;
}

export interface CountBest {
  n: number;
  /** The best few by estimated step time, best first. */
  top: Scored[];
  /** Why nothing fits at this count. */
  reason?: string;
}

export interface Search3DResult {
  counts: CountBest[];
  evaluated: number;
  prunedByMemory: number;
}

const KEEP = 3;
/** Configurations estimated between two checkpoints (a few ms of work). */
const CHECKPOINT_EVERY = 250;

function insertTop(top: Scored[], s: Scored): void {
  let i = top.length;
  while (i > 0 && top[i - 1].est.stepMs > s.est.stepMs) i--;
  if (i >= KEEP) return;
  top.splice(i, 0, s);
  if (top.length > KEEP) top.pop();
}

export function zeroStages(pins: ParallelPins, shards: number, limits?: FrameworkLimits): ZeroStage[] {
  if (pins.zeroStage !== undefined) return frameworkRuns(limits, pins.zeroStage, 'none') ? [pins.zeroStage] : [];
  const stages: ZeroStage[] = shards > 1 ? [0, 1, 2, 3] : [0];
  return stages.filter((z) => frameworkRuns(limits, z, 'none'));
}

export function recomputeModes(pins: ParallelPins): RecomputeMode[] {
  return pins.recompute !== undefined ? [pins.recompute] : ['none', 'selective', 'full'];
}

/**
 * Expert-parallel degrees on a stage's tp·cp·dp ranks with the experts split over etp of them (expertLayout.ts): the ep
 * groups of etp ranks must tile the stage, so at etp = tp they lie in the data × context ranks as before, and at
 * etp < tp they also reach across the attention's tensor ranks.
 */
export function expertDegrees(space: SpaceContext, dp: number, cp: number, tp = 1, etp = tp): number[] {
  const pinned = space.pins.expertParallel;
  if (space.shape.experts === 0) return [1];
  const fits = (ep: number) => expertLayoutFits({ tp, cp, dp, ep, etp });
  if (pinned !== undefined) return fits(pinned) ? [pinned] : [];
  return divisorsOf(space.shape.experts).filter(fits);
}

/**
 * Expert tensor-parallel degrees: the attention's tp (Megatron's default) and, for a model with experts, 1, whole
 * experts with the expert group across the tensor ranks (Megatron's --expert-tensor-parallel-size 1, torchtitan's
 * default). These are the two torchtitan supports; Megatron takes any divisor, which a pin may name.
 */
export function expertTensorDegrees(space: SpaceContext, tp: number): number[] {
  const pinned = space.pins.expertTensorParallel;
  if (space.shape.experts === 0) return [tp];
  if (pinned !== undefined) return tp % pinned === 0 ? [pinned] : [];
  return tp > 1 ? [tp, 1] : [1];
}

/** HSDP choices for a ZeRO stage: only sharded state on a group that spans nodes can shard within them. */
export function hsdpChoices(space: SpaceContext, zero: ZeroStage, tp: number, group: number): boolean[] {
  const possible = zero >= 1 && hsdpPossible(space.gpusPerNode, tp, group);
  if (space.pins.hybridShard !== undefined) return !space.pins.hybridShard || possible ? [space.pins.hybridShard] : [];
  return possible ? [false, true] : [false];
}

/** What a configuration keeps in host memory: nothing, the optimizer state, or the parameters and gradients too. */
export type OffloadLevel = OffloadKind;

/** The offload levels the search tries under the pins: 'none' first; the others, which compete, only when it fits nothing. */
export function offloadLevels(pins: ParallelPins, limits?: FrameworkLimits): OffloadLevel[] {
  if (pins.paramOffload) return ['params'];
  const levels: OffloadLevel[] = pins.cpuOffload === true ? ['optimizer'] : pins.cpuOffload === false ? ['none'] : ['none', 'optimizer'];
  const all: OffloadLevel[] = pins.paramOffload === undefined && pins.cpuOffload !== false ? [...levels, 'params'] : levels;
  // The framework's deepest stage with that offload: DDP has none, Megatron's distributed optimizer offloads its state.
  return all.filter((level) => frameworkRuns(limits, deepestZero(limits), level));
}

/**
 * Every configuration of the space on n GPUs (the brute-force order the search also follows).
 * `offload`: what all of them keep in host memory (the search tries offload only when nothing else fits). Parameter
 * offload runs without a pipeline: DeepSpeed's offload_param needs ZeRO-3, which its pipeline engine refuses.
 */
export function* configsOn(space: SpaceContext, n: number, offload: OffloadLevel = offloadLevels(space.pins, space.limits)[0]!): Generator<Config3D> {
  const pins = space.pins;
  const held = offload === 'params' ? { offload: true, paramOffload: true } : offload === 'optimizer' ? { offload: true } : {};
  for (const { tp, cp, pp, dp } of degreeTuples(space, n)) {
    if (offload === 'params' && pp > 1) continue;
    for (const etp of expertTensorDegrees(space, tp)) for (const ep of expertDegrees(space, dp, cp, tp, etp)) {
      for (const mb of microBatchSizes(space, dp)) {
        const microBatches = space.batch / dp / mb;
        for (const layout of stageLayouts(space.structure.repeats, pp)) {
          const even = layout.every((k) => k === layout[0]);
          for (const v of virtualStageCounts(space, pp, microBatches)) {
            if (v > 1 && !even) continue;
            // Experts split over fewer ranks than the attention need each rank's own tokens: sequence parallel.
            const sps = tp > 1 ? (etp < tp ? (pins.sequenceParallel === false ? [] : [true]) : pins.sequenceParallel !== undefined ? [pins.sequenceParallel] : [true, false]) : [false];
            for (const sp of sps) {
              for (const zero of zeroStages(pins, dp * cp, space.limits)) {
                for (const hsdp of hsdpChoices(space, zero, tp, dp * cp)) {
                  for (const recompute of recomputeModes(pins)) {
                    yield { n, dp, tp, pp, cp, ep, ...(etp !== tp ? { etp } : {}), v, sp, mb, microBatches, zero, recompute, blocksPerStage: layout, ...(hsdp ? { hsdp } : {}), ...held };
                  }
                }
              }
            }
          }
        }
      }
    }
  }
}

const OFFLOAD_TRIED: Record<OffloadLevel, string> = {
  none: '',
  optimizer: ' (optimizer state offloaded to CPU memory included)',
  params: ' (parameters, gradients and optimizer state offloaded to CPU memory included)',
};

export function* search3dSteps(ctx: EstimateContext, space: SpaceContext, counts: number[]): Generator<[number, number] | void, Search3DResult, void> {
  const out: CountBest[] = [];
  let evaluated = 0;
  let pruned = 0;
  let sinceCheckpoint = 0;
  let done = 0;
  for (const n of counts) {
    const top: Scored[] = [];
    let smallest: Estimate | undefined;
    let lastKey = '';
    let lastLinkKey = '';
    let costs: ReturnType<typeof costsFor> | undefined;
    let links: ReturnType<typeof linksFor> | undefined;
    // Offload is a last resort: tried only when nothing fits on n GPUs without it (and not pinned off). Then both
    // levels compete: optimizer offload keeps the 16-bit weights on the GPU, which can leave room only for tiny
    // micro-batches, where fetching every weight over PCIe with larger ones is faster.
    const levels = offloadLevels(space.pins, space.limits);
    // Offloading the optimizer frees exactly its and the gradients' bytes: when no configuration fits even without
    // them, skip that pass.
    let leastWithoutOptimizer = Infinity;
    let deepestTried: OffloadLevel = 'none';
    for (const offload of levels) {
      if (offload !== 'none' && deepestTried === 'none' && top.length > 0) break;
      if (offload === 'optimizer' && levels[0] === 'none' && leastWithoutOptimizer > ctx.usableBytes) continue;
      deepestTried = offload;
      for (const config of configsOn(space, n, offload)) {
        // The groups' links follow the degrees alone; sequence parallel and the micro-batch, which the inner loops
        // toggle, change only the block costs.
        const linkKey = `${config.tp}/${config.cp}/${config.dp}/${config.ep}/${config.etp ?? config.tp}`;
        if (linkKey !== lastLinkKey) {
          links = linksFor(ctx, config);
          lastLinkKey = linkKey;
        }
        const key = `${linkKey}/${config.sp ? 1 : 0}/${config.mb}`;
        if (key !== lastKey) {
          costs = costsFor(ctx, degreesOf(config), links!);
          lastKey = key;
        }
        evaluated++;
        const est = estimateWith(ctx, config, costs!, links!, true);
        if (est.fits) insertTop(top, { config, est });
        else {
          pruned++;
          leastWithoutOptimizer = Math.min(leastWithoutOptimizer, est.memory.total - est.memory.optimizer - est.memory.gradients);
          if (!smallest || est.memory.total < smallest.memory.total) smallest = est;
        }
        if (++sinceCheckpoint >= CHECKPOINT_EVERY) {
          sinceCheckpoint = 0;
          yield;
        }
      }
    }
    const hostBound = smallest !== undefined && smallest.memory.total <= ctx.usableBytes;
    const reason = top.length > 0 ? undefined : (pinOutsideFramework(space.pins, space.limits) ?? (hostBound ? `nothing fits on ${n} GPUs: the smallest configuration offloads ${(smallest!.hostBytes / 1e9).toFixed(1)} GB per GPU to host memory, more than the ${(hostCapOf(ctx, n)! / 1e9).toFixed(1)} GB of the node's RAM each rank has (hostMemoryGB)` : smallest ? `nothing fits on ${n} GPUs: the smallest configuration needs ${(smallest.memory.total / 1e9).toFixed(1)} GB per GPU, more than the ${(ctx.usableBytes / 1e9).toFixed(1)} GB usable${OFFLOAD_TRIED[deepestTried]}` : `no configuration of the block stack divides ${n} GPUs under the pins`));
    out.push({ n, top, reason });
    yield [++done, counts.length];
  }
  return { counts: out, evaluated, prunedByMemory: pruned };
}
