/**
 * The planner flags every planning command shares (`wap plan`, `wap config`,
 * `wap export`): their parseArgs declarations, their help lines, and their
 * translation into PlanOptions and a ClusterSpec.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { initConfigReaders, precisionHintCandidates, launchedSetupHint, trainingHintsApply, withLaunchedSetup, withTrainingHintsFrom, withNamedFramework, NAMED_FRAMEWORKS, type NamedFramework } from '../configs/index';
import { OPTIMIZER_KINDS, type AmpStyle, type Objective, type OptimizerKind, type ParallelPins, type Precision, type RecomputeMode, type StrategyMode, type ZeroStage } from '../protocol/plan';
import { DEFAULT_BATCH, type PlanOptions } from '../protocol/planOptions';
import { ClusterSpecError, CLUSTER_PRESETS, DEFAULT_PRESET, forwardGatherStagesFor, resolveCluster, type ClusterSpec } from '../planner/index';
import { detectLocalGpus } from '../profiler/index';
import { oneOf, positiveInt } from './args';
import { SCRIPT_ARGS_HELP, SEQ_LEN_HELP } from './modelLoading';
import { CliError } from './cliError';
import { diskFiles } from './files';

/** parseArgs declarations; the model-choosing flag differs per command and is not here. */
export const PLANNER_FLAGS = {
  input: { type: 'string' },
  python: { type: 'string' },
  'script-args': { type: 'string' },
  batch: { type: 'string' },
  gpus: { type: 'string' },
  'max-gpus': { type: 'string' },
  cluster: { type: 'string' },
  objective: { type: 'string' },
  strategies: { type: 'string' },
  optimizer: { type: 'string' },
  precision: { type: 'string' },
  'amp-style': { type: 'string' },
  zero: { type: 'string' },
  recompute: { type: 'string' },
  offload: { type: 'string' },
  hsdp: { type: 'string' },
  'weight-gather': { type: 'string' },
  framework: { type: 'string' },
  'micro-batch': { type: 'string' },
  dp: { type: 'string' },
  tp: { type: 'string' },
  pp: { type: 'string' },
  cp: { type: 'string' },
  ep: { type: 'string' },
  etp: { type: 'string' },
  'seq-len': { type: 'string' },
  attention: { type: 'string' },
  'memory-format': { type: 'string' },
} as const;

export type PlannerFlagValues = { [K in keyof typeof PLANNER_FLAGS]?: string };

/** Help lines for PLANNER_FLAGS, led by the command's own model-choosing flag. */
export function plannerFlagsHelp(modelFlag: string): string {
  return `  ${modelFlag.padEnd(21)} which model in the file (default: the first)
  --input C,H,W|T       input shape without batch
  --python PATH         interpreter whose installed libraries imports are read from (default: $WAP_PYTHON, python3)
${SCRIPT_ARGS_HELP}
  --batch B             global batch size (default: what the launch that trains the model states, else ${DEFAULT_BATCH})
  --gpus N              use exactly N GPUs
  --max-gpus N          consider at most N GPUs
  --cluster FILE|PRESET cluster spec file, 'local' (nvidia-smi), or a preset (${Object.keys(CLUSTER_PRESETS).join(', ')}; default ${DEFAULT_PRESET})
  --objective O         throughput (default) | efficiency (smallest n within 5% of the best)
  --strategies S        dp (WAP: data parallel, choose n) | hybrid (default) | all (adds pipelines)
  --optimizer O         sgd | momentum | adam | momentum8bit | adam8bit (8-bit: bitsandbytes' block-wise state) (default: what the model file, a DeepSpeed config or the code beside it
                        builds, else adam for models with attention and momentum for the rest)
  --precision P         fp32 | tf32 | fp16 | bf16 | fp8 (default: the training config's, else the GPU's best)
  --amp-style S         autocast | master-weights | fp32-gradients | pure   how 16-bit training holds tensors
                        (default: the training config's, else master-weights): torch.autocast keeps fp32 parameters
                        and gradients and runs norms and softmax in fp32; DeepSpeed/FSDP keep 16-bit weights with an
                        fp32 master copy; Megatron at bf16 also accumulates and reduces gradients in fp32; pure keeps
                        everything, optimizer state included, in 16 bits
  --zero S              auto (default) | 0 | 1 | 2 | 3   ZeRO stage / FSDP sharding on the data-parallel axis
  --recompute R         auto (default) | none | selective | full   activation recompute
  --micro-batch N       auto (default) | N samples per GPU; gradient accumulation fills the batch
  --offload O           auto (default: only when nothing else fits) | off | optimizer (alias: on) | params
                        what lives in CPU memory: the optimizer state (ZeRO-Offload), or also the parameters
                        and gradients (DeepSpeed offload_param, FSDP CPUOffload), fetched over PCIe every pass
  --hsdp H              auto (default) | on | off   shard ZeRO state within a node, replicate across nodes
  --framework F         ddp | fsdp | deepspeed | megatron   the framework that trains it, when no config beside the model
                        says: its ZeRO stages and offloads (DDP: ZeRO-1 only, no offload; Megatron: ZeRO-1, optimizer
                        offload) and how it times the weight gather and the gradient sync (DeepSpeed's after the backward)
  --weight-gather W     after-step | next-forward   when ZeRO-1/2 gather the updated weights (default: the training
                        config's framework, else after-step): DeepSpeed gathers after the optimizer step; FSDP
                        SHARD_GRAD_OP and Megatron --overlap-param-gather gather behind the next forward
  --dp N --tp N --pp N --cp N --ep N   pin data / tensor / pipeline / context / expert parallel degrees
  --etp N               ranks each routed expert is split over (Megatron's --expert-tensor-parallel-size; default:
                        searched, the attention's TP or 1)
${SEQ_LEN_HELP}
  --attention A         fused (default: FlashAttention / PyTorch SDPA) | unfused (eager: scores through HBM)
  --memory-format F     channels_first (PyTorch's default NCHW) | channels_last   how conv activations are stored
                        (default: channels_last when the code always converts the model to it)`;
}

