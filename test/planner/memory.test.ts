/**
 * The memory model against hand calculations (ZeRO paper Figure 1, Korthikanti
 * et al. Table 2), and the planner choosing memory savers at the fits /
 * doesn't-fit boundary.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseClusterSpec, planModel, resolveCluster } from '../../src/planner/index';
import { memoryPerGpu, modelStateBytes, savedBytesAtPrecision, shardCount, stateBytesPerParam, transformerLayerActivationBytes, type MemorySetup } from '../../src/planner/memory/index';
import { groupCost } from '../../src/planner/search/parallel3d/blockCost';
import type { Link } from '../../src/planner/search/parallel3d/adapters';
import { analyzeModel } from '../../src/core/analyze';
import { SpecBuilder } from '../core/specBuilder';
import type { PlanReport } from '../../src/protocol/plan';
import type { PlanOptions } from '../../src/protocol/planOptions';
import { hugeMlp, ModelBuilder, transformer } from './fixtures';
import { gptModel } from './gptSpec';

const adamBf16: MemorySetup = { precision: 'bf16', optimizer: 'adam', zeroStage: 0, hybridShard: false, recompute: 'none', cpuOffload: false };
const sum = (s: { weights: number; gradients: number; optimizer: number }): number => s.weights + s.gradients + s.optimizer;
const close = (a: number, b: number, what: string): void => assert.ok(Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(b)), `${what}: ${a} vs ${b}`);

test('model states per parameter: mixed-precision Adam is the ZeRO paper’s 2 + 2 + 12 = 16 bytes; fp32 and SGD differ as they should', () => {
  assert.deepEqual(stateBytesPerParam('bf16', 'adam'), { weights: 2, gradients: 2, optimizer: 12 });
  assert.deepEqual(stateBytesPerParam('fp16', 'adam'), { weights: 2, gradients: 2, optimizer: 12 });
  // fp32: no master copy; Adam's m and v.
  assert.deepEqual(stateBytesPerParam('fp32', 'adam'), { weights: 4, gradients: 4, optimizer: 8 });
  assert.deepEqual(stateBytesPerParam('tf32', 'momentum'), { weights: 4, gradients: 4, optimizer: 4 });
  // Mixed-precision SGD still keeps the fp32 master weights.
  assert.deepEqual(stateBytesPerParam('bf16', 'sgd'), { weights: 2, gradients: 2, optimizer: 4 });
});

test('ZeRO stages on 7.5B parameters over 64 GPUs reproduce the ZeRO paper’s Figure 1 (120, 31.4, 16.6, 1.9 GB)', () => {
  const psi = 7.5e9;
  const nd = 64;
  const at = (zeroStage: 0 | 1 | 2 | 3) => modelStateBytes(psi, { ...adamBf16, zeroStage }, nd);
  close(sum(at(0)), 16 * psi, 'baseline 16Ψ');
  close(sum(at(1)), (2 + 2 + 12 / nd) * psi, 'P_os');
  close(sum(at(2)), (2 + 14 / nd) * psi, 'P_os+g');
  close(sum(at(3)), (16 * psi) / nd, 'P_os+g+p');
  assert.equal(Math.round(sum(at(0)) / 1e9), 120);
  assert.equal((sum(at(1)) / 1e9).toFixed(1), '31.4');
  assert.equal((sum(at(2)) / 1e9).toFixed(1), '16.6');
  assert.equal((sum(at(3)) / 1e9).toFixed(1), '1.9');
  // Stage 3 divides each part by N_d; offload takes the optimizer part off the GPU.
  close(at(3).weights, (2 * psi) / nd, 'stage-3 weights');
  assert.equal(modelStateBytes(psi, { ...adamBf16, zeroStage: 2, cpuOffload: true }, nd).optimizer, 0);
  // One GPU: nothing to shard with, whatever the stage.
  close(sum(modelStateBytes(psi, { ...adamBf16, zeroStage: 3 }, 1)), 16 * psi, 'stage 3 on one GPU');
});

test('HSDP shards within a node only; ZeRO-3 adds two gathered units of 16-bit weights as workspace', () => {
  assert.equal(shardCount(16, 8, true), 8);
  assert.equal(shardCount(16, 8, false), 16);
  assert.equal(shardCount(4, 8, true), 4);
  const share = { params: 1e9, activationBytes: 3e9, largestGatherParams: 5e7 };
  const m = memoryPerGpu(share, { ...adamBf16, zeroStage: 3, hybridShard: true }, { dataParallel: 16, dataParallelPerNode: 8 });
  close(m.weights + m.gradients + m.optimizer, (16 * 1e9) / 8, 'HSDP shards over the 8 GPUs of a node');
  close(m.workspace, 0.5e9 + 2 * 5e7 * 2, 'context + current and prefetched unit');
  close(m.total, m.weights + m.gradients + m.optimizer + m.activations + m.workspace, 'total');
});

test('transformer activations per layer follow Korthikanti et al. (34sbh + 5as²b; 34sbh selective; 2sbh full; TP/SP divide)', () => {
  const x = { seq: 2048, microBatch: 1, hidden: 12288, heads: 96 };
  const sbh = 2048 * 12288;
  close(transformerLayerActivationBytes(x, { recompute: 'none' }), sbh * 34 + 5 * 96 * 2048 * 2048, 'no parallelism');
  close(transformerLayerActivationBytes(x, { recompute: 'selective' }), 34 * sbh, 'selective');
  close(transformerLayerActivationBytes(x, { recompute: 'full' }), 2 * sbh, 'full');
  close(transformerLayerActivationBytes(x, { recompute: 'none', tensorParallel: 8 }), sbh * (10 + 24 / 8 + (5 * 96 * 2048) / (12288 * 8)), 'TP 8');
  close(transformerLayerActivationBytes(x, { recompute: 'selective', tensorParallel: 8, sequenceParallel: true }), (34 * sbh) / 8, 'TP 8 + SP + selective');
  close(transformerLayerActivationBytes(x, { recompute: 'none', activationBytes: 4 }), 2 * (sbh * 34 + 5 * 96 * 2048 * 2048), 'fp32 doubles');
});

const opts = (o: Partial<PlanOptions> = {}): PlanOptions => ({ batch: 32, objective: 'throughput', strategies: 'dp', optimizer: 'adam', precision: 'fp32', ...o });

/** Two GPUs of `memoryGB` each (fp32 only, no tensor cores): the boundary is set by memory alone. */
function twoGpus(memoryGB: number) {
  return parseClusterSpec({ name: `2x${memoryGB}GB`, nodes: 1, gpusPerNode: 2, gpu: { name: 'Test GPU', tflops: 10, memoryGB, memoryBandwidthGBs: 500 }, intraNode: { bandwidthGBs: 10, latencyUs: 10 } }, 'test');
}

