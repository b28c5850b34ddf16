/**
 * The memory-saving dimensions as a search: training setups from the cheapest
 * in time (nothing saved) to the most frugal in memory (ZeRO-3, full
 * recompute, small micro-batches, optimizer offload), walked cheapest first.
 *
 * Setups come in levels of gradient accumulation (1, 2, 4, … micro-steps per
 * optimizer step), each with two kinds of rung, ZeRO stage ascending:
 * - light rungs (no recompute, or selective where there are attention scores):
 *   ZeRO-1 and ZeRO-2 move the same bytes as the all-reduce they replace (ZeRO
 *   paper, §7.2.1) and selective recompute re-runs only the attention core
 *   (Korthikanti et al. 2022: 2–4%), so they come first; ZeRO-3 adds 50%
 *   data-parallel traffic (§7.2.2), with HSDP keeping its all-gathers inside a
 *   node as an alternative on multi-node groups;
 * - full-recompute rungs (+1 forward, ~33%).
 * ZeRO-0 and ZeRO-1 share a rung, the faster that fits winning: ZeRO-1 steps
 * 1/d of the optimizer state but all-gathers the updated weights after the step
 * with nothing to hide it (cost/tableBuilder.ts), so either may be faster:
 * ZeRO-1 inside an NVLink node with a large optimizer state, ZeRO-0 where the
 * gather crosses nodes. Inside a level the first rung that fits ends the level:
 * beyond that, a higher ZeRO stage (ZeRO-2 reduces on every micro-step, ZeRO-3
 * gathers on every pass) or full recompute is never faster than a lower one.
 *
 * Across levels the costs are not ordered: one more accumulation step (smaller
 * micro-batches run less efficiently and pay launches and ZeRO-3 gathers once
 * more) often costs less than full recompute, or than selective recompute of an
 * eager attention core (its T×T softmax and dropout re-run: far from 2–4%), and
 * a CNN's activations are not what ZeRO shards. So the first level that fits
 * gives a plan; when it fits only through recompute, deeper levels' light rungs
 * (no recompute first) are still tried while their simulated step (a lower
 * bound for deeper levels still) beats it; a faster one that fits wins.
 * CPU offload is last, bounded by PCIe and the CPU's optimizer step: the
 * optimizer state and gradients (ZeRO-Offload), and the parameters as well
 * (ZeRO-Infinity's offload_param, FSDP CPUOffload), which fetch every weight
 * over PCIe for each forward and backward; the faster that fits wins.
 * A ZeRO stage whose weights, gradients and optimizer state alone overflow the
 * GPU is not tried again at deeper levels (accumulation does not shrink them).
 */
import type { ParallelPins, RecomputeMode, ZeroStage } from '../../protocol/plan';
import type { TableSetup } from '../cost/tables';
import type { Steps } from '../steps';
import type { FrameworkLimits } from '../../protocol/planOptions';
import { deepestZero, frameworkRuns, pinOutsideFramework } from './frameworkLimits';

export interface LadderContext {
  n: number;
  batch: number;
  /** Precision and optimizer; the other fields are overwritten by the ladder. */
  base: TableSetup;
  pins: ParallelPins;
  /** Selective recompute saves something (the model has attention scores). */
  hasAttention: boolean;
  /** The group of n GPUs spans more than one node (HSDP is an option). */
  multiNode: boolean;
  /** What the named framework runs (frameworkLimits.ts); absent, every stage and offload. */
  limits?: FrameworkLimits;
}

/** Setups compared together, the fastest that fits winning (ZeRO-3 with and without HSDP). */
export type Rung = TableSetup[];

export interface LadderLevel {
  microSteps: number;
  light: Rung[];
  full: Rung[];
}

export interface Ladder {
  levels: LadderLevel[];
  /**
   * The last resorts when no level fits, both tried: the most frugal setup with the optimizer state in CPU memory,
   * and with the parameters there too.
   */
  offload: Rung[];
}

/** Gradient-accumulation steps a micro-batch pin implies on n GPUs, or why it cannot hold. */
export function pinnedMicroSteps(pins: ParallelPins, n: number, batch: number): { steps: number } | { reason: string } {
  const mb = pins.microBatch;
  if (mb === undefined) return { steps: 1 };
  const perGpu = batch / n;
  if (!Number.isInteger(perGpu) || perGpu % mb !== 0) {
    return { reason: `pin microBatch=${mb}: the batch of ${batch} over ${n} GPU${n > 1 ? 's' : ''} (${Number.isInteger(perGpu) ? perGpu : perGpu.toFixed(2)} samples each) is not a multiple of ${mb}` };
  }
  return { steps: perGpu / mb };
}

export function setupKey(s: TableSetup): string {
  return `${s.precision}|z${s.zeroStage}|${s.hybridShard ? 'h' : ''}|${s.recompute}|${s.paramOffload ? 'poff' : s.cpuOffload ? 'off' : ''}|a${s.microSteps}`;
}

