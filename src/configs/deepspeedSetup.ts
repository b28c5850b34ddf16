/**
 * What a DeepSpeed config says about the training setup: bf16/fp16,
 * zero_optimization.stage, offload_optimizer.device and offload_param.device
 * (NVMe is planned as CPU offload, and says so), the three batch keys;
 * and how to write the plan's values back (several JSON changes composed
 * into one edit, so insertions into one object never clash).
 */
import type { Node } from 'jsonc-parser';
import type { Precision, ZeroStage } from '../protocol/plan';
import { rangeOf, setJsonValues, valueAt } from './jsonDoc';
import { nvmeUnmodelled, paramsWithoutOptimizerUnmodelled, type SetupDim, type StatedSetup } from './setup';
import type { TextEdit, TextRange } from './types';
import { DEEPSPEED_WEIGHT_GATHER, deepspeedSerialSync } from './frameworkTimings';

const TENSOR_PARALLEL_ELSEWHERE = 'DeepSpeed configs have no tensor, pipeline or context parallel degrees; export the plan with `wap export --format torch-parallelize` (PyTorch DTensor) or use Megatron-LM arguments';

const PARAM_OFFLOAD_NEEDS_ZERO3 = 'DeepSpeed offloads parameters (offload_param) only at ZeRO stage 3: plan with --zero 3 to train with parameter offload, or with --offload optimizer to keep the parameters on the GPU';

/** An offload device as DeepSpeed names it: "cpu" and "nvme" offload ("nvme" is planned as cpu), "none" or absent does not. */
export const offloadsTo = (device: unknown): boolean => device === 'cpu' || device === 'nvme';

/**
 * DeepSpeed's rules for a stated parameter offload, in every format that configures DeepSpeed (its JSON, the
 * accelerate plugin, Lightning's DeepSpeedStrategy, the Trainer's inline dict): it takes offload_param at ZeRO-3
 * only (a plan offloading parameters at a lower stage is inexpressible), and parameters offloaded without the
 * optimizer state are planned with both offloaded, which the config's plan says. `what` names the keys.
 */
export function deepspeedParamOffloadRules(stated: StatedSetup, what: string): void {
  const params = stated.paramOffload;
  if (!params) return;
  params.expressible = (plan) => !plan.paramOffload || plan.zeroStage === 3;
  stated.inexpressible.paramOffload = PARAM_OFFLOAD_NEEDS_ZERO3;
  if (params.value && stated.cpuOffload?.value === false) (stated.unmodelled ??= []).push(paramsWithoutOptimizerUnmodelled(params.range, what));
}

const PYDANTIC_TRUE = new Set(['true', '1', 'yes', 'on', 't', 'y']);
const PYDANTIC_FALSE = new Set(['false', '0', 'no', 'off', 'f', 'n']);

/**
 * `key.enabled` (bf16, fp16) as DeepSpeed reads it: a bool, undefined when absent, or a value WAP cannot know:
 * "auto" (the HF Trainer fills it in) or 'unreadable' (anything DeepSpeed would not take as a bool).
 */
export const deepspeedEnabled = (root: Node, key: string): boolean | 'auto' | 'unreadable' | undefined => {
  const n = valueAt(root, [key, 'enabled']);
  if (!n) return undefined;
  if (n.type === 'boolean') return n.value as boolean;
  if (n.type === 'number' && (n.value === 0 || n.value === 1)) return n.value === 1;
  if (n.type === 'string' && n.value === 'auto') return 'auto';
  // DeepSpeed validates its config with pydantic, whose bool fields take 0/1 and these strings too ("enabled": "true" trains in bf16).
  if (n.type === 'string' && typeof n.value === 'string') {
    const word = n.value.trim().toLowerCase();
    if (PYDANTIC_TRUE.has(word)) return true;
    if (PYDANTIC_FALSE.has(word)) return false;
  }
  return 'unreadable';
};

type Path = Array<string | number>;

