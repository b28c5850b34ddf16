/**
 * What a Lightning `Trainer(...)` says about the training setup: strategy
 * ("fsdp", "deepspeed_stage_2", FSDPStrategy(sharding_strategy=…),
 * DeepSpeedStrategy(stage=…)) with its offloads ("_offload" names,
 * FSDPStrategy(cpu_offload=…), DeepSpeedStrategy(offload_optimizer=…,
 * offload_parameters=…), or its config= file or dict, which then says them),
 * precision ("bf16-mixed"…) and
 * accumulate_grad_batches; and how to write the plan's values back.
 */
import type { Node } from 'web-tree-sitter';
import type { Precision, RecomputeMode, TrainingSetup, ZeroStage } from '../protocol/plan';
import { lightningPrecision } from '../core/trainingPrecision';
import { deepspeedParamOffloadRules } from './deepspeedSetup';
import { FSDP_SHARDING, fsdpOffloadOn, fsdpShardingFor } from './fsdpStrategy';
import { readInlineDeepSpeed } from './inlineDeepSpeed';
import { stateJointOffload } from './offloadDims';
import { argsLayout, calleeName, callArgs, intLiteral, nodeRange, quoteOf, replaceRange, setKeyword, stringLiteral, type CallArgs } from './python';
import { nvmeUnmodelled, type StatedSetup } from './setup';
import type { TextEdit } from './types';
import { DEEPSPEED_WEIGHT_GATHER, FSDP_WEIGHT_GATHER, lightningDeepSpeedSerialSync } from './frameworkTimings';
import { LIGHTNING_FSDP_ACCUMULATION } from './unshardedAccumulation';

export const LIGHTNING_ELSEWHERE = "Lightning's strategies here have no tensor, pipeline or context parallel degree; export the plan with `wap export --format torch-parallelize` and call its parallelize function from ModelParallelStrategy";

function precisionOf(n: Node): Precision | undefined {
  const raw = stringLiteral(n) ?? (intLiteral(n) !== undefined ? String(intLiteral(n)) : undefined);
  return raw === undefined ? undefined : lightningPrecision(raw)?.precision;
}

const STRATEGY_NAME_OFFLOAD = 'Lightning\'s strategy names offload the optimizer state alone at ZeRO-1/2 ("deepspeed_stage_2_offload") and the parameters with it at ZeRO-3 ("deepspeed_stage_3_offload", "fsdp_cpu_offload"); for another combination write DeepSpeedStrategy(stage=…, offload_optimizer=…, offload_parameters=…)';

/** What a strategy name's "_offload" moves: the optimizer state alone at ZeRO-1/2, the parameters with it at ZeRO-3. */
const nameSays = (plan: Pick<TrainingSetup, 'zeroStage' | 'cpuOffload' | 'paramOffload'>): boolean =>
  plan.zeroStage === 3 ? plan.cpuOffload === plan.paramOffload : !plan.paramOffload;

/** Where Lightning says recompute when its strategy name has no word for it. */
export const LIGHTNING_RECOMPUTE_ELSEWHERE = 'use FSDPStrategy(activation_checkpointing_policy={YourBlock}) or call model.gradient_checkpointing_enable() in the LightningModule';

export const LIGHTNING_PRECISION_TEXT: Record<Precision, string> = { fp32: '32-true', tf32: '32-true', fp16: '16-mixed', bf16: 'bf16-mixed', fp8: 'transformer-engine' };

/**
 * Reads while the tree is alive; every `set` closure holds offsets and strings
 * only (argsLayout, replaceRange), so the edits stay right after the tree is freed.
 */
