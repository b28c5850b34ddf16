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
import { repeatedTransformer } from '../../src/planner/search/parallel3d/blocks';
import { costsFor, linksFor } from '../../src/planner/search/parallel3d/estimate';
import { searchContext } from '../../src/planner/search/parallel3d/plan';
import type { PlanReport } from '../../src/protocol/plan';
import type { PlanOptions } from '../../src/protocol/planOptions';

const SEQ = 512;
const source = [
  'from transformers import MixtralConfig, MixtralForCausalLM',
  'config = MixtralConfig(hidden_size=1024, intermediate_size=3584, num_hidden_layers=4, num_attention_heads=16, num_key_value_heads=4, num_local_experts=8, num_experts_per_tok=2, vocab_size=32000)',
  'model = MixtralForCausalLM(config)',
  '',
].join('\n');
const mixtral = async () => (await analyzeSource('mixtral.py', source, { sequenceLength: SEQ })).models[0]!;
const options = (pins: PlanOptions['pins']): PlanOptions => ({ batch: 64, objective: 'throughput', strategies: 'all', optimizer: 'adam', precision: 'bf16', gpus: 16, pins });

test('the frontend’s expert and router attributes are what the planner reads', async () => {
  const model = await mixtral();
  const w1 = model.layers.find((l) => l.name === 'model.layers.0.block_sparse_moe.experts.3.w1')!;
  assert.deepEqual(expertOf(w1), { index: 3, count: 8 });
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
    const t = analyticalTimes(l, gpu, samples, 1, 1, 2, 'bf16', { attention: 'fused' });
    return a + (t.forwardMs + t.backwardMs) * fraction;
  }, 0);
  const rest = (b: typeof one) => b.forwardMs + b.backwardMs;
  const expertsAtOne = priced(1, 1);
  const expertsAtEight = priced(8, 1 / 8);
  assert.ok(Math.abs(rest(one) - rest(eight) - (expertsAtOne - expertsAtEight)) < 1e-6 * rest(one), `${rest(one)} vs ${rest(eight)} ms; experts ${expertsAtOne} vs ${expertsAtEight}`);
  // 64 experts × 5 kernels on 16 tokens each are launch- and shape-bound; 8 of them on 128 tokens each are not.
  assert.ok(expertsAtEight < 0.5 * expertsAtOne, `experts at EP 8 ${expertsAtEight} ms vs EP 1 ${expertsAtOne} ms`);
});