test('fits / doesn’t fit: the cheapest memory saver that fits is chosen, said in fitsThrough, and pinning it off makes the plan infeasible', () => {
  const model = hugeMlp(2, 8192);
  const params = model.totals.params;
  // Where everything fits, ZeRO-1 competes on speed alone: on this 10 GB/s link both syncs are exposed, so sharding the
  // optimizer step wins, and it is said as a choice for speed, not as a saver the plan needs.
  const roomy = planModel(model, twoGpus(80), opts({ gpus: 2 })) as PlanReport;
  assert.ok(roomy.feasible);
  assert.equal(roomy.plan.setup!.zeroStage, 1);
  assert.equal(roomy.plan.setup!.fitsThrough, undefined);
  assert.ok(roomy.diagnostics.some((d) => /^ZeRO-1 \(optimizer state sharded\) chosen for speed, not memory: step [\d.]+ ms against [\d.]+ ms without it/.test(d.message)));
  assert.ok(!roomy.diagnostics.some((d) => /fits only through/.test(d.message)));
  const plain = planModel(model, twoGpus(80), opts({ gpus: 2, pins: { zeroStage: 0 } })) as PlanReport;
  assert.ok(plain.feasible);
  assert.ok(plain.plan.stepTimeMs > roomy.plan.stepTimeMs);
  const m0 = plain.plan.setup!.memoryPerGpu;
  assert.equal(plain.plan.setup!.fitsThrough, undefined);
  // Pure DP, fp32 Adam: each GPU holds all weights (4 B), gradients (4 B) and m, v (8 B).
  close(m0.weights, params * 4, 'weights');
  close(m0.gradients, params * 4, 'gradients');
  close(m0.optimizer, params * 8, 'optimizer');
  // ZeRO-1 halves the optimizer state on 2 GPUs: size the GPUs between the two totals.
  const z1Total = m0.total - m0.optimizer / 2;
  const memoryGB = ((m0.total + z1Total) / 2 / (1 - 9.2 / 80)) / 2 ** 30;
  const tight = planModel(model, twoGpus(memoryGB), opts({ gpus: 2 })) as PlanReport;
  assert.ok(tight.feasible, 'fits through ZeRO-1');
  assert.equal(tight.plan.setup!.zeroStage, 1);
  close(tight.plan.setup!.memoryPerGpu.optimizer, (params * 8) / 2, 'ZeRO-1 optimizer shard');
  assert.match(tight.plan.setup!.fitsThrough ?? '', /^ZeRO-1 \(optimizer state sharded\)/);
  assert.ok(tight.diagnostics.some((d) => /fits only through ZeRO-1/.test(d.message)));
  const pinned = planModel(model, twoGpus(memoryGB), opts({ gpus: 2, pins: { zeroStage: 0, microBatch: 16, cpuOffload: false, recompute: 'none' } }));
  assert.equal(pinned.feasible, false);
  if (!pinned.feasible) assert.match(pinned.reason, /nothing fits on 2 GPUs/);
  // The pins are honoured, not warned about.
  assert.ok(!pinned.diagnostics.some((d) => /not honoured/.test(d.message)));
});

