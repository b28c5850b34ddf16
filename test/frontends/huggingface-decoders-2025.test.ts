/**
 * GPT-OSS (sink attention, a clamped-GLU mixture of experts; modeling_gpt_oss.py), OLMo 2 (norms on the sublayers'
 * outputs, whole-width q/k norms; modeling_olmo2.py) and Phi-2 (parallel attention and MLP on one LayerNorm, partial
 * rotary; modeling_phi.py) in WAP's Hugging Face catalogue, from the checkpoints' config.json
 * (test/fixtures/huggingface/<name>/config.json) and from code.
 *
 * Parameter counts by hand (h = hidden, I = intermediate_size, V = vocab, a / kv = query / key-value heads of d):
 * - gpt-oss-20b (h 2880, I 2880, 24 layers, a 64, kv 8, d 64, 32 experts top 4, V 201,088, untied): attention with
 *   biases q_proj h·4096 + 4096 = 11,800,576, k_proj and v_proj h·512 + 512 = 1,475,072 each, o_proj 4096·h + h
 *   = 11,799,360, sinks 64 (one per query head): 26,550,144; two RMSNorms 5,760; router h·E + E = 92,192; an expert
 *   gate_up_proj h·2I + 2I = 16,594,560 and down_proj I·h + h = 8,297,280, 24,891,840 (× 32 = 796,538,880): a layer
 *   823,186,976 (× 24 = 19,756,487,424); embed_tokens and lm_head 2·V·h 1,158,266,880; norm 2,880:
 *   20,914,757,184 (OpenAI: 20.9B; the model card's Table 1, 20.91B, and the Hub's count). A token's share:
 *   attention, norms, router and 4 experts 126,215,456 a layer (× 24 = 3,029,170,944) + lm_head 579,133,440 + norm
 *   2,880 = 3,608,307,264 without the input table, which a token reads one row of (OpenAI: 3.61B active, 3.6B).
 * - gpt-oss-120b (36 layers, 128 experts, the rest as 20b): router 368,768; a layer 26,550,144 + 5,760 + 368,768
 *   + 128 · 24,891,840 = 3,213,080,192 (× 36 = 115,670,886,912); tables 1,158,266,880; norm 2,880:
 *   116,829,156,672 (OpenAI: 116.8B, Table 1 116.83B). Active 36 · (26,550,144 + 5,760 + 368,768 + 99,567,360)
 *   + 579,133,440 + 2,880 = 5,132,849,472 (OpenAI: 5.13B, 5.1B).
 * - OLMo-2-1124-7B (h 4096, I 11008, 32 layers, a = kv 32, V 100,352, no bias): attention 4h² 67,108,864, q_norm and
 *   k_norm 4096 each (the whole projection's width), MLP 3hI 135,266,304, post-attention and post-feedforward norms
 *   8,192: a layer 202,391,552 (× 32 = 6,476,529,664); tables 2·V·h 822,083,584; norm 4,096: 7,298,617,344
 *   (Ai2: 7.30B, the Hub's count).
 * - OLMo-2-1124-13B (h 5120, I 13824, 40 layers, a = kv 40): a layer 4h² + 2h + 3hI + 2h = 317,214,720
 *   (× 40 = 12,688,588,800); tables 1,027,604,480; norm 5,120: 13,716,198,400 (Ai2: 13.7B, the Hub's count).
 * - phi-2 (h 2560, I 10240, 32 layers, a = kv 32 of d 80, V 51,200, biases everywhere): q, k, v, dense 4(h² + h)
 *   26,224,640; fc1 hI + I 26,224,640; fc2 Ih + h 26,216,960; input_layernorm 2h 5,120: a layer 78,671,360
 *   (× 32 = 2,517,483,520); embed_tokens Vh 131,072,000; final_layernorm 5,120; lm_head Vh + V 131,123,200:
 *   2,779,683,840 (Microsoft: 2.7B; the Hub's safetensors count 2,779,683,840, 2.78B). PhiConfig() is phi-1.5's
 *   shape (24 layers of 2048, 8192): 1,418,270,720, the phi-1_5 checkpoint's count.
 */
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { expertOf } from '../../src/core/moe';
import type { AnalyzedModel, Diagnostic } from '../../src/core/ir';
import { initFrontends } from '../../src/frontends/index';
import { planModel, resolveCluster } from '../../src/planner/index';
import { activatedParams, billions, hfConfigModel, hfScriptModel, layerNamed, unsupportedDiagnostics } from './hfFixtures';

