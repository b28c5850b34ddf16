/**
 * HSDP and optimizer offload in the 3D search, checked by what they are:
 * HSDP divides ZeRO state by the node's share of the group (so twice the
 * state of full ZeRO on two nodes) but keeps ZeRO-3's gathers on NVLink;
 * offload frees the optimizer bytes, is chosen only when nothing else fits,
 * says so, and costs a PCIe round trip of gradients and weights per step.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { PlanOptions } from '../../src/protocol/planOptions';
import { parseClusterSpec, planModel, resolveCluster, type ClusterSpec } from '../../src/planner/index';
import { repeatedTransformer } from '../../src/planner/search/parallel3d/blocks';
import { overlapExtraMs } from '../../src/planner/cost/overlap';
import { costsFor, estimate, linksFor, stageTime, type Config3D } from '../../src/planner/search/parallel3d/estimate';
import { gradSync } from '../../src/planner/search/parallel3d/gradientSync';
import { searchContext } from '../../src/planner/search/parallel3d/plan';
import { gptModel } from './gptSpec';

const model = () => gptModel({ layers: 8, hidden: 2048, heads: 16, seq: 512 });
const opts = (o: Partial<PlanOptions> = {}): PlanOptions => ({ batch: 32, objective: 'throughput', strategies: 'all', optimizer: 'adam', precision: 'bf16', ...o });

function estimateOn(cluster: ClusterSpec, c: Partial<Config3D>, m = model()) {
  const { ctx } = searchContext(m, repeatedTransformer(m)!, cluster, opts());
  const config: Config3D = { n: 16, dp: 16, tp: 1, pp: 1, cp: 1, ep: 1, v: 1, sp: false, mb: 1, microBatches: 2, zero: 3, recompute: 'full', blocksPerStage: [8], ...c };
  return { ctx, est: estimate(ctx, config, false) };
}

test('HSDP on two 8-GPU nodes: ZeRO-3 state divided by 8 instead of 16 (twice the bytes), gathers on NVLink (faster sync)', () => {
  const two = resolveCluster('h100x16-2node', {});
  const full = estimateOn(two, {}).est;
  const hsdp = estimateOn(two, { hsdp: true }).est;
  const state = (e: typeof full) => e.memory.weights + e.memory.gradients + e.memory.optimizer;
  assert.ok(Math.abs(state(hsdp) / state(full) - 2) < 1e-9, `state ratio ${state(hsdp) / state(full)}`);
  assert.ok(hsdp.gradSyncMs < full.gradSyncMs, `HSDP sync ${hsdp.gradSyncMs} ms vs ZeRO-3 over both nodes ${full.gradSyncMs} ms`);
  // On one node HSDP is plain ZeRO (nothing to replicate across).
  const one = resolveCluster('a100x8', {});
  const a = estimateOn(one, { n: 8, dp: 8 }).est;
  const b = estimateOn(one, { n: 8, dp: 8, hsdp: true }).est;
  assert.equal(a.memory.total, b.memory.total);
});

test('ZeRO-3 gathers frozen weights too: a fine-tune that trains only the head still pays for gathering the whole model every micro-batch', () => {
  const two = resolveCluster('h100x16-2node', {});
  const trained = estimateOn(two, {}).est;
  const headOnly = gptModel({ layers: 8, hidden: 2048, heads: 16, seq: 512, frozen: (name) => name !== 'lm_head' });
  const frozen = estimateOn(two, {}, headOnly);
  const c: Config3D = { n: 16, dp: 16, tp: 1, pp: 1, cp: 1, ep: 1, v: 1, sp: false, mb: 1, microBatches: 2, zero: 3, recompute: 'full', blocksPerStage: [8] };
  const links = linksFor(frozen.ctx, c);
  const stage = stageTime(frozen.ctx, c, costsFor(frozen.ctx, { tp: 1, cp: 1, ep: 1, sp: false, mb: 1 }, links), links, 0);
  // Every frozen weight of the stage at 2 bytes (bf16): all but the head's.
  assert.equal(stage.frozenBytes, (headOnly.totals.frozenParams ?? 0) * 2);
  // Before, only the head's 105 M parameters were gathered: the sharded time fell to a fraction of full training's.
  console.log(`ZeRO-3 sync per step on 2 nodes: head-only fine-tune ${frozen.est.gradSyncMs.toFixed(2)} ms, full training ${trained.gradSyncMs.toFixed(2)} ms`);
  assert.ok(frozen.est.gradSyncMs > 0.5 * trained.gradSyncMs, `head-only ${frozen.est.gradSyncMs} ms vs trained ${trained.gradSyncMs} ms`);
});

test('HSDP pins: honoured on two nodes (the plan says HSDP), refused with ZeRO-0 or on one node', () => {
  const two = resolveCluster('h100x16-2node', {});
  const out = planModel(model(), two, opts({ gpus: 16, pins: { hybridShard: true, zeroStage: 3, dataParallel: 16, tensorParallel: 1, pipelineStages: 1 } }));
  assert.ok(out.feasible, out.feasible ? '' : out.reason);
  assert.equal(out.plan.setup!.hybridShard, true);
  assert.equal(out.plan.setup!.shardGroup, 8, 'sharded over one node’s 8 ranks, replicated across the 2 nodes');
  const full = planModel(model(), two, opts({ gpus: 16, pins: { hybridShard: false, zeroStage: 3, dataParallel: 16, tensorParallel: 1, pipelineStages: 1 } }));
  assert.equal(full.feasible && full.plan.setup!.shardGroup, 16);
  assert.ok(!out.diagnostics.some((d) => /not modelled|not honoured/.test(d.message)), out.diagnostics.map((d) => d.message).join('; '));
  const zero0 = planModel(model(), two, opts({ pins: { hybridShard: true, zeroStage: 0 } }));
  assert.ok(!zero0.feasible && /ZeRO/.test(zero0.reason));
  const single = planModel(model(), resolveCluster('a100x8', {}), opts({ pins: { hybridShard: true } }));
  assert.ok(!single.feasible && /one node/.test(single.reason));
});

/** One A100 with `gb` GB: ~0.5 B parameters need ~8 GB of Adam state, 6 of it optimizer (fp32 master + moments). */
function smallGpu(gb: number): ClusterSpec {
  const { index: _i, node: _n, ...gpu } = resolveCluster('a100x8').gpus[0]!;
  return parseClusterSpec({ name: `1x A100 ${gb}GB`, nodes: 1, gpusPerNode: 1, gpu: { ...gpu, memoryGB: gb }, intraNode: { bandwidthGBs: 300, latencyUs: 3 }, interNode: { bandwidthGBs: 25, latencyUs: 5 } }, 'test');
}

