/**
 * What a Lightning `Trainer(...)` says about the training setup: strategy
 * ("fsdp", "deepspeed_stage_2", FSDPStrategy(sharding_strategy=…),
 * DeepSpeedStrategy(stage=…)), precision ("bf16-mixed"…) and
 * accumulate_grad_batches; and how to write the plan's values back.
 */
import type { Node } from 'web-tree-sitter';
import type { Precision, RecomputeMode, ZeroStage } from '../protocol/plan';
import { argsLayout, calleeName, callArgs, intLiteral, nodeRange, quoteOf, replaceRange, setKeyword, stringLiteral, type CallArgs } from './python';
import { PARAM_OFFLOAD_UNMODELLED, type StatedSetup } from './setup';
import type { TextEdit } from './types';

const ELSEWHERE = "Lightning's strategies here have no tensor, pipeline or context parallel degree; export the plan with `wap export --format torch-parallelize` and call its parallelize function from ModelParallelStrategy";

const FSDP_SHARDING: Record<string, { zero: ZeroStage; hybrid: boolean }> = {
  FULL_SHARD: { zero: 3, hybrid: false }, SHARD_GRAD_OP: { zero: 2, hybrid: false }, NO_SHARD: { zero: 0, hybrid: false },
  HYBRID_SHARD: { zero: 3, hybrid: true }, _HYBRID_SHARD_ZERO2: { zero: 2, hybrid: true },
};

function precisionOf(n: Node): Precision | undefined {
  const raw = stringLiteral(n) ?? (intLiteral(n) !== undefined ? String(intLiteral(n)) : undefined);
  if (raw === undefined) return undefined;
  const s = raw.toLowerCase();
  if (s.startsWith('bf16')) return 'bf16';
  if (s.startsWith('16')) return 'fp16';
  if (s.startsWith('32') || s.startsWith('64')) return 'fp32';
  if (s.startsWith('transformer-engine')) return 'fp8';
  return undefined;
}

const PRECISION_TEXT: Record<Precision, string> = { fp32: '32-true', tf32: '32-true', fp16: '16-mixed', bf16: 'bf16-mixed', fp8: 'transformer-engine' };

/**
 * Reads while the tree is alive; every `set` closure holds offsets and strings
 * only (argsLayout, replaceRange), so the edits stay right after the tree is freed.
 */
