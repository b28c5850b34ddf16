/**
 * Expert parallelism in the block-stack search, on the graph the Hugging Face frontend builds for Mixtral
 * (experts as layers marked `expert: {index, count}`, the router `moe: {role: 'router'}`): EP divides the
 * experts' parameters, not the router's or attention's, and pays four all-to-alls of the routed tokens once
 * per MoE block.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { expertCount, expertOf, moeOf } from '../../src/core/moe';
import { analyzeSource } from '../../src/frontends/index';
import { analyticalTimes } from '../../src/planner/cost/compute';
import { planModel, resolveCluster } from '../../src/planner/index';
import { allToAllMs } from '../../src/planner/search/parallel3d/adapters';
import { blockShape, repeatedTransformer } from '../../src/planner/search/parallel3d/blocks';
import { costsFor, linksFor } from '../../src/planner/search/parallel3d/estimate';
import { searchContext } from '../../src/planner/search/parallel3d/plan';
import type { PlanReport } from '../../src/protocol/plan';
import type { PlanOptions } from '../../src/protocol/planOptions';
import { smallMixtral } from './plannedExamples';

const SEQ = 512;
const mixtral = () => smallMixtral(SEQ);
const options = (pins: PlanOptions['pins']): PlanOptions => ({ batch: 64, objective: 'throughput', strategies: 'all', optimizer: 'adam', precision: 'bf16', gpus: 16, pins });

test('the frontend’s expert and router attributes are what the planner reads', async () => {
  const model = await mixtral();
  const w1 = model.layers.find((l) => l.name === 'model.layers.0.block_sparse_moe.experts.3.w1')!;
  // Grouped: no experts_implementation named, so transformers 5's default grouped_mm (expertsKernel.ts).
  assert.deepEqual(expertOf(w1), { index: 3, count: 8, grouped: true });
  const gate = model.layers.find((l) => l.name === 'model.layers.0.block_sparse_moe.gate')!;
  assert.deepEqual(moeOf(gate), { experts: 8, topK: 2, role: 'router' });
  assert.equal(expertCount(gate), 8);
  const q = model.layers.find((l) => l.name === 'model.layers.0.self_attn.q_proj')!;
  assert.equal(expertCount(q), 0);
  assert.equal(moeOf({ attrs: { moe: { experts: 8, topK: 2, role: 'other' } } }), undefined, 'an unknown role is not guessed');
});

test('Mixtral --ep 2 on 16 H100s: honoured, the experts’ weights halve, and one MoE block pays 4 all-to-alls of its top-2 tokens', async () => {
  const model = await mixtral();
  const cluster = resolveCluster('h100x16-2node', {});
  const pins = { dataParallel: 16, tensorParallel: 1, pipelineStages: 1, zeroStage: 0 as const, recompute: 'none' as const, microBatch: 4 };
  const ep2Outcome = planModel(model, cluster, options({ ...pins, expertParallel: 2 }));
  const ep1Outcome = planModel(model, cluster, options({ ...pins, expertParallel: 1 }));
  assert.ok(ep2Outcome.feasible, ep2Outcome.feasible ? '' : ep2Outcome.reason);
  assert.ok(ep1Outcome.feasible, ep1Outcome.feasible ? '' : ep1Outcome.reason);
  const [ep2, ep1] = [ep2Outcome, ep1Outcome];
  assert.equal(ep2.plan.setup!.expertParallel, 2);
  assert.equal(ep1.plan.setup!.expertParallel, 1);
  // Master weights: 2 B a parameter. The experts' parameters are divided by 2; everything else is whole.
  const sum = (f: (l: (typeof model.layers)[number]) => boolean) => model.layers.filter(f).reduce((a, l) => a + l.workload.params, 0);
  const expertParams = sum((l) => !!expertOf(l));
  const rest = sum((l) => !expertOf(l));
  assert.ok(expertParams > rest, `${expertParams} expert vs ${rest} other parameters`);
  const weights = (r: PlanReport) => r.plan.setup!.memoryPerGpu.weights;
  assert.ok(Math.abs(weights(ep1) - 2 * (expertParams + rest)) / weights(ep1) < 1e-9, `${weights(ep1)}`);
  assert.ok(Math.abs(weights(ep2) - 2 * (expertParams / 2 + rest)) / weights(ep2) < 1e-9, `${weights(ep2)}`);

  const structure = repeatedTransformer(model)!;
  const { ctx } = searchContext(model, structure, cluster, options(pins));
  const c = { dp: 16, tp: 1, cp: 1, ep: 2 };
  const costs = costsFor(ctx, { tp: 1, cp: 1, ep: 2, sp: false, mb: 4 }, linksFor(ctx, c));
  const routed = 4 * SEQ * 1024 * 2 * 2; // micro-batch × tokens × hidden × bf16 bytes × top-2
  assert.ok(Math.abs(costs.block.epMs - 4 * allToAllMs(routed, 2, linksFor(ctx, c).ep)) < 1e-9, `${costs.block.epMs} ms per block`);
  assert.equal(costsFor(ctx, { tp: 1, cp: 1, ep: 1, sp: false, mb: 4 }, linksFor(ctx, { ...c, ep: 1 })).block.epMs, 0);
});

test('expert parallelism runs each GPU’s experts as ep-times-taller GEMMs: same FLOPs, fewer launches, priced as one expert on ep micro-batches', async () => {
  const manyExperts = [
    'from transformers import MixtralConfig, MixtralForCausalLM',
    'config = MixtralConfig(hidden_size=1024, intermediate_size=512, num_hidden_layers=4, num_attention_heads=16, num_key_value_heads=4, num_local_experts=64, num_experts_per_tok=2, vocab_size=1000)',
    'model = MixtralForCausalLM(config)',
    '',
  ].join('\n');
  const model = (await analyzeSource('mixtral64.py', manyExperts, { sequenceLength: SEQ })).models[0]!;
  const cluster = resolveCluster('h100x16-2node', {});
  const pins = { dataParallel: 16, tensorParallel: 1, pipelineStages: 1, zeroStage: 0 as const, recompute: 'none' as const, microBatch: 1 };
  const structure = repeatedTransformer(model)!;
  const { ctx } = searchContext(model, structure, cluster, options(pins));
  const blockAt = (ep: number) => costsFor(ctx, { tp: 1, cp: 1, ep, sp: false, mb: 1 }, linksFor(ctx, { dp: 16, tp: 1, cp: 1, ep })).block;
  const [one, eight] = [blockAt(1), blockAt(8)];
  // One block's expert layers, priced directly: at EP 1 each of the 64 experts on one micro-batch's T·2/64 tokens;
  // at EP 8 each GPU holds 8 of them, each on the tokens eight GPUs route to it.
  const experts = structure.block.filter((l) => !!expertOf(l));
  assert.equal(experts.filter((l) => /\.w1$/.test(l.name)).length, 64);
  const gpu = cluster.gpus[0]!;
  const priced = (samples: number, fraction: number) => experts.reduce((a, l) => {
    const t = analyticalTimes(l, gpu, samples, 1, 1, 2, 'bf16', { attention: 'fused', expertParallel: samples });
    return a + (t.forwardMs + t.backwardMs) * fraction;
  }, 0);
  const rest = (b: typeof one) => b.forwardMs + b.backwardMs;
  const expertsAtOne = priced(1, 1);
  const expertsAtEight = priced(8, 1 / 8);
  assert.ok(Math.abs(rest(one) - rest(eight) - (expertsAtOne - expertsAtEight)) < 1e-6 * rest(one), `${rest(one)} vs ${rest(eight)} ms; experts ${expertsAtOne} vs ${expertsAtEight}`);
  // 64 experts × 5 kernels on 16 tokens each are launch- and shape-bound; 8 of them on 128 tokens each are not.
  assert.ok(expertsAtEight < 0.5 * expertsAtOne, `experts at EP 8 ${expertsAtEight} ms vs EP 1 ${expertsAtOne} ms`);
});

test('tensor parallelism keeps routers and per-token gates whole: Qwen2-MoE’s 60-expert router and 1-wide shared_expert_gate do not forbid TP 2', async () => {
  const qwenMoe = [
    'from transformers import Qwen2MoeConfig, Qwen2MoeForCausalLM',
    'config = Qwen2MoeConfig(hidden_size=1024, intermediate_size=2816, moe_intermediate_size=256, shared_expert_intermediate_size=1024, num_experts=60, num_experts_per_tok=4, num_hidden_layers=4, num_attention_heads=16, num_key_value_heads=16, vocab_size=1000)',
    'model = Qwen2MoeForCausalLM(config)',
    '',
  ].join('\n');
  const model = (await analyzeSource('qwen2moe.py', qwenMoe, { sequenceLength: SEQ })).models[0]!;
  const gate = model.layers.find((l) => l.name === 'model.layers.0.mlp.shared_expert_gate')!;
  assert.equal(gate.attrs.outFeatures, 1);
  const structure = repeatedTransformer(model)!;
  const shape = blockShape(structure);
  assert.ok(!shape.linearDims.includes(1) && !shape.linearDims.includes(60), `${shape.linearDims}`);
  const cluster = resolveCluster('h100x8', {});
  const out = planModel(model, cluster, { ...options({ tensorParallel: 2, dataParallel: 4, pipelineStages: 1, expertParallel: 1, zeroStage: 0, recompute: 'none', microBatch: 4 }), gpus: 8 });
  assert.ok(out.feasible, out.feasible ? '' : out.reason);
  assert.equal(out.plan.setup!.tensorParallel, 2);
  // Held whole: the router's 1024 × 60, the gate's 1024 and the two RMSNorms' 1024 each per block are on every rank;
  // the projections and experts are halved.
  const { ctx } = searchContext(model, structure, cluster, options({ tensorParallel: 2 }));
  const at = (tp: number) => costsFor(ctx, { tp, cp: 1, ep: 1, sp: false, mb: 4 }, linksFor(ctx, { dp: 1, tp, cp: 1, ep: 1 })).block.params;
  const whole = 1024 * 60 + 1024 + 2 * 1024;
  assert.ok(Math.abs(at(2) - ((at(1) - whole) / 2 + whole)) < 1e-6 * at(1), `${at(1)} → ${at(2)}`);
});

test('ZeRO shards the experts over the ranks that hold the same experts: with DP 16, EP 8 leaves each GPU the optimizer state EP 1 does', async () => {
  const model = await mixtral();
  const cluster = resolveCluster('h100x16-2node', {});
  const memoryAt = (ep: number) => {
    const out = planModel(model, cluster, options({ dataParallel: 16, tensorParallel: 1, pipelineStages: 1, zeroStage: 1, hybridShard: false, recompute: 'none', microBatch: 4, expertParallel: ep }));
    assert.ok(out.feasible, out.feasible ? '' : out.reason);
    assert.equal(out.plan.setup!.expertParallel, ep);
    return out.plan.setup!.memoryPerGpu;
  };
  const [one, eight] = [memoryAt(1), memoryAt(8)];
  // Each expert's state is held by 16 / 8 = 2 ranks, which ZeRO-1 splits it between: a sixteenth either way. Sharding
  // the EP share over all 16 ranks again counted an eighth of the experts' optimizer state.
  assert.ok(Math.abs(eight.optimizer - one.optimizer) < 1e-9 * one.optimizer, `${one.optimizer} vs ${eight.optimizer}`);
  // Weights and gradients are not sharded at ZeRO-1: EP 8 holds an eighth of the experts'.
  const expertParams = model.layers.filter((l) => !!expertOf(l)).reduce((a, l) => a + l.workload.params, 0);
  assert.ok(Math.abs(one.weights - eight.weights - 2 * expertParams * (1 - 1 / 8)) < 1e-6 * one.weights, `${one.weights} vs ${eight.weights}`);
});