test('offload is a last resort: chosen only when nothing fits without it, flagged slow, priced as a PCIe round trip', () => {
  const m = model();
  const params = m.totals.params;
  // Roomy GPU: no offload.
  const roomy = planModel(m, smallGpu(80), opts({ batch: 8 }));
  assert.ok(roomy.feasible && !roomy.plan.setup!.cpuOffload);
  // Weights (2 bytes) fit in 6 GB, the 2 + 12 bytes of gradients and optimizer state on top do not.
  assert.ok(2 * params < 4e9 && 16 * params > 6e9, `params ${params}`);
  const tight = planModel(m, smallGpu(6), opts({ batch: 8 }));
  assert.ok(tight.feasible, tight.feasible ? '' : tight.reason);
  const s = tight.plan.setup!;
  assert.equal(s.cpuOffload, true);
  assert.equal(s.memoryPerGpu.optimizer, 0);
  assert.match(s.fitsThrough ?? '', /offloaded to CPU/);
  const warn = tight.diagnostics.find((d) => /offloaded to CPU memory/.test(d.message));
  assert.ok(warn && warn.severity === 'warning' && /host link/.test(warn.message));
  // Pinned off, the same GPU has no plan.
  const off = planModel(m, smallGpu(6), opts({ batch: 8, pins: { cpuOffload: false } }));
  assert.equal(off.feasible, false);
});

