/**
 * torchtitan job configs (TOML): [parallelism] degrees, [activation_checkpoint]
 * mode, [training] mixed_precision_param, enable_cpu_offload (FSDP2's
 * CPUOffloadPolicy: parameters, gradients and optimizer state) and batch sizes. torchtitan shards
 * with FSDP2 over data_parallel_shard_degree (-1: every GPU left over) and
 * replicates over data_parallel_replicate_degree (HSDP when both exceed 1).
 */
import type { Precision, RecomputeMode, ZeroStage } from '../protocol/plan';
import { stateJointOffload } from './offloadDims';
import { compareSetup, type SetupDim, type StatedSetup } from './setup';
import { parseToml, setToml, tomlEntry, type TomlDoc } from './tomlDoc';
import type { ConfigReader, TextEdit, TextRange } from './types';
import { FSDP_WEIGHT_GATHER } from './frameworkTimings';
import { TORCHTITAN_ACCUMULATION } from './unshardedAccumulation';

const PRECISION: Record<string, Precision> = { bfloat16: 'bf16', float32: 'fp32', float16: 'fp16' };
const PRECISION_WORD: Partial<Record<Precision, string>> = { bf16: 'bfloat16', fp32: 'float32', tf32: 'float32' };

function readTorchtitanSetup(text: string, doc: TomlDoc): StatedSetup {
  const anchorEntry = tomlEntry(doc, 'parallelism', 'data_parallel_shard_degree') ?? doc.entries[0];
  const anchor: TextRange = anchorEntry?.range ?? { start: 0, end: 0 };
  const stated: StatedSetup = { label: 'torchtitan config', anchor, inexpressible: {} };
  /** Tables this fix creates: later keys for the same table join the first insertion. */
  const created = new Map<string, TextEdit>();
  const put = (table: string, key: string, value: string | number | boolean): TextEdit[] => {
    const edits = setToml(text, doc, table, key, value);
    const e = edits[0]!;
    if (!doc.tables.some((t) => t.name === table) && !tomlEntry(doc, table, key)) {
      const pending = created.get(table);
      if (pending) {
        pending.newText += `${key} = ${typeof value === 'string' ? JSON.stringify(value) : value}\n`;
        return [];
      }
      created.set(table, e);
    }
    return edits;
  };
  const num = (table: string, key: string, fallback: number): { value: number; stated: boolean; range: TextRange } => {
    const e = tomlEntry(doc, table, key);
    return { value: typeof e?.value === 'number' ? e.value : fallback, stated: !!e, range: e?.range ?? anchor };
  };
  const degree = (key: string): SetupDim<number> => ({ ...num('parallelism', key, 1), set: (n) => put('parallelism', key, n) });
  stated.tensorParallel = degree('tensor_parallel_degree');
  stated.pipelineStages = degree('pipeline_parallel_degree');
  stated.contextParallel = degree('context_parallel_degree');
  // torchtitan's MoE models (Llama 4, DeepSeek-V3) spread their experts by [parallelism] expert_parallel_degree.
  stated.expertParallel = degree('expert_parallel_degree');
  // expert_tensor_parallel_degree (default 1: whole experts) acts only with expert parallelism; without it the experts
  // are tensor-parallel as the rest of the block (torchtitan's job config docstring: "No effect … when ep = 1").
  const etp = num('parallelism', 'expert_tensor_parallel_degree', 1);
  const withExperts = stated.expertParallel.value > 1;
  stated.expertTensorParallel = {
    value: withExperts ? etp.value : stated.tensorParallel.value, stated: etp.stated && withExperts, range: etp.range,
    matches: (n, plan) => (plan && plan.expertParallel > 1 ? n === etp.value : n === (plan?.tensorParallel ?? stated.tensorParallel!.value)),
    set: (n, plan) => (plan && plan.expertParallel > 1 && (n === 1 || n === plan.tensorParallel) ? put('parallelism', 'expert_tensor_parallel_degree', n) : undefined),
  };
  // torchtitan always shards sequences between tensor-parallel regions (norms, dropout) when TP > 1.
  stated.sequenceParallel = { value: stated.tensorParallel.value > 1, stated: false, range: stated.tensorParallel.range, matches: (p: boolean) => p === stated.tensorParallel!.value > 1 };

  const shard = num('parallelism', 'data_parallel_shard_degree', -1);
  const replicate = num('parallelism', 'data_parallel_replicate_degree', 1);
  const reshard = tomlEntry(doc, 'parallelism', 'fsdp_reshard_after_forward');
  const zero: ZeroStage = shard.value === 1 ? 0 : reshard?.value === 'never' ? 2 : 3;
  // torchtitan shards with FSDP2 (the data-parallel shard degree), whatever the stage the plan chooses.
  stated.weightGather = FSDP_WEIGHT_GATHER;
  stated.unshardedAccumulation = TORCHTITAN_ACCUMULATION;
  stated.zeroStage = {
    value: zero, stated: shard.stated, range: shard.range,
    set: (z, plan) => {
      if (z === 1 || !plan) return undefined; // FSDP2 has no optimizer-only sharding
      if (z === 0) return [...put('parallelism', 'data_parallel_shard_degree', 1), ...put('parallelism', 'data_parallel_replicate_degree', plan.dataParallel)];
      // HSDP: shard over one node's data-parallel ranks and replicate across nodes (shard × replicate = the
      // data-parallel degree); a replicate degree left at the whole DP degree would leave nothing to shard.
      const hsdpShards = plan.hybridShard && plan.shardGroup ? plan.shardGroup / plan.contextParallel : undefined;
      const replicas = hsdpShards && Number.isInteger(hsdpShards) ? plan.dataParallel / hsdpShards : undefined;
      const hsdp = replicas !== undefined && Number.isInteger(replicas) ? { shards: hsdpShards!, replicas } : undefined;
      const edits = put('parallelism', 'data_parallel_shard_degree', hsdp ? hsdp.shards : plan.hybridShard ? -1 : plan.dataParallel);
      const wantReplicas = hsdp ? hsdp.replicas : plan.hybridShard ? undefined : 1;
      if (wantReplicas !== undefined && replicate.value !== wantReplicas) edits.push(...put('parallelism', 'data_parallel_replicate_degree', wantReplicas));
      if (z === 2 || reshard) edits.push(...put('parallelism', 'fsdp_reshard_after_forward', z === 2 ? 'never' : 'default'));
      return edits;
    },
  };
  stated.hybridShard = { value: zero > 0 && replicate.value > 1, stated: replicate.stated, range: replicate.range };
  if (shard.value > 0 && replicate.value > 0) stated.dataParallel = { value: shard.value * replicate.value, stated: true, range: shard.range };

  const mode = tomlEntry(doc, 'activation_checkpoint', 'mode');
  const recompute = (typeof mode?.value === 'string' ? mode.value : 'selective') as RecomputeMode;
  if (['none', 'selective', 'full'].includes(recompute)) {
    stated.recompute = { value: recompute, stated: !!mode, range: mode?.range ?? anchor, set: (r) => put('activation_checkpoint', 'mode', r) };
  }
  const mp = tomlEntry(doc, 'training', 'mixed_precision_param');
  const precision = PRECISION[typeof mp?.value === 'string' ? mp.value : 'bfloat16'];
  if (precision) {
    stated.precision = { value: precision, stated: !!mp, range: mp?.range ?? anchor, set: (p) => (PRECISION_WORD[p] ? put('training', 'mixed_precision_param', PRECISION_WORD[p]!) : undefined) };
  }
  // FSDP2 reduce-scatters in [training] mixed_precision_reduce, float32 by default (torchtitan's job config: "torch
  // dtype to use for reductions when applying mixed precision via FSDP"), whatever mixed_precision_param holds.
  const reduce = tomlEntry(doc, 'training', 'mixed_precision_reduce');
  const reduceWord = typeof reduce?.value === 'string' ? reduce.value : 'float32';
  if (precision && precision !== 'fp32' && reduceWord === 'float32') stated.gradientReduceInFp32 = { why: reduce ? 'torchtitan mixed_precision_reduce float32' : "torchtitan's mixed_precision_reduce, float32 by default" };
  const offload = tomlEntry(doc, 'training', 'enable_cpu_offload');
  // FSDP2's CPUOffloadPolicy moves parameters and gradients with the optimizer state, as FSDP's offload does.
  stateJointOffload(stated, offload?.value === true, !!offload, offload?.range ?? anchor, (o) => put('training', 'enable_cpu_offload', o));

  const seqLen = tomlEntry(doc, 'training', 'seq_len');
  if (typeof seqLen?.value === 'number' && Number.isInteger(seqLen.value) && seqLen.value >= 1) stated.tokensPerSample = { value: seqLen.value, key: 'seq_len', range: seqLen.range };
  // Newer torchtitan: local_batch_size per data-parallel rank and global_batch_size (accumulation derived); older: batch_size.
  const localKey = tomlEntry(doc, 'training', 'local_batch_size') ? 'local_batch_size' : 'batch_size';
  const local = tomlEntry(doc, 'training', localKey);
  const global = tomlEntry(doc, 'training', 'global_batch_size');
  // A batch is a whole number of sequences, at least one (DeepSpeed's reader asks the same); anything else states none.
  if (typeof local?.value === 'number' && Number.isInteger(local.value) && local.value >= 1) {
    stated.microBatch = { value: local.value, stated: true, range: local.range, set: (n) => put('training', localKey, n) };
    const globalValue = typeof global?.value === 'number' && global.value > 0 ? global.value : undefined;
    if (globalValue !== undefined) stated.globalBatch = { value: globalValue, stated: true, range: global!.range, set: (n) => put('training', 'global_batch_size', n) };
    // Accumulation is derived from global_batch_size; keeping the batch means stating it when it was implied.
    stated.gradientAccumulation = {
      value: 1, stated: false, range: local.range,
      set: (n, plan) => (globalValue !== undefined ? [] : plan ? put('training', 'global_batch_size', local.value as number * plan.dataParallel) : undefined),
    };
    if (globalValue !== undefined && stated.dataParallel) stated.gradientAccumulation.value = globalValue / (local.value * stated.dataParallel.value);
  }
  return stated;
}

export const torchtitanReader: ConfigReader = {
  format: 'torchtitan',
  detect(fileName, text) {
    return /\.toml$/i.test(fileName) && /^\s*\[(parallelism|activation_checkpoint)\]/m.test(text);
  },
  check(_fileName, text, plan) {
    if (!plan) return [];
    return compareSetup('torchtitan', text, readTorchtitanSetup(text, parseToml(text)), plan);
  },
  readSetup(_fileName, text) {
    return readTorchtitanSetup(text, parseToml(text));
  },
};
