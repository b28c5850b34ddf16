/**
 * What a DeepSpeed config says about the training setup: bf16/fp16,
 * zero_optimization.stage, offload_optimizer.device, the three batch keys
 * (and offload_param and NVMe, which WAP reads but does not model);
 * and how to write the plan's values back (several JSON changes composed
 * into one edit, so insertions into one object never clash).
 */
import type { Node } from 'jsonc-parser';
import type { Precision, ZeroStage } from '../protocol/plan';
import { rangeOf, setJsonValues, valueAt } from './jsonDoc';
import { PARAM_OFFLOAD_UNMODELLED, type SetupDim, type StatedSetup } from './setup';
import type { TextEdit, TextRange } from './types';

const TENSOR_PARALLEL_ELSEWHERE = 'DeepSpeed configs have no tensor, pipeline or context parallel degrees; export the plan with `wap export --format torch-parallelize` (PyTorch DTensor) or use Megatron-LM arguments';

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
      return value || valueAt(root, ['zero_optimization', 'offload_optimizer']) ? [[['zero_optimization', 'offload_optimizer', 'device'], value ? 'cpu' : 'none']] : [];
    case 'microBatch':
      return [[['train_micro_batch_size_per_gpu'], value]];
    case 'gradientAccumulation':
      return [[['gradient_accumulation_steps'], value]];
    default:
      return [];
  }
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
  const stage = valueAt(root, ['zero_optimization', 'stage']);
  if (!stage || (stage.type === 'number' && [0, 1, 2, 3].includes(stage.value))) {
    stated.zeroStage = dim((stage?.value ?? 0) as ZeroStage, stage, 'zeroStage');
    if (stage) stated.anchor = rangeOf(stage);
  }
  const device = valueAt(root, ['zero_optimization', 'offload_optimizer', 'device']);
  if (!device || device.type === 'string') stated.cpuOffload = dim(device?.value === 'cpu' || device?.value === 'nvme', device, 'cpuOffload');
  const unmodelled: NonNullable<StatedSetup['unmodelled']> = [];
  if (device?.value === 'nvme') unmodelled.push({ range: rangeOf(device), short: 'NVMe offload', message: 'offload_optimizer.device "nvme" is planned as CPU memory: the NVMe reads and writes of the optimizer state each step are not modelled (step time under-stated)' });
  // HF's ZeRO-3 templates offload both; ZeRO-Infinity (Rajbhandari et al., SC 2021) fetches offloaded parameters for each use.
  const paramDevice = valueAt(root, ['zero_optimization', 'offload_param', 'device']);
  if (paramDevice?.value === 'cpu' || paramDevice?.value === 'nvme') unmodelled.push({ range: rangeOf(paramDevice), short: 'parameter offload', message: `offload_param.device "${paramDevice.value}": ${PARAM_OFFLOAD_UNMODELLED}` });
  if (unmodelled.length) stated.unmodelled = unmodelled;
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