test('offload: gradients down every micro-batch as the backward hides them, then the CPU Adam step at host DRAM bandwidth and the weights up', () => {
  const gpu = smallGpu(80);
  const host = gpu.gpus[0]!.hostBandwidthGBs!;
  const dram = gpu.gpus[0]!.hostMemoryBandwidthGBs!;
  assert.equal(dram, 51.2, 'a DGX A100 node’s 409.6 GB/s over its 8 GPUs');
  const m = model();
  const { ctx } = searchContext(m, repeatedTransformer(m)!, gpu, opts());
  const c: Config3D = { n: 1, dp: 1, tp: 1, pp: 1, cp: 1, ep: 1, v: 1, sp: false, mb: 1, microBatches: 8, zero: 0, recompute: 'full', blocksPerStage: [8] };
  const on = estimate(ctx, { ...c, offload: true }, false);
  // After the backward: the CPU Adam step (fp32 master read + written, gradient read: 3 × 4 bytes; m and v read +
  // written: 2 × 8) and 2-byte weights up. During it: each micro-batch's 2-byte gradients down, behind its compute.
  const copies = (m.totals.params * 2) / (host * 1e6);
  const cpuStep = (m.totals.params * (3 * 4 + 2 * 8)) / (dram * 1e6);
  assert.ok(Math.abs(on.updateMs / (copies + cpuStep) - 1) < 0.01, `${on.updateMs} vs ${copies} + ${cpuStep}`);
  const stage = on.stages[0]!;
  const down = (stage.params * 2) / (host * 1e6);
  assert.ok(Math.abs(on.gradSyncMs - 8 * overlapExtraMs(down, stage.forwardMs + stage.backwardMs)) < 1e-9, `${on.gradSyncMs}`);
  assert.equal(on.memory.gradients, 0, 'ZeRO-Offload keeps no gradients on the GPU');
  // Without a stated host memory bandwidth the CPU step is left out (and the plan says so); halving the host link then doubles the rest.
  const bare = smallGpu(80);
  bare.gpus.forEach((g) => delete g.hostMemoryBandwidthGBs);
  const { ctx: bareCtx } = searchContext(m, repeatedTransformer(m)!, bare, opts());
  const pcieOnly = estimate(bareCtx, { ...c, offload: true }, false).updateMs;
  assert.ok(Math.abs(pcieOnly / copies - 1) < 0.01, `${pcieOnly} vs ${copies}`);
  const slow = smallGpu(80);
  slow.gpus.forEach((g) => {
    g.hostBandwidthGBs = host / 2;
    delete g.hostMemoryBandwidthGBs;
  });
  const { ctx: ctx2 } = searchContext(m, repeatedTransformer(m)!, slow, opts());
  assert.ok(Math.abs(estimate(ctx2, { ...c, offload: true }, false).updateMs / pcieOnly - 2) < 1e-9);
  const tight = planModel(m, bare, opts({ batch: 8, pins: { cpuOffload: true } }));
  assert.ok(tight.feasible && tight.diagnostics.some((d) => /CPU-side optimizer step is not modelled \(the .*spec states no hostMemoryBandwidthGBs\)/.test(d.message)));
});

test('ZeRO-2/3 reduce-scatter every micro-batch’s gradients (they keep only their shard); ZeRO-1 syncs once after accumulation', () => {
  // Two nodes on a slow network, so a reduce-scatter outlasts a micro-batch's backward and shows.
  const { index: _i, node: _n, ...gpu } = resolveCluster('a100x8').gpus[0]!;
  const slow = parseClusterSpec({ name: '2x8 A100, 2 GB/s between nodes', nodes: 2, gpusPerNode: 8, gpu, intraNode: { bandwidthGBs: 300, latencyUs: 3, name: 'nvlink' }, interNode: { bandwidthGBs: 2, latencyUs: 5, name: 'eth' } }, 'test');
  const step = (zero: 1 | 2 | 3, microBatches: number) => estimateOn(slow, { zero, microBatches, recompute: 'none' }).est;
  const extra = (zero: 2 | 3, m: number) => step(zero, m).gradSyncMs - step(1, m).gradSyncMs;
  // Same final sync (reduce-scatter + all-gather) at every stage ≥ 1: one micro-batch, nothing more to reduce.
  assert.ok(Math.abs(extra(2, 1)) < 1e-9, `${extra(2, 1)}`);
  assert.ok(extra(2, 2) > 0, `ZeRO-2 at 2 micro-batches adds ${extra(2, 2)} ms`);
  // One more exposed reduce-scatter per earlier micro-batch: 7 at 8 micro-batches, 1 at 2.
  assert.ok(Math.abs(extra(2, 8) / extra(2, 2) - 7) < 1e-9, `${extra(2, 8)} vs ${extra(2, 2)}`);
  // ZeRO-3 also gathers the weights for each forward and backward, on the same link: more than ZeRO-2 adds.
  assert.ok(extra(3, 2) > extra(2, 2), `${extra(3, 2)} vs ${extra(2, 2)}`);
  assert.ok(Math.abs(step(2, 8).stepMs - step(1, 8).stepMs - extra(2, 8)) < 1e-6, 'the step pays what the sync adds');
});