test('pins are honoured: ZeRO-3 gives parameter all-gathers and gradient reduce-scatters with 16-bit bytes; recompute and micro-batches show in the timeline', () => {
  const model = transformer(2, 64, 256, 4);
  const r = planModel(model, resolveCluster('a100x8', {}), { batch: 16, objective: 'throughput', strategies: 'dp', optimizer: 'adam', gpus: 4, pins: { zeroStage: 3, recompute: 'full', microBatch: 2 } }) as PlanReport;
  assert.ok(r.feasible);
  const s = r.plan.setup!;
  assert.equal(s.precision, 'bf16');
  assert.match(s.precisionReason, /A100.*bf16 tensor cores/);
  assert.equal(s.zeroStage, 3);
  assert.equal(s.recompute, 'full');
  assert.equal(s.microBatch, 2);
  assert.equal(s.gradientAccumulation, 2);
  assert.equal(s.dataParallel, 4);
  const fc = model.layers.find((l) => l.name === 'h.0.mlp.c_fc')!;
  const gathers = r.timeline.filter((e) => e.kind === 'allgather' && e.layer.startsWith('h.0.mlp.c_fc'));
  // Forward and backward, on each of the 2 micro-steps (the first as one aggregated pass): 4 gathers of the bf16 weights.
  assert.equal(gathers.length, 4);
  for (const g of gathers) assert.equal(g.bytes, fc.workload.params * 2);
  const scatters = r.timeline.filter((e) => e.kind === 'reducescatter');
  assert.ok(scatters.length > 0);
  assert.equal(r.timeline.filter((e) => e.kind === 'allreduce').length, 0, 'ZeRO-3 reduce-scatters instead of all-reducing');
  const scattered = scatters.filter((e) => e.microBatch === 1).reduce((a, e) => a + (e.bytes ?? 0), 0);
  close(scattered, model.totals.params * 2, 'last micro-step reduce-scatters every bf16 gradient once');
  // Full recompute re-runs every block layer's forward before its backward.
  const recomputed = new Set(r.timeline.filter((e) => e.kind === 'recompute').map((e) => e.layer.replace(/ \(.*\)$/, '')));
  for (const l of model.layers.filter((x) => x.name.startsWith('h.') && x.workload.forwardFlops > 0)) assert.ok(recomputed.has(l.name), l.name);
  assert.ok(!recomputed.has('lm_head'), 'outside the blocks nothing is recomputed');
  assert.ok(r.timeline.some((e) => e.kind === 'forward' && / \(micro-step 2\)$/.test(e.layer)));
  assert.ok(!r.diagnostics.some((d) => /not honoured/.test(d.message)));
  assert.ok(s.mfu > 0 && s.mfu < 1);
});

