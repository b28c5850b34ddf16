/**
 * Parameter offload (DeepSpeed ZeRO-3 offload_param / ZeRO-Infinity, FSDP
 * CPUOffload(offload_params=True)) as a planner dimension, checked by what it
 * is: no weights, gradients or optimizer state stay on the GPU, the unit in use
 * and the prefetched one are fetched into workspace, every pass copies the
 * GPU's weight shard up over PCIe and every micro-step its gradient shard down
 * (hand calculations below); the simulator lays those copies on the host link;
 * both searches reach for it only when optimizer offload does not fit either.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { analyzeSource } from '../../src/frontends/index';
import { overlapExtraMs } from '../../src/planner/cost/overlap';
import { allGatherMs } from '../../src/planner/cost/shardedCollectives';
import { defaultSetup, type TableSetup } from '../../src/planner/cost/tables';
import { buildCostTables } from '../../src/planner/cost/tableBuilder';
import { range, Topology } from '../../src/planner/cost/topology';
import { parseClusterSpec, planModel, resolveCluster, type ClusterSpec } from '../../src/planner/index';
import { frozenWeightBytes, memoryPerGpu, modelStateBytes, type MemorySetup } from '../../src/planner/memory/index';
import { repeatedTransformer } from '../../src/planner/search/parallel3d/blocks';
import { estimate, type Config3D } from '../../src/planner/search/parallel3d/estimate';
import { searchContext } from '../../src/planner/search/parallel3d/plan';
import { HOST_LANE, simulateIteration } from '../../src/planner/simulator/iteration';
import type { PlanOptions } from '../../src/protocol/planOptions';
import { twoLayerMlp } from './fixtures';
import { gptModel } from './gptSpec';

const close = (a: number, b: number, what: string): void => assert.ok(Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(b)), `${what}: ${a} vs ${b}`);
const adamBf16: MemorySetup = { precision: 'bf16', optimizer: 'adam', zeroStage: 3, hybridShard: false, recompute: 'none', cpuOffload: true, paramOffload: true };

test('memory: nothing of the model state stays on the GPU; two fetched units of 16-bit weights are workspace, on one GPU too', () => {
  const psi = 7e9;
  assert.deepEqual(modelStateBytes(psi, adamBf16, 8), { weights: 0, gradients: 0, optimizer: 0 });
  assert.deepEqual(modelStateBytes(psi, adamBf16, 1), { weights: 0, gradients: 0, optimizer: 0 });
  // Frozen weights (a LoRA base) go to the host with the rest: FSDP and DeepSpeed offload whole flat parameters.
  assert.equal(frozenWeightBytes(psi, adamBf16, 1), 0);
  assert.equal(frozenWeightBytes(psi, { ...adamBf16, paramOffload: false }, 1), 2 * psi);
  const m = memoryPerGpu({ params: psi, activationBytes: 3e9, largestGatherParams: 2e8 }, adamBf16, { dataParallel: 1 });
  close(m.workspace, 0.5e9 + 2 * 2e8 * 2, 'context + the unit in use and the prefetched one, at 2 bytes');
  close(m.total, 3e9 + m.workspace, 'activations and workspace only');
});

const P1 = 1024 * 4096 + 4096;
const topo = new Topology(resolveCluster('a100x8'));

test('cost tables: each pass copies the weight shard up, each micro-step the gradient shard down, at the host link; the CPU steps the optimizer', () => {
  const host = topo.gpus[0]!.hostBandwidthGBs!;
  assert.equal(host, 25, 'the a100x8 preset states its host link');
  // fp32 Adam, ZeRO-3 over 4 GPUs, 2 micro-steps: 4-byte weights and gradients, a quarter each.
  const setup: TableSetup = { ...defaultSetup('adam'), zeroStage: 3, cpuOffload: true, paramOffload: true, microSteps: 2 };
  const o = buildCostTables(twoLayerMlp(), topo, range(0, 4), 64, { mode: 'dp', optimizer: 'adam', setup }).options[0]![0]!;
  assert.equal(o.gatherBytes, 4 * P1);
  close(o.gatherMs, 2 * allGatherMs(4 * P1, 4, topo.link([0, 1, 2, 3])), 'ZeRO-3 still gathers the shards, per micro-step');
  close(o.hostUploadMs, (2 * ((4 * P1) / 4)) / (host * 1e6), 'a quarter of the weights up per pass, per micro-step');
  close(o.hostDownloadMs, (2 * ((4 * P1) / 4)) / (host * 1e6), 'a quarter of the gradients down per micro-step');
  // Four ranks on an 8-GPU node: each has two GPUs' shares of its DRAM bandwidth.
  close(o.updateMs, ((P1 / 4) * (3 * 4 + 2 * 8)) / (2 * 51.2 * 1e6), 'the CPU steps the optimizer shard at host DRAM bandwidth; nothing crosses PCIe then');
  assert.deepEqual(o.memory, { weights: 0, gradients: 0, optimizer: 0, activations: o.memory.activations });
  close(o.timeMs, o.forwardMs + o.backwardMs + o.allreduceMs + o.updateMs + 2 * (o.gatherMs + o.hostUploadMs) + o.hostDownloadMs, 'the copies in the surrogate time');
  // One GPU: no gather, the whole layer up each pass; the fetched unit is still workspace (gatherBytes).
  const one = buildCostTables(twoLayerMlp(), topo, [0], 64, { mode: 'dp', optimizer: 'adam', setup: { ...setup, zeroStage: 0, microSteps: 1 } }).options[0]![0]!;
  assert.equal(one.gatherMs, 0);
  assert.equal(one.gatherBytes, 4 * P1);
  close(one.hostUploadMs, (4 * P1) / (host * 1e6), 'the whole layer up');
});

test('simulator: weights come up from the CPU before each forward and backward, gradients go down after each backward, on the host link', () => {
  const setup: TableSetup = { ...defaultSetup('adam'), cpuOffload: true, paramOffload: true };
  const t = buildCostTables(twoLayerMlp(), topo, [0], 64, { mode: 'dp', optimizer: 'adam', setup });
  const run = simulateIteration(t, new Int32Array(t.layers.length));
  const up = run.tasks.filter((x) => x.layer.endsWith('weights from CPU'));
  const down = run.tasks.filter((x) => x.layer.endsWith('gradients to CPU'));
  // fc1 and fc2 hold parameters; the ReLU fetches nothing.
  assert.deepEqual(up.map((x) => x.layer).sort(), ['fc1 weights from CPU', 'fc1 weights from CPU', 'fc2 weights from CPU', 'fc2 weights from CPU']);
  assert.deepEqual(down.map((x) => x.layer).sort(), ['fc1 gradients to CPU', 'fc2 gradients to CPU']);
  assert.ok([...up, ...down].every((x) => x.kind === 'transfer' && x.resources.length === 1 && x.resources[0] === HOST_LANE));
  // A forward starts only after its weights arrived.
  const fwd = run.tasks.findIndex((x) => x.kind === 'forward' && x.layer === 'fc1');
  const fetch = run.tasks.findIndex((x) => x.layer === 'fc1 weights from CPU');
  assert.ok(run.start[fwd]! >= run.end[fetch]!);
  assert.match(run.tasks.at(-1)!.layer, /on the CPU: parameters and gradients offloaded/);
  const kept = simulateIteration(buildCostTables(twoLayerMlp(), topo, [0], 64, { mode: 'dp', optimizer: 'adam', setup: { ...setup, paramOffload: false } }), new Int32Array(3));
  assert.ok(run.makespanMs > kept.makespanMs - 1e-9, `${run.makespanMs} vs ${kept.makespanMs}`);
});

/** One A100 with `gb` GB, as a 1-GPU cluster. */
function smallGpu(gb: number): ClusterSpec {
  const { index: _i, node: _n, ...gpu } = resolveCluster('a100x8').gpus[0]!;
  return parseClusterSpec({ name: `1x A100 ${gb}GB`, nodes: 1, gpusPerNode: 1, gpu: { ...gpu, memoryGB: gb }, intraNode: { bandwidthGBs: 300, latencyUs: 3 }, interNode: { bandwidthGBs: 25, latencyUs: 5 } }, 'test');
}
const gpt = () => gptModel({ layers: 8, hidden: 2048, heads: 16, seq: 512 });
const opts = (o: Partial<PlanOptions> = {}): PlanOptions => ({ batch: 8, objective: 'throughput', strategies: 'all', optimizer: 'adam', precision: 'bf16', ...o });

