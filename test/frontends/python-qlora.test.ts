/**
 * QLoRA and 8-bit loading (frontends/python/quantizationCalls.ts,
 * frontends/quantization/bitsandbytes.ts, core/quantizedWeights.ts): a model
 * loaded with a BitsAndBytesConfig holds its Linears quantized and frozen, at
 * bitsandbytes' bytes per weight, and the planner prices the dequantization
 * before each matmul. The byte counts are the QLoRA paper's (Dettmers et al.,
 * NeurIPS 2023, §3): 4 bits per weight plus an fp32 absmax per block of 64
 * (0.5 bits), or with double quantization 8/64 + 32/(64·256) = 0.127 bits.
 * Llama-2-7b's published config.json (test/fixtures/huggingface) has 32
 * decoder layers of 4 × 4096² attention and 3 × 4096 × 11008 MLP weights:
 * 6,476,005,376 quantized; the embeddings, norms and lm_head stay 16-bit.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { analyzeModel } from '../../src/core/analyze';
import type { AnalyzedModel, Diagnostic } from '../../src/core/ir';
import { quantizedWeightBytes } from '../../src/core/quantizedWeights';
import { initFrontends, parseSource } from '../../src/frontends/index';
import { planModel, resolveCluster } from '../../src/planner/index';

const fixtures = join(__dirname, '..', 'fixtures', 'huggingface');

before(() => initFrontends());

const script = (load: string, lora = true): string => `import torch
from transformers import AutoModelForCausalLM, BitsAndBytesConfig, GPTQConfig
from peft import LoraConfig, get_peft_model, prepare_model_for_kbit_training

model = AutoModelForCausalLM.from_pretrained("./llama-2-7b"${load})
model = prepare_model_for_kbit_training(model)
${lora ? 'model = get_peft_model(model, LoraConfig(r=16, lora_alpha=32, target_modules=["q_proj", "k_proj", "v_proj", "o_proj"], task_type="CAUSAL_LM"))\n' : ''}`;

const QLORA = ', quantization_config=BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type="nf4", bnb_4bit_use_double_quant=True, bnb_4bit_compute_dtype=torch.bfloat16)';

function read(source: string): { model: AnalyzedModel; diagnostics: Diagnostic[] } {
  const result = parseSource(join(fixtures, 'qlora_llama.py'), source, {});
  const spec = result?.models.find((m) => m.name === 'model');
  assert.ok(spec, 'a model is read');
  const model = analyzeModel(spec, { sequenceLength: 512 });
  return { model, diagnostics: [...(result?.diagnostics ?? []), ...model.diagnostics] };
}

const LINEAR_WEIGHTS = 32 * (4 * 4096 * 4096 + 3 * 4096 * 11008);
const SIXTEEN_BIT = 2 * 32_000 * 4096 + (2 * 32 + 1) * 4096;
const LORA = 32 * 4 * 16 * (4096 + 4096);

test('bitsandbytes bytes per weight, by hand: NF4 0.5625, with double quantization 0.515869…, int8 one byte plus an fp32 scale per row', () => {
  assert.equal(quantizedWeightBytes(4096 * 4096, { format: 'nf4' }, 4096), 4096 * 4096 * (4 + 32 / 64) / 8);
  assert.equal(quantizedWeightBytes(4096 * 4096, { format: 'nf4', doubleQuant: true }, 4096), (4096 * 4096 * (4 + 8 / 64 + 32 / (64 * 256))) / 8);
  assert.equal(quantizedWeightBytes(4096 * 11008, { format: 'int8' }, 4096), 4096 * 11008 + 4 * 4096);
});

test("QLoRA's Llama-2-7b: every decoder Linear held in NF4 with double quantization and frozen; embeddings, norms and lm_head 16-bit; the adapters train", () => {
  const { model, diagnostics } = read(script(QLORA));
  assert.equal(model.totals.params, LORA);
  assert.equal(model.totals.frozenParams, LINEAR_WEIGHTS + SIXTEEN_BIT);
  assert.deepEqual(model.totals.quantized, { params: LINEAR_WEIGHTS, bytes: (LINEAR_WEIGHTS * (4 + 8 / 64 + 32 / (64 * 256))) / 8 });
  const q = model.layers.find((l) => l.name === 'model.layers.0.self_attn.q_proj')!;
  assert.deepEqual([q.quantizedWeights, q.frozen], [{ format: 'nf4', doubleQuant: true }, true]);
  assert.equal(model.layers.find((l) => l.name === 'lm_head')!.quantizedWeights, undefined);
  assert.ok(diagnostics.some((d) => d.code === 'quantized-weights' && d.severity === 'info' && /4-bit NF4 with double quantization \(quantization_config\) on 224 Linear layers \(not lm_head\)/.test(d.message)), diagnostics.map((d) => d.message).join('\n'));
  assert.ok(!diagnostics.some((d) => d.severity === 'warning' && d.code?.startsWith('quantized')), diagnostics.map((d) => d.message).join('\n'));
});

test('a QLoRA plan holds the 4-bit base at its bytes, prices the dequantization, and fits a 12 GB GPU where the 16-bit base does not', () => {
  const qlora = read(script(QLORA)).model;
  const sixteen = read(script('')).model;
  // One TITAN Xp (12 GB) of the WAP paper's box, planned in fp16.
  const options = { batch: 4, objective: 'throughput' as const, strategies: 'all' as const, optimizer: 'adam' as const, precision: 'fp16' as const, gpus: 1 };
  const fits = planModel(qlora, resolveCluster('pcie4'), options);
  assert.ok(fits.feasible, fits.feasible ? '' : fits.reason);
  const memory = fits.plan.setup!.memoryPerGpu;
  // Quantized bytes, the 16-bit rest, and the adapters' 16-bit weights (their fp32 master copies are optimizer state).
  const expected = qlora.totals.quantized!.bytes + SIXTEEN_BIT * 2 + LORA * 2;
  assert.ok(Math.abs(memory.weights - expected) / expected < 1e-6, `weights ${memory.weights} vs ${expected}`);
  assert.ok(fits.diagnostics.some((d) => /6\.48 B of them held quantized \(bitsandbytes\) in 3\.34 GB, 0\.516 bytes each/.test(d.message)), fits.diagnostics.map((d) => d.message).join('\n'));
  // The 16-bit base (13.5 GB) does not fit on the GPU; it trains only with its parameters offloaded to the host, slower.
  const tooBig = planModel(sixteen, resolveCluster('pcie4'), { ...options, pins: { cpuOffload: false } });
  assert.equal(tooBig.feasible, false);
  const offloaded = planModel(sixteen, resolveCluster('pcie4'), options);
  assert.ok(offloaded.feasible && offloaded.plan.setup!.paramOffload && offloaded.plan.stepTimeMs > fits.plan.stepTimeMs);
  // The same model unquantized on an A100: dequantizing costs time, so the 4-bit step is slower there.
  const a100 = { ...options, precision: 'bf16' as const };
  const [q, s] = [planModel(qlora, resolveCluster('a100x8'), a100), planModel(sixteen, resolveCluster('a100x8'), a100)];
  assert.ok(q.feasible && s.feasible);
  assert.ok(q.plan.stepTimeMs > s.plan.stepTimeMs, `4-bit ${q.plan.stepTimeMs} ms vs 16-bit ${s.plan.stepTimeMs} ms`);
});

test('LLM.int8() loading, skipped modules, and a compute dtype left at float32 are read; a quantization WAP cannot read stays a warning', () => {
  const eight = read(script(', load_in_8bit=True', false));
  assert.deepEqual([eight.model.totals.quantized?.params, eight.model.totals.params], [LINEAR_WEIGHTS, 0]);
  assert.equal(eight.model.totals.quantized!.bytes, LINEAR_WEIGHTS + 4 * 32 * (4 * 4096 + 2 * 11008 + 4096));
  const skipped = read(script(', quantization_config=BitsAndBytesConfig(load_in_4bit=True, llm_int8_skip_modules=["mlp"])'));
  assert.equal(skipped.model.totals.quantized!.params, 32 * 4 * 4096 * 4096);
  assert.equal(skipped.model.layers.find((l) => l.name === 'model.layers.0.self_attn.q_proj')!.quantizedWeights?.format, 'fp4');
  const fp32 = skipped.diagnostics.find((d) => d.code === 'quantized-compute-dtype');
  assert.match(fp32?.message ?? '', /^bnb_4bit_compute_dtype is not set, so transformers uses float32/);
  for (const load of [', quantization_config=GPTQConfig(bits=4, dataset="c4")', ', quantization_config=make_config()']) {
    const { model, diagnostics } = read(script(load));
    assert.equal(model.totals.quantized, undefined, load);
    const warning = diagnostics.find((d) => d.code === 'quantized-weights');
    assert.equal(warning?.severity, 'warning', load);
    assert.match(warning!.message, /in a way WAP does not model/);
    const plan = planModel(model, resolveCluster('a100x8'), { batch: 16, objective: 'throughput', strategies: 'dp', optimizer: 'adam', precision: 'bf16' });
    assert.ok(plan.diagnostics.some((d) => d.message === warning!.message), load);
  }
});
