/**
 * The plan's setup as Megatron-LM arguments (pretrain_gpt.py): the parallel degrees, micro and global batch,
 * precision, recompute, the distributed optimizer and Megatron-FSDP's sharding strategy (ZeRO-2/3), the flags
 * megatron.ts reads back. What Megatron has no argument for in the plan's terms (HSDP, optimizer offload, a 16-bit
 * style it does not run) is a note.
 */
import type { PlanReport } from '../protocol/plan';
import { precisionNotes, type SetupWords } from './setupExport';

export function megatronArguments(report: PlanReport): SetupWords<string[]> {
  const s = report.plan.setup;
  const notes: string[] = [];
  if (!s) {
    return { value: [`--micro-batch-size ${Math.max(1, Math.floor(report.batch / report.plan.gpus))}`, `--global-batch-size ${report.batch}`], notes: ['The plan states no training setup: only the batch arguments are written.'] };
  }
  const args = [`--tensor-model-parallel-size ${s.tensorParallel}`, `--pipeline-model-parallel-size ${s.pipelineStages}`, `--context-parallel-size ${s.contextParallel}`];
  const perStage = report.plan.pipeline?.layersPerStage;
  if (s.virtualStages > 1) {
    // Megatron takes the layers of one virtual stage, the same on every stage.
    const layers = perStage?.[0];
    if (layers !== undefined && perStage!.every((n) => n === layers) && layers % s.virtualStages === 0) args.push(`--num-layers-per-virtual-pipeline-stage ${layers / s.virtualStages}`);
    else notes.push(`The plan interleaves ${s.virtualStages} virtual stages over uneven stages (${perStage?.join(', ') ?? 'unknown'} layers), which one --num-layers-per-virtual-pipeline-stage cannot say.`);
  } else if (perStage && perStage.length > 1 && new Set(perStage).size > 1) {
    notes.push(`The plan's stages hold ${perStage.join(', ')} layers: set Megatron's first and last stage layer counts (--decoder-first-pipeline-num-layers, --decoder-last-pipeline-num-layers) to match.`);
  }
  if (s.sequenceParallel) args.push('--sequence-parallel');
  if (s.expertParallel > 1) args.push(`--expert-model-parallel-size ${s.expertParallel}`);
  // Megatron splits experts over the attention's TP unless told otherwise.
  if (s.expertTensorParallel !== undefined && s.expertTensorParallel !== s.tensorParallel) args.push(`--expert-tensor-parallel-size ${s.expertTensorParallel}`);
  // Without --moe-grouped-gemm Megatron runs SequentialMLP, one GEMM per local expert (megatron/core/transformer/moe/experts.py).
  if (s.expertsKernel === 'grouped') args.push('--moe-grouped-gemm');
  // Megatron's dispatcher defaults to allgather: a plan priced with the all-to-all says so.
  if (s.tokenDispatcher === 'alltoall' && s.expertParallel * (s.expertTensorParallel ?? 1) > 1) args.push('--moe-token-dispatcher-type alltoall');
  else if (s.expertsKernel === 'loop') notes.push('The plan priced the experts as a loop of one GEMM each, as the model\'s code runs them; --moe-grouped-gemm (GroupedMLP) runs them as one grouped GEMM per projection, faster.');
  // Megatron's distributed optimizer shards optimizer state over the data-parallel ranks: ZeRO-1.
  if (s.zeroStage >= 1) args.push('--use-distributed-optimizer');
  // The plan's sync and gather are priced where they run: beside the backward only with --overlap-grad-reduce (off by
  // default), the updated weights' gather in the next forward only with --overlap-param-gather (which needs it).
  const replicated = s.dataParallel * s.contextParallel > 1;
  if (replicated && s.gradientSync !== 'serial') args.push('--overlap-grad-reduce');
  if ((s.zeroStage === 1 || s.zeroStage === 2) && s.weightGather === 'next-forward') args.push(...(replicated && s.gradientSync !== 'serial' ? [] : ['--overlap-grad-reduce']), '--overlap-param-gather');
  else if (s.zeroStage === 1 && s.dataParallel * s.contextParallel > 1) notes.push("WAP's step prices the distributed optimizer's all-gather of the updated weights after the optimizer step, with nothing beside it; Megatron's --overlap-param-gather overlaps it with the next forward (plan with --weight-gather next-forward to price that), so with that flag expect the step up to that gather faster than this estimate.");
  // ZeRO-2/3 are Megatron-FSDP's sharding strategies, with the flags its README requires beside them.
  if (s.zeroStage >= 2) {
    args.push('--use-megatron-fsdp', `--data-parallel-sharding-strategy ${s.zeroStage === 3 ? 'optim_grads_params' : 'optim_grads'}`, '--no-gradient-accumulation-fusion', '--ckpt-format fsdp_dtensor');
    notes.push(`The plan shards ${s.zeroStage === 3 ? 'weights and gradients' : 'gradients'} too (ZeRO-${s.zeroStage}): written as Megatron-FSDP (--use-megatron-fsdp; older Megatron Core releases call it --use-custom-fsdp); the distributed optimizer alone is ZeRO-1, which --framework megatron plans.`);
  }
  if (s.hybridShard) notes.push('The plan shards within a node (HSDP), which these arguments do not say.');
  if (s.cpuOffload) notes.push(`The plan keeps ${s.paramOffload ? 'parameters, gradients and optimizer state' : 'optimizer state'} in host memory, which these arguments do not switch on.`);
  if (s.recompute === 'full') args.push('--recompute-granularity full', '--recompute-method uniform', '--recompute-num-layers 1');
  if (s.recompute === 'selective') args.push('--recompute-granularity selective');
  if (Number.isInteger(s.microBatch) && s.microBatch >= 1) args.push(`--micro-batch-size ${s.microBatch}`);
  else notes.push(`The plan's micro-batch ${s.microBatch} is not a whole number; set --micro-batch-size yourself.`);
  // Megatron derives accumulation: global batch ÷ (micro-batch × data-parallel ranks).
  args.push(`--global-batch-size ${report.batch}`);
  if (s.precision === 'bf16' || s.precision === 'fp8') args.push('--bf16');
  if (s.precision === 'fp16') args.push('--fp16');
  if (s.precision === 'fp8') args.push('--fp8-format hybrid');
  // Megatron's 16-bit training keeps an fp32 master copy in its optimizer.
  // At bf16 Megatron reduces gradients in fp32 by default; at fp16 only when asked.
  if (s.precision === 'fp16' && s.ampStyle === 'fp32-gradients') args.push('--accumulate-allreduce-grads-in-fp32');
  notes.push(...precisionNotes(s, 'Megatron-LM', s.precision === 'fp16' && s.ampStyle !== 'fp32-gradients' ? 'master-weights' : 'fp32-gradients'));
  if (s.otherDegrees) notes.push('The plan mixes configurations per layer; Megatron runs one tensor-parallel degree everywhere: these arguments state the one holding most parameters.');
  return { value: args, notes };
}
