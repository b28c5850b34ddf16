/**
 * What an Accelerate config says about the training setup: mixed_precision,
 * distributed_type FSDP (fsdp_config sharding strategy, activation
 * checkpointing, fsdp_offload_params: parameter and optimizer offload together)
 * / DEEPSPEED (deepspeed_config zero_stage, offload_optimizer_device,
 * offload_param_device, accumulation, or a deepspeed_config_file that holds
 * them: linkedConfig.ts) / MULTI_GPU; and how to write the plan's values back.
 */
import { ACCELERATE_PRECISION } from '../core/trainingPrecision';
import type { Document, Scalar } from 'yaml';
import type { Precision, RecomputeMode, ZeroStage } from '../protocol/plan';
import { deepspeedParamOffloadRules, offloadsTo } from './deepspeedSetup';
import { stateJointOffload } from './offloadDims';
import { nvmeUnmodelled, type SetupDim, type StatedSetup } from './setup';
import type { TextEdit, TextRange } from './types';
import { hasTopKey, insertYamlKey, nestedScalar, setScalar, topScalar, valueRange } from './yamlDoc';
import { DEEPSPEED_WEIGHT_GATHER, FSDP_WEIGHT_GATHER, deepspeedSerialSync } from './frameworkTimings';
import { accelerateFsdpAccumulation } from './unshardedAccumulation';

const ELSEWHERE = 'Accelerate configs have no tensor, pipeline or context parallel degree; export the plan with `wap export --format torch-parallelize` (PyTorch DTensor) or write a torchtitan / Megatron-LM config';

/** FSDP sharding strategies and their ZeRO equivalents (Accelerate also accepts the enum's 1-based numbers). */
const SHARDING: Record<string, { zero: ZeroStage; hybrid: boolean }> = {
  FULL_SHARD: { zero: 3, hybrid: false }, SHARD_GRAD_OP: { zero: 2, hybrid: false }, NO_SHARD: { zero: 0, hybrid: false },
  HYBRID_SHARD: { zero: 3, hybrid: true }, HYBRID_SHARD_ZERO2: { zero: 2, hybrid: true },
  1: { zero: 3, hybrid: false }, 2: { zero: 2, hybrid: false }, 3: { zero: 0, hybrid: false }, 4: { zero: 3, hybrid: true }, 5: { zero: 2, hybrid: true },
};

function shardingName(zero: ZeroStage, hybrid: boolean): string | undefined {
  if (zero === 1) return undefined; // FSDP has no optimizer-only sharding
  if (hybrid) return zero === 3 ? 'HYBRID_SHARD' : zero === 2 ? 'HYBRID_SHARD_ZERO2' : undefined;
  return zero === 3 ? 'FULL_SHARD' : zero === 2 ? 'SHARD_GRAD_OP' : 'NO_SHARD';
}

const PRECISION_WORD: Record<Precision, string> = { fp32: 'no', tf32: 'no', fp16: 'fp16', bf16: 'bf16', fp8: 'fp8' };

const str = (n: Scalar | undefined): string | undefined => (n === undefined ? undefined : n.value === false ? 'no' : String(n.value));