test('block-stack estimate: the PCIe copies of a step, as far as each micro-batch’s compute does not hide them, by hand', () => {
  const cluster = smallGpu(80);
  const host = cluster.gpus[0]!.hostBandwidthGBs!;
  const m = gpt();
  const { ctx } = searchContext(m, repeatedTransformer(m)!, cluster, opts());
  const c: Config3D = { n: 1, dp: 1, tp: 1, pp: 1, cp: 1, ep: 1, v: 1, sp: false, mb: 1, microBatches: 8, zero: 0, recompute: 'full', blocksPerStage: [8], offload: true, paramOffload: true };
  const est = estimate(ctx, c, false);
  const stage = est.stages[0]!;
  // bf16 master weights: 2-byte weights up twice per micro-batch, 2-byte gradients down once.
  const perMicro = (stage.params * (2 * 2 + 2)) / (host * 1e6);
  close(est.gradSyncMs, 8 * overlapExtraMs(perMicro, stage.forwardMs + stage.backwardMs), 'exposed copies');
  close(est.updateMs, (stage.params * (3 * 4 + 2 * 8)) / (cluster.gpus[0]!.hostMemoryBandwidthGBs! * 1e6), 'the CPU Adam step alone');
  assert.equal(est.memory.weights + est.memory.gradients + est.memory.optimizer, 0);
  // Against optimizer offload (which already sends the gradients down): the 2-byte weights leave; two fetched blocks (of eight) come.
  const optimizerOnly = estimate(ctx, { ...c, paramOffload: false }, false);
  assert.equal(optimizerOnly.memory.gradients, 0);
  close(optimizerOnly.memory.weights, 2 * stage.params, 'what parameter offload frees');
  const fetched = est.memory.workspace - optimizerOnly.memory.workspace;
  assert.ok(fetched > 0 && fetched < (2 / 8) * 2 * stage.params, `fetched ${fetched}`);
});

