/**
 * The memory-saving dimensions as a search: a ladder of training setups from
 * the cheapest in time (nothing saved) to the most frugal in memory (ZeRO-3,
 * full recompute, small micro-batches, optimizer offload). Each rung is a
 * group of setups evaluated together; the first group where a plan fits wins,
 * and inside it the fastest plan. Pinned dimensions stay fixed on every rung.
 *
 * Order follows what each saver costs in time:
 * - ZeRO-1 and ZeRO-2 move the same bytes as the all-reduce they replace
 *   (ZeRO paper, §7.2.1): free in time, so they come first;
 * - selective recompute re-runs only the attention core (Korthikanti et al.
 *   2022 report 2–4% overhead);
 * - ZeRO-3 adds 50% data-parallel traffic (ZeRO paper, §7.2.2), with HSDP
 *   keeping the all-gathers inside a node as an alternative on multi-node groups;
 * - full recompute (+1 forward, ~33%) and gradient accumulation (smaller
 *   micro-batches run less efficiently and pay launches A times) are compared
 *   against each other, one accumulation step at a time;
 * - CPU offload of the optimizer (ZeRO-Offload) last: it is bounded by PCIe.
 */
import type { ParallelPins, RecomputeMode, ZeroStage } from '../../protocol/plan';
import type { TableSetup } from '../cost/tables';

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
}

export type Ladder = TableSetup[][];

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
  return `${s.precision}|z${s.zeroStage}|${s.hybridShard ? 'h' : ''}|${s.recompute}|${s.cpuOffload ? 'off' : ''}|a${s.microSteps}`;
}

export function setupLadder(x: LadderContext): Ladder | { reason: string } {
  const { n, pins } = x;
  const pinnedSteps = pinnedMicroSteps(pins, n, x.batch);
  if ('reason' in pinnedSteps) return pinnedSteps;
  const dp = n > 1;
  const make = (zero: ZeroStage, recompute: RecomputeMode, microSteps: number, cpuOffload = false, hybridShard = false): TableSetup => ({
    ...x.base,
    zeroStage: pins.zeroStage ?? (dp ? zero : 0),
    hybridShard: pins.hybridShard ?? (dp && hybridShard),
    recompute: pins.recompute ?? recompute,
    cpuOffload: pins.cpuOffload ?? cpuOffload,
    microSteps: pins.microBatch !== undefined ? pinnedSteps.steps : microSteps,
  });
  const light: RecomputeMode = x.hasAttention ? 'selective' : 'none';
  const groups: Ladder = [[make(0, 'none', 1)], [make(1, 'none', 1)], [make(2, 'none', 1)]];
  if (x.hasAttention) groups.push([make(2, 'selective', 1)]);
  groups.push(x.multiNode ? [make(3, light, 1), make(3, light, 1, false, true)] : [make(3, light, 1)]);
  // Accumulation steps while a micro-batch of at least one sample per GPU remains.
  const perGpu = Math.floor(x.batch / n);
  let last = make(3, 'full', 1);
  groups.push([last]);
  for (let a = 2; a <= perGpu; a *= 2) {
    if (x.batch % (n * a) !== 0) break;
    last = make(3, 'full', a);
    groups.push([make(3, light, a), last]);
  }
  groups.push([{ ...last, cpuOffload: pins.cpuOffload ?? true }]);
  // Pins collapse rungs into duplicates: keep each setup once, at its first rung.
  const seen = new Set<string>();
  const out: Ladder = [];
  for (const g of groups) {
    const fresh = g.filter((s) => {
      const k = setupKey(s);
      if (seen.has(k)) return false;
      seen.add(k);
      return true;
    });
    if (fresh.length > 0) out.push(fresh);
  }
  return out;
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
  if (s.cpuOffload !== base.cpuOffload) parts.push('optimizer state offloaded to CPU memory (slow: bounded by PCIe)');
  return parts.join(' + ');
}