export function setupLadder(x: LadderContext): Ladder | { reason: string } {
  const { n, pins } = x;
  const pinnedSteps = pinnedMicroSteps(pins, n, x.batch);
  if ('reason' in pinnedSteps) return pinnedSteps;
  const outside = pinOutsideFramework(pins, x.limits);
  if (outside) return { reason: outside };
  const dp = n > 1;
  const make = (zero: ZeroStage, recompute: RecomputeMode, microSteps: number, cpuOffload = false, hybridShard = false, paramOffload = false): TableSetup => {
    const params = pins.paramOffload ?? paramOffload;
    return {
      ...x.base,
      zeroStage: pins.zeroStage ?? (dp ? zero : 0),
      hybridShard: pins.hybridShard ?? (dp && hybridShard),
      recompute: pins.recompute ?? recompute,
      cpuOffload: params || (pins.cpuOffload ?? cpuOffload),
      paramOffload: params,
      microSteps: pins.microBatch !== undefined ? pinnedSteps.steps : microSteps,
    };
  };
  const light: RecomputeMode = x.hasAttention ? 'selective' : 'none';
  const zeroThree = (recompute: RecomputeMode, a: number): Rung => (x.multiNode ? [make(3, recompute, a), make(3, recompute, a, false, true)] : [make(3, recompute, a)]);
  const fullRungs = (a: number): Rung[] => [[make(0, 'full', a), make(1, 'full', a)], [make(2, 'full', a)], zeroThree('full', a)];
  const raw: LadderLevel[] = [];
  // One step: no recompute before selective, which ZeRO-1/2 (about as fast) come before.
  const first: Rung[] = [[make(0, 'none', 1), make(1, 'none', 1)], [make(2, 'none', 1)]];
  if (x.hasAttention) first.push([make(2, 'selective', 1)]);
  first.push(zeroThree(light, 1));
  raw.push({ microSteps: 1, light: first, full: fullRungs(1) });
  // Accumulation steps while a micro-batch of at least one sample per GPU remains.
  const perGpu = Math.floor(x.batch / n);
  let deepest = 1;
  for (let a = 2; a <= perGpu; a *= 2) {
    if (x.batch % (n * a) !== 0) break;
    deepest = a;
    // Without recompute first: what a recompute fit at a shallower level is compared against.
    const plain: Rung[] = x.hasAttention ? [[make(0, 'none', a), make(1, 'none', a)], [make(2, 'none', a)]] : [];
    raw.push({ microSteps: a, light: [...plain, [make(0, light, a), make(1, light, a)], [make(2, light, a)], zeroThree(light, a)], full: fullRungs(a) });
  }
  const top = deepestZero(x.limits);
  const last = make(top, 'full', deepest);
  // Pins collapse rungs into duplicates: keep each setup once, at its first place; and only what the framework runs.
  const seen = new Set<string>();
  const fresh = (rungs: Rung[]): Rung[] =>
    rungs
      .map((r) =>
        r.filter((s) => {
          if (!frameworkRuns(x.limits, s.zeroStage, s.paramOffload ? 'params' : s.cpuOffload ? 'optimizer' : 'none')) return false;
          const k = setupKey(s);
          if (seen.has(k)) return false;
          seen.add(k);
          return true;
        }),
      )
      .filter((r) => r.length > 0);
  const levels = raw.map((l) => ({ microSteps: l.microSteps, light: fresh(l.light), full: fresh(l.full) })).filter((l) => l.light.length + l.full.length > 0);
  const optimizerOffload = make(top, 'full', deepest, true);
  const paramOffload = pins.cpuOffload === false ? [] : [make(3, 'full', deepest, true, false, true)];
  return { levels, offload: fresh([[pins.cpuOffload === false ? last : optimizerOffload], paramOffload]) };
}

/** What the walk needs to know of one evaluated setup. */
export interface SetupOutcome {
  fits: boolean;
  /** The simulated step of its best plan (fitting or not). */
  stepTimeMs?: number;
  /** Weights, gradients and optimizer state per GPU of its best plan. */
  modelStateBytes?: number;
  /** How far its best plan is over the usable memory, bytes (≤ 0 when it fits). */
  overBytes?: number;
}

export interface LadderWalk<R> {
  /** The fastest fitting result, when one fits. */
  best?: R;
  /** The first setup evaluated (nothing saved, or what the pins fix). */
  first?: R;
  /** The last one evaluated: the most frugal tried when nothing fits. */
  last?: R;
}