/** The JSON changes that make the config say one dimension's value. */
function pathsFor(root: Node, key: string, value: unknown): Array<[Path, unknown]> {
  switch (key) {
    case 'precision': {
      const p = value as Precision;
      const out: Array<[Path, unknown]> = [];
      if (p === 'bf16') out.push([['bf16', 'enabled'], true]);
      else if (valueAt(root, ['bf16'])) out.push([['bf16', 'enabled'], false]);
      if (p === 'fp16') out.push([['fp16', 'enabled'], true]);
      else if (valueAt(root, ['fp16'])) out.push([['fp16', 'enabled'], false]);
      return out;
    }
    case 'zeroStage':
      return [[['zero_optimization', 'stage'], value]];
    case 'cpuOffload':
      return offloadPaths(root, 'offload_optimizer', value as boolean);
    case 'paramOffload':
      return offloadPaths(root, 'offload_param', value as boolean);
    case 'microBatch':
      return [[['train_micro_batch_size_per_gpu'], value]];
    case 'gradientAccumulation':
      return [[['gradient_accumulation_steps'], value]];
    default:
      return [];
  }
}

/** `zero_optimization.<section>.device` as the plan says it: the section is created only to switch offload on. */
function offloadPaths(root: Node, section: 'offload_optimizer' | 'offload_param', on: boolean): Array<[Path, unknown]> {
  return on || valueAt(root, ['zero_optimization', section]) ? [[['zero_optimization', section, 'device'], on ? 'cpu' : 'none']] : [];
}

export function readDeepspeedSetup(text: string, root: Node): StatedSetup {
  const rootRange: TextRange = { start: root.offset, end: root.offset + 1 };
  const writeAll = (changes: Array<[string, unknown]>): TextEdit[] | undefined => setJsonValues(text, changes.flatMap(([k, v]) => pathsFor(root, k, v)));
  const dim = <T>(value: T, node: Node | undefined, key: string): SetupDim<T> => ({
    value, stated: !!node, range: node ? rangeOf(node) : rootRange,
    set: (next) => {
      const paths = pathsFor(root, key, next);
      return paths.length ? setJsonValues(text, paths) : undefined;
    },
  });
  const stated: StatedSetup = {
    label: 'DeepSpeed config', anchor: rootRange, writeAll,
    inexpressible: {
      tensorParallel: TENSOR_PARALLEL_ELSEWHERE, pipelineStages: TENSOR_PARALLEL_ELSEWHERE, contextParallel: TENSOR_PARALLEL_ELSEWHERE, sequenceParallel: TENSOR_PARALLEL_ELSEWHERE,
      // The activation_checkpointing section only configures deepspeed.checkpointing; the model code switches it on.
      recompute: 'recompute is switched on in the model code (model.gradient_checkpointing_enable() or deepspeed.checkpointing.checkpoint), not in this config',
    },
  };
  const bf16 = deepspeedEnabled(root, 'bf16');
  const fp16 = deepspeedEnabled(root, 'fp16');
  // "auto" is filled in by the HF Trainer from its own arguments, and an unreadable value is no statement: not knowable here.
  const knowable = (v: typeof bf16): v is boolean | undefined => v !== 'auto' && v !== 'unreadable';
  if (knowable(bf16) && knowable(fp16)) {
    const precision: Precision = bf16 ? 'bf16' : fp16 ? 'fp16' : 'fp32';
    const node = valueAt(root, [bf16 ? 'bf16' : fp16 ? 'fp16' : valueAt(root, ['bf16']) ? 'bf16' : 'fp16', 'enabled']);
    stated.precision = dim<Precision>(precision, node, 'precision');
  }
  const overlap = valueAt(root, ['zero_optimization', 'overlap_comm']);
  // An overlap_comm WAP cannot read ("auto", a string) is taken as DeepSpeed's default: off below ZeRO-3.
  stated.serialSync = deepspeedSerialSync(overlap?.type === 'boolean' ? (overlap.value as boolean) : undefined);
  stated.weightGather = DEEPSPEED_WEIGHT_GATHER;
  const stage = valueAt(root, ['zero_optimization', 'stage']);
  if (!stage || (stage.type === 'number' && [0, 1, 2, 3].includes(stage.value))) {
    stated.zeroStage = dim((stage?.value ?? 0) as ZeroStage, stage, 'zeroStage');
    if (stage) stated.anchor = rangeOf(stage);
  }
  const unmodelled: NonNullable<StatedSetup['unmodelled']> = [];
  // HF's ZeRO-3 templates offload both; ZeRO-Infinity (Rajbhandari et al., SC 2021) fetches offloaded parameters for each use.
  for (const [section, key] of [['offload_optimizer', 'cpuOffload'], ['offload_param', 'paramOffload']] as const) {
    const device = valueAt(root, ['zero_optimization', section, 'device']);
    if (device && device.type !== 'string') continue;
    stated[key] = dim(offloadsTo(device?.value), device, key);
    if (device?.value === 'nvme') unmodelled.push(nvmeUnmodelled(rangeOf(device), `${section}.device "nvme"`));
  }
  unmodelled.push(...zeroPlusPlusUnmodelled(root));
  if (unmodelled.length) stated.unmodelled = unmodelled;
  deepspeedParamOffloadRules(stated, 'offload_param without offload_optimizer');
  const count = (key: string, as: 'microBatch' | 'gradientAccumulation' | 'globalBatch'): void => {
    const n = valueAt(root, [key]);
    if (n?.type === 'number' && Number.isInteger(n.value) && n.value >= 1) {
      stated[as] = as === 'globalBatch'
        ? { value: n.value, stated: true, range: rangeOf(n), set: (v) => setJsonValues(text, [[[key], v]]) }
        : dim(n.value as number, n, as);
    }
  };
  count('train_micro_batch_size_per_gpu', 'microBatch');
  count('gradient_accumulation_steps', 'gradientAccumulation');
  count('train_batch_size', 'globalBatch');
  // DeepSpeed derives a missing accumulation as 1; it can be inserted.
  if (stated.microBatch && !stated.gradientAccumulation && !valueAt(root, ['gradient_accumulation_steps'])) {
    stated.gradientAccumulation = { ...dim(1, undefined, 'gradientAccumulation'), stated: false };
  }
  return stated;
}