test('ZeRO-1/2 move the same bytes as the all-reduce; ZeRO-3 1.5× (gather forward, gather backward, reduce-scatter)', () => {
  const b = new ModelBuilder('mlp', [4096]);
  b.linear('fc2', b.linear('fc1', 'x', 4096), 4096);
  const model = b.build();
  const cluster = resolveCluster('a100x8', {});
  const base = { batch: 64, objective: 'throughput', strategies: 'dp', optimizer: 'adam', gpus: 8, precision: 'bf16' } as const;
  const commBytes = (r: PlanReport) => r.timeline.filter((e) => ['allreduce', 'allgather', 'reducescatter'].includes(e.kind)).reduce((a, e) => a + (e.kind === 'allreduce' ? 2 : 1) * (e.bytes ?? 0), 0);
  const z0 = planModel(model, cluster, { ...base, pins: { zeroStage: 0 } }) as PlanReport;
  const z2 = planModel(model, cluster, { ...base, pins: { zeroStage: 2 } }) as PlanReport;
  const z3 = planModel(model, cluster, { ...base, pins: { zeroStage: 3 } }) as PlanReport;
  // An all-reduce is a reduce-scatter plus an all-gather: count it twice.
  close(commBytes(z0), 2 * model.totals.params * 2, 'DP: bf16 gradients all-reduced');
  close(commBytes(z2), commBytes(z0), 'ZeRO-2 same volume');
  close(commBytes(z3), 1.5 * commBytes(z0), 'ZeRO-3 1.5×');
  assert.ok(z3.plan.setup!.memoryPerGpu.weights < z0.plan.setup!.memoryPerGpu.weights / 7);
});

test('selective recompute drops the attention scores and recomputes only the attention core (eager attention)', () => {
  const model = transformer(2, 256, 256, 4);
  const run = (recompute: 'none' | 'selective') =>
    planModel(model, resolveCluster('a100x8', {}), { batch: 8, objective: 'throughput', strategies: 'dp', optimizer: 'adam', gpus: 1, precision: 'bf16', attentionKernel: 'unfused', pins: { recompute } }) as PlanReport;
  const none = run('none');
  const sel = run('selective');
  const scores = 2 * 4 * 256 * 256 * 8 * 2; // 2 blocks × heads × T × T × batch, in bf16
  close(none.plan.setup!.memoryPerGpu.activations - sel.plan.setup!.memoryPerGpu.activations, scores, 'dropped score bytes');
  const rec = sel.timeline.filter((e) => e.kind === 'recompute');
  assert.deepEqual([...new Set(rec.map((e) => e.layer))].sort(), ['h.0.attn', 'h.1.attn']);
  const attnFwd = sel.timeline.find((e) => e.kind === 'forward' && e.layer === 'h.0.attn')!;
  const attnRec = rec.find((e) => e.layer === 'h.0.attn')!;
  assert.ok(attnRec.endMs - attnRec.startMs < attnFwd.endMs - attnFwd.startMs, 'only part of the forward is recomputed');
});