export function planOptionsFrom(v: PlannerFlagValues): PlanOptions {
  const options: PlanOptions = {
    batch: positiveInt('batch', v.batch) ?? DEFAULT_BATCH,
    objective: oneOf<Objective>('objective', v.objective, ['throughput', 'efficiency'], 'throughput'),
    strategies: oneOf<StrategyMode>('strategies', v.strategies, ['dp', 'hybrid', 'all'], 'hybrid'),
    optimizer: oneOf<OptimizerKind>('optimizer', v.optimizer, OPTIMIZER_KINDS, 'momentum'),
  };
  // Without --batch, the launch that trains the model may state it (configs/launchedSetupHint.ts, in withTrainingHints).
  if (v.batch !== undefined) options.batchSource = '--batch';
  else options.batchAssumed = true;
  if (v.optimizer !== undefined) options.optimizerSource = '--optimizer';
  else options.optimizerAssumed = true;
  const gpus = positiveInt('gpus', v.gpus);
  if (gpus !== undefined) options.gpus = gpus;
  const maxGpus = positiveInt('max-gpus', v['max-gpus']);
  if (maxGpus !== undefined) options.maxGpus = maxGpus;
  if (v.precision !== undefined) {
    options.precision = oneOf<Precision>('precision', v.precision, ['fp32', 'tf32', 'fp16', 'bf16', 'fp8'], 'fp32');
    options.precisionSource = '--precision';
  }
  if (v['amp-style'] !== undefined) {
    options.ampStyle = oneOf<AmpStyle>('amp-style', v['amp-style'], ['autocast', 'master-weights', 'fp32-gradients', 'pure'], 'master-weights');
    options.ampStyleSource = '--amp-style';
  }
  // Before --weight-gather, which overrides the framework's gather when both are given.
  if (v.framework !== undefined) Object.assign(options, withNamedFramework(options, oneOf<NamedFramework>('framework', v.framework, NAMED_FRAMEWORKS, 'ddp'), '--framework'));
  if (v['weight-gather'] !== undefined) {
    const timing = oneOf<'after-step' | 'next-forward'>('weight-gather', v['weight-gather'], ['after-step', 'next-forward'], 'after-step');
    options.forwardGatherStages = forwardGatherStagesFor(timing);
    options.forwardGatherSource = '--weight-gather';
  }
  // Checked here with every other flag, before anything slow; the analysis applies it (modelLoading.ts).
  positiveInt('seq-len', v['seq-len']);
  if (v.attention !== undefined) options.attentionKernel = oneOf<'fused' | 'unfused'>('attention', v.attention, ['fused', 'unfused'], 'fused');
  if (v['memory-format'] !== undefined) {
    options.memoryFormat = oneOf<'channels_first' | 'channels_last'>('memory-format', v['memory-format'], ['channels_first', 'channels_last'], 'channels_first');
    options.memoryFormatSource = '--memory-format';
  }
  const pins = pinsFrom(v);
  if (Object.keys(pins).length > 0) options.pins = pins;
  // Even `--recompute auto` is the user's word: the code's gradient checkpointing is then not pinned (configs/recomputeHint.ts).
  if (v.recompute !== undefined) options.recomputeSource = '--recompute';
  return options;
}

