/**
 * torch FSDP1's own words for a training setup, as code passes them to `FullyShardedDataParallel(…)` (a plain
 * PyTorch script) or to Lightning's `FSDPStrategy(…)`, which hands them on: the `ShardingStrategy` members by the
 * ZeRO stage and hybrid sharding they mean, and `cpu_offload=CPUOffload(offload_params=…)`.
 */
import type { Node } from 'web-tree-sitter';
import type { ZeroStage } from '../protocol/plan';
import { callArgs, calleeName } from './python';

/** torch's ShardingStrategy members (FULL_SHARD is FSDP's default when none is given). */
export const FSDP_SHARDING: Readonly<Record<string, { zero: ZeroStage; hybrid: boolean }>> = {
  FULL_SHARD: { zero: 3, hybrid: false }, SHARD_GRAD_OP: { zero: 2, hybrid: false }, NO_SHARD: { zero: 0, hybrid: false },
  HYBRID_SHARD: { zero: 3, hybrid: true }, _HYBRID_SHARD_ZERO2: { zero: 2, hybrid: true },
};

/** The ShardingStrategy member for a ZeRO stage and hybrid sharding; undefined where FSDP has none (ZeRO-1). */
export const fsdpShardingFor = (zero: ZeroStage, hybrid: boolean): string | undefined =>
  Object.entries(FSDP_SHARDING).find(([, v]) => v.zero === zero && v.hybrid === hybrid)?.[0];

/** A `cpu_offload` value: a bool (Lightning takes one), or torch's CPUOffload(offload_params=…); undefined for an expression. */
export function fsdpOffloadOn(n: Node): boolean | undefined {
  if (n.type === 'true' || n.type === 'false' || n.type === 'none') return n.type === 'true';
  const args = n.type === 'call' && calleeName(n) === 'CPUOffload' ? callArgs(n) : undefined;
  const params = args?.keywords.get('offload_params') ?? args?.positional[0];
  if (!args) return undefined;
  return !params || params.type === 'false' ? false : params.type === 'true' ? true : undefined;
}
