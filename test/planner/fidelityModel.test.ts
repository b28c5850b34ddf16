/**
 * Cost-model terms added for issue 12's fidelity rows, checked by the physics
 * they stand for (bytes over bandwidth, counts per layer), never by outputs.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { AnalyzedLayer } from '../../src/core/ir';
import { planModel, resolveCluster } from '../../src/planner/index';
import { analyticalTimes, causalTileFraction, fusedRecomputeGemm, nchwTransposeBytes, scoreElements, unfusedAttentionBytes } from '../../src/planner/cost/compute';
import { gemmEfficiency } from '../../src/planner/cost/efficiency';
import { chainModel } from '../profiler/fixtures';
import { gptModel } from './gptSpec';

const a100 = () => resolveCluster('a100x8').gpus[0]!;
/** GPT's sdpa, unmasked unless `causal` (a causal fused kernel skips tiles: tested on its own below). */
const sdpaOf = (seq: number, causal = false): AnalyzedLayer => {
  const l = gptModel({ layers: 2, hidden: 1024, heads: 16, seq }).layers.find((x) => x.op === 'sdpa')!;
  return { ...l, attrs: { ...l.attrs, causal } };
};

/** Time unfused attention adds over the fused kernel, forward and backward. */
function unfusedExtra(l: AnalyzedLayer, gpu = a100(), bytes = 2, precision: 'fp16' | 'fp32' = 'fp16') {
  const fused = analyticalTimes(l, gpu, 4, 1, 1, bytes, precision, { attention: 'fused' });
  const unfused = analyticalTimes(l, gpu, 4, 1, 1, bytes, precision, { attention: 'unfused' });
  return { f: unfused.forwardMs - fused.forwardMs, b: unfused.backwardMs - fused.backwardMs, fused };
}

test('unfused attention: the score matrix heads·T·T is what it adds, so doubling T quadruples the extra time', () => {
  const short = sdpaOf(512);
  const long = sdpaOf(1024);
  assert.equal(scoreElements(short), 16 * 512 * 512);
  const e1 = unfusedExtra(short);
  const e2 = unfusedExtra(long);
  assert.ok(e1.f > 0 && e1.b > 0);
  assert.ok(Math.abs(e2.f / e1.f - 4) < 1e-6, `forward extra ratio ${e2.f / e1.f}`);
  // Backward passes over the scores more often than forward (dP, dropout and softmax backward).
  assert.ok(e1.b > e1.f);
  // Default (no option) is the fused kernel: FlashAttention never writes the scores.
  const plain = analyticalTimes(short, a100(), 4, 1, 1, 2, 'fp16');
  assert.equal(plain.forwardMs, e1.fused.forwardMs);
});

test('a fused kernel recomputes QKᵀ in its backward: one T_q × T_k × d_k GEMM per head more than eager attention', () => {
  // sdpa on (heads, T, d): 16 heads of 512 × 512 × 64, 4 samples.
  const l = sdpaOf(512);
  const r = fusedRecomputeGemm(l, 4, 1)!;
  assert.equal(r.flops, 2 * 512 * 512 * 64 * 16 * 4);
  assert.deepEqual(r.shape, { m: 512, n: 512, k: 64, batch: 16 * 4 });
  // nn.MultiheadAttention, cross-attention: heads from its attrs, d_k = E / heads, half the heads on a 2-way split.
  const mha = { op: 'mha', inputShapes: [[7, 64], [11, 64], [11, 64]], attrs: { numHeads: 4 } } as unknown as AnalyzedLayer;
  assert.deepEqual(fusedRecomputeGemm(mha, 3, 0.5), { flops: 2 * 7 * 11 * 16 * 4 * 3 * 0.5, shape: { m: 7, n: 11, k: 16, batch: 6 } });
  // In the time: fused backward − eager backward = the recompute GEMM − eager's backward score passes.
  const gpu = a100();
  const { fused } = unfusedExtra(l, gpu);
  const eager = analyticalTimes(l, gpu, 4, 1, 1, 2, 'fp16', { attention: 'unfused' });
  const passesMs = (unfusedAttentionBytes(l, 2).backward * 4) / (gpu.memoryBandwidthGBs * 1e6 * 0.75);
  const recomputeMs = r.flops / (312e9 * gemmEfficiency(r.shape, gpu, 'fp16'));
  assert.ok(Math.abs(fused.backwardMs - eager.backwardMs - (recomputeMs - passesMs)) < 1e-9 * eager.backwardMs, `${fused.backwardMs} vs ${eager.backwardMs}`);
  const forwardPassesMs = (unfusedAttentionBytes(l, 2).forward * 4) / (gpu.memoryBandwidthGBs * 1e6 * 0.75);
  assert.ok(Math.abs(fused.forwardMs + forwardPassesMs - eager.forwardMs) < 1e-9 * eager.forwardMs, 'the forward is eager less its score passes');
});

