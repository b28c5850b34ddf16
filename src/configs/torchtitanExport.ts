/**
 * The plan's setup as a torchtitan job config (TOML): [parallelism] degrees (FSDP2 sharding over
 * data_parallel_shard_degree, HSDP replicas over data_parallel_replicate_degree, fsdp_reshard_after_forward
 * "never" for ZeRO-2), [training] batch sizes, precision and offload, [activation_checkpoint] mode; the keys
 * torchtitan.ts reads back. The model, optimizer, data and checkpoint sections stay the job's own.
 */
import type { PlanReport, TrainingSetup, ZeroStage } from '../protocol/plan';
import { fsdpOffloadNotes, isSixteen, precisionNotes, type SetupWords } from './setupExport';

/** FSDP2's shard and replicate degrees for the plan's ZeRO stage (HSDP: shard inside a node, replicate across). */
function dataParallelDegrees(s: TrainingSetup, zero: ZeroStage): { shard: number; replicate: number } {
  if (zero === 0) return { shard: 1, replicate: s.dataParallel };
  // The plan's shard group counts context-parallel ranks too (torchtitan folds CP into the FSDP mesh as well).
  const shards = s.hybridShard && s.shardGroup ? s.shardGroup / s.contextParallel : s.dataParallel;
  return Number.isInteger(shards) && shards >= 1 && s.dataParallel % shards === 0 ? { shard: shards, replicate: s.dataParallel / shards } : { shard: s.dataParallel, replicate: 1 };
}

export function torchtitanToml(report: PlanReport): SetupWords<string> {
  const s = report.plan.setup;
  if (!s) return { value: '', notes: ['The plan states no training setup, so there is nothing for a torchtitan config to say.'] };
  const notes: string[] = [];
  let zero: ZeroStage = report.plan.gpus > 1 ? s.zeroStage : 0;
  if (zero === 1) {
    // FSDP2 has no optimizer-only sharding; gradients sharded too (ZeRO-2) hold less, at the same traffic per step.
    notes.push('FSDP2 has no optimizer-only sharding (ZeRO-1): written as ZeRO-2 (fsdp_reshard_after_forward = "never"), which also shards gradients; plan with --zero 2 to price it.');
    zero = 2;
  }
  const dp = dataParallelDegrees(s, zero);
  const precision = !isSixteen(s) ? 'float32' : s.precision === 'fp16' ? 'float16' : 'bfloat16';
  if (s.precision === 'fp8') notes.push('fp8: add torchtitan\'s float8 converter ([model] converters = ["float8"]) to train the GEMMs in fp8.');
  // FSDP2's mixed precision keeps fp32 parameters and casts them per use: master weights.
  notes.push(...precisionNotes(s, 'torchtitan', 'master-weights'));
  // FSDP2's CPUOffloadPolicy moves parameters, gradients and optimizer state together.
  notes.push(...fsdpOffloadNotes(s, 'torchtitan'));
  if (!Number.isInteger(s.microBatch)) notes.push(`The plan's micro-batch ${s.microBatch} is not a whole number; set local_batch_size yourself.`);
  if (s.expertParallel > 1) notes.push(`Expert parallel ${s.expertParallel} is set where the MoE layers are built.`);
  const lines = [
    '[training]',
    ...(Number.isInteger(s.microBatch) ? [`local_batch_size = ${s.microBatch}`] : []),
    `global_batch_size = ${report.batch}`,
    `mixed_precision_param = "${precision}"`,
    `enable_cpu_offload = ${s.paramOffload}`,
    '',
    '[parallelism]',
    `data_parallel_shard_degree = ${dp.shard}`,
    `data_parallel_replicate_degree = ${dp.replicate}`,
    ...(zero >= 2 ? [`fsdp_reshard_after_forward = "${zero === 2 ? 'never' : 'default'}"`] : []),
    `tensor_parallel_degree = ${s.tensorParallel}`,
    `pipeline_parallel_degree = ${s.pipelineStages}`,
    `context_parallel_degree = ${s.contextParallel}`,
    ...(s.pipelineStages > 1 ? [`pipeline_parallel_schedule = "${s.virtualStages > 1 ? 'Interleaved1F1B' : '1F1B'}"`] : []),
    '',
    '[activation_checkpoint]',
    `mode = "${s.recompute}"`,
  ];
  return { value: lines.join('\n') + '\n', notes };
}
