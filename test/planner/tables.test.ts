/**
 * One layer's cost-table entry against its parts, by hand: the gradient
 * all-reduce of 4-byte gradients over the data group, Adam's update streaming
 * params, grads and two moments (read + write), fp32 Adam's 16 bytes per
 * parameter, ZeRO-3's parameter all-gather (once before forward, once before
 * backward) and reduce-scatter, gradient accumulation's micro-steps, and the
 * Megatron all-reduces of a split layer (Shoeybi et al. 2019, §3: f/g operators).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { analyticalTimes } from '../../src/planner/cost/compute';
import type { LayerConfig } from '../../src/planner/cost/configs';
import { allGatherMs, reduceScatterMs } from '../../src/planner/cost/shardedCollectives';
import { assignmentCost, assignmentMemory, defaultSetup, type TableSetup } from '../../src/planner/cost/tables';
import { buildCostTables } from '../../src/planner/cost/tableBuilder';
import { allReduceMs, range, Topology } from '../../src/planner/cost/topology';
import { resolveCluster } from '../../src/planner/index';
import { ModelBuilder, transformer, twoLayerMlp } from './fixtures';

const close = (a: number, b: number, what: string): void => assert.ok(Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(b)), `${what}: ${a} vs ${b}`);


const topo = new Topology(resolveCluster('a100x8'));
const gpu = topo.gpus[0]!;
const P1 = 1024 * 4096 + 4096;
const P2 = 4096 * 1024 + 1024;
const forced = (c: LayerConfig) => () => [c];

test('data parallel ×4, fp32 Adam: all-reduce of 4-byte gradients, the update’s traffic, 16 bytes per parameter', () => {
  const model = twoLayerMlp();
  const t = buildCostTables(model, topo, range(0, 4), 64, { mode: 'dp', optimizer: 'adam' });
  const o = t.options[0]![0]!;
  const fc1 = model.layers[0]!;
  assert.equal(fc1.name, 'fc1');
  const one = analyticalTimes(fc1, gpu, 16, 1, 1, 4, 'fp32');
  close(o.forwardMs, one.forwardMs, 'forward of 16 samples');
  close(o.backwardMs, one.backwardMs, 'backward of 16 samples');
  assert.equal(o.allreduceBytes, 4 * P1);
  close(o.allreduceMs, allReduceMs(4 * P1, 4, topo.link([0, 1, 2, 3])), 'gradient all-reduce');
  // Read params + grads + m + v, write params + m + v: 7 × 4 bytes per parameter at 75 % of the datasheet bandwidth.
  close(o.updateMs, (P1 * 4 * 7) / (gpu.memoryBandwidthGBs * 1e6 * 0.75), 'Adam update');
  assert.deepEqual(o.memory, { weights: 4 * P1, gradients: 4 * P1, optimizer: 8 * P1, activations: 16 * 1024 * 4 });
  assert.equal(o.memoryBytes, 16 * P1 + 16 * 1024 * 4);
  assert.equal(o.mpForwardMs + o.mpBackwardMs + o.gatherMs + o.recomputeMs, 0);
  close(o.timeMs, o.forwardMs + o.backwardMs + o.allreduceMs + o.updateMs, 'time is the sum of its parts');
  // The edge fc1 → relu carries the batch's activations; no layout change, no cost.
  assert.deepEqual(t.edges[0], { from: 0, to: 1, bytes: 64 * 4096 * 4 });
  assert.equal(t.edgeCost(0, 0, 0), 0);
  close(assignmentCost(t, [0, 0, 0]), t.options.reduce((s, opts) => s + opts[0]!.timeMs, 0), 'assignment cost');
  close(assignmentMemory(t, [0, 0, 0]), t.options.reduce((s, opts) => s + opts[0]!.memoryBytes, 0), 'assignment memory');
  // bf16 activations: the same edge carries half the bytes (2-byte elements), and the cached fp32 edges stay as they were.
  const bf16 = buildCostTables(model, topo, range(0, 4), 64, { mode: 'dp', optimizer: 'adam', setup: { ...defaultSetup('adam'), precision: 'bf16' } });
  assert.equal(bf16.edges[0]!.bytes, 64 * 4096 * 2);
  assert.equal(buildCostTables(model, topo, range(0, 4), 64, { mode: 'dp', optimizer: 'adam' }).edges[0]!.bytes, 64 * 4096 * 4);
  // SGD keeps no state: 3 × 4 bytes per parameter streamed.
  const sgd = buildCostTables(twoLayerMlp(), topo, range(0, 4), 64, { mode: 'dp', optimizer: 'sgd' }).options[0]![0]!;
  close(sgd.updateMs, (P1 * 4 * 3) / (gpu.memoryBandwidthGBs * 1e6 * 0.75), 'SGD update');
});

test('gradient accumulation: micro-steps of batch/(d·A) samples; DP syncs once, ZeRO-2 every micro-step', () => {
  const base = defaultSetup('adam');
  const at = (setup: TableSetup) => buildCostTables(twoLayerMlp(), topo, range(0, 4), 64, { mode: 'dp', optimizer: 'adam', setup }).options[0]![0]!;
  const acc = at({ ...base, microSteps: 2 });
  const one = analyticalTimes(twoLayerMlp().layers[0]!, gpu, 8, 1, 1, 4, 'fp32');
  close(acc.forwardMs, 2 * one.forwardMs, 'two micro-steps of 8 samples');
  const ar = allReduceMs(4 * P1, 4, topo.link([0, 1, 2, 3]));
  close(acc.allreduceMs, ar, 'DP syncs once');
  const z2 = at({ ...base, microSteps: 2, zeroStage: 2 });
  const rs = reduceScatterMs(4 * P1, 4, topo.link([0, 1, 2, 3]));
  close(z2.allreduceMs, 2 * rs, 'ZeRO-2 reduce-scatters every micro-step');
  // ZeRO-1/2 shard the optimizer state: the update streams a quarter of the parameters.
  close(z2.updateMs, (P1 / 4) * 4 * 7 / (gpu.memoryBandwidthGBs * 1e6 * 0.75), 'sharded update');
  // ZeRO-1 shards the optimizer state too, but keeps whole gradients: it syncs once, as DP does.
  const z1 = at({ ...base, microSteps: 2, zeroStage: 1 });
  close(z1.updateMs, z2.updateMs, 'ZeRO-1 updates its shard only');
  close(z1.allreduceMs, rs, 'ZeRO-1 reduce-scatters once');
  // Both keep whole weights: the owners' updated slices are all-gathered once per iteration, after the step.
  for (const z of [z1, z2]) {
    assert.equal(z.stepGatherBytes, 4 * P1);
    close(z.stepGatherMs, allGatherMs(4 * P1, 4, topo.link([0, 1, 2, 3])), 'one gather of the fp32 weights');
    close(z.timeMs, z.forwardMs + z.backwardMs + z.allreduceMs + z.updateMs + z.stepGatherMs, 'the gather in the time');
  }
  assert.equal(acc.stepGatherMs, 0, 'DP updates whole weights on every rank');
  // Activations: one micro-step's 8 samples are alive.
  assert.equal(acc.memory.activations, 8 * 1024 * 4);
});

test('ZeRO-3 over 4: parameters all-gathered before forward and backward, gradients reduce-scattered, states sharded', () => {
  const setup = { ...defaultSetup('adam'), zeroStage: 3 as const };
  const o = buildCostTables(twoLayerMlp(), topo, range(0, 4), 64, { mode: 'dp', optimizer: 'adam', setup }).options[0]![0]!;
  const link = topo.link([0, 1, 2, 3]);
  assert.equal(o.gatherBytes, 4 * P1);
  close(o.gatherMs, allGatherMs(4 * P1, 4, link), 'one gather per pass');
  close(o.allreduceMs, reduceScatterMs(4 * P1, 4, link), 'reduce-scatter, no replicas to all-reduce');
  close(o.memory.weights + o.memory.gradients + o.memory.optimizer, (16 * P1) / 4, 'all 16 bytes per parameter sharded 4 ways');
  close(o.timeMs, o.forwardMs + o.backwardMs + o.allreduceMs + o.updateMs + 2 * o.gatherMs, 'two gathers in the time');
  // Offloaded to the CPU: gradients down over PCIe as the backward makes them (4 bytes per local parameter), then the
  // CPU's Adam step (3 × 4 + 2 × 8 bytes per parameter at host DRAM bandwidth) and the weights up (4 bytes) instead of the GPU update.
  const off = buildCostTables(twoLayerMlp(), topo, range(0, 4), 64, { mode: 'dp', optimizer: 'adam', setup: { ...setup, cpuOffload: true } }).options[0]![0]!;
  assert.equal(gpu.hostBandwidthGBs, 25, 'the a100x8 preset states its host link');
  close(off.hostDownloadMs, ((P1 / 4) * 4) / (25 * 1e6), 'gradients down');
  // Four ranks on the 8-GPU node: two GPUs' shares of its DRAM bandwidth each.
  close(off.updateMs, ((P1 / 4) * 4) / (25 * 1e6) + ((P1 / 4) * 28) / (2 * 51.2 * 1e6), 'CPU step + weights up');
  assert.equal(off.memory.gradients, 0);
  // A GPU whose spec states no host link gets PCIe 3.0 x16's achieved 12 GB/s; one with no host DRAM figure, no CPU step.
  const bare = resolveCluster('a100x8');
  for (const g of bare.gpus) {
    delete g.hostBandwidthGBs;
    delete g.hostMemoryBandwidthGBs;
  }
  assert.equal(resolveCluster('a100x8').gpus[0]!.hostBandwidthGBs, 25, 'a resolved preset is a copy: editing it leaves the preset alone');
  const unstated = buildCostTables(twoLayerMlp(), new Topology(bare), range(0, 4), 64, { mode: 'dp', optimizer: 'adam', setup: { ...setup, cpuOffload: true } }).options[0]![0]!;
  close(unstated.updateMs, ((P1 / 4) * 4) / (12 * 1e6), 'weights up at 12 GB/s, no CPU step priced');
});

test('Megatron splits: column-parallel all-reduces the input gradient in backward, row-parallel the output in forward', () => {
  const model = twoLayerMlp();
  const link = topo.link([0, 1, 2, 3]);
  const fc2 = model.layers[2]!;
  const col = buildCostTables(model, topo, range(0, 4), 64, { mode: 'all', optimizer: 'sgd', configsFor: forced({ d: 1, k: 4, split: 'out' }) }).options[2]![0]!;
  assert.equal(col.mpForwardMs, 0);
  close(col.mpBackwardMs, allReduceMs(64 * 4096 * 4, 4, link), 'input-gradient all-reduce');
  close(col.forwardMs, analyticalTimes(fc2, gpu, 64, 1 / 4, 1 / 4, 4, 'fp32').forwardMs, 'a quarter of the work');
  assert.equal(col.allreduceBytes, 0);
  assert.equal(col.memory.weights, (4 * P2) / 4);
  const row = buildCostTables(model, topo, range(0, 4), 64, { mode: 'all', optimizer: 'sgd', configsFor: forced({ d: 1, k: 4, split: 'in' }) }).options[2]![0]!;
  close(row.mpForwardMs, allReduceMs(64 * 1024 * 4, 4, link), 'output all-reduce');
  assert.equal(row.mpBackwardMs, 0);
  // Row-parallel keeps a quarter of the input activations.
  assert.equal(row.memory.activations, (64 * 4096 * 4) / 4);
  const heads = buildCostTables(model, topo, range(0, 4), 64, { mode: 'all', optimizer: 'sgd', configsFor: forced({ d: 1, k: 4, split: 'heads' }) }).options[2]![0]!;
  close(heads.mpForwardMs, row.mpForwardMs, 'heads: output all-reduce');
  close(heads.mpBackwardMs, col.mpBackwardMs, 'heads: input-gradient all-reduce');
  // The first layer has no producer: nothing to all-reduce for its input gradient.
  const first = buildCostTables(model, topo, range(0, 4), 64, { mode: 'all', optimizer: 'sgd', configsFor: forced({ d: 1, k: 4, split: 'out' }) }).options[0]![0]!;
  assert.equal(first.mpBackwardMs, 0);
  // Moving fc1's column-sharded output to relu's replicated input costs an all-gather-sized transfer; the reverse direction too.
  const mixed = buildCostTables(model, topo, range(0, 4), 64, { mode: 'all', optimizer: 'sgd', configsFor: (l) => (l.name === 'fc1' ? [{ d: 1, k: 4, split: 'out' }] : [{ d: 4, k: 1, split: 'none' }]) });
  // Per layout pair, forward + backward: 1×4 feature shards ↔ 4×1 batch shards lack 3/16 each way, from 3 peers each way.
  const sharded = mixed.layouts.findIndex((l) => l.d === 1 && l.k === 4 && l.sharded);
  const batch = mixed.layouts.findIndex((l) => l.d === 4 && l.k === 1);
  const L = mixed.layouts.length;
  assert.ok(sharded >= 0 && batch >= 0 && sharded !== batch);
  close(mixed.pairFraction[sharded * L + batch]!, 2 * (3 / 16), 'pair fraction');
  assert.equal(mixed.pairSources[sharded * L + batch], 6);
  assert.equal(mixed.pairSources[sharded * L + sharded], 0);
  const [fwd, bwd] = mixed.edgeCostParts(0, 0, 0);
  assert.ok(fwd > 0 && bwd > 0, `${fwd} ${bwd}`);
  close(fwd + bwd, mixed.edgeCost(0, 0, 0), 'parts add up');
});

test('layer configurations on n devices: d·k = n for every divisor k, splits by op class', async () => {
  const { computeShare, describeConfig, divisors, inputLayout, layerConfigs, opClass, outFeatures, outputLayout, paramShare } = await import('../../src/planner/cost/configs');
  assert.deepEqual(divisors(12), [1, 2, 3, 4, 6, 12]);
  assert.deepEqual(divisors(1), [1]);
  const model = twoLayerMlp();
  const [fc1, relu] = model.layers;
  const key = (cs: LayerConfig[]) => cs.map((c) => `${c.d}x${c.k}${c.split}`);
  assert.deepEqual(key(layerConfigs(fc1!, 4, 'all')), ['4x1none', '2x2out', '2x2in', '1x4out', '1x4in']);
  assert.deepEqual(key(layerConfigs(fc1!, 4, 'dp')), ['4x1none']);
  assert.deepEqual(key(layerConfigs(fc1!, 1, 'all')), ['1x1none']);
  assert.deepEqual(key(layerConfigs(relu!, 2, 'all')), ['2x1none', '1x2shard', '1x2rep']);
  // A linear of 2 outputs cannot split 4 ways by outputs; its 1024 inputs can.
  const narrow = new ModelBuilder('n', [1024]);
  narrow.linear('head', 'input', 2);
  assert.deepEqual(key(layerConfigs(narrow.build().layers[0]!, 4, 'all')), ['4x1none', '2x2out', '2x2in', '1x4in']);
  // Attention splits by heads only when the heads divide evenly; softmax is not shardable along its own axis.
  const mha = { ...fc1!, op: 'mha' as const, attrs: { numHeads: 6 } };
  assert.deepEqual(key(layerConfigs(mha, 4, 'all')), ['4x1none', '2x2heads']);
  assert.equal(opClass({ ...relu!, attrs: { fn: 'softmax' } }), 'other');
  assert.equal(opClass({ ...relu!, attrs: { fn: 'gelu' } }), 'shardable');
  assert.equal(opClass({ ...fc1!, op: 'conv', attrs: { transposed: true } }), 'other');
  assert.equal(opClass({ ...fc1!, op: 'conv', attrs: {} }), 'column');
  assert.equal(opClass({ ...fc1!, op: 'rnn', attrs: {} }), 'other');
  // Conv output channels: dim 0 of (C,H,W), the last dim of (H,W,C).
  const conv = { ...fc1!, op: 'conv' as const, outputShape: [64, 7, 5] };
  assert.equal(outFeatures(conv), 64);
  assert.equal(outFeatures(conv, 'channels_last'), 5);
  assert.equal(outFeatures({ ...fc1!, outputShape: [] }), 1);
  assert.deepEqual(inputLayout({ d: 2, k: 2, split: 'in' }), { d: 2, k: 2, sharded: true });
  assert.deepEqual(inputLayout({ d: 2, k: 2, split: 'out' }), { d: 2, k: 2, sharded: false });
  assert.deepEqual(outputLayout({ d: 2, k: 2, split: 'out' }), { d: 2, k: 2, sharded: true });
  assert.deepEqual(outputLayout({ d: 2, k: 2, split: 'in' }), { d: 2, k: 2, sharded: false });
  assert.deepEqual(outputLayout({ d: 4, k: 1, split: 'none' }), { d: 4, k: 1, sharded: false });
  assert.equal(computeShare({ d: 1, k: 4, split: 'rep' }), 1);
  assert.equal(computeShare({ d: 1, k: 4, split: 'shard' }), 0.25);
  assert.equal(paramShare({ d: 1, k: 4, split: 'out' }), 0.25);
  assert.equal(paramShare({ d: 4, k: 1, split: 'none' }), 1);
  assert.equal(describeConfig({ d: 1, k: 1, split: 'none' }), 'single GPU');
  assert.equal(describeConfig({ d: 4, k: 1, split: 'none' }), 'data ×4');
  assert.equal(describeConfig({ d: 1, k: 4, split: 'in' }), 'model parallel (split inputs) ×4');
  assert.equal(describeConfig({ d: 2, k: 2, split: 'heads' }), 'data ×2 · model parallel (split heads) ×2');
});

test('a device given no samples (a replica with an empty share of a small batch) does no work and launches no kernel', () => {
  const fc1 = twoLayerMlp().layers[0]!;
  assert.deepEqual(analyticalTimes(fc1, gpu, 0, 1, 1, 4, 'fp32'), { forwardMs: 0, backwardMs: 0 });
  const one = analyticalTimes(fc1, gpu, 1, 1, 1, 4, 'fp32');
  assert.ok(one.forwardMs > 0 && one.backwardMs > one.forwardMs, JSON.stringify(one));
});

test('HSDP ZeRO-3 over 2 nodes × 8: gradients reduce-scatter inside the node, then each 1/8 shard all-reduces across nodes', () => {
  const twoNodes = new Topology(resolveCluster('h100x16-2node'));
  const setup = { ...defaultSetup('adam'), zeroStage: 3 as const, hybridShard: true };
  const o = buildCostTables(twoLayerMlp(), twoNodes, range(0, 16), 128, { mode: 'dp', optimizer: 'adam', setup }).options[0]![0]!;
  const inNode = twoNodes.link(range(0, 8));
  const across = twoNodes.link(range(0, 16));
  close(o.allreduceMs, reduceScatterMs(4 * P1, 8, inNode) + allReduceMs((4 * P1) / 8, 2, across), 'RS in node + AR of the shard across nodes');
  close(o.gatherMs, allGatherMs(4 * P1, 8, inNode), 'parameters gathered inside the node only');
  close(o.memory.weights + o.memory.gradients + o.memory.optimizer, (16 * P1) / 8, 'states sharded 8 ways, replicated twice');
});

test('a group spanning two nodes runs at the slower of its links (the network), with the larger latency', () => {
  const twoNodes = new Topology(resolveCluster('h100x16-2node'));
  const inNode = twoNodes.link(range(0, 8));
  const across = twoNodes.link(range(0, 16));
  assert.ok(across.bytesPerMs < inNode.bytesPerMs, `${across.bytesPerMs} < ${inNode.bytesPerMs}`);
  assert.equal(across.bytesPerMs, Math.min(across.fabric.inter.busBytesPerMs, across.fabric.intra.busBytesPerMs));
  assert.equal(across.alphaMs, Math.max(across.fabric.inter.alphaMs, across.fabric.intra.alphaMs));
});

test('HSDP inside one node shards over the whole node and replicates nothing (plain ZeRO-3)', () => {
  const setup = { ...defaultSetup('adam'), zeroStage: 3 as const, hybridShard: true };
  const o = buildCostTables(twoLayerMlp(), topo, range(0, 8), 128, { mode: 'dp', optimizer: 'adam', setup }).options[0]![0]!;
  const node = topo.link(range(0, 8));
  close(o.allreduceMs, reduceScatterMs(4 * P1, 8, node), 'a reduce-scatter over the node, no replica all-reduce');
  close(o.memory.weights + o.memory.gradients + o.memory.optimizer, (16 * P1) / 8, 'states sharded 8 ways');
});

test('a batch of 4 on 4 GPUs is data-parallel with one sample each; more GPUs than samples are not', () => {
  const four = buildCostTables(twoLayerMlp(), topo, range(0, 4), 4, { mode: 'dp', optimizer: 'sgd' }).options[0]!;
  assert.ok(four.some((o) => o.config.d === 4), JSON.stringify(four.map((o) => o.config)));
  const three = buildCostTables(twoLayerMlp(), topo, range(0, 4), 3, { mode: 'dp', optimizer: 'sgd' }).options[0]!;
  assert.ok(three.every((o) => o.config.d <= 3), JSON.stringify(three.map((o) => o.config)));
});

test('every option names its own layouts: on 2, 4 and 8 GPUs each layout index resolves to the option’s (d, k, sharded), and no two indices name one layout', async () => {
  const { inputLayout, outputLayout, layoutKey } = await import('../../src/planner/cost/configs');
  const model = twoLayerMlp();
  for (const n of [2, 4, 8]) {
    const t = buildCostTables(model, topo, range(0, n), 64, { mode: 'all', optimizer: 'adam' });
    const keys = t.layouts.map(layoutKey);
    assert.equal(new Set(keys).size, keys.length, `${n} GPUs: distinct layouts ${keys.join(' ')}`);
    assert.ok(keys.includes(`1x${n}s`) && keys.includes(`${n}x1r`), `${n} GPUs: the fully split and the data-parallel layouts are both there (${keys.join(' ')})`);
    t.options.forEach((options, li) =>
      options.forEach((o, oi) => {
        assert.equal(keys[t.inLayouts[li]![oi]!], layoutKey(inputLayout(o.config)), `${n} GPUs, layer ${li} option ${oi} input`);
        assert.equal(keys[t.outLayouts[li]![oi]!], layoutKey(outputLayout(o.config)), `${n} GPUs, layer ${li} option ${oi} output`);
      }),
    );
  }
});

test('full recompute of a row-parallel layer repeats its forward and the forward all-reduce with it', () => {
  const setup = { ...defaultSetup('sgd'), recompute: 'full' as const };
  const row = buildCostTables(twoLayerMlp(), topo, range(0, 4), 64, { mode: 'all', optimizer: 'sgd', setup, configsFor: forced({ d: 1, k: 4, split: 'in' }) }).options[2]![0]!;
  assert.ok(row.mpForwardMs > 0);
  close(row.recomputeMs, row.forwardMs + row.mpForwardMs, 'recompute = forward + its all-reduce');
  const kept = buildCostTables(twoLayerMlp(), topo, range(0, 4), 64, { mode: 'all', optimizer: 'sgd', configsFor: forced({ d: 1, k: 4, split: 'in' }) }).options[2]![0]!;
  assert.equal(kept.recomputeMs, 0, 'nothing recomputed without recompute');
});

test('the data-group link of a configuration does not depend on which configurations were asked before (its memo keys are distinct)', () => {
  for (const n of [2, 4, 8]) {
    const t = buildCostTables(twoLayerMlp(), topo, range(0, n), 64, { mode: 'all', optimizer: 'adam' });
    const configs: LayerConfig[] = [];
    for (let k = n; k >= 1; k--) if (n % k === 0) configs.push({ d: n / k, k, split: k === 1 ? 'none' : 'out' });
    for (const c of configs) {
      // Data groups are strided (device i, i+k, …): the slowest of the k groups carries the all-reduce.
      const groups = range(0, c.k).map((ki) => range(ki, c.d, c.k));
      const links = groups.map((g) => topo.link(g));
      const slowest = links.reduce((a, b) => (b.bytesPerMs < a.bytesPerMs ? b : a));
      assert.deepEqual(t.dataGroupLink(c), slowest, `${n} GPUs, d=${c.d} k=${c.k}`);
      assert.equal(t.dataGroupLink(c).fabric.perNode, c.d, 'the group spans its d ranks');
    }
  }
});

test('an embedding lookup is memory-bound: the forward streams its table and activations once, the backward twice (the gradient table is written too)', () => {
  const m = new ModelBuilder('emb', [16]);
  const vocab = 50_000;
  const table = vocab * 1024;
  m.add('wte', 'embedding', ['input'], [[16]], [16, 1024], { params: table, forwardFlops: 16 * 1024, backwardFlops: 16 * 1024, weightGradBytes: table * 4 }, { numEmbeddings: vocab, embeddingDim: 1024 });
  const t = analyticalTimes(m.build().layers[0]!, gpu, 8, 1, 1, 4, 'fp32');
  // Token ids and vectors in and out, fp32, and the 4-byte table; HBM at 75% of its datasheet rate, as every roofline here.
  const bytes = (16 + 16 * 1024) * 4 * 8 + table * 4;
  // Plus a kernel launch per pass (≈ 6 µs; the backward launches two).
  const stream = bytes / (gpu.memoryBandwidthGBs * 1e6 * 0.75);
  close(t.forwardMs, stream + 0.006, 'forward: one pass over the table and activations');
  close(t.backwardMs, 2 * stream + 0.012, 'backward: read them again and write their gradients');
});

test('full recompute: a layer outside the blocks keeps its activations even when a block layer has its exact shape', () => {
  // ln_f (outside any block) has h.0.ln_2's op, shapes and weights; under full recompute h.0.ln_2 keeps nothing, ln_f all it saves.
  const model = transformer(2, 64, 128, 4);
  const at = (recompute: 'none' | 'full') => buildCostTables(model, topo, [0], 4, { mode: 'dp', optimizer: 'adam', setup: { ...defaultSetup('adam'), recompute } });
  const index = (name: string) => model.layers.findIndex((l) => l.name === name);
  const full = at('full');
  const none = at('none');
  const acts = (t: ReturnType<typeof at>, name: string) => t.options[index(name)]![0]!.memory.activations;
  assert.ok(acts(none, 'ln_f') > 0);
  assert.equal(acts(full, 'ln_f'), acts(none, 'ln_f'), 'outside the blocks: kept');
  assert.equal(acts(full, 'h.0.ln_2'), 0, 'inside a block: recomputed');
  assert.equal(acts(full, 'h.1.ln_2'), 0);
  // A block's first layer keeps its input: the same for every block.
  assert.ok(acts(full, 'h.1.ln_1') > 0);
  // What the recompute brings back before the backward: everything the layer saves less what it kept, for the
  // option's 4 samples (fp32, no split); nothing for a layer outside the blocks, which recomputes nothing.
  const recomputed = (name: string) => full.options[index(name)]![0]!.recomputedBytes;
  close(recomputed('h.0.ln_2'), acts(none, 'h.0.ln_2'), 'kept nothing: all of it comes back');
  // A norm saves only its input, which the block's first layer keeps: nothing else to bring back.
  assert.ok(acts(full, 'h.1.ln_1') > 0);
  close(recomputed('h.1.ln_1'), acts(none, 'h.1.ln_1') - acts(full, 'h.1.ln_1'), 'kept its input: the rest comes back');
  assert.equal(recomputed('ln_f'), 0);
  assert.equal(none.options[index('h.0.ln_2')]![0]!.recomputedBytes, 0, 'no recompute, nothing brought back');
  // A model whose dtype is unset (0) is costed in fp32, the catalogue's default.
  const unset = buildCostTables({ ...model, dtypeBytes: 0 }, topo, [0], 4, { mode: 'dp', optimizer: 'adam', setup: { ...defaultSetup('adam'), recompute: 'full' } });
  assert.deepEqual(unset.options.map((o) => o[0]!.memoryBytes), full.options.map((o) => o[0]!.memoryBytes));
});

test('HSDP whose shard group is the whole data group is plain ZeRO: its gathers run on the data groups’ slowest link', () => {
  // 14 GPUs on 2 × 8 as d=2 × k=7: data group 0 is {0, 7}, inside node 0, but group 1 is {1, 8}, across the network.
  const b = new ModelBuilder('wide', [4096]);
  b.linear('fc', 'x', 4096 * 7);
  const twoNodes = new Topology(resolveCluster('h100x16-2node'));
  const t = buildCostTables(b.build(), twoNodes, range(0, 14), 28, { mode: 'hybrid', optimizer: 'adam', setup: { ...defaultSetup('adam'), zeroStage: 3, hybridShard: true }, configsFor: () => [{ d: 2, k: 7, split: 'out' }] });
  const o = t.options[0]![0]!;
  assert.equal(o.gatherMs, allGatherMs(o.gatherBytes, 2, twoNodes.link([1, 8])));
  assert.ok(o.gatherMs > allGatherMs(o.gatherBytes, 2, twoNodes.link([0, 7])));
});

test('activations held per GPU: a sharded or input-split layer keeps 1/k of its group\'s samples, a replicated or output-split one all of them', () => {
  const acts = (layer: number, c: LayerConfig) => buildCostTables(twoLayerMlp(), topo, range(0, 4), 64, { mode: 'all', optimizer: 'sgd', configsFor: forced(c) }).options[layer]![0]!.memory.activations;
  // Data ×4: each GPU holds 16 of the 64 samples, the unit the others are measured in.
  const relu = 1;
  const quarter = acts(relu, { d: 4, k: 1, split: 'none' });
  assert.ok(quarter > 0);
  close(acts(relu, { d: 1, k: 4, split: 'rep' }), 4 * quarter, 'replicated: every GPU keeps all 64 samples');
  close(acts(relu, { d: 1, k: 4, split: 'shard' }), quarter, 'sharded: a quarter of them');
  const fc2 = 2;
  const fc2Quarter = acts(fc2, { d: 4, k: 1, split: 'none' });
  close(acts(fc2, { d: 1, k: 4, split: 'in' }), fc2Quarter, 'input split: its input quarter of the features');
  close(acts(fc2, { d: 1, k: 4, split: 'out' }), 4 * fc2Quarter, 'output split: its whole input, replicated');
});

test('every layout change is priced: bytes moved over the pair\'s link plus a latency per source, 0 only on the diagonal', () => {
  const t = buildCostTables(twoLayerMlp(), topo, range(0, 4), 64, { mode: 'all', optimizer: 'sgd' });
  const L = t.layouts.length;
  assert.ok(L >= 3, `${L} layouts`);
  for (let e = 0; e < t.edges.length; e++) {
    const m = t.edgeLayoutCost(e);
    for (let a = 0; a < L; a++) {
      for (let b = 0; b < L; b++) {
        const p = a * L + b;
        if (a === b) {
          assert.equal(m[p], 0);
          continue;
        }
        const expected = (t.edges[e].bytes * t.pairFraction[p]!) / t.pairLink[p]!.bytesPerMs + t.pairSources[p]! * t.pairLink[p]!.alphaMs;
        close(m[p]!, expected, `edge ${e}, layouts ${a} → ${b}`);
        assert.ok(t.pairFraction[p]! === 0 || m[p]! > 0, `a change that moves data costs time (${a} → ${b})`);
      }
    }
  }
});

test('a table lent another setup\'s compute re-prices only what ZeRO, HSDP and offload change: equal to one built whole, and not lent across recompute or accumulation', () => {
  const model = transformer();
  const cluster = new Topology(resolveCluster('h100x16-2node'));
  const devices = range(0, 16);
  const base: TableSetup = { ...defaultSetup('adam'), precision: 'bf16', ampStyle: 'master-weights', recompute: 'selective', microSteps: 2 };
  const build = (setup: TableSetup, lent?: ReturnType<typeof buildCostTables>) => buildCostTables(model, cluster, devices, 64, { mode: 'hybrid', optimizer: 'adam', setup, ...(lent ? { sameComputeAs: lent } : {}) });
  const first = build(base);
  for (const change of [{ zeroStage: 1 }, { zeroStage: 2 }, { zeroStage: 3 }, { zeroStage: 3, hybridShard: true }, { zeroStage: 3, cpuOffload: true }, { zeroStage: 3, cpuOffload: true, paramOffload: true }, { optimizer: 'sgd' }] as const) {
    const setup: TableSetup = { ...base, ...change };
    const lent = build(setup, first);
    const whole = build(setup);
    assert.notEqual(lent.options[0], whole.options[0], 'the lent table is its own');
    assert.deepEqual(lent.options, whole.options, `same options for ${JSON.stringify(change)}`);
    assert.deepEqual(lent.setup, setup);
    const c = whole.options[1]![whole.options[1]!.length - 1]!.config;
    assert.deepEqual(lent.shardGroup(c), whole.shardGroup(c));
  }
  // Recompute and accumulation change the compute itself: the lent table is ignored, not misread.
  for (const change of [{ recompute: 'full' }, { microSteps: 4 }, { precision: 'fp32', ampStyle: undefined }] as const) {
    const setup: TableSetup = { ...base, ...change };
    assert.deepEqual(build(setup, first).options, build(setup).options, `built whole for ${JSON.stringify(change)}`);
  }
});