test('a causal fused kernel computes only the 128×128 score tiles on or below the diagonal, forward, backward and recompute', () => {
  // T = 4096: 32 query blocks, block i sees keys 0..i: 32·33/2 = 528 of 1024 tiles.
  assert.equal(causalTileFraction(sdpaOf(4096, true), 'fused'), 528 / 1024);
  assert.equal(causalTileFraction(sdpaOf(100, true), 'fused'), 1, 'one block: nothing to skip');
  // Top-left alignment with more keys than queries: 2 query blocks over 4 key blocks see 1 + 2 of 8.
  const prefix = { op: 'sdpa', inputShapes: [[4, 256, 64], [4, 512, 64], [4, 512, 64]], attrs: { causal: true } } as unknown as AnalyzedLayer;
  assert.equal(causalTileFraction(prefix, 'fused'), 3 / 8);
  // More queries than keys: 4 query blocks over 2 key blocks see 1 + 2 + 2 + 2 of 8.
  const tail = { op: 'sdpa', inputShapes: [[4, 512, 64], [4, 256, 64], [4, 256, 64]], attrs: { causal: true } } as unknown as AnalyzedLayer;
  assert.equal(causalTileFraction(tail, 'fused'), 7 / 8);
  // No queries (or no keys) at all: nothing to divide, every tile counted rather than a NaN.
  const empty = { op: 'sdpa', inputShapes: [[4, 0, 64], [4, 512, 64], [4, 512, 64]], attrs: { causal: true } } as unknown as AnalyzedLayer;
  assert.equal(causalTileFraction(empty, 'fused'), 1);
  // Eager attention computes and masks every score; no mask, nothing skipped; an mha's masks are general ones.
  assert.equal(causalTileFraction(sdpaOf(4096, true), 'unfused'), 1);
  assert.equal(causalTileFraction(sdpaOf(4096, false), 'fused'), 1);
  assert.equal(causalTileFraction({ op: 'mha', inputShapes: [[4096, 64]], attrs: { causal: true, numHeads: 2, needWeights: false } } as unknown as AnalyzedLayer, 'fused'), 1);
  // In the time: at 4096 tokens the kernel is compute-bound, so its GEMM time scales by the fraction, recompute included.
  const gpu = a100();
  const open = analyticalTimes(sdpaOf(4096), gpu, 2, 1, 1, 2, 'bf16');
  const masked = analyticalTimes(sdpaOf(4096, true), gpu, 2, 1, 1, 2, 'bf16');
  const launch = { forward: 0.006, backward: 0.012 };
  assert.ok(Math.abs((masked.forwardMs - launch.forward) / (open.forwardMs - launch.forward) - 528 / 1024) < 1e-9, `forward ${masked.forwardMs} vs ${open.forwardMs}`);
  assert.ok(Math.abs((masked.backwardMs - launch.backward) / (open.backwardMs - launch.backward) - 528 / 1024) < 1e-9, `backward ${masked.backwardMs} vs ${open.backwardMs}`);
});

test('cross-attention scores are heads · T_query · T_key, read from each input (the key sequence may differ from the query)', () => {
  const mha = { op: 'mha', inputShapes: [[7, 64], [11, 64], [11, 64]], attrs: { numHeads: 4 } } as unknown as AnalyzedLayer;
  assert.equal(scoreElements(mha), 4 * 7 * 11);
  const sdpa = { op: 'sdpa', inputShapes: [[2, 5, 32], [2, 9, 32], [2, 9, 32]], attrs: {} } as unknown as AnalyzedLayer;
  assert.equal(scoreElements(sdpa), 2 * 5 * 9);
  // Self-attention: one input serves as query and key.
  assert.equal(scoreElements({ op: 'mha', inputShapes: [[6, 64]], attrs: { numHeads: 2 } } as unknown as AnalyzedLayer), 2 * 6 * 6);
});

test('unfused attention is memory-bound: twice the HBM bandwidth halves its extra time; fp32 scores cost (6·4+1)/(6·2+1) of fp16', () => {
  const l = sdpaOf(1024);
  const gpu = a100();
  const fast = { ...gpu, memoryBandwidthGBs: 2 * gpu.memoryBandwidthGBs };
  const base = unfusedExtra(l, gpu);
  assert.ok(Math.abs(unfusedExtra(l, fast).f / base.f - 0.5) < 1e-6);
  const fp32 = unfusedExtra(l, gpu, 4, 'fp32');
  assert.ok(Math.abs(fp32.f / base.f - 25 / 13) < 1e-6, `fp32/fp16 ${fp32.f / base.f}`);
});