/**
 * ZeRO++ (Wang et al., 2023; DeepSpeed's zero_optimization keys): weights all-gathered in int8 (qwZ,
 * zero_quantized_weights), a secondary weight shard per node for the backward's gathers (hpZ, zero_hpz_partition_size),
 * gradients reduce-scattered in int4 (qgZ, zero_quantized_gradients). WAP prices ZeRO-3's collectives in the
 * training precision over the whole data-parallel group, so with these on the plan overstates their time: said.
 */
function zeroPlusPlusUnmodelled(root: Node): Array<{ range: TextRange; message: string; short: string }> {
  const out: Array<{ range: TextRange; message: string; short: string }> = [];
  const on = (key: string): Node | undefined => {
    const node = valueAt(root, ['zero_optimization', key]);
    return node && (node.value === true || (typeof node.value === 'number' && node.value > 1)) ? node : undefined;
  };
  const what: Array<[string, string]> = [
    ['zero_quantized_weights', "qwZ all-gathers the weights in int8"],
    ['zero_hpz_partition_size', "hpZ keeps a second weight shard per node, so the backward's gathers stay inside it"],
    ['zero_quantized_gradients', 'qgZ reduce-scatters the gradients in int4'],
  ];
  for (const [key, does] of what) {
    const node = on(key);
    if (node) out.push({ range: rangeOf(node), short: `ZeRO++ ${key} not modelled`, message: `${key} (ZeRO++): ${does}; WAP prices ZeRO's collectives in the training precision over the whole data-parallel group, so the plan overstates their time${key === 'zero_hpz_partition_size' ? ' and understates the memory of the second shard' : ''}` });
  }
  return out;
}