/** `auto` (or absent) leaves a dimension to the search. */
function autoOr<T>(value: string | undefined, parse: (v: string) => T): T | undefined {
  return value === undefined || value === 'auto' ? undefined : parse(value);
}

function pinsFrom(v: PlannerFlagValues): ParallelPins {
  const pins: ParallelPins = {};
  const zero = autoOr(v.zero, (z) => Number(oneOf('zero', z, ['0', '1', '2', '3'], '0')) as ZeroStage);
  if (zero !== undefined) pins.zeroStage = zero;
  const recompute = autoOr(v.recompute, (r) => oneOf<RecomputeMode>('recompute', r, ['none', 'selective', 'full'], 'none'));
  if (recompute !== undefined) pins.recompute = recompute;
  const offload = autoOr(v.offload, (o) => oneOf('offload', o, ['off', 'optimizer', 'on', 'params'], 'off'));
  if (offload !== undefined) {
    pins.cpuOffload = offload !== 'off';
    pins.paramOffload = offload === 'params';
  }
  const hsdp = autoOr(v.hsdp, (o) => oneOf('hsdp', o, ['on', 'off'], 'off') === 'on');
  if (hsdp !== undefined) pins.hybridShard = hsdp;
  const degrees: Array<[keyof PlannerFlagValues, keyof ParallelPins]> = [
    ['micro-batch', 'microBatch'],
    ['dp', 'dataParallel'],
    ['tp', 'tensorParallel'],
    ['pp', 'pipelineStages'],
    ['cp', 'contextParallel'],
    ['ep', 'expertParallel'],
    ['etp', 'expertTensorParallel'],
  ];
  for (const [flag, key] of degrees) {
    const n = autoOr(v[flag], (x) => positiveInt(flag, x));
    if (n !== undefined) (pins as Record<string, number>)[key] = n;
  }
  return pins;
}

/** `--cluster`: a preset, a spec file, 'local' (nvidia-smi via the profiler) or the default preset. */
export async function clusterFrom(ref: string | undefined): Promise<ClusterSpec> {
  try {
    const localGpus = ref === 'local' ? await detectLocalGpus() : undefined;
    return resolveCluster(ref, { localGpus, readFile: (p) => readFileSync(p, 'utf8') });
  } catch (err) {
    if (err instanceof ClusterSpecError) throw new CliError(`cluster: ${err.message}`);
    throw err;
  }
}

/**
 * What the files beside the model say the user trains with, where no flag says it: the precision (accelerate
 * mixed_precision, DeepSpeed bf16/fp16, Lightning precision=; else the planner picks by GPU) and the optimizer
 * (configs/optimizerHint.ts); the model's own file is read first for both. Without --batch, the global batch (and,
 * where nothing beside the model says one, the precision) the launch that trains it states (launchedSetupHint.ts).
 */
export async function withTrainingHints(options: PlanOptions, modelFile: string): Promise<PlanOptions> {
  if (!trainingHintsApply(options)) return options;
  const dir = dirname(modelFile);
  let names: string[];
  try {
    names = precisionHintCandidates(readdirSync(dir), basename(modelFile));
  } catch {
    return options;
  }
  await initConfigReaders();
  const files: Array<{ name: string; text: string }> = [];
  for (const name of names) {
    try {
      files.push({ name, text: readFileSync(join(dir, name), 'utf8') });
    } catch {
      // unreadable: no hint from it
    }
  }
  const hinted = withTrainingHintsFrom(options, files, basename(modelFile));
  return hinted.batchAssumed || !hinted.precision ? withLaunchedSetup(hinted, launchedSetupHint(modelFile, diskFiles)) : hinted;
}