/** A ResNet bottleneck's 3×3 conv (64 → 64 channels, 56×56) in PyTorch's channels-first layout. */
function conv3x3(): AnalyzedLayer {
  const conv = { rank: 2, outChannels: 64, kernel: [3, 3], stride: [1, 1], padding: [[1, 1], [1, 1]], dilation: [1, 1], groups: 1, bias: false };
  return chainModel('c', 'channels_first', [64, 56, 56], [['c', 'conv', conv, 'Conv2d']], 'pytorch').layers[0]!;
}

test('NCHW tensor-core conv: the transposes add 2·(input + output) bytes over bandwidth forward, twice that backward', () => {
  const l = conv3x3();
  const gpu = a100();
  const io = (64 * 56 * 56 + 64 * 56 * 56) * 4;
  assert.equal(nchwTransposeBytes(l, 4, 'tf32', 'channels_first'), 2 * io);
  const nhwc = analyticalTimes(l, gpu, 32, 1, 1, 4, 'tf32', { memoryFormat: 'channels_last' });
  const nchw = analyticalTimes(l, gpu, 32, 1, 1, 4, 'tf32', { memoryFormat: 'channels_first' });
  const fwd = nchw.forwardMs - nhwc.forwardMs;
  const bwd = nchw.backwardMs - nhwc.backwardMs;
  assert.ok(fwd > 0);
  assert.ok(Math.abs(bwd / fwd - 2) < 1e-6, `backward/forward transpose time ${bwd / fwd}`);
  // Bytes over bandwidth: double the bandwidth, half the transpose time.
  const fast = { ...gpu, memoryBandwidthGBs: 2 * gpu.memoryBandwidthGBs };
  const fastFwd = analyticalTimes(l, fast, 32, 1, 1, 4, 'tf32', { memoryFormat: 'channels_first' }).forwardMs - analyticalTimes(l, fast, 32, 1, 1, 4, 'tf32', { memoryFormat: 'channels_last' }).forwardMs;
  assert.ok(Math.abs(fastFwd / fwd - 0.5) < 1e-6);
});

test('NCHW costs nothing on CUDA-core fp32 (native NCHW kernels) and nothing for non-conv layers', () => {
  const l = conv3x3();
  assert.equal(nchwTransposeBytes(l, 4, 'fp32', 'channels_first'), 0);
  assert.equal(nchwTransposeBytes(l, 2, 'fp16', 'channels_last'), 0);
  assert.ok(nchwTransposeBytes(l, 2, 'fp16', 'channels_first') > 0);
  assert.equal(nchwTransposeBytes(sdpaOf(512), 2, 'fp16', 'channels_first'), 0);
});

test('a PyTorch CNN plan at tf32 defaults to its NCHW layout and is slower than the same plan in channels_last', () => {
  const m = chainModel('cnn', 'channels_first', [64, 56, 56], [['c', 'conv', { rank: 2, outChannels: 64, kernel: [3, 3], stride: [1, 1], padding: [[1, 1], [1, 1]], dilation: [1, 1], groups: 1, bias: false }, 'Conv2d']], 'pytorch');
  const opts = { batch: 64, objective: 'throughput', strategies: 'dp', optimizer: 'sgd', gpus: 1, maxGpus: 1, precision: 'tf32' } as const;
  const step = (o: object) => {
    const r = planModel(m, resolveCluster('a100x8'), { ...opts, ...o });
    assert.ok(r.feasible);
    return r.plan.stepTimeMs;
  };
  assert.equal(step({}), step({ memoryFormat: 'channels_first' }));
  assert.ok(step({}) > step({ memoryFormat: 'channels_last' }));
});

test('a non-GEMM kernel with many FLOPs per element runs on CUDA cores at a quarter of the fp32 peak, whatever the precision', () => {
  // An 11×11 stride-1 average pool: 121 adds per output against 8 bytes moved, right of the roofline's ridge.
  const elements = 64 * 56 * 56;
  const pool = {
    op: 'pool', inputShapes: [[64, 56, 56]], outputShape: [64, 56, 56], attrs: { mode: 'avg', rank: 2, kernel: [11, 11], strides: [1, 1] },
    workload: { forwardFlops: 121 * elements, backwardFlops: 121 * elements, params: 0, activationBytes: elements * 4 },
  } as unknown as AnalyzedLayer;
  const v100 = resolveCluster('dgx1-v100').gpus[0]!;
  for (const [bytes, precision] of [[4, 'fp32'], [2, 'fp16']] as const) {
    // Samples 8 minus samples 4: the launch overheads cancel, four samples' compute is left.
    const t = (samples: number) => analyticalTimes(pool, v100, samples, 1, 1, bytes, precision);
    const perSampleMs = (121 * elements) / (0.25 * v100.tflops * 1e9);
    assert.ok(Math.abs(t(8).forwardMs - t(4).forwardMs - 4 * perSampleMs) < 1e-9, `${precision}: ${t(8).forwardMs - t(4).forwardMs} vs ${4 * perSampleMs}`);
  }
});
