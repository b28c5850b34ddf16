/**
 * The GPU counts the training script itself accepts. nanoGPT asserts that its gradient accumulation divides over the
 * processes and llm.c that its token budget does (frontends/python/runProcessCounts.ts reads the asserts): a plan on
 * a count the script stops on would be a plan the user cannot run. Both searches ask `refusedCount` before they
 * search a count, keep the refused count on the scaling curve as infeasible with the assert as its reason, and a
 * pinned `--gpus` the script refuses is an infeasible plan naming the assert.
 */
import type { ProcessCountRule } from '../core/runFacts';

/** Why the script refuses n processes, or undefined when every assert holds. */
export function refusedCount(rules: readonly ProcessCountRule[] | undefined, n: number): string | undefined {
  const broken = (rules ?? []).find((r) => r.dividend % (r.factor * n) !== 0);
  if (!broken) return undefined;
  const per = broken.factor === 1 ? `${n}` : `${broken.factor} × ${n} = ${broken.factor * n}`;
  return `the script stops on ${n} GPU${n === 1 ? '' : 's'}: ${broken.said}, and ${broken.dividend} is not a multiple of ${per}`;
}

/** The counts up to N the script accepts, said once in the plan: which asserts, and what they leave. */
export function runGpuCountsLine(rules: readonly ProcessCountRule[] | undefined, N: number): string | undefined {
  if (!rules || rules.length === 0) return undefined;
  const accepted = acceptedCounts(rules, N)!;
  const asserts = rules.map((r) => r.said).join('; ');
  if (accepted.length === N) return `${asserts}: every count up to ${N} GPUs passes it`;
  const which = accepted.length === 0 ? 'no GPU count' : `only ${listCounts(accepted)} GPU${accepted.length === 1 && accepted[0] === 1 ? '' : 's'}`;
  return `${asserts}: the script runs on ${which} of the ${N} available, so the plan considers ${accepted.length === 0 ? 'none' : 'those alone'}`;
}

/**
 * Every count up to N the script accepts, for a search that samples counts on a large cluster (powers of two, node
 * multiples): nanoGPT's 40 accumulation steps run on 5, 10, 20 and 40 GPUs too. Undefined without rules.
 */
export function acceptedCounts(rules: readonly ProcessCountRule[] | undefined, N: number): number[] | undefined {
  if (!rules || rules.length === 0) return undefined;
  const out: number[] = [];
  // Every accepted n divides each dividend, so the smallest dividend bounds the scan.
  const limit = Math.min(N, ...rules.map((r) => r.dividend));
  for (let n = 1; n <= limit; n++) if (!refusedCount(rules, n)) out.push(n);
  return out;
}

/** 1, 2, 4 and 8; a long list is cut after its first few. */
function listCounts(counts: number[]): string {
  const shown = counts.length > 12 ? [...counts.slice(0, 10).map(String), `… ${counts[counts.length - 1]}`] : counts.map(String);
  return shown.length === 1 ? shown[0] : `${shown.slice(0, -1).join(', ')} and ${shown[shown.length - 1]}`;
}
