/**
 * The precision gradients are held and reduced in, where the framework decides it. Megatron-LM's: at bf16 it accumulates and all-reduces gradients in an fp32 buffer unless
 * --grad-reduce-in-bf16 (arguments.py sets accumulate_allreduce_grads_in_fp32; param_and_grad_buffer.py then holds
 * the grads as torch.float), at fp16 only with --accumulate-allreduce-grads-in-fp32. WAP reads it as the
 * 'fp32-gradients' AMP style: 2 + 4 + 12 = 18 bytes a parameter with Adam, the gradients' 4 both held and reduced.
 * torchtitan's FSDP2 reduce-scatters in [training] mixed_precision_reduce, float32 by default (gradientReduceInFp32).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { initConfigReaders, pinnedOptions, readConfigSetups } from '../../src/configs';
import { megatronArguments } from '../../src/configs/megatronExport';
import { planModel, resolveCluster } from '../../src/planner/index';
import { precisionBytes } from '../../src/planner/memory/precision';
import { gptModel } from '../planner/gptSpec';
import { llamaPlan } from './llamaPlan';

before(() => initConfigReaders());
const LAUNCH = join(__dirname, '..', 'fixtures', 'megatron-moe', 'train_qwen3_30b_a3b.sh');
const TEXT = readFileSync(LAUNCH, 'utf8');
const style = (text: string) => readConfigSetups('pretrain.sh', text).find((s) => s.label === 'Megatron-LM launch')!.ampStyle;

test('the launch’s gradient precision: bf16 reduces in fp32 unless --grad-reduce-in-bf16; fp16 only with --accumulate-allreduce-grads-in-fp32', () => {
  assert.deepEqual(style(TEXT)?.value, 'fp32-gradients');
  assert.match(style(TEXT)!.why, /at bf16: gradients accumulated and all-reduced in fp32/);
  assert.equal(style(TEXT.replace('    --bf16\n', '    --bf16\n    --grad-reduce-in-bf16\n'))?.value, 'master-weights');
  const fp16 = TEXT.replace('--bf16', '--fp16');
  assert.equal(style(fp16)?.value, 'master-weights');
  assert.equal(style(fp16.replace('    --fp16\n', '    --fp16\n    --accumulate-allreduce-grads-in-fp32\n'))?.value, 'fp32-gradients');
  // "Your config" plans with it.
  const s = readConfigSetups('pretrain.sh', TEXT).find((x) => x.label === 'Megatron-LM launch')!;
  assert.equal(pinnedOptions({ batch: 256, objective: 'throughput', strategies: 'all', optimizer: 'adam' }, s, LAUNCH).ampStyle, 'fp32-gradients');
});

test('18 bytes a parameter: a bf16 GPT planned with fp32 gradients holds and reduces them at 4 bytes', () => {
  assert.deepEqual(precisionBytes('bf16', 'fp32-gradients'), { weight: 2, castCopy: 0, master: 4, gradient: 4, activation: 2, optimizerState: 4 });
  const model = gptModel({ layers: 4, hidden: 1024, heads: 16, seq: 1024, name: 'gpt-small' });
  const cluster = resolveCluster('a100x8');
  const plan = (ampStyle: 'master-weights' | 'fp32-gradients') => {
    const out = planModel(model, cluster, { batch: 64, objective: 'throughput', strategies: 'all', optimizer: 'adam', precision: 'bf16', ampStyle, gpus: 8, pins: { dataParallel: 8, tensorParallel: 1, pipelineStages: 1, zeroStage: 0, recompute: 'none', microBatch: 8 } });
    assert.ok(out.feasible, out.feasible ? '' : out.reason);
    return out.plan;
  };
  const [sixteen, thirtyTwo] = [plan('master-weights'), plan('fp32-gradients')];
  const params = model.totals.params;
  assert.ok(Math.abs(sixteen.setup!.memoryPerGpu.gradients - 2 * params) < 1e-6 * params, `${sixteen.setup!.memoryPerGpu.gradients}`);
  assert.ok(Math.abs(thirtyTwo.setup!.memoryPerGpu.gradients - 4 * params) < 1e-6 * params, `${thirtyTwo.setup!.memoryPerGpu.gradients}`);
  assert.equal(thirtyTwo.setup!.memoryPerGpu.weights, sixteen.setup!.memoryPerGpu.weights);
  assert.equal(thirtyTwo.setup!.memoryPerGpu.optimizer, sixteen.setup!.memoryPerGpu.optimizer);
  // Twice the bytes through the all-reduce: the step is no faster.
  assert.ok(thirtyTwo.stepTimeMs >= sixteen.stepTimeMs, `${thirtyTwo.stepTimeMs} vs ${sixteen.stepTimeMs} ms`);
});

test('the Megatron export: fp16 with fp32 gradients asks for them; a bf16 plan priced with 16-bit gradients says how Megatron runs', () => {
  const fp16 = megatronArguments(llamaPlan({ precision: 'fp16', ampStyle: 'fp32-gradients', zeroStage: 1, tensorParallel: 1, dataParallel: 8 }));
  assert.ok(fp16.value.includes('--accumulate-allreduce-grads-in-fp32'), fp16.value.join(' '));
  const bf16 = megatronArguments(llamaPlan({ precision: 'bf16', ampStyle: 'master-weights', zeroStage: 1, tensorParallel: 1, dataParallel: 8 }));
  assert.ok(!bf16.value.includes('--accumulate-allreduce-grads-in-fp32'));
  assert.ok(bf16.notes.some((n) => /fp32 master weights and fp32 gradients: plan with --amp-style fp32-gradients/.test(n)), bf16.notes.join('\n'));
  const matching = megatronArguments(llamaPlan({ precision: 'bf16', ampStyle: 'fp32-gradients', zeroStage: 1, tensorParallel: 1, dataParallel: 8 }));
  assert.ok(!matching.notes.some((n) => /--amp-style/.test(n)), matching.notes.join('\n'));
});

test('torchtitan reduce-scatters in fp32 by default (mixed_precision_reduce): read, carried to the plan, and four bytes a parameter through the reduce-scatter', async () => {
  const { withStatedFramework } = await import('../../src/configs/evaluate');
  const { gradSync } = await import('../../src/planner/search/parallel3d/gradientSync');
  const { costsFor, linksFor, stageTime } = await import('../../src/planner/search/parallel3d/estimate');
  const { searchContext } = await import('../../src/planner/search/parallel3d/plan');
  const { repeatedTransformer } = await import('../../src/planner/search/parallel3d/blocks');
  const titan = (extra: string) => readConfigSetups('llama3_8b.toml', `[training]\nlocal_batch_size = 2\n${extra}[parallelism]\ndata_parallel_shard_degree = -1\n`).find((s) => s.label.includes('torchtitan'))!;
  assert.match(titan('').gradientReduceInFp32?.why ?? '', /float32 by default/);
  assert.equal(titan('mixed_precision_reduce = "bfloat16"\n').gradientReduceInFp32, undefined);
  assert.equal(titan('mixed_precision_param = "float32"\n').gradientReduceInFp32, undefined, 'an fp32 run has nothing to widen');
  const options = withStatedFramework({ batch: 64, objective: 'throughput', strategies: 'all', optimizer: 'adam' }, titan(''), 'llama3_8b.toml');
  assert.equal(options.gradientReduceInFp32, true);
  assert.match(options.gradientReduceSource ?? '', /^llama3_8b\.toml \(/);
  // The block-stack estimate's sync: a ZeRO-3 reduce-scatter of 4-byte gradients takes what one of twice the 2-byte ones does.
  const model = gptModel({ layers: 4, hidden: 1024, heads: 16, seq: 1024, name: 'gpt-small' });
  const cluster = resolveCluster('a100x8');
  const structure = repeatedTransformer(model)!;
  const base = { batch: 64, objective: 'throughput' as const, strategies: 'all' as const, optimizer: 'adam' as const, precision: 'bf16' as const };
  const c = { n: 8, dp: 8, tp: 1, pp: 1, cp: 1, ep: 1, v: 1, sp: false, mb: 8, microBatches: 1, zero: 3 as const, recompute: 'none' as const, blocksPerStage: [4] };
  const syncOf = (fp32: boolean) => {
    const { ctx } = searchContext(model, structure, cluster, { ...base, ...(fp32 ? { gradientReduceInFp32: true } : {}) });
    const links = linksFor(ctx, c);
    const stage = stageTime(ctx, c, costsFor(ctx, { tp: 1, cp: 1, ep: 1, sp: false, mb: 8 }, links), links, 0);
    return { sync: gradSync(ctx, c, stage, links), doubled: gradSync(ctx, c, { ...stage, params: 2 * stage.params }, links) };
  };
  const [wide, narrow] = [syncOf(true), syncOf(false)];
  assert.ok(Math.abs(wide.sync.totalMs - narrow.doubled.totalMs) < 1e-9, `${wide.sync.totalMs} vs ${narrow.doubled.totalMs} ms`);
  assert.ok(wide.sync.totalMs > narrow.sync.totalMs);
  // The plan says which dtype its reduce-scatters carried, and who says so.
  const planned = planModel(model, cluster, { ...base, gpus: 8, gradientReduceInFp32: true, gradientReduceSource: 'test', pins: { dataParallel: 8, tensorParallel: 1, pipelineStages: 1, zeroStage: 3, recompute: 'none', microBatch: 8 } });
  assert.ok(planned.feasible && planned.diagnostics.some((d) => /reduce-scattered in fp32 \(test\)/.test(d.message)));
});

test('a torch script’s FSDP2 policy with reduce_dtype=torch.float32 reduce-scatters in fp32; without it, in the parameters’ dtype', () => {
  const script = (policy: string) => [
    'import torch',
    'from torch.distributed.fsdp import fully_shard, MixedPrecisionPolicy',
    'from model import Transformer',
    'model = Transformer()',
    `mp = MixedPrecisionPolicy(${policy})`,
    'for block in model.layers:',
    '    fully_shard(block, mp_policy=MixedPrecisionPolicy(' + policy + '))',
    'fully_shard(model, mp_policy=MixedPrecisionPolicy(' + policy + '))',
    '',
  ].join('\n');
  const read = (text: string) => readConfigSetups('train_fsdp2.py', text).find((s) => s.precision)!;
  const wide = read(script('param_dtype=torch.bfloat16, reduce_dtype=torch.float32'));
  assert.equal(wide.precision?.value, 'bf16');
  assert.match(wide.gradientReduceInFp32?.why ?? '', /MixedPrecisionPolicy\(reduce_dtype=float32\)/);
  assert.equal(read(script('param_dtype=torch.bfloat16')).gradientReduceInFp32, undefined);
  assert.equal(read(script('param_dtype=torch.float32, reduce_dtype=torch.float32')).gradientReduceInFp32, undefined, 'fp32 training reduces in fp32 anyway');
});