export function readAccelerateSetup(text: string, doc: Document.Parsed, world: number | undefined): StatedSetup {
  const distributed = topScalar(doc, 'distributed_type');
  const type = str(distributed)?.toUpperCase();
  const anchor: TextRange = distributed ? valueRange(distributed) : { start: 0, end: Math.min(1, text.length) };
  const stated: StatedSetup = {
    label: 'Accelerate config', anchor, world,
    inexpressible: { tensorParallel: ELSEWHERE, pipelineStages: ELSEWHERE, contextParallel: ELSEWHERE, sequenceParallel: ELSEWHERE },
  };
  /** Mappings this fix creates: a second key for one joins the first insertion instead of repeating the mapping. */
  const created = new Map<string, TextEdit>();
  /** Sets a key in a nested mapping, inserting the key (or the whole mapping) when absent. */
  const put = (section: string, key: string, value: string | number | boolean): TextEdit[] | undefined => {
    const node = nestedScalar(doc, [section], key);
    if (node) return setScalar(node, value);
    const inSection = insertYamlKey(text, doc, [section], key, String(value));
    if (inSection) return inSection;
    if (hasTopKey(doc, section)) return undefined;
    const pending = created.get(section);
    if (pending) {
      pending.newText = pending.newText.replace(/\n?$/, (nl) => `\n  ${key}: ${value}${nl}`);
      return [];
    }
    const edits = insertYamlKey(text, doc, [], section, `\n  ${key}: ${value}`);
    if (edits?.[0]) created.set(section, edits[0]);
    return edits;
  };
  const putTop = (key: string, value: string): TextEdit[] | undefined => {
    const node = topScalar(doc, key);
    return node ? setScalar(node, value) : insertYamlKey(text, doc, [], key, value);
  };

  const mp = topScalar(doc, 'mixed_precision');
  const precision = ACCELERATE_PRECISION[str(mp)?.toLowerCase() ?? 'no'];
  if (precision) {
    stated.precision = {
      value: precision, stated: !!mp, range: mp ? valueRange(mp) : anchor,
      set: (p) => putTop('mixed_precision', p === 'fp32' || p === 'tf32' ? "'no'" : PRECISION_WORD[p]),
    };
  }

  if (type === 'FSDP') {
    const strategyNode = nestedScalar(doc, ['fsdp_config'], 'fsdp_sharding_strategy');
    const shard = SHARDING[str(strategyNode)?.toUpperCase() ?? 'FULL_SHARD'];
    if (shard) {
      const range = strategyNode ? valueRange(strategyNode) : anchor;
      const setStrategy = (zero: ZeroStage, hybrid: boolean): TextEdit[] | undefined => {
        const name = shardingName(zero, hybrid);
        return name ? put('fsdp_config', 'fsdp_sharding_strategy', name) : undefined;
      };
      // One key says both: each writes the plan's value of the other (it may change too), so the two edits agree.
      stated.zeroStage = { value: shard.zero, stated: !!strategyNode, range, set: (z, plan) => setStrategy(z, plan?.hybridShard ?? stated.hybridShard?.value ?? false) };
      stated.hybridShard = { value: shard.hybrid, stated: !!strategyNode, range, set: (h, plan) => setStrategy(plan?.zeroStage ?? stated.zeroStage!.value, h) };
      stated.weightGather = FSDP_WEIGHT_GATHER;
      stated.anchor = range;
    }
    // accelerate's accumulate() and the Trainer pause FSDP1's sync on the micro-steps before the last (no_sync), not
    // FSDP2's (fsdp_version 2): unshardedAccumulation.ts. fsdp_version defaults to 1 in accelerate's config.
    const version = nestedScalar(doc, ['fsdp_config'], 'fsdp_version');
    stated.unshardedAccumulation = accelerateFsdpAccumulation(Number(version?.value ?? 1) || 1, "accelerate's accumulate() (and the Trainer)");
    const ac = nestedScalar(doc, ['fsdp_config'], 'fsdp_activation_checkpointing');
    stated.recompute = {
      value: ac?.value === true ? 'full' : 'none', stated: !!ac, range: ac ? valueRange(ac) : stated.anchor,
      // FSDP's switch checkpoints whole wrapped blocks: any recompute the plan wants means "on".
      matches: (plan: RecomputeMode) => (plan !== 'none') === (ac?.value === true),
      set: (r) => put('fsdp_config', 'fsdp_activation_checkpointing', r !== 'none'),
    };
    const offload = nestedScalar(doc, ['fsdp_config'], 'fsdp_offload_params');
    // FSDP's CPUOffload(offload_params=True) moves parameters and gradients too, and steps the optimizer on the CPU.
    stateJointOffload(stated, offload?.value === true, !!offload, offload ? valueRange(offload) : stated.anchor, (o) => put('fsdp_config', 'fsdp_offload_params', o));
  } else if (type === 'DEEPSPEED') {
    const file = nestedScalar(doc, ['deepspeed_config'], 'deepspeed_config_file');
    if (file && typeof file.value === 'string' && file.value.trim() !== '') {
      // Accelerate then takes the stage, offloads and accumulation from that file, not from keys here.
      stated.link = { path: file.value.trim(), range: valueRange(file), key: 'deepspeed_config_file' };
      return stated;
    }
    // Accelerate's plugin writes no overlap_comm: DeepSpeed's default.
    stated.serialSync = deepspeedSerialSync(undefined);
    stated.weightGather = DEEPSPEED_WEIGHT_GATHER;
    const stage = nestedScalar(doc, ['deepspeed_config'], 'zero_stage');
    if (!stage || [0, 1, 2, 3].includes(stage.value as number)) {
      stated.zeroStage = { value: ((stage?.value as number | undefined) ?? 0) as ZeroStage, stated: !!stage, range: stage ? valueRange(stage) : anchor, set: (z) => put('deepspeed_config', 'zero_stage', z) };
    }
    const unmodelled: NonNullable<StatedSetup['unmodelled']> = [];
    for (const [key, dim] of [['offload_optimizer_device', 'cpuOffload'], ['offload_param_device', 'paramOffload']] as const) {
      const device = nestedScalar(doc, ['deepspeed_config'], key);
      stated[dim] = { value: offloadsTo(str(device)), stated: !!device, range: device ? valueRange(device) : anchor, set: (o) => put('deepspeed_config', key, o ? 'cpu' : 'none') };
      if (str(device) === 'nvme') unmodelled.push(nvmeUnmodelled(valueRange(device!), `${key} nvme`));
    }
    if (unmodelled.length) stated.unmodelled = unmodelled;
    deepspeedParamOffloadRules(stated, 'offload_param_device without offload_optimizer_device');
    const accum = nestedScalar(doc, ['deepspeed_config'], 'gradient_accumulation_steps');
    if (accum && typeof accum.value === 'number') stated.gradientAccumulation = { value: accum.value, stated: true, range: valueRange(accum), set: (n) => setScalar(accum, n) };
  } else if (type === 'MULTI_GPU' || type === 'NO') {
    // Plain DDP: no sharding. The plan's ZeRO-2/3 is FSDP in Accelerate's words (ZeRO-1 has none).
    const fsdp = (zero: ZeroStage, hybrid: boolean): TextEdit[] | undefined => {
      const name = shardingName(zero, hybrid);
      if (!name || !distributed || zero === 0) return zero === 0 && !hybrid ? [] : undefined;
      const section = put('fsdp_config', 'fsdp_sharding_strategy', name);
      return section ? [...setScalar(distributed, 'FSDP'), ...section] : undefined;
    };
    stated.zeroStage = { value: 0, stated: !!distributed, range: anchor, set: (z) => fsdp(z, false) };
    stated.inexpressible.recompute = 'a MULTI_GPU config cannot switch recompute on; use distributed_type FSDP with fsdp_activation_checkpointing, or call model.gradient_checkpointing_enable() in the script';
  }
  return stated;
}

export type { SetupDim };