test('ZeRO-1/2 all-gather the updated weights after the optimizer step, exposed; ZeRO-3 does not (its next forward gathers them)', () => {
  const m = model();
  const { ctx } = searchContext(m, repeatedTransformer(m)!, resolveCluster('h100x16-2node', {}), opts());
  const run = (zero: 0 | 1 | 2 | 3) => {
    const c: Config3D = { n: 16, dp: 16, tp: 1, pp: 1, cp: 1, ep: 1, v: 1, sp: false, mb: 1, microBatches: 1, zero, recompute: 'none', blocksPerStage: [8] };
    const links = linksFor(ctx, c);
    const costs = costsFor(ctx, { tp: 1, cp: 1, ep: 1, sp: false, mb: 1 }, links);
    const stage = stageTime(ctx, c, costs, links, 0);
    return { sync: gradSync(ctx, c, stage, links), est: estimate(ctx, c), stage };
  };
  const [z0, z1, z2, z3] = ([0, 1, 2, 3] as const).map(run);
  // Beside the backward: the all-reduce, or half its ring traffic, the reduce-scatter, for every sharded stage.
  assert.ok(z1.sync.totalMs > 0);
  assert.ok(Math.abs(z1.sync.totalMs - z2.sync.totalMs) < 1e-9 && Math.abs(z1.sync.totalMs - z3.sync.totalMs) < 1e-9);
  assert.ok(z1.sync.totalMs < z0.sync.totalMs, `reduce-scatter ${z1.sync.totalMs} ms against all-reduce ${z0.sync.totalMs} ms`);
  // After the step: the weights' all-gather (at the weights' width, where gradients reduce at theirs).
  assert.equal(z0.sync.afterStepMs, 0);
  assert.equal(z3.sync.afterStepMs, 0);
  assert.ok(z1.sync.afterStepMs > 0 && Math.abs(z1.sync.afterStepMs - z2.sync.afterStepMs) < 1e-9);
  // Nothing hides it: the estimate's step adds the whole gather after the update.
  for (const z of [z1, z2]) {
    const e = z.est;
    assert.ok(Math.abs(e.stepMs - (e.pipelineMs + z.sync.exposedMs + z.sync.shardedMs + e.updateMs + z.sync.afterStepMs)) < 1e-6);
  }
});

test('the step pays for the backward it slows: the sync beside the last backward costs overlapExtraMs, in the estimate and in the replay', () => {
  const m = model();
  const { ctx } = searchContext(m, repeatedTransformer(m)!, resolveCluster('h100x16-2node', {}), opts());
  const c: Config3D = { n: 16, dp: 16, tp: 1, pp: 1, cp: 1, ep: 1, v: 1, sp: false, mb: 1, microBatches: 1, zero: 0, recompute: 'none', blocksPerStage: [8] };
  const links = linksFor(ctx, c);
  const stage = stageTime(ctx, c, costsFor(ctx, { tp: 1, cp: 1, ep: 1, sp: false, mb: 1 }, links), links, 0);
  const sync = gradSync(ctx, c, stage, links);
  assert.ok(sync.totalMs > 0);
  assert.equal(sync.exposedMs, overlapExtraMs(sync.totalMs, stage.backwardMs));
  // Hidden or not, it is never free: the backward beside it runs slower.
  assert.ok(sync.exposedMs > 0);
  const est = estimate(ctx, c);
  assert.ok(Math.abs(est.gradSyncMs - sync.exposedMs) < 1e-9);
});

test('ZeRO-3 gathers a stage unit by unit (one per block, one for the embedding and head): each unit pays the collective latency, the bytes are moved once', () => {
  const one = resolveCluster('a100x8', {});
  const { ctx } = searchContext(model(), repeatedTransformer(model())!, one, opts());
  const c: Config3D = { n: 8, dp: 8, tp: 1, pp: 1, cp: 1, ep: 1, v: 1, sp: false, mb: 1, microBatches: 2, zero: 3, recompute: 'none', blocksPerStage: [8] };
  const links = linksFor(ctx, c);
  const stage = stageTime(ctx, c, costsFor(ctx, { tp: 1, cp: 1, ep: 1, sp: false, mb: 1 }, links), links, 0);
  // Eight blocks and the embedding/head unit of the only stage.
  assert.equal(stage.units, 9);
  const sharded = (units: number) => gradSync(ctx, c, { ...stage, units }, links).shardedMs;
  const perUnit = sharded(9);
  const whole = sharded(1);
  assert.ok(perUnit > whole, `9 units ${perUnit} ms vs one gather ${whole} ms`);
  // Latency, not bandwidth: nine collectives of a ninth of the bytes cost far less than nine whole gathers.
  assert.ok(perUnit < 2 * whole, `9 units ${perUnit} ms vs one gather ${whole} ms`);
});