export function readLightningSetup(text: string, trainer: CallArgs, world: number | undefined): StatedSetup {
  const anchor = nodeRange(trainer.list);
  const trainerLayout = argsLayout(trainer);
  const stated: StatedSetup = {
    label: 'Lightning Trainer', anchor, world,
    inexpressible: { tensorParallel: ELSEWHERE, pipelineStages: ELSEWHERE, contextParallel: ELSEWHERE, sequenceParallel: ELSEWHERE },
  };
  const q = (n: Node | undefined): string => (n && n.type === 'string' ? quoteOf(n) : '"');

  const precisionNode = trainer.keywords.get('precision');
  const precision = precisionNode ? precisionOf(precisionNode) : 'fp32';
  if (precision) {
    const pq = q(precisionNode);
    stated.precision = {
      value: precision, stated: !!precisionNode, range: precisionNode ? nodeRange(precisionNode) : anchor,
      set: (p) => setKeyword(text, trainerLayout, 'precision', `${pq}${PRECISION_TEXT[p]}${pq}`),
    };
  }
  const accum = trainer.keywords.get('accumulate_grad_batches');
  const accumValue = accum ? intLiteral(accum) : 1;
  if (accumValue !== undefined) {
    stated.gradientAccumulation = { value: accumValue, stated: !!accum, range: accum ? nodeRange(accum) : anchor, set: (n) => setKeyword(text, trainerLayout, 'accumulate_grad_batches', String(n)) };
  }

  const strategy = trainer.keywords.get('strategy');
  const name = strategy && stringLiteral(strategy);
  const recomputeElsewhere = 'use FSDPStrategy(activation_checkpointing_policy={YourBlock}) or call model.gradient_checkpointing_enable() in the LightningModule';
  if (!strategy || (name !== undefined && /^(ddp|auto|dp)/.test(name))) {
    // DDP: no sharding. Writing a stage switches to the strategy string that has it.
    const sq = q(strategy);
    const write = (z: ZeroStage, offload: boolean): TextEdit[] | undefined => {
      const s = z === 0 ? 'ddp' : z === 3 ? (offload ? undefined : 'fsdp') : `deepspeed_stage_${z}${offload ? '_offload' : ''}`;
      return s ? setKeyword(text, trainerLayout, 'strategy', `${sq}${s}${sq}`) : undefined;
    };
    stated.zeroStage = { value: 0, stated: !!strategy, range: strategy ? nodeRange(strategy) : anchor, set: (z) => write(z, false) };
    stated.inexpressible.recompute = recomputeElsewhere;
  } else if (name !== undefined && /^(deepspeed|fsdp)/.test(name)) {
    const m = /^deepspeed(?:_stage_(\d))?(_offload)?/.exec(name);
    const zero = (m ? Number(m[1] ?? 2) : 3) as ZeroStage;
    const offload = !!m?.[2] || name === 'fsdp_cpu_offload';
    const range = nodeRange(strategy);
    const sq = quoteOf(strategy);
    const family = m ? 'deepspeed' : 'fsdp';
    const write = (z: ZeroStage, off: boolean): TextEdit[] | undefined => {
      if (family === 'fsdp' && z === 3) return replaceRange(range, `${sq}${off ? 'fsdp_cpu_offload' : 'fsdp'}${sq}`);
      if (z === 0) return replaceRange(range, `${sq}ddp${sq}`);
      return replaceRange(range, `${sq}deepspeed_stage_${z}${off ? '_offload' : ''}${sq}`);
    };
    // One string says both: each writes the plan's value of the other, so the two edits agree.
    stated.zeroStage = { value: zero, stated: true, range, set: (z, plan) => write(z, plan?.cpuOffload ?? stated.cpuOffload?.value ?? false) };
    stated.cpuOffload = { value: offload, stated: true, range, set: (o, plan) => write(plan?.zeroStage ?? stated.zeroStage!.value, o) };
    stated.anchor = range;
    stated.inexpressible.recompute = recomputeElsewhere;
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
          const entry = Object.entries(FSDP_SHARDING).find(([, v]) => v.zero === z && v.hybrid === h);
          return entry ? setKeyword(text, layout, 'sharding_strategy', `${sq}${entry[0]}${sq}`) : undefined;
        };
        const range = sharding ? nodeRange(sharding) : stated.anchor;
        // One keyword says both: each writes the plan's value of the other, so the two edits agree.
        stated.zeroStage = { value: shard.zero, stated: !!sharding, range, set: (z, plan) => write(z, plan?.hybridShard ?? stated.hybridShard?.value ?? false) };
        stated.hybridShard = { value: shard.hybrid, stated: !!sharding, range, set: (h, plan) => write(plan?.zeroStage ?? stated.zeroStage!.value, h) };
      }
      const policy = args.keywords.get('activation_checkpointing_policy') ?? args.keywords.get('activation_checkpointing');
      const checkpoints = !!policy && policy.type !== 'none';
      stated.recompute = {
        value: checkpoints ? 'full' : 'none', stated: !!policy, range: policy ? nodeRange(policy) : stated.anchor,
        matches: (p: RecomputeMode) => (p !== 'none') === checkpoints,
      };
      const off = args.keywords.get('cpu_offload');
      stated.cpuOffload = { value: off?.type === 'true', stated: !!off, range: off ? nodeRange(off) : stated.anchor, set: (o) => setKeyword(text, layout, 'cpu_offload', o ? 'True' : 'False') };
      // Lightning passes it to FSDP as CPUOffload(offload_params=True): parameters and gradients move too.
      if (off?.type === 'true') stated.unmodelled = [{ range: nodeRange(off), short: 'parameter offload', message: `FSDPStrategy(cpu_offload=True) keeps parameters and gradients in CPU memory as well as the optimizer state; ${PARAM_OFFLOAD_UNMODELLED}` }];
    } else if (cls === 'DeepSpeedStrategy') {
      const stage = args.keywords.get('stage');
      const z = stage ? intLiteral(stage) : 2;
      if (z !== undefined && z <= 3) {
        stated.zeroStage = { value: z as ZeroStage, stated: !!stage, range: stage ? nodeRange(stage) : stated.anchor, set: (n) => setKeyword(text, layout, 'stage', String(n)) };
      }
      const off = args.keywords.get('offload_optimizer');
      stated.cpuOffload = { value: off?.type === 'true', stated: !!off, range: off ? nodeRange(off) : stated.anchor, set: (o) => setKeyword(text, layout, 'offload_optimizer', o ? 'True' : 'False') };
      const params = args.keywords.get('offload_parameters');
      if (params?.type === 'true') stated.unmodelled = [{ range: nodeRange(params), short: 'parameter offload', message: `DeepSpeedStrategy(offload_parameters=True): ${PARAM_OFFLOAD_UNMODELLED}` }];
      stated.inexpressible.recompute = recomputeElsewhere;
    }
  }
  return stated;
}
