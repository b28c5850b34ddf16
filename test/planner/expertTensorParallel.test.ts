/**
 * Expert tensor parallelism (Megatron-Core's --expert-tensor-parallel-size, torchtitan's expert_tensor_parallel_degree):
 * routed experts split over their own tensor group, apart from the attention's. Checked on the graphs the Hugging Face
 * frontend builds (Mixtral, Qwen1.5-MoE, Llama 2, BERT from their config.json fixtures) against hand arithmetic.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { expertOf } from '../../src/core/moe';
import { planModel, resolveCluster } from '../../src/planner/index';
import { allGatherMs, allToAllMs } from '../../src/planner/search/parallel3d/adapters';
import { blockShape, repeatedTransformer } from '../../src/planner/search/parallel3d/blocks';
import { costsFor, linksFor } from '../../src/planner/search/parallel3d/estimate';
import { expertDataParallelOf, expertLayoutFits, expertShardsOver } from '../../src/planner/search/parallel3d/expertLayout';
import { searchContext } from '../../src/planner/search/parallel3d/plan';
import type { PlanOptions } from '../../src/protocol/planOptions';
import { smallMixtral } from './plannedExamples';
import { hfConfigModel } from '../frontends/hfFixtures';

const SEQ = 1024;
const mixtral = () => smallMixtral(SEQ);
const options = (pins: PlanOptions['pins'], gpus = 16): PlanOptions => ({ batch: 64, objective: 'throughput', strategies: 'all', optimizer: 'adam', precision: 'bf16', gpus, pins });

test('residual branches are the adds on the residual stream: a Llama block has two (its rotary adds are not), BERT’s post-norm block two, an MoE block one dispatched branch unless a shared expert gathers its own', () => {
  const shapeOf = (dir: string) => blockShape(repeatedTransformer(hfConfigModel(dir, { sequenceLength: 128 }))!);
  const llama = shapeOf('llama-2-7b');
  // Counting every add gave 4 (q and k rotary halves), which doubled the tensor-parallel all-reduces Megatron runs.
  assert.deepEqual([llama.residualBranches, llama.dispatchedBranches], [2, 0]);
  assert.equal(shapeOf('bert-base-uncased').residualBranches, 2, 'the second add reads the first’s LayerNorm');
  const mixtralShape = shapeOf('mixtral-8x7b');
  assert.deepEqual([mixtralShape.residualBranches, mixtralShape.dispatchedBranches], [2, 1], 'the experts’ combine is no branch');
  const qwenMoe = shapeOf('qwen1.5-moe-a2.7b');
  assert.deepEqual([qwenMoe.residualBranches, qwenMoe.dispatchedBranches], [2, 0], 'a shared expert is a tensor-parallel MLP in the MoE branch');
});

test('the expert layout: edp = tp·cp·dp ÷ (etp·ep), ZeRO shards an expert over the shard group widened by tp ÷ etp and divided by ep', () => {
  // Megatron-Core's example: TP 2, DP 8 (16 GPUs), EP 8. At ETP 2 (the default) one copy of the experts spans all 16.
  assert.equal(expertDataParallelOf({ tp: 2, cp: 1, dp: 8, ep: 8 }), 1);
  assert.equal(expertDataParallelOf({ tp: 2, cp: 1, dp: 8, ep: 8, etp: 1 }), 2);
  assert.equal(expertShardsOver(8, { tp: 2, cp: 1, dp: 8, ep: 8, etp: 1 }), 2);
  assert.equal(expertShardsOver(8, { tp: 2, cp: 1, dp: 8, ep: 8 }), 1);
  assert.equal(expertShardsOver(16, { tp: 1, cp: 1, dp: 16, ep: 1 }), 16, 'no expert parallelism: the dense shard group');
  assert.ok(expertLayoutFits({ tp: 2, cp: 1, dp: 4, ep: 8, etp: 1 }), 'at ETP 1 the expert group reaches across the tensor ranks');
  assert.ok(!expertLayoutFits({ tp: 2, cp: 1, dp: 4, ep: 8 }), 'at ETP 2, EP 8 needs 8 data ranks');
  assert.ok(!expertLayoutFits({ tp: 4, cp: 1, dp: 4, ep: 2, etp: 3 }), 'the expert tensor group lies inside the attention’s');
});

test('ETP 1 at TP 2: whole experts (each GPU holds twice the expert weights), the same expert FLOPs per GPU, and no expert-tensor gather', async () => {
  const model = await mixtral();
  const cluster = resolveCluster('h100x16-2node', {});
  const structure = repeatedTransformer(model)!;
  const { ctx } = searchContext(model, structure, cluster, options({ tensorParallel: 2 }));
  const c = { dp: 8, tp: 2, cp: 1, ep: 8 };
  const at = (etp: number) => {
    const links = linksFor(ctx, { ...c, etp });
    return { block: costsFor(ctx, { tp: 2, cp: 1, ep: 8, etp, sp: true, mb: 2 }, links).block, links };
  };
  const [split, whole] = [at(2), at(1)];
  const expertParams = structure.block.filter((l) => !!expertOf(l)).reduce((a, l) => a + l.workload.params, 0);
  // Each GPU holds 8/8 = 1 expert: half of it at ETP 2, all of it at ETP 1.
  assert.ok(Math.abs(whole.block.expertParams - expertParams / 8) < 1e-6 * expertParams, `${whole.block.expertParams}`);
  assert.ok(Math.abs(split.block.expertParams - expertParams / 16) < 1e-6 * expertParams, `${split.block.expertParams}`);
  // The dispatcher: four all-to-alls of each rank's T/tp top-2 tokens in both; at ETP 2 also four gathers of the
  // received tokens over the expert tensor pair (Megatron-Core's gather_from_sequence_parallel_region).
  const perRank = (2 * SEQ * 1024 * 2 * 2) / 2; // micro-batch × tokens × hidden × bf16 × top-2 ÷ tp
  const gather = 4 * allGatherMs(perRank * 2, 2, split.links.etp);
  assert.ok(Math.abs(whole.block.epMs - 4 * allToAllMs(perRank, 8, whole.links.ep)) < 1e-9, `${whole.block.epMs} ms`);
  assert.ok(Math.abs(split.block.epMs - 4 * allToAllMs(perRank, 8, split.links.ep) - gather) < 1e-9, `${split.block.epMs} ms`);
  // Megatron's expert order is tp-ep-dp: at ETP 2 the 8 expert ranks are 2 apart and span both nodes; at ETP 1 they
  // are one node's 8 GPUs.
  assert.deepEqual([split.links.ep.fabric.nodes, whole.links.ep.fabric.nodes], [2, 1]);
  // The MoE branch moves its tokens by the dispatcher: of Mixtral's two residual branches, only attention's gathers.
  const attentionOnly = split.block.tpForwardMs;
  const residual = (2 * SEQ * 1024 * 2); // micro-batch × tokens × hidden × bf16
  assert.ok(Math.abs(attentionOnly - 2 * allGatherMs(residual, 2, split.links.tp)) < 1e-9, `${attentionOnly} ms`);
});

test('the search tries ETP 1 beside ETP = TP and reports it; pins are honoured, and impossible ones named', async () => {
  const model = await mixtral();
  const cluster = resolveCluster('h100x16-2node', {});
  const plan = (pins: PlanOptions['pins']) => planModel(model, cluster, options({ pipelineStages: 1, zeroStage: 1, recompute: 'none', microBatch: 2, ...pins }));
  for (const etp of [1, 2]) {
    const out = plan({ tensorParallel: 2, expertParallel: 8, expertTensorParallel: etp });
    assert.ok(out.feasible, out.feasible ? '' : out.reason);
    assert.deepEqual([out.plan.setup!.tensorParallel, out.plan.setup!.expertParallel, out.plan.setup!.expertTensorParallel, out.plan.setup!.sequenceParallel], [2, 8, etp, true]);
    assert.ok(out.diagnostics.some((d) => /experts priced under balanced routing/.test(d.message)), 'an MoE plan says what it assumes of routing');
  }
  // EP 8 on 8 data ranks × TP 2: at ETP 1 EP 16 fits too, the groups reaching across the tensor pairs.
  const wide = plan({ tensorParallel: 2, expertParallel: 8, expertTensorParallel: 1, dataParallel: 8 });
  assert.ok(wide.feasible);
  const refused = (pins: PlanOptions['pins'], flag: RegExp) => {
    const out = plan(pins);
    assert.ok(!out.feasible, JSON.stringify(pins));
    assert.match(out.reason, flag);
  };
  refused({ tensorParallel: 4, expertTensorParallel: 3 }, /--etp 3: .*--tp 4 is not divisible/);
  refused({ tensorParallel: 2, expertTensorParallel: 1, sequenceParallel: false }, /--etp 1 below --tp 2 needs sequence parallelism/);
  const dense = hfConfigModel('llama-2-7b', { sequenceLength: 512 });
  const denseOut = planModel(dense, resolveCluster('h100x8', {}), { ...options({ expertTensorParallel: 2 }), gpus: 8 });
  assert.ok(!denseOut.feasible && /--etp 2: the model has no mixture-of-experts layers/.test(denseOut.reason));
  // At the attention's own TP an expert pin is Megatron's default, which a dense model's launch states too.
  const sameAsTp = planModel(dense, resolveCluster('h100x8', {}), { ...options({ tensorParallel: 2, expertTensorParallel: 2 }), gpus: 8 });
  assert.ok(sameAsTp.feasible && sameAsTp.plan.setup!.expertTensorParallel === undefined, 'a dense plan reports no expert split');
});

test('Megatron’s allgather dispatcher: every rank’s tokens gathered over the expert × expert-tensor group and reduce-scattered back, in place of the all-to-alls', async () => {
  const model = await mixtral();
  const cluster = resolveCluster('h100x16-2node', {});
  const structure = repeatedTransformer(model)!;
  const c = { dp: 8, tp: 2, cp: 1, ep: 8, etp: 1 };
  const blockWith = (tokenDispatcher?: 'allgather') => {
    const { ctx } = searchContext(model, structure, cluster, { ...options({ tensorParallel: 2 }), ...(tokenDispatcher ? { tokenDispatcher } : {}) });
    const links = linksFor(ctx, c);
    return { block: costsFor(ctx, { tp: 2, cp: 1, ep: 8, etp: 1, sp: true, mb: 2 }, links).block, links };
  };
  const [gathered, allToAll] = [blockWith('allgather'), blockWith()];
  const local = (2 * SEQ * 1024 * 2) / 2; // micro-batch × tokens × hidden × bf16 ÷ tp (sequence parallel)
  const expected = 4 * allGatherMs(local * 8, 8, gathered.links.tpEp);
  assert.ok(Math.abs(gathered.block.epMs - expected) < 1e-9, `${gathered.block.epMs} vs ${expected} ms`);
  // Eight ranks' whole tokens against each token's top-2 share: the gather moves more.
  assert.ok(gathered.block.epMs > allToAll.block.epMs, `${gathered.block.epMs} vs ${allToAll.block.epMs} ms`);
  const plan = (tokenDispatcher?: 'allgather') => planModel(model, cluster, { ...options({ tensorParallel: 2, expertParallel: 8, expertTensorParallel: 1, pipelineStages: 1, microBatch: 2 }), ...(tokenDispatcher ? { tokenDispatcher, tokenDispatcherSource: 'pretrain.sh (Megatron-LM default)' } : {}) });
  const [slow, fast] = [plan('allgather'), plan()];
  assert.ok(slow.feasible && fast.feasible);
  assert.deepEqual([slow.plan.setup!.tokenDispatcher, slow.plan.setup!.tokenDispatcherReason], ['allgather', 'pretrain.sh (Megatron-LM default)']);
  assert.equal(fast.plan.setup!.tokenDispatcher, 'alltoall');
  assert.ok(slow.plan.stepTimeMs > fast.plan.stepTimeMs, `${slow.plan.stepTimeMs} vs ${fast.plan.stepTimeMs} ms`);
});