export function readLightningSetup(text: string, trainer: CallArgs, world: number | undefined): StatedSetup {
  const anchor = nodeRange(trainer.list);
  const trainerLayout = argsLayout(trainer);
  const stated: StatedSetup = {
    label: 'Lightning Trainer', anchor, world,
    inexpressible: { tensorParallel: LIGHTNING_ELSEWHERE, pipelineStages: LIGHTNING_ELSEWHERE, contextParallel: LIGHTNING_ELSEWHERE, sequenceParallel: LIGHTNING_ELSEWHERE },
  };
  const q = (n: Node | undefined): string => (n && n.type === 'string' ? quoteOf(n) : '"');

  const precisionNode = trainer.keywords.get('precision');
  const precision = precisionNode ? precisionOf(precisionNode) : 'fp32';
  if (precision) {
    const pq = q(precisionNode);
    stated.precision = {
      value: precision, stated: !!precisionNode, range: precisionNode ? nodeRange(precisionNode) : anchor,
      set: (p) => setKeyword(text, trainerLayout, 'precision', `${pq}${LIGHTNING_PRECISION_TEXT[p]}${pq}`),
    };
  }
  const accum = trainer.keywords.get('accumulate_grad_batches');
  const accumValue = accum ? intLiteral(accum) : 1;
  if (accumValue !== undefined) {
    stated.gradientAccumulation = { value: accumValue, stated: !!accum, range: accum ? nodeRange(accum) : anchor, set: (n) => setKeyword(text, trainerLayout, 'accumulate_grad_batches', String(n)) };
  }

  const strategy = trainer.keywords.get('strategy');
  const name = strategy && stringLiteral(strategy);
  if (!strategy || (name !== undefined && /^(ddp|auto|dp)/.test(name))) {
    // DDP: no sharding. Writing a stage switches to the strategy string that has it.
    const sq = q(strategy);
    const write = (z: ZeroStage, offload: boolean): TextEdit[] | undefined => {
      const s = z === 0 ? 'ddp' : z === 3 ? (offload ? undefined : 'fsdp') : `deepspeed_stage_${z}${offload ? '_offload' : ''}`;
      return s ? setKeyword(text, trainerLayout, 'strategy', `${sq}${s}${sq}`) : undefined;
    };
    stated.zeroStage = { value: 0, stated: !!strategy, range: strategy ? nodeRange(strategy) : anchor, set: (z) => write(z, false) };
    stated.inexpressible.recompute = LIGHTNING_RECOMPUTE_ELSEWHERE;
  } else if (name !== undefined && /^(deepspeed|fsdp)/.test(name)) {
    const m = /^deepspeed(?:_stage_(\d))?(_offload)?/.exec(name);
    const zero = (m ? Number(m[1] ?? 2) : 3) as ZeroStage;
    const offload = !!m?.[2] || name === 'fsdp_cpu_offload';
    const range = nodeRange(strategy);
    const sq = quoteOf(strategy);
    const family = m ? 'deepspeed' : 'fsdp';
    const write = (z: ZeroStage, cpu: boolean, params: boolean): TextEdit[] | undefined => {
      if (!nameSays({ zeroStage: z, cpuOffload: cpu, paramOffload: params })) return undefined;
      if (family === 'fsdp' && z === 3) return replaceRange(range, `${sq}${cpu ? 'fsdp_cpu_offload' : 'fsdp'}${sq}`);
      if (z === 0) return cpu ? undefined : replaceRange(range, `${sq}ddp${sq}`);
      return replaceRange(range, `${sq}deepspeed_stage_${z}${cpu ? '_offload' : ''}${sq}`);
    };
    // One string says all three: each writes the plan's values of the others, so the edits agree (and are kept once).
    // Without a plan, "_offload" follows the stage: parameters too at ZeRO-3.
    const toward = (plan: TrainingSetup | undefined, z: ZeroStage, cpu: boolean): TextEdit[] | undefined => write(z, cpu, plan?.paramOffload ?? (cpu && z === 3));
    stated.zeroStage = { value: zero, stated: true, range, set: (z, plan) => toward(plan, z, plan?.cpuOffload ?? offload) };
    if (family === 'deepspeed') Object.assign(stated, { serialSync: lightningDeepSpeedSerialSync(undefined), weightGather: DEEPSPEED_WEIGHT_GATHER });
    else stated.unshardedAccumulation = LIGHTNING_FSDP_ACCUMULATION;
    stated.cpuOffload = { value: offload, stated: true, range, set: (o, plan) => toward(plan, plan?.zeroStage ?? zero, o), expressible: nameSays };
    stated.paramOffload = {
      value: offload && zero === 3, stated: true, range, expressible: nameSays,
      set: (p, plan) => write(plan?.zeroStage ?? zero, plan?.cpuOffload ?? (p || (offload && zero < 3)), p),
    };
    stated.inexpressible.cpuOffload = STRATEGY_NAME_OFFLOAD;
    stated.inexpressible.paramOffload = STRATEGY_NAME_OFFLOAD;
    if (name.endsWith('_nvme')) stated.unmodelled = [nvmeUnmodelled(range, `strategy "${name}"`)];
    stated.anchor = range;
    stated.inexpressible.recompute = LIGHTNING_RECOMPUTE_ELSEWHERE;
  } else if (strategy.type === 'call' && callArgs(strategy)) {
    const args = callArgs(strategy)!;
    const layout = argsLayout(args);
    const cls = calleeName(strategy);
    stated.anchor = nodeRange(strategy);
    if (cls === 'FSDPStrategy') {
      const sharding = args.keywords.get('sharding_strategy');
      const shardName = sharding ? (stringLiteral(sharding) ?? sharding.text.replace(/^.*\./, '')) : 'FULL_SHARD';
      const shard = FSDP_SHARDING[shardName];
      if (shard) {
        const sq = q(sharding);
        const write = (z: ZeroStage, h: boolean): TextEdit[] | undefined => {
          const member = fsdpShardingFor(z, h);
          return member ? setKeyword(text, layout, 'sharding_strategy', `${sq}${member}${sq}`) : undefined;
        };
        const range = sharding ? nodeRange(sharding) : stated.anchor;
        // One keyword says both: each writes the plan's value of the other, so the two edits agree.
        stated.zeroStage = { value: shard.zero, stated: !!sharding, range, set: (z, plan) => write(z, plan?.hybridShard ?? stated.hybridShard?.value ?? false) };
        stated.hybridShard = { value: shard.hybrid, stated: !!sharding, range, set: (h, plan) => write(plan?.zeroStage ?? stated.zeroStage!.value, h) };
        stated.weightGather = FSDP_WEIGHT_GATHER;
      }
      stated.unshardedAccumulation = LIGHTNING_FSDP_ACCUMULATION;
      const policy = args.keywords.get('activation_checkpointing_policy') ?? args.keywords.get('activation_checkpointing');
      const checkpoints = !!policy && policy.type !== 'none';
      stated.recompute = {
        value: checkpoints ? 'full' : 'none', stated: !!policy, range: policy ? nodeRange(policy) : stated.anchor,
        matches: (p: RecomputeMode) => (p !== 'none') === checkpoints,
      };
      const off = args.keywords.get('cpu_offload');
      const on = off ? fsdpOffloadOn(off) : false;
      // Lightning passes it to FSDP as CPUOffload(offload_params=True): parameters and gradients move too.
      if (on !== undefined) stateJointOffload(stated, on, !!off, off ? nodeRange(off) : stated.anchor, (o) => setKeyword(text, layout, 'cpu_offload', o ? 'True' : 'False'));
    } else if (cls === 'DeepSpeedStrategy' && args.keywords.get('config')) {
      // Lightning ignores stage and the offload arguments when a config is given: the config says them.
      const config = args.keywords.get('config')!;
      const path = stringLiteral(config);
      const range = nodeRange(config);
      if (path !== undefined) stated.link = { path, range, key: 'DeepSpeedStrategy(config=…)' };
      else if (config.type === 'dictionary') readInlineDeepSpeed(config, stated, 'DeepSpeedStrategy(config=');
      else (stated.unmodelled ??= []).push({ range, short: 'DeepSpeed config not read', message: `DeepSpeedStrategy(config=${text.slice(range.start, Math.min(range.end, range.start + 40))}) is neither a file path nor a dict WAP can read: its ZeRO stage and offload are unknown, so this config's plan leaves them to the search` });
      stated.inexpressible.recompute = LIGHTNING_RECOMPUTE_ELSEWHERE;
    } else if (cls === 'DeepSpeedStrategy') {
      const overlap = args.keywords.get('overlap_comm');
      stated.serialSync = lightningDeepSpeedSerialSync(overlap?.type === 'true' ? true : overlap?.type === 'false' ? false : undefined);
      stated.weightGather = DEEPSPEED_WEIGHT_GATHER;
      const stage = args.keywords.get('stage');
      const z = stage ? intLiteral(stage) : 2;
      if (z !== undefined && z <= 3) {
        stated.zeroStage = { value: z as ZeroStage, stated: !!stage, range: stage ? nodeRange(stage) : stated.anchor, set: (n) => setKeyword(text, layout, 'stage', String(n)) };
      }
      for (const [keyword, dim, device] of [['offload_optimizer', 'cpuOffload', 'offload_optimizer_device'], ['offload_parameters', 'paramOffload', 'offload_params_device']] as const) {
        const n = args.keywords.get(keyword);
        stated[dim] = { value: n?.type === 'true', stated: !!n, range: n ? nodeRange(n) : stated.anchor, set: (o) => setKeyword(text, layout, keyword, o ? 'True' : 'False') };
        const where = args.keywords.get(device);
        if (n?.type === 'true' && where && stringLiteral(where) === 'nvme') (stated.unmodelled ??= []).push(nvmeUnmodelled(nodeRange(where), `DeepSpeedStrategy(${device}="nvme")`));
      }
      deepspeedParamOffloadRules(stated, 'DeepSpeedStrategy(offload_parameters=True) without offload_optimizer=True');
      stated.inexpressible.recompute = LIGHTNING_RECOMPUTE_ELSEWHERE;
    }
  }
  return stated;
}