test('the 3D search offloads the parameters where optimizer offload does not fit, says so, and honours the pins', () => {
  const m = gpt();
  // 2 bytes of weights per parameter and the CUDA context overflow 1.5 GB; the fetched blocks and activations do not.
  assert.ok(2 * m.totals.params + 0.5e9 > 1.5e9 * (1 - 0.115), `params ${m.totals.params}`);
  const tight = planModel(m, smallGpu(1.5), opts());
  assert.ok(tight.feasible, tight.feasible ? '' : tight.reason);
  const s = tight.plan.setup!;
  assert.equal(s.paramOffload, true);
  assert.equal(s.cpuOffload, true);
  assert.equal(s.pipelineStages, 1);
  assert.equal(s.memoryPerGpu.weights + s.memoryPerGpu.gradients + s.memoryPerGpu.optimizer, 0);
  assert.match(s.fitsThrough ?? '', /parameters, gradients and optimizer state offloaded to CPU memory/);
  const warn = tight.diagnostics.find((d) => /parameters, gradients and optimizer state are offloaded/.test(d.message));
  assert.ok(warn && warn.severity === 'warning' && /nothing fits without it/.test(warn.message) && /host link/.test(warn.message), warn?.message);
  // Roomier, optimizer offload is enough and the parameters stay.
  const six = planModel(m, smallGpu(6), opts());
  assert.ok(six.feasible && six.plan.setup!.cpuOffload && !six.plan.setup!.paramOffload);
  // Pinned to optimizer offload, the tight GPU has no plan, and the reason says what was tried.
  const pinned = planModel(m, smallGpu(1.5), opts({ pins: { cpuOffload: true, paramOffload: false } }));
  assert.ok(!pinned.feasible && /optimizer state offloaded to CPU memory included/.test(pinned.reason), pinned.feasible ? '' : pinned.reason);
  // Pinned on where it is not needed, it is used (and said to be pinned).
  const forced = planModel(m, smallGpu(80), opts({ pins: { paramOffload: true } }));
  assert.ok(forced.feasible && forced.plan.setup!.paramOffload);
  assert.ok(forced.diagnostics.some((d) => /offloaded to CPU memory \(pinned\)/.test(d.message)));
  // A contradiction between the two pins names both.
  const clash = planModel(m, smallGpu(80), opts({ pins: { paramOffload: true, cpuOffload: false } }));
  assert.ok(!clash.feasible && /paramOffload=true/.test(clash.reason) && /cpuOffload=false/.test(clash.reason));
  const piped = planModel(m, resolveCluster('a100x8'), opts({ pins: { paramOffload: true, pipelineStages: 2 } }));
  assert.ok(!piped.feasible && /pipelineStages=2/.test(piped.reason) && /without a pipeline/.test(piped.reason), piped.feasible ? '' : piped.reason);
});