test('a fused attention kernel keeps no scores, only an fp32 log-sum-exp per row and head; selective recompute then has nothing to drop', () => {
  // Both searches: the per-layer one (mha layers) and the block-stack one (a GPT of sdpa blocks, its head small enough for the blocks to hold most FLOPs).
  const cases = [
    { model: transformer(2, 256, 256, 4), blocks: 2, method: 'chain-dp' },
    { model: gptModel({ layers: 4, hidden: 256, heads: 4, seq: 256, vocab: 512, name: 'small-gpt' }), blocks: 4, method: 'parallel3d' },
  ];
  for (const { model, blocks, method } of cases) {
    const run = (attentionKernel: 'fused' | 'unfused', recompute: 'none' | 'selective') =>
      planModel(model, resolveCluster('a100x8', {}), { batch: 16, objective: 'throughput', strategies: 'dp', optimizer: 'adam', gpus: 2, precision: 'bf16', attentionKernel, pins: { recompute, microBatch: 8 } }) as PlanReport;
    const scores = blocks * 8 * 4 * 256 * 256 * 2; // blocks × samples × heads × T × T, in bf16
    const logSumExp = blocks * 8 * 4 * 256 * 4; // blocks × samples × heads × T, in fp32
    const eager = run('unfused', 'none');
    assert.equal(eager.search.method, method);
    const fused = run('fused', 'none').plan.setup!.memoryPerGpu.activations;
    close(eager.plan.setup!.memoryPerGpu.activations - fused, scores - logSumExp, `${method}: fused keeps the log-sum-exp instead of the scores`);
    const selective = run('fused', 'selective');
    close(selective.plan.setup!.memoryPerGpu.activations, fused, `${method}: selective drops nothing more`);
    assert.equal(selective.timeline.filter((e) => e.kind === 'recompute').length, 0, `${method}: and re-runs nothing`);
    assert.ok(selective.diagnostics.some((d) => /selective recompute drops nothing here: the fused attention kernel keeps no attention scores/.test(d.message)), `${method}: and says so`);
    const eagerSelective = run('unfused', 'selective');
    assert.ok(!eagerSelective.diagnostics.some((d) => /selective recompute drops nothing/.test(d.message)));
    close(eagerSelective.plan.setup!.memoryPerGpu.activations, fused - logSumExp, `${method}: eager selective drops the scores and keeps no log-sum-exp`);
  }
});

test('an nn.MultiheadAttention call that returns its weights computes them explicitly, whatever kernel the plan assumes', () => {
  const model = transformer(2, 256, 256, 4);
  const weighted = { ...model, layers: model.layers.map((l) => (l.op === 'mha' ? { ...l, attrs: { ...l.attrs, needWeights: true } } : l)) };
  const run = (m: typeof model, attentionKernel: 'fused' | 'unfused') =>
    planModel(m, resolveCluster('a100x8', {}), { batch: 16, objective: 'throughput', strategies: 'dp', optimizer: 'adam', gpus: 2, precision: 'bf16', attentionKernel, pins: { recompute: 'none', microBatch: 8 } }) as PlanReport;
  const eager = run(model, 'unfused');
  const asked = run(weighted, 'fused');
  close(asked.plan.setup!.memoryPerGpu.activations, eager.plan.setup!.memoryPerGpu.activations, 'the T×T weights are kept');
  const attn = (r: PlanReport) => r.plan.layers.find((l) => l.name === 'h.0.attn')!;
  close(attn(asked).forwardMs, attn(eager).forwardMs, 'and go through memory');
  assert.ok(attn(run(model, 'fused')).forwardMs < attn(eager).forwardMs);
});

test('usable memory: device bytes less the allocator’s fragmentation share and the CUDA context; sizes print in GB/MB', async () => {
  const { usableBytes, gb, mb, CONTEXT_BYTES, WORKSPACE_FRACTION } = await import('../../src/planner/cost/memory');
  // An 80 GB H100 is 80 GiB (gpuMemoryBytes): 85.90e9 B × (1 − 9.2/80, GMLake's fragmentation) − 0.5 GB = 75.52 GB.
  const { gpuMemoryBytes } = await import('../../src/planner/cluster/spec');
  const h100 = gpuMemoryBytes({ memoryGB: 80 });
  assert.equal(h100, 80 * 1024 ** 3);
  close(usableBytes(h100), h100 * (1 - WORKSPACE_FRACTION) - CONTEXT_BYTES, 'usable of 80 GB');
  assert.ok(Math.abs(usableBytes(h100) - 75.52e9) < 0.01e9, `usable of 80 GiB, by hand: ${usableBytes(h100)}`);
  // A device smaller than the context has nothing usable, not a negative amount.
  assert.equal(usableBytes(0.4e9), 0);
  assert.equal(gb(73.1e9), '73 GB');
  assert.equal(gb(7.31e9), '7.3 GB');
  assert.equal(gb(1e10), '10 GB');
  assert.equal(mb(2.5e6), '2.5 MB');
  assert.equal(mb(25e6), '25 MB');
  assert.equal(mb(1e7), '10 MB');
  assert.equal(mb(1e9), '1.0 GB');
  assert.equal(mb(0.999e9), '999 MB');
});

