/**
 * The words of transformers' `fsdp` argument (its FSDPOption: full_shard, shard_grad_op, hybrid_shard,
 * hybrid_shard_zero2, no_shard, offload, auto_wrap) as a training setup, shared by the two places the Trainer's
 * arguments are written: `TrainingArguments(fsdp="…")` in Python (trainerSetup.ts) and `--fsdp "…"` on a launch
 * command line (trainerArgv.ts). Reading and the words a plan needs are decided here once; each format writes
 * them in its own syntax.
 */
import type { TrainingSetup, ZeroStage } from '../protocol/plan';
import type { StatedSetup } from './setup';
import type { TextEdit, TextRange } from './types';
import { FSDP_WEIGHT_GATHER } from './frameworkTimings';

/** FSDP sharding words by the ZeRO stage and hybrid sharding they mean. */
const SHARDING: Record<string, { zero: ZeroStage; hybrid: boolean }> = {
  full_shard: { zero: 3, hybrid: false }, shard_grad_op: { zero: 2, hybrid: false }, no_shard: { zero: 0, hybrid: false },
  hybrid_shard: { zero: 3, hybrid: true }, hybrid_shard_zero2: { zero: 2, hybrid: true },
};

const shardingWord = (zero: ZeroStage, hybrid: boolean): string | undefined =>
  Object.entries(SHARDING).find(([, v]) => v.zero === zero && v.hybrid === hybrid)?.[0];

/** What a sharding setup says, in the four dimensions one `fsdp` value states together. */
export interface FsdpSetup {
  zero: ZeroStage;
  hybrid: boolean;
  /** The optimizer state on the host. */
  offload: boolean;
  /** The parameters and gradients on the host too. */
  params: boolean;
}

/** The setup `fsdp`'s words state; no words is no FSDP (ZeRO-0). */
export function readFsdpWords(words: string[]): FsdpSetup {
  const known = words.map((w) => SHARDING[w]).find((s) => s);
  // No sharding word with FSDP on (only "offload" or "auto_wrap") is full_shard, transformers' default strategy.
  const sharding = known ?? (words.length > 0 ? SHARDING.full_shard! : { zero: 0 as ZeroStage, hybrid: false });
  // FSDP's `offload` moves the parameters and gradients with the optimizer state.
  const offload = words.includes('offload');
  return { ...sharding, offload, params: offload };
}

/**
 * The words that make `fsdp` say `s`, keeping the user's other words (auto_wrap…): [] for no FSDP; undefined where
 * FSDP has no words: ZeRO-1, the optimizer state offloaded alone (FSDP's offload moves the parameters too), and a
 * hybrid stage without a strategy.
 */
export function fsdpWordsFor(s: FsdpSetup, current: string[]): string[] | undefined {
  if (s.zero === 0 && !s.params) return s.offload ? undefined : [];
  if (!s.params && (s.offload || s.zero === 1)) return undefined;
  const word = shardingWord(s.zero, s.hybrid);
  if (!word) return undefined;
  const rest = current.filter((w) => !SHARDING[w] && w !== 'offload');
  // Without auto_wrap FSDP wraps the whole model as one unit and gathers all of it at once.
  return [word, ...(s.params ? ['offload'] : []), ...(rest.includes('auto_wrap') ? rest : [...rest, 'auto_wrap'])];
}

/**
 * The four dimensions one `fsdp` value states, each writing through `write` with the plan's values of the others,
 * so their edits agree (and compareSetup keeps them once). Without a plan the offloads go together, as FSDP's word
 * moves them.
 */
export function setFsdpDims(stated: StatedSetup, read: FsdpSetup, where: { stated: boolean; range: TextRange }, write: (s: FsdpSetup) => TextEdit[] | undefined): void {
  const { range } = where;
  const fromPlan = (plan: TrainingSetup | undefined): FsdpSetup => ({ zero: plan?.zeroStage ?? read.zero, hybrid: plan?.hybridShard ?? read.hybrid, offload: plan?.cpuOffload ?? read.offload, params: plan?.paramOffload ?? read.params });
  stated.zeroStage = { value: read.zero, stated: where.stated, range, set: (zero, plan) => write({ ...fromPlan(plan), zero }) };
  stated.hybridShard = { value: read.hybrid, stated: where.stated, range, set: (hybrid, plan) => write({ ...fromPlan(plan), hybrid }) };
  stated.cpuOffload = { value: read.offload, stated: read.offload, range, set: (offload, plan) => write({ ...fromPlan(plan), offload, params: plan?.paramOffload ?? (offload && read.params) }) };
  stated.paramOffload = { value: read.params, stated: read.params, range, set: (params, plan) => write({ ...fromPlan(plan), offload: plan?.cpuOffload ?? (params || read.offload), params }) };
  if (read.zero > 0) stated.weightGather = FSDP_WEIGHT_GATHER;
}