test('Llama-2-7b full fine-tune on one 16 GB V100: ZeRO-Offload fits only one sample at a time, parameter offload runs the whole batch and wins', async () => {
  const file = join(__dirname, '..', 'fixtures', 'huggingface', 'llama-2-7b', 'config.json');
  const model = (await analyzeSource(file, readFileSync(file, 'utf8'), { sequenceLength: 2048 })).models[0]!;
  const o: PlanOptions = { batch: 8, objective: 'throughput', strategies: 'all', optimizer: 'adam', gpus: 1 };
  const out = planModel(model, resolveCluster('dgx1-v100'), o);
  assert.ok(out.feasible, out.feasible ? '' : out.reason);
  const s = out.plan.setup!;
  assert.equal(s.paramOffload, true);
  assert.equal(s.microBatch, 8);
  // The host holds all 2 + 2 + 12 bytes of each parameter: 108 GB, within the DGX-1's 512 GB that one rank has to itself.
  assert.ok(Math.abs(s.hostMemoryPerGpu! - 16 * model.totals.params) < 1e-6 * s.hostMemoryPerGpu!, `${s.hostMemoryPerGpu}`);
  assert.ok(out.diagnostics.some((d) => /108 GB per rank in host memory of the 512 GiB of the node's RAM each rank has/.test(d.message) && /153\.6 GB\/s of host DRAM per rank/.test(d.message)));
  assert.ok(s.memoryPerGpu.total < 16e9 && s.memoryPerGpu.weights === 0);
  // Optimizer offload keeps the 2-byte weights of 6.7 B parameters on the GPU (13.5 GB): room for one sample at a time.
  const optimizerOnly = planModel(model, resolveCluster('dgx1-v100'), { ...o, pins: { cpuOffload: true, paramOffload: false } });
  assert.ok(optimizerOnly.feasible, optimizerOnly.feasible ? '' : optimizerOnly.reason);
  const z = optimizerOnly.plan.setup!;
  assert.ok(!z.paramOffload && z.microBatch === 1 && z.gradientAccumulation === 8 && Math.abs(z.memoryPerGpu.weights - 2 * model.totals.params) < 1e-3 * z.memoryPerGpu.weights);
  assert.ok(out.plan.stepTimeMs < optimizerOnly.plan.stepTimeMs);
  // Nothing offloaded, nothing fits.
  assert.equal(planModel(model, resolveCluster('dgx1-v100'), { ...o, pins: { cpuOffload: false } }).feasible, false);
  console.log(`Llama-2-7b, 1× V100-16GB, batch 8 × 2048: parameter offload ${out.plan.stepTimeMs.toFixed(0)} ms/step at ${(s.memoryPerGpu.total / 1e9).toFixed(2)} GB/GPU; optimizer offload ${optimizerOnly.plan.stepTimeMs.toFixed(0)} ms/step at ${(z.memoryPerGpu.total / 1e9).toFixed(2)} GB/GPU`);
});

test('host memory bounds offload: each rank gets the node’s RAM over the ranks on it, and a plan that would overflow it does not fit', () => {
  const topo8 = new Topology(resolveCluster('a100x8'));
  assert.equal(topo8.hostShare([0]), 8);
  assert.equal(topo8.hostShare(range(0, 4)), 2);
  assert.equal(topo8.hostShare(range(0, 8)), 1);
  const m = gpt();
  // Offloading everything: 2 + 2 + 12 bytes a parameter on the host; a 1.5 GB GPU whose rank has 8 GiB of RAM cannot.
  const needs = 16 * m.totals.params;
  const roomless = smallGpu(1.5);
  roomless.gpus[0]!.hostMemoryGB = 8;
  assert.ok(needs > 8 * 2 ** 30, `${needs}`);
  const out = planModel(m, roomless, opts());
  assert.ok(!out.feasible && /to host memory, more than the 8\.6 GB of the node's RAM each rank has \(hostMemoryGB\)/.test(out.reason), out.feasible ? '' : out.reason);
  // With 16 GiB it fits, and the plan says how much the host holds.
  roomless.gpus[0]!.hostMemoryGB = 16;
  const fits = planModel(m, roomless, opts());
  assert.ok(fits.feasible && Math.abs(fits.plan.setup!.hostMemoryPerGpu! - needs) < 1e-6 * needs);
  // Per-layer planner: the same bound, through the cost tables (an MLP of 4.2 M parameters, fp32 Adam: 16 bytes each).
  const tiny = resolveCluster('a100x8');
  for (const g of tiny.gpus) Object.assign(g, { memoryGB: 0.55, hostMemoryGB: 0.01 });
  const mlpOut = planModel(twoLayerMlp(), tiny, { batch: 64, objective: 'throughput', strategies: 'dp', optimizer: 'adam', precision: 'fp32', gpus: 1, pins: { paramOffload: true } });
  assert.ok(!mlpOut.feasible && /to host memory, more than the 0\.1 GB of the node's RAM each rank has/.test(mlpOut.reason), mlpOut.feasible ? '' : mlpOut.reason);
});