/** Walks the ladder as the header says; `evaluate` runs one setup, `outcome` reads what the walk needs from its result. */
export function* walkLadder<R>(ladder: Ladder, capBytes: number, evaluate: (s: TableSetup) => Steps<R>, outcome: (r: R) => SetupOutcome): Steps<LadderWalk<R>> {
  const walk: LadderWalk<R> = {};
  const stateTooBig = new Set<string>();
  const stateKey = (s: TableSetup) => `z${s.zeroStage}|${s.hybridShard ? 'h' : ''}|${s.paramOffload ? 'poff' : s.cpuOffload ? 'off' : ''}`;
  let bestMs = Infinity;
  /**
   * The fastest fitting setup of a rung, and the fastest step any of its setups simulated. `hopeless` holds the
   * recompute modes of this level and kind whose overflow exceeded their whole model state: no higher ZeRO stage
   * can shard that away, so their later rungs are skipped.
   */
  function* runRung(rung: Rung, hopeless = new Set<string>()): Steps<{ fit?: R; fitMs: number; fastestMs: number }> {
    let fit: R | undefined;
    let fitMs = Infinity;
    let fastestMs = Infinity;
    for (const setup of rung) {
      if (stateTooBig.has(stateKey(setup)) || hopeless.has(setup.recompute)) continue;
      const r = yield* evaluate(setup);
      walk.first ??= r;
      walk.last = r;
      const o = outcome(r);
      if ((o.modelStateBytes ?? 0) > capBytes) stateTooBig.add(stateKey(setup));
      if (!o.fits && (o.overBytes ?? 0) > (o.modelStateBytes ?? Infinity)) hopeless.add(setup.recompute);
      const ms = o.stepTimeMs ?? Infinity;
      fastestMs = Math.min(fastestMs, ms);
      if (o.fits && ms < fitMs) {
        fit = r;
        fitMs = ms;
      }
    }
    return { fit, fitMs, fastestMs };
  }
  const take = (r: R | undefined, ms: number) => {
    if (r !== undefined && ms < bestMs) {
      walk.best = r;
      bestMs = ms;
    }
  };
  for (const level of ladder.levels) {
    if (walk.best === undefined) {
      // The first level with a fit: its cheapest light rung that fits, else its cheapest full-recompute one. A fit
      // without recompute ends the walk; one through recompute, even selective (eager attention's core is no 2–4%),
      // is compared with deeper levels below.
      let plainFit = false;
      let found = false;
      const hopeless = new Set<string>();
      for (const rung of level.light) {
        const r = yield* runRung(rung, hopeless);
        take(r.fit, r.fitMs);
        if (r.fit !== undefined) {
          found = true;
          plainFit = rung.every((s) => s.recompute === 'none');
          break;
        }
      }
      if (plainFit) break;
      if (found) continue;
      for (const rung of level.full) {
        const r = yield* runRung(rung, hopeless);
        take(r.fit, r.fitMs);
        if (r.fit !== undefined) break;
      }
      continue;
    }
    // A deeper level after a full-recompute fit: its light rungs, while they are faster than what fits.
    let fasterSeen = false;
    const hopeless = new Set<string>();
    for (const rung of level.light) {
      const r = yield* runRung(rung, hopeless);
      if (r.fastestMs < bestMs) fasterSeen = true;
      if (r.fit !== undefined) {
        take(r.fit, r.fitMs);
        return walk;
      }
    }
    if (!fasterSeen) return walk;
  }
  // Both offload rungs when one is needed: keeping the 16-bit weights on the GPU (optimizer offload) can leave room
  // only for tiny micro-batches, where fetching the weights over PCIe (parameter offload) with larger ones is faster.
  if (walk.best === undefined) {
    for (const rung of ladder.offload) {
      const r = yield* runRung(rung);
      take(r.fit, r.fitMs);
    }
  }
  return walk;
}

/** What a setup's offload moves to host memory and what it costs, for `fitsThrough` (both searches); undefined without offload. */
export function offloadSaving(s: { cpuOffload?: boolean; paramOffload?: boolean }): string | undefined {
  if (s.paramOffload) return 'parameters, gradients and optimizer state offloaded to CPU memory (slow: every forward and backward fetches the weights over PCIe)';
  return s.cpuOffload ? 'optimizer state and gradients offloaded to CPU memory (slow: bounded by PCIe and the CPU step)' : undefined;
}

/** One line on what a setup saves, for `fitsThrough`. */
export function describeSavers(s: TableSetup, base: TableSetup): string {
  const parts: string[] = [];
  if (s.zeroStage !== base.zeroStage) {
    const what = s.zeroStage === 1 ? 'optimizer state' : s.zeroStage === 2 ? 'gradients and optimizer state' : 'weights, gradients and optimizer state';
    parts.push(`ZeRO-${s.zeroStage}${s.hybridShard ? ' (HSDP: sharded within a node, replicated across)' : ''} (${what} sharded)`);
  }
  if (s.recompute !== base.recompute) parts.push(`${s.recompute} activation recompute`);
  if (s.microSteps !== base.microSteps) parts.push(`gradient accumulation over ${s.microSteps} micro-steps`);
  if ((s.paramOffload && !base.paramOffload) || s.cpuOffload !== base.cpuOffload) parts.push(offloadSaving(s)!);
  return parts.join(' + ');
}
