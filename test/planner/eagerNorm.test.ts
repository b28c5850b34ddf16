/**
 * A Python RMSNorm (transformers' LlamaRMSNorm, T5LayerNorm; torchtitan's default) runs one eager kernel per op
 * on an fp32 copy. Its bytes are counted here by hand from the op sequence, then checked in the layer's time.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { AnalyzedLayer, AnalyzedModel } from '../../src/core/ir';
import { product } from '../../src/core/ir';
import { analyzeSource } from '../../src/frontends/index';
import { planModel, resolveCluster } from '../../src/planner/index';
import { analyticalTimes } from '../../src/planner/cost/compute';
import { eagerNormTraffic } from '../../src/planner/cost/eagerNorm';

async function hfModel(config: string, model: string, seq: number): Promise<AnalyzedModel> {
  const src = [`from transformers import ${config}, ${model}`, `config = ${config}(vocab_size=1000, hidden_size=256, intermediate_size=512, num_hidden_layers=2, num_attention_heads=4)`, `model = ${model}(config)`, ''].join('\n');
  const r = await analyzeSource('model.py', src, { sequenceLength: seq });
  assert.ok(r.models[0], `no model from ${config}`);
  return r.models[0];
}

const a100 = () => resolveCluster('a100x8').gpus[0]!;

test('eager RMSNorm traffic, counted by hand from the op sequence at bf16 and at fp32', () => {
  const norm = { op: 'layernorm', attrs: { eagerFp32: true } } as unknown as AnalyzedLayer;
  // bf16 (2 bytes), forward per element: to(fp32) 2+4, pow 4+4, mean 4, x·rstd 4+4, to(bf16) 4+2, weight·y 2+2 = 36;
  // kernels: the six plus `+ eps` and rsqrt on the per-row mean = 8.
  // Backward: g·w 2+2, g·y 2+2+2, its row sum 2, to(fp32) 2+4, dy·rstd 4+4, dy·x 4+4+4, its row sum 4, mean's
  // expand 4, pow(1) 4+4, 2·x 4+4, product 4+4+4, the two paths added 4+4+4, to(bf16) 4+2 = 92, in 14 kernels.
  assert.deepEqual(eagerNormTraffic(norm, 2), { forwardBytesPerElement: 36, backwardBytesPerElement: 92, forwardKernels: 8, backwardKernels: 14 });
  // fp32 activations: the casts do not run (.to() returns the same tensor). Forward: pow 4+4, mean 4, x·rstd 4+4,
  // weight·y 4+4 = 28 in 6 kernels. Backward: g·w 4+4, g·y 4+4+4, its sum 4, then the fp32 kernels as above
  // (8 + 12 + 4 + 4 + 8 + 8 + 12 + 12 = 68) = 92 in 12.
  assert.deepEqual(eagerNormTraffic(norm, 4), { forwardBytesPerElement: 28, backwardBytesPerElement: 92, forwardKernels: 6, backwardKernels: 12 });
  assert.equal(eagerNormTraffic({ op: 'layernorm', attrs: {} } as unknown as AnalyzedLayer, 2), undefined);
  assert.equal(eagerNormTraffic({ op: 'linear', attrs: { eagerFp32: true } } as unknown as AnalyzedLayer, 2), undefined);
});

test("the Hugging Face catalogue marks transformers' Python RMSNorms as eager, and nn.LayerNorm as one kernel", async () => {
  const llama = await hfModel('LlamaConfig', 'LlamaForCausalLM', 64);
  const rms = llama.layers.filter((l) => l.op === 'layernorm');
  assert.equal(rms.length, 2 * 2 + 1);
  for (const l of rms) assert.equal((l.attrs as Record<string, unknown>).eagerFp32, true, l.name);
  const t5 = await hfModel('T5Config', 'T5ForConditionalGeneration', 64);
  const t5Norms = t5.layers.filter((l) => l.type === 'T5LayerNorm');
  assert.ok(t5Norms.length > 0 && t5Norms.every((l) => (l.attrs as Record<string, unknown>).eagerFp32 === true));
  const bert = await hfModel('BertConfig', 'BertModel', 64);
  const ln = bert.layers.filter((l) => l.op === 'layernorm');
  assert.ok(ln.length > 0 && ln.every((l) => (l.attrs as Record<string, unknown>).eagerFp32 === undefined));
});

test("an eager RMSNorm's time is its hand-counted bytes over the streaming bandwidth, plus one launch per kernel", async () => {
  const llama = await hfModel('LlamaConfig', 'LlamaForCausalLM', 64);
  const norm = llama.layers.find((l) => l.name.endsWith('input_layernorm'))!;
  const gpu = a100();
  const samples = 8;
  const elements = product(norm.outputShape!) * samples;
  assert.equal(elements, 64 * 256 * 8);
  const bytesPerMs = gpu.memoryBandwidthGBs * 1e6 * 0.75;
  const weight = 256 * 2;
  const t = analyticalTimes(norm, gpu, samples, 1, 1, 2, 'bf16');
  assert.ok(Math.abs(t.forwardMs - ((36 * elements + weight) / bytesPerMs + 8 * 0.006)) < 1e-12, `forward ${t.forwardMs}`);
  assert.ok(Math.abs(t.backwardMs - ((92 * elements + 2 * weight) / bytesPerMs + 14 * 0.006)) < 1e-12, `backward ${t.backwardMs}`);
  // The same norm as one fused kernel reads its input and writes its output: 4 bytes per element forward.
  const { eagerFp32: _eager, ...oneKernel } = norm.attrs as Record<string, unknown>;
  const fused = { ...norm, attrs: oneKernel } as AnalyzedLayer;
  const f = analyticalTimes(fused, gpu, samples, 1, 1, 2, 'bf16');
  assert.ok(Math.abs(f.forwardMs - ((4 * elements + weight) / bytesPerMs + 0.006)) < 1e-12, `fused forward ${f.forwardMs}`);
  assert.ok(Math.abs(f.backwardMs - ((8 * elements + 2 * weight) / bytesPerMs + 2 * 0.006)) < 1e-12, `fused backward ${f.backwardMs}`);
});

test("the plan says what the eager RMSNorms cost: their share of the plan's own layer times, and a fused kernel's bytes", async () => {
  const llama = await hfModel('LlamaConfig', 'LlamaForCausalLM', 256);
  const cluster = resolveCluster('a100x8');
  const out = planModel(llama, cluster, { batch: 8, objective: 'throughput', strategies: 'dp', optimizer: 'adam', gpus: 1, maxGpus: 1, precision: 'bf16', precisionSource: 'test' });
  assert.ok(out.feasible, out.feasible ? '' : out.reason);
  const advice = out.diagnostics.find((d) => /RMSNorm/.test(d.message));
  assert.ok(advice, out.diagnostics.map((d) => d.message).join('\n'));
  const norms = new Set(llama.layers.filter((l) => l.attrs.eagerFp32 === true).map((l) => l.name));
  let all = 0;
  let eager = 0;
  for (const l of out.plan.layers) {
    all += l.forwardMs + l.backwardMs;
    if (norms.has(l.name)) eager += l.forwardMs + l.backwardMs;
  }
  const share = eager / all;
  assert.ok(share > 0.01 && share < 1, `share ${share}`);
  assert.match(advice.message, new RegExp(`^5 RMSNorm layers run as eager fp32 ops \\(8 kernels forward, 14 backward, 36 and 92 bytes per element\\): ${(100 * share).toFixed(share < 0.1 ? 1 : 0)}% of the layers' time\\. A fused kernel .* moves 4 and 8\\. The fp32 copy each such norm keeps for its backward \\(4 bytes per element\\) is not counted in activation memory$`));
  assert.equal(advice.severity, 'info');
  // nn.LayerNorm is one kernel: BERT gets no such line.
  const bert = await hfModel('BertConfig', 'BertModel', 256);
  const plain = planModel(bert, cluster, { batch: 8, objective: 'throughput', strategies: 'dp', optimizer: 'adam', gpus: 1, maxGpus: 1, precision: 'bf16', precisionSource: 'test' });
  assert.deepEqual(plain.diagnostics.filter((d) => /RMSNorm/.test(d.message)), []);
});