test('BatchNorm running statistics are weights the GPU holds: the layer costs exactly their fp32 bytes more than without them', () => {
  const bnModel = (trackRunningStats: boolean) => {
    const b = new SpecBuilder(`bn-${trackRunningStats}`);
    b.conv('conv', 3, 64, 3, { p: 1 });
    b.bn('bn', 64, { trackRunningStats });
    return analyzeModel(b.build([3, 32, 32]));
  };
  const opts: PlanOptions = { batch: 8, objective: 'throughput', strategies: 'dp', optimizer: 'momentum', gpus: 1, precision: 'fp32' };
  const bnLayer = (trackRunningStats: boolean) => {
    const out = planModel(bnModel(trackRunningStats), resolveCluster('a100x8'), opts);
    assert.ok(out.feasible);
    return out.plan.layers.find((l) => l.name === 'bn')!;
  };
  // running_mean and running_var: 2 × 64 fp32 values.
  assert.equal(bnLayer(true).memoryBytesPerGpu - bnLayer(false).memoryBytesPerGpu, 2 * 64 * 4);
});

test('integer indices and bool masks keep their size under 16-bit precision; float activations halve (both searches)', () => {
  // Token ids → Embedding (saves the int64 ids) → Dropout (saves a bool mask) → Linear (saves its float input).
  const T = 64;
  const h = 32;
  const b = new SpecBuilder('ids-dropout-linear', 'pytorch', { inputShape: [T], inputDtype: 'int' });
  b.add('emb', 'embedding', { numEmbeddings: 1000, embeddingDim: h });
  b.add('drop', 'dropout', { rate: 0.1 });
  b.linear('fc', h, h, true);
  const model = analyzeModel(b.build());
  const [emb, drop, fc] = model.layers;
  assert.equal(emb.workload.savedFixedBytes, T * 8, 'int64 token ids');
  assert.equal(drop.workload.savedFixedBytes, T * h, 'a 1-byte mask per element');
  assert.equal(fc.workload.savedFixedBytes, undefined, 'a float input');
  const at16 = T * 8 + T * h + T * h * 2;
  // The block-stack search's group cost...
  const gpu = resolveCluster('a100x8').gpus[0]!;
  const link = undefined as unknown as Link;
  const env = { gpu, precision: 'bf16' as const, modelDtypeBytes: 4, shape: { heads: 0, hidden: h, seq: T, linearDims: [h], residualBranches: 0, experts: 0 }, tpLink: link, cpLink: link, epLink: link };
  assert.equal(groupCost(model.layers, { tp: 1, cp: 1, ep: 1, sp: false, mb: 1 }, env, false).savedNone, at16);
  assert.equal(groupCost(model.layers, { tp: 1, cp: 1, ep: 1, sp: false, mb: 1 }, { ...env, precision: 'fp32' }, false).savedNone, T * 8 + T * h + T * h * 4);
  // ...and the per-layer search's tables hold the same bytes per sample.
  const opts: PlanOptions = { batch: 4, objective: 'throughput', strategies: 'dp', optimizer: 'sgd', gpus: 1, maxGpus: 1, precision: 'bf16', pins: { recompute: 'none', microBatch: 4 } };
  const out = planModel(model, resolveCluster('a100x8'), opts);
  assert.ok(out.feasible);
  close(out.plan.setup!.memoryPerGpu.activations, 4 * at16, 'bf16 activations of the plan');
  assert.equal(savedBytesAtPrecision(100, 30, 0.5), 30 + 35);
});