const T = 256;

before(() => initFrontends());

const configJson = (dir: string, tokens = T): AnalyzedModel => hfConfigModel(dir, { inputShape: [tokens] });

function script(body: string): { model: AnalyzedModel; diagnostics: Diagnostic[] } {
  return hfScriptModel('finetune.py', `import torch\nfrom transformers import AutoModelForCausalLM\n\n${body}`, { sequenceLength: T });
}

const layer = layerNamed;
const has = (m: AnalyzedModel, name: string): boolean => m.layers.some((l) => l.name === name);
const unsupported = unsupportedDiagnostics;
const linear = (m: AnalyzedModel, name: string): [unknown, unknown, unknown] => {
  const l = layer(m, name);
  return [l.attrs.inFeatures, l.attrs.outFeatures, l.attrs.bias];
};

const activated = activatedParams;

const GPT_OSS_20B = 20_914_757_184;
const GPT_OSS_120B = 116_829_156_672;
const OLMO2_7B = 7_298_617_344;
const OLMO2_13B = 13_716_198_400;
const PHI_2 = 2_779_683_840;

test('gpt-oss-20b from its config.json: 20,914,757,184 parameters, 3.61B active, biased GQA with a sink per head', () => {
  const m = configJson('gpt-oss-20b');
  assert.equal(m.totals.params, GPT_OSS_20B);
  assert.equal(m.totals.params, 24 * 823_186_976 + 2 * 201_088 * 2880 + 2880);
  assert.equal(billions(GPT_OSS_20B, 1), 20.9);
  const active = activated(m) - layer(m, 'model.embed_tokens').workload.params;
  assert.equal(active, 3_608_307_264);
  assert.deepEqual([billions(active, 2), billions(active, 1)], [3.61, 3.6]);
  assert.equal(m.completeness?.complete, true);
  assert.deepEqual(unsupported(m.diagnostics), []);

  const a = 'model.layers.0.self_attn';
  assert.deepEqual(linear(m, `${a}.q_proj`), [2880, 64 * 64, true]);
  assert.deepEqual(linear(m, `${a}.k_proj`), [2880, 8 * 64, true]);
  assert.deepEqual(linear(m, `${a}.v_proj`), [2880, 8 * 64, true]);
  assert.deepEqual(linear(m, `${a}.o_proj`), [64 * 64, 2880, true]);
  // self.sinks = nn.Parameter(torch.empty(num_attention_heads)): 64 numbers, one per query head, each rescaling its
  // head's output (8 key/value heads of 8 query heads each).
  const sinks = layer(m, `${a}.sinks`);
  assert.deepEqual([sinks.op, sinks.outputShape, sinks.workload.params], ['parameter', [64], 64]);
  const rescale = layer(m, `${a}.sink_rescale`);
  assert.deepEqual(rescale.inputShapes, [[8, 8, T, 64], [8, 8, 1, 1]]);
  assert.deepEqual(rescale.inputs, [`${a}.sdpa`, `${a}.sinks_view`]);
  assert.equal(rescale.workload.forwardFlops, 64 * T * 64);

  const router = layer(m, 'model.layers.0.mlp.router');
  assert.deepEqual([router.attrs.inFeatures, router.attrs.outFeatures, router.attrs.bias, router.workload.params], [2880, 32, true, 2880 * 32 + 32]);
  assert.deepEqual(router.attrs.moe, { experts: 32, topK: 4, role: 'router' });
  assert.ok(!has(m, 'model.layers.0.mlp.gate'), 'the router is mlp.router, not a `gate`');

  // torch's experts.gate_up_proj [32, 2880, 5760] with gate_up_proj_bias [32, 5760], and down_proj [32, 2880, 2880] with
  // down_proj_bias [32, 2880], as 32 layers each.
  const sum = (proj: string): number => Array.from({ length: 32 }, (_, e) => layer(m, `model.layers.23.mlp.experts.${e}.${proj}`).workload.params).reduce((x, y) => x + y, 0);
  assert.equal(sum('gate_up_proj'), 32 * 2880 * 5760 + 32 * 5760);
  assert.equal(sum('down_proj'), 32 * 2880 * 2880 + 32 * 2880);
  const e = 'model.layers.0.mlp.experts.31';
  assert.deepEqual(linear(m, `${e}.gate_up_proj`), [2880, 2 * 2880, true]);
  assert.deepEqual(linear(m, `${e}.down_proj`), [2880, 2880, true]);
  assert.deepEqual(expertOf(layer(m, `${e}.down_proj`)), { index: 31, count: 32, grouped: true });
  // 256 tokens · top 4 over 32 experts: 32 rows each, through the interleaved halves and the clamped GLU.
  assert.deepEqual(layer(m, `${e}.gate_up_proj`).outputShape, [T * 4 / 32, 5760]);
  assert.deepEqual(layer(m, `${e}.gate`).outputShape, [T * 4 / 32, 2880]);
  assert.deepEqual([layer(m, `${e}.gate_clamp`).attrs.fn, layer(m, `${e}.gate_clamp`).attrs.max], ['clamp', 7]);
  assert.deepEqual([layer(m, `${e}.up_clamp`).attrs.min, layer(m, `${e}.up_clamp`).attrs.max], [-7, 7]);
  assert.equal(layer(m, `${e}.gate_sigmoid`).attrs.fn, 'sigmoid');
  assert.deepEqual(layer(m, `${e}.glu`).inputs, [`${e}.gate_clamp`, `${e}.gate_sigmoid`]);
  assert.deepEqual(layer(m, `${e}.gated_output`).inputs, [`${e}.up_plus_one`, `${e}.glu`]);
  assert.deepEqual(layer(m, `${e}.down_proj`).outputShape, [T * 4 / 32, 2880]);

  assert.equal(layer(m, 'lm_head').workload.params, 201_088 * 2880, 'the head is untied');
  assert.match(m.diagnostics.find((d) => d.code === 'hf-sliding-window')?.message ?? '', /^gpt_oss: 12 of 24 layers \(0, 2, 4, …, 22\) attend a sliding window of 128 tokens/);
  const quantized = m.diagnostics.find((d) => d.code === 'hf-checkpoint-quantization');
  assert.match(quantized?.message ?? '', /quantization_config \(quant_method 'mxfp4'\).*which WAP does not model: it prices every weight at the plan's precision/);
});

test('gpt-oss-120b from its config.json: 116,829,156,672 parameters and 5.13B active over 128 experts', () => {
  const m = configJson('gpt-oss-120b');
  assert.equal(m.totals.params, GPT_OSS_120B);
  assert.equal(m.totals.params, 36 * 3_213_080_192 + 2 * 201_088 * 2880 + 2880);
  assert.equal(billions(GPT_OSS_120B, 1), 116.8);
  const active = activated(m) - layer(m, 'model.embed_tokens').workload.params;
  assert.equal(active, 5_132_849_472);
  assert.deepEqual([billions(active, 2), billions(active, 1)], [5.13, 5.1]);
  assert.deepEqual(unsupported(m.diagnostics), []);
  assert.equal(layer(m, 'model.layers.35.mlp.router').workload.params, 2880 * 128 + 128);
  assert.ok(has(m, 'model.layers.35.mlp.experts.127.down_proj') && !has(m, 'model.layers.36.input_layernorm'));
});

test('OLMo-2-1124-7B from its config.json: 7,298,617,344 parameters, norms on the sublayer outputs, q/k norms over the whole projection', () => {
  const m = configJson('olmo-2-1124-7b');
  assert.equal(m.totals.params, OLMO2_7B);
  assert.equal(m.totals.params, 32 * 202_391_552 + 2 * 100_352 * 4096 + 4096);
  assert.equal(billions(OLMO2_7B, 2), 7.3);
  assert.equal(m.completeness?.complete, true);
  assert.deepEqual(unsupported(m.diagnostics), []);

  const p = 'model.layers.3';
  assert.ok(!has(m, `${p}.input_layernorm`), 'OLMo 2 has no pre-attention norm');
  // The attention reads the residual stream itself; q_norm and k_norm normalise the projections whole, 4096 wide.
  assert.deepEqual(layer(m, `${p}.self_attn.q_proj`).inputs, ['model.layers.2.residual_mlp']);
  for (const role of ['q', 'k']) {
    const norm = layer(m, `${p}.self_attn.${role}_norm`);
    assert.deepEqual([norm.inputs, norm.attrs.normalizedShape, norm.workload.params], [[`${p}.self_attn.${role}_proj`], [4096], 4096], role);
  }
  assert.deepEqual(layer(m, `${p}.self_attn.q_view`).inputs, [`${p}.self_attn.q_norm`]);
  // post_attention_layernorm on o_proj's output before the add, post_feedforward_layernorm on down_proj's.
  assert.deepEqual(layer(m, `${p}.post_attention_layernorm`).inputs, [`${p}.self_attn.o_proj`]);
  assert.deepEqual(layer(m, `${p}.residual_attn`).inputs, ['model.layers.2.residual_mlp', `${p}.post_attention_layernorm`]);
  assert.deepEqual(layer(m, `${p}.mlp.gate_proj`).inputs, [`${p}.residual_attn`]);
  assert.deepEqual(layer(m, `${p}.post_feedforward_layernorm`).inputs, [`${p}.mlp.down_proj`]);
  assert.deepEqual(layer(m, `${p}.residual_mlp`).inputs, [`${p}.residual_attn`, `${p}.post_feedforward_layernorm`]);
  assert.deepEqual(linear(m, `${p}.self_attn.o_proj`), [4096, 4096, false]);
  assert.equal(layer(m, 'lm_head').workload.params, 100_352 * 4096, 'the head is untied');
});

test('phi-2 from its config.json: 2,779,683,840 parameters, parallel attention and MLP on one LayerNorm, 32 of 80 features rotating', () => {
  const m = configJson('phi-2');
  assert.equal(m.totals.params, PHI_2);
  assert.equal(m.totals.params, 32 * 78_671_360 + 51_200 * 2560 + 5120 + 51_200 * 2560 + 51_200);
  assert.equal(billions(PHI_2, 2), 2.78);
  assert.equal(m.completeness?.complete, true);
  assert.deepEqual(unsupported(m.diagnostics), []);

  const p = 'model.layers.7';
  const ln = layer(m, `${p}.input_layernorm`);
  assert.deepEqual([ln.type, ln.attrs.center, ln.workload.params], ['LayerNorm', true, 2 * 2560]);
  for (const proj of ['q_proj', 'k_proj', 'v_proj']) assert.deepEqual(linear(m, `${p}.self_attn.${proj}`), [2560, 2560, true], proj);
  assert.deepEqual(linear(m, `${p}.self_attn.dense`), [2560, 2560, true]);
  assert.ok(!has(m, `${p}.self_attn.o_proj`));
  assert.deepEqual(linear(m, `${p}.mlp.fc1`), [2560, 10240, true]);
  assert.deepEqual(linear(m, `${p}.mlp.fc2`), [10240, 2560, true]);
  assert.equal(layer(m, `${p}.mlp.activation_fn`).attrs.fn, 'gelu');
  // Both branches read the one norm; each output passes resid_dropout (0.1), and one add joins them with the residual.
  assert.deepEqual([layer(m, `${p}.self_attn.q_proj`).inputs, layer(m, `${p}.mlp.fc1`).inputs], [[ln.id], [ln.id]]);
  const residual = layer(m, `${p}.residual`);
  assert.deepEqual(residual.inputs, [`${p}.resid_dropout`, `${p}.resid_dropout#2`, 'model.layers.6.residual']);
  assert.deepEqual([layer(m, `${p}.resid_dropout`).attrs.rate, layer(m, `${p}.resid_dropout#2`).attrs.rate], [0.1, 0.1]);
  // partial_rotary_factor 0.4: int(80 · 0.4) = 32 features rotate, 48 pass, concatenated back per head.
  assert.deepEqual(layer(m, `${p}.self_attn.query_rot`).outputShape, [32, T, 32]);
  assert.deepEqual(layer(m, `${p}.self_attn.key_pass`).outputShape, [32, T, 48]);
  assert.deepEqual(layer(m, `${p}.self_attn.query_rotary`).outputShape, [32, T, 32]);
  assert.deepEqual(layer(m, `${p}.self_attn.query_states`).outputShape, [32, T, 80]);
  assert.deepEqual(layer(m, `${p}.self_attn.sdpa`).inputShapes, [[32, T, 80], [32, T, 80], [32, T, 80]]);

  assert.deepEqual(layer(m, 'model.final_layernorm').workload.params, 2 * 2560);
  assert.deepEqual(linear(m, 'lm_head'), [2560, 51_200, true]);
  assert.equal(layer(m, 'lm_head').workload.params, 51_200 * 2560 + 51_200);
});

test('from_pretrained on the fixture folders builds what each config.json builds', () => {
  for (const [dir, total] of [['gpt-oss-20b', GPT_OSS_20B], ['gpt-oss-120b', GPT_OSS_120B], ['olmo-2-1124-7b', OLMO2_7B], ['phi-2', PHI_2]] as const) {
    const { model, diagnostics } = script(`model = AutoModelForCausalLM.from_pretrained("./${dir}", torch_dtype=torch.bfloat16)\n`);
    assert.equal(model.totals.params, total, dir);
    assert.deepEqual(unsupported(diagnostics), [], dir);
    const direct = configJson(dir);
    assert.deepEqual(model.layers.map((l) => [l.name, l.workload.params]), direct.layers.map((l) => [l.name, l.workload.params]), dir);
  }
});

test('the config classes: GptOssConfig() is gpt-oss-120b, Olmo2Config with the 13B sizes 13.7B, PhiConfig() phi-1.5; scripts reach sinks, router and experts', () => {
  const oss = script('from transformers import GptOssConfig, GptOssForCausalLM\nmodel = GptOssForCausalLM(GptOssConfig())\n');
  assert.equal(oss.model.totals.params, GPT_OSS_120B);
  assert.ok(!oss.diagnostics.some((d) => d.code === 'hf-checkpoint-quantization'), 'a config without quantization_config says nothing of it');

  const olmo = script(
    'from transformers import Olmo2Config, Olmo2ForCausalLM\nmodel = Olmo2ForCausalLM(Olmo2Config(vocab_size=100352, hidden_size=5120, intermediate_size=13824, num_hidden_layers=40, num_attention_heads=40, max_position_embeddings=4096))\n',
  ).model;
  assert.equal(olmo.totals.params, OLMO2_13B);
  assert.equal(olmo.totals.params, 40 * 317_214_720 + 2 * 100_352 * 5120 + 5120);
  assert.equal(billions(OLMO2_13B, 1), 13.7);

  assert.equal(script('from transformers import PhiConfig, PhiForCausalLM\nmodel = PhiForCausalLM(PhiConfig())\n').model.totals.params, 1_418_270_720);
  // PhiForSequenceClassification: the LM head gives way to a bias-free score over 2 labels.
  const classifier = script('from transformers import PhiForSequenceClassification\nmodel = PhiForSequenceClassification.from_pretrained("./phi-2")\n').model;
  assert.equal(classifier.totals.params, PHI_2 - (51_200 * 2560 + 51_200) + 2560 * 2);

  const load = 'model = AutoModelForCausalLM.from_pretrained("./gpt-oss-20b")\n';
  const frozen = (line: string): number | undefined => script(`${load}${line}\n`).model.totals.frozenParams;
  assert.equal(frozen('model.model.layers[0].self_attn.sinks.requires_grad_(False)'), 64);
  assert.equal(frozen('model.model.layers[0].mlp.router.requires_grad_(False)'), 2880 * 32 + 32);
  assert.equal(frozen('model.model.layers[0].mlp.experts.requires_grad_(False)'), 32 * 24_891_840);
});

test("GPT-OSS's attention kernel: eager unless the code names one, which the plan's notes say", () => {
  const note = (body: string): Diagnostic | undefined => script(body).diagnostics.find((d) => d.code === 'hf-attention-kernel');
  assert.match(note('model = AutoModelForCausalLM.from_pretrained("./gpt-oss-20b")\n')?.message ?? '', /^gpt_oss: transformers runs GPT-OSS attention eager .*--attention unfused prices that/);
  assert.equal(note('model = AutoModelForCausalLM.from_pretrained("./gpt-oss-20b", attn_implementation="kernels-community/vllm-flash-attn3")\n'), undefined);
  assert.equal(note('model = AutoModelForCausalLM.from_pretrained("./olmo-2-1124-7b")\n'), undefined);
});

test('the planner finds a feasible plan for gpt-oss-20b at 4,096 tokens on 8 H100s, solving its MoE layers as the repeated block', () => {
  const m = configJson('gpt-oss-20b', 4096);
  assert.deepEqual(unsupported(m.diagnostics), []);
  const outcome = planModel(m, resolveCluster('h100x8'), { batch: 16, objective: 'throughput', strategies: 'all', optimizer: 'adam', precision: 'bf16' });
  assert.ok(outcome.feasible, outcome.feasible ? '' : outcome.reason);
  assert.equal(outcome.search.method, 'parallel3d');
});
