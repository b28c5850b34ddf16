/**
 * DeepSeek-V2/V3 (Multi-head Latent Attention, DeepSeekMoE with shared experts; modeling_deepseek_v2.py and
 * modeling_deepseek_v3.py) and Qwen2-MoE (shared expert with a sigmoid gate; modeling_qwen2_moe.py) in WAP's Hugging
 * Face catalogue, from the checkpoints' config.json (test/fixtures/huggingface/<name>/config.json) and from code.
 *
 * Parameter counts by hand (h = hidden, I = intermediate_size, I' = moe_intermediate_size, V = vocab, a = heads;
 * no projection has a bias unless said; an RMSNorm is one weight vector; every head is untied):
 * - DeepSeek-V3 (h 7168, I 18432, I' 2048, 61 layers of which the first 3 dense, a 128, q_lora_rank 1536,
 *   kv_lora_rank 512, qk_nope 128, qk_rope 64, v 128, 256 routed experts top 8, 1 shared, V 129,280):
 *   attention q_a_proj h·1536 11,010,048 + q_a_layernorm 1,536 + q_b_proj 1536·a·192 37,748,736
 *   + kv_a_proj_with_mqa h·(512 + 64) 4,128,768 + kv_a_layernorm 512 + kv_b_proj 512·a·(128 + 128) 16,777,216
 *   + o_proj a·128·h 117,440,512 = 187,107,328; two norms 14,336; dense MLP 3hI 396,361,728, so a dense layer
 *   583,483,392 (× 3 = 1,750,450,176); MoE: 256 experts of 3hI' 44,040,192 = 11,274,289,152, the shared expert
 *   44,040,192, the router 256·h 1,835,008 (e_score_correction_bias is a buffer), so a MoE layer 11,507,286,016
 *   (× 58 = 667,422,588,928); embed_tokens and lm_head 2·V·h 1,853,358,080; final norm 7,168:
 *   671,026,404,352 (DeepSeek: 671B). A token's share: 8 routed + shared + router 398,196,736 a MoE layer, so
 *   58 · 585,318,400 + 1,750,450,176 + 1,853,358,080 + 7,168 = 37,552,282,624, or 36,625,603,584 without the input
 *   table, which a token reads one row of (DeepSeek: 37B activated). The Hub checkpoint's 685B adds the MTP module
 *   (model.layers.61: a MoE layer, eh_proj 2h·h, three norms and its own embedding and head, 13,463,426,048) and
 *   the router biases its remote code makes parameters; transformers builds neither.
 * - DeepSeek-V2-Lite (h 2048, I 10944, I' 1408, 27 layers, the first dense, a 16, q_proj (q_lora_rank null),
 *   kv_lora_rank 512, qk 128 + 64, v 128, 64 experts top 6, 2 shared, V 102,400): attention q_proj h·a·192 6,291,456
 *   + kv_a_proj_with_mqa 1,179,648 + 512 + kv_b_proj 512·a·256 2,097,152 + o_proj 4,194,304 = 13,763,072; norms 4,096;
 *   dense layer + 3hI 67,239,936 = 81,007,104; MoE 64 · 8,650,752 + shared 3h·2I' 17,301,504 + router 131,072
 *   = 571,080,704, a MoE layer 584,847,872 (× 26 = 15,206,044,672); tables 419,430,400; norm 2,048:
 *   15,706,484,224 (DeepSeek: 15.7B). Activated: 26 · 83,104,256 + 81,007,104 + 419,430,400 + 2,048 = 2,661,150,208,
 *   2,451,435,008 without the input table (DeepSeek gives 2.4B).
 * - DeepSeek-V2 (h 5120, I 12288, I' 1536, 60 layers, the first dense, a 128, q_lora_rank 1536, 160 experts top 6,
 *   2 shared, V 102,400): attention 7,864,320 + 1,536 + 37,748,736 + 2,949,120 + 512 + 16,777,216 + 83,886,080
 *   = 149,227,520; norms 10,240; dense layer 337,981,440; MoE 160 · 23,592,960 + 47,185,920 + 819,200
 *   = 3,822,878,720, a MoE layer 3,972,116,480 (× 59); tables 1,048,576,000; norm 5,120: 235,741,434,880
 *   (DeepSeek: 236B). Activated 59 · 338,800,640 + 337,981,440 + 1,048,576,000 + 5,120 = 21,375,800,320,
 *   20,851,512,320 without the input table (DeepSeek: 21B).
 * - Qwen1.5-MoE-A2.7B (h 2048, 24 layers, a = kv 16, V 151,936, 60 experts of 1408 top 4, shared expert 5632):
 *   attention q, k, v with bias 3 · (h² + h) 12,589,056 + o_proj 4,194,304 = 16,783,360; norms 4,096; 60 · 3h·1408
 *   519,045,120 + shared_expert 3h·5632 34,603,008 + shared_expert_gate h 2,048 + router 60h 122,880: a layer
 *   570,560,512 (× 24 = 13,693,452,288); tables 622,329,856; norm 2,048: 14,315,784,192 (Qwen: 14.3B). Activated
 *   24 · 86,118,400 + 622,329,856 + 2,048 = 2,689,173,504 (Qwen: 2.7B). The same block with 4 experts is the
 *   86,003,712 a layer torchinfo prints for a 3-layer, 4-expert, 1,519-token cut of the checkpoint (264,235,008).
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { before, test } from 'node:test';
import type { AnalyzedModel, Diagnostic } from '../../src/core/ir';
import { initFrontends } from '../../src/frontends/index';
import { planModel, resolveCluster } from '../../src/planner/index';
import { HF_FIXTURES, activatedParams, billions, hfConfigModel, hfScriptModel, layerNamed, unsupportedDiagnostics } from './hfFixtures';

const fixtures = HF_FIXTURES;
const T = 256;

before(() => initFrontends());

function configJson(dir: string, tokens = T): AnalyzedModel {
  return hfConfigModel(dir, { inputShape: [tokens] });
}

/** A script next to the fixtures: the model it builds, analysed, and every diagnostic. */
function script(body: string): { model: AnalyzedModel; diagnostics: Diagnostic[] } {
  return hfScriptModel('finetune.py', `import torch\nfrom transformers import AutoModelForCausalLM\n\n${body}`, { sequenceLength: T });
}

const layer = layerNamed;

const has = (m: AnalyzedModel, name: string): boolean => m.layers.some((l) => l.name === name);

const activated = activatedParams;


const unsupported = unsupportedDiagnostics;

const DEEPSEEK_V3 = 671_026_404_352;
const DEEPSEEK_V2_LITE = 15_706_484_224;
const DEEPSEEK_V2 = 235_741_434_880;
const QWEN15_MOE = 14_315_784_192;

test("DeepSeek-V3 from its config.json: 671,026,404,352 parameters, latent attention's projections, dense then MoE layers with a shared expert", () => {
  const m = configJson('deepseek-v3');
  assert.equal(m.totals.params, DEEPSEEK_V3);
  assert.equal(m.totals.params, 1_750_450_176 + 58 * 11_507_286_016 + 1_853_358_080 + 7_168);
  assert.equal(billions(DEEPSEEK_V3, 0), 671);
  assert.equal(activated(m), 37_552_282_624);
  assert.equal(billions(activated(m) - layer(m, 'model.embed_tokens').workload.params, 0), 37);
  assert.equal(m.completeness?.complete, true);
  assert.deepEqual(unsupported(m.diagnostics), []);

  // q_lora_rank 1536: q_a_proj → q_a_layernorm → q_b_proj to 128 heads of 128 + 64.
  const shape = (name: string) => { const l = layer(m, `model.layers.0.self_attn.${name}`); return [l.attrs.inFeatures, l.attrs.outFeatures, l.attrs.bias]; };
  assert.deepEqual(shape('q_a_proj'), [7168, 1536, false]);
  assert.equal(layer(m, 'model.layers.0.self_attn.q_a_layernorm').workload.params, 1536);
  assert.deepEqual(shape('q_b_proj'), [1536, 128 * 192, false]);
  assert.ok(!has(m, 'model.layers.0.self_attn.q_proj'));
  assert.deepEqual(shape('kv_a_proj_with_mqa'), [7168, 512 + 64, false]);
  assert.equal(layer(m, 'model.layers.0.self_attn.kv_a_layernorm').workload.params, 512);
  assert.deepEqual(shape('kv_b_proj'), [512, 128 * (128 + 128), false]);
  assert.deepEqual(shape('o_proj'), [128 * 128, 7168, false]);
  // Scores from 192-wide query/key heads (128 rope-free + 64 rotated, the rotated key one head shared by all 128),
  // values and output 128 wide; softmax scale 192^-0.5 · mscale², mscale = 0.1 · ln 40 + 1 (YaRN, mscale_all_dim 1).
  const sdpa = layer(m, 'model.layers.0.self_attn.sdpa');
  assert.deepEqual(sdpa.inputShapes, [[128, T, 192], [128, T, 192], [128, T, 128]]);
  assert.deepEqual(sdpa.outputShape, [128, T, 128]);
  assert.equal(sdpa.attrs.scale, 192 ** -0.5 * (0.1 * Math.log(40) + 1) ** 2);
  assert.deepEqual(layer(m, 'model.layers.0.self_attn.k_rot_view').outputShape, [1, T, 64]);
  assert.deepEqual(layer(m, 'model.layers.0.self_attn.k_rot_expand').outputShape, [128, T, 64]);

  // first_k_dense_replace 3: layers 0–2 keep a dense MLP of intermediate_size, layer 3 on route to 256 experts.
  assert.equal(layer(m, 'model.layers.2.mlp.gate_proj').workload.params, 7168 * 18432);
  assert.ok(!has(m, 'model.layers.2.mlp.gate'));
  const router = layer(m, 'model.layers.3.mlp.gate');
  assert.deepEqual(router.attrs.moe, { experts: 256, topK: 8, role: 'router' });
  assert.equal(router.workload.params, 256 * 7168, 'the router weight only: e_score_correction_bias is a buffer');
  assert.equal(layer(m, 'model.layers.3.mlp.routing_weights').attrs.fn, 'sigmoid');
  const shared = layer(m, 'model.layers.3.mlp.shared_experts.gate_proj');
  assert.deepEqual([shared.attrs.inFeatures, shared.attrs.outFeatures, shared.attrs.expert], [7168, 2048, undefined]);
  assert.deepEqual(shared.inputShapes, [[T, 7168]], 'the shared expert sees every token');
  assert.deepEqual(layer(m, 'model.layers.60.mlp.experts.255.down_proj').inputShapes, [[T * 8 / 256, 2048]]);

  // The checkpoint's MTP module is said, not built.
  const mtp = m.diagnostics.find((d) => d.code === 'hf-mtp-layers');
  assert.equal(mtp?.severity, 'info');
  assert.match(mtp?.message ?? '', /^deepseek_v3: the checkpoint holds 1 multi-token-prediction module \(model\.layers\.61, num_nextn_predict_layers\) that transformers does not build/);
  assert.ok(!has(m, 'model.layers.61.input_layernorm'));
});

test('DeepSeek-V2-Lite from its config.json: 15.7B with a plain q_proj (q_lora_rank null), 64 experts top 6 and two shared, softmax routing', () => {
  const m = configJson('deepseek-v2-lite');
  assert.equal(m.totals.params, DEEPSEEK_V2_LITE);
  assert.equal(m.totals.params, 81_007_104 + 26 * 584_847_872 + 419_430_400 + 2_048);
  assert.equal(billions(DEEPSEEK_V2_LITE, 1), 15.7);
  assert.equal(activated(m), 2_661_150_208);
  assert.equal(activated(m) - layer(m, 'model.embed_tokens').workload.params, 2_451_435_008);
  assert.deepEqual(unsupported(m.diagnostics), []);
  assert.ok(!m.diagnostics.some((d) => d.code === 'hf-mtp-layers'));

  const q = layer(m, 'model.layers.0.self_attn.q_proj');
  assert.deepEqual([q.attrs.inFeatures, q.attrs.outFeatures], [2048, 16 * 192]);
  assert.ok(!has(m, 'model.layers.0.self_attn.q_a_proj') && !has(m, 'model.layers.0.self_attn.q_a_layernorm'));
  assert.equal(layer(m, 'model.layers.0.self_attn.kv_a_proj_with_mqa').workload.params, 2048 * 576);
  // transformers' DeepseekV2Attention keeps qk_head_dim^-0.5 (no YaRN mscale): the sdpa node states no scale.
  assert.equal(layer(m, 'model.layers.5.self_attn.sdpa').attrs.scale, undefined);

  assert.equal(layer(m, 'model.layers.0.mlp.up_proj').workload.params, 2048 * 10944);
  assert.ok(!has(m, 'model.layers.0.mlp.gate'));
  assert.equal(layer(m, 'model.layers.1.mlp.routing_weights').attrs.fn, 'softmax');
  assert.equal(layer(m, 'model.layers.1.mlp.shared_experts.down_proj').workload.params, 2 * 1408 * 2048);
  assert.deepEqual(layer(m, 'model.layers.1.mlp.experts.63.gate_proj').inputShapes, [[T * 6 / 64, 2048]]);
  assert.deepEqual(layer(m, 'model.layers.26.mlp.experts.0.down_proj').outputShape, [T * 6 / 64, 2048]);
});

test('Qwen1.5-MoE-A2.7B from its config.json: 14.3B with q/k/v bias, 60 experts top 4 and a sigmoid-gated shared expert', () => {
  const m = configJson('qwen1.5-moe-a2.7b');
  assert.equal(m.totals.params, QWEN15_MOE);
  assert.equal(m.totals.params, 24 * 570_560_512 + 622_329_856 + 2_048);
  assert.equal(billions(QWEN15_MOE, 1), 14.3);
  assert.equal(activated(m), 2_689_173_504);
  assert.equal(billions(activated(m), 1), 2.7);
  assert.equal(m.completeness?.complete, true);

  for (const proj of ['q_proj', 'k_proj', 'v_proj']) assert.equal(layer(m, `model.layers.0.self_attn.${proj}`).attrs.bias, true, proj);
  assert.equal(layer(m, 'model.layers.0.self_attn.o_proj').attrs.bias, false);
  assert.equal(layer(m, 'model.layers.0.mlp.shared_expert.up_proj').workload.params, 2048 * 5632);
  const gate = layer(m, 'model.layers.0.mlp.shared_expert_gate');
  assert.deepEqual([gate.attrs.inFeatures, gate.attrs.outFeatures, gate.attrs.bias], [2048, 1, false]);
  assert.equal(gate.attrs.moe, undefined, 'the shared expert gate is no router');
  const sigmoid = layer(m, 'model.layers.0.mlp.shared_expert_gate_sigmoid');
  assert.deepEqual([sigmoid.attrs.fn, sigmoid.inputs], ['sigmoid', [gate.id]]);
  const gated = layer(m, 'model.layers.0.mlp.shared_expert_gated');
  assert.deepEqual(gated.inputShapes, [[T, 1], [T, 2048]]);
  assert.deepEqual(layer(m, 'model.layers.0.mlp.add_shared').inputs, ['model.layers.0.mlp.combine', gated.id]);

  // 256 tokens · top 4 = 1,024 routed rows over 60 experts: every expert gets a share within two rows of 17.07, and
  // all the rows are computed once (one 60-way torch.chunk would leave experts 57–59 without a section).
  const rows = Array.from({ length: 60 }, (_, e) => layer(m, `model.layers.0.mlp.experts.${e}.gate_proj`).inputShapes[0]![0]!);
  assert.equal(rows.reduce((a, b) => a + b, 0), T * 4);
  assert.ok(rows.every((r) => Math.abs(r - (T * 4) / 60) < 2), rows.join(' '));
});

test('the same models from code: DeepseekV3Config() is DeepSeek-V3, DeepSeek-V2 236B from its keywords, a cut Qwen2-MoE matches torchinfo', () => {
  const v3 = script('from transformers import DeepseekV3Config, DeepseekV3ForCausalLM\nmodel = DeepseekV3ForCausalLM(DeepseekV3Config())\n');
  assert.equal(v3.model.totals.params, DEEPSEEK_V3);
  assert.ok(!v3.diagnostics.some((d) => d.code === 'hf-mtp-layers'), 'DeepseekV3Config has no MTP layers to leave out');

  const v2 = script(
    'from transformers import DeepseekV2Config, DeepseekV2ForCausalLM\nmodel = DeepseekV2ForCausalLM(DeepseekV2Config(vocab_size=102400, hidden_size=5120, intermediate_size=12288, moe_intermediate_size=1536, num_hidden_layers=60, num_attention_heads=128, num_key_value_heads=128, n_shared_experts=2, n_routed_experts=160, num_experts_per_tok=6, first_k_dense_replace=1, q_lora_rank=1536, kv_lora_rank=512))\n',
  ).model;
  assert.equal(v2.totals.params, DEEPSEEK_V2);
  assert.equal(v2.totals.params, 337_981_440 + 59 * 3_972_116_480 + 1_048_576_000 + 5_120);
  assert.equal(billions(DEEPSEEK_V2, 0), 236);
  assert.equal(activated(v2), 21_375_800_320);
  assert.equal(billions(activated(v2) - layer(v2, 'model.embed_tokens').workload.params, 0), 21);
  // 160 experts = 5 · 2⁵: 1,536 routed rows give every expert 9 or 10.
  const rows = Array.from({ length: 160 }, (_, e) => layer(v2, `model.layers.1.mlp.experts.${e}.up_proj`).inputShapes[0]![0]!);
  assert.equal(rows.reduce((a, b) => a + b, 0), T * 6);

  const cut = script('from transformers import Qwen2MoeConfig, Qwen2MoeForCausalLM\nmodel = Qwen2MoeForCausalLM(Qwen2MoeConfig(num_hidden_layers=3, num_experts=4, vocab_size=1519))\n').model;
  assert.equal(cut.totals.params, 264_235_008);
  assert.equal(cut.layers.filter((l) => l.name.startsWith('model.layers.1.')).reduce((a, l) => a + l.workload.params, 0), 86_003_712);
});

test('moe_layer_freq and first_k_dense_replace place the MoE layers as the checkpoints\' code does, and a freq other than 1 is said', () => {
  const { model, diagnostics } = script(
    'from transformers import DeepseekV2Config, DeepseekV2ForCausalLM\nmodel = DeepseekV2ForCausalLM(DeepseekV2Config(num_hidden_layers=5, hidden_size=256, intermediate_size=512, moe_intermediate_size=64, num_attention_heads=4, n_routed_experts=8, n_shared_experts=1, num_experts_per_tok=2, first_k_dense_replace=1, moe_layer_freq=2, q_lora_rank=None, kv_lora_rank=32, qk_nope_head_dim=16, qk_rope_head_dim=8, v_head_dim=16, vocab_size=1000))\n',
  );
  // Layer i routes when i ≥ 1 and i % 2 == 0.
  assert.deepEqual([0, 1, 2, 3, 4].map((i) => has(model, `model.layers.${i}.mlp.gate`)), [false, false, true, false, true]);
  assert.equal(layer(model, 'model.layers.1.mlp.gate_proj').workload.params, 256 * 512);
  assert.equal(layer(model, 'model.layers.2.mlp.shared_experts.gate_proj').workload.params, 256 * 64);
  assert.match(diagnostics.find((d) => d.code === 'hf-moe-layer-freq')?.message ?? '', /^deepseek_v2: moe_layer_freq 2: WAP puts a mixture of experts on the layers from first_k_dense_replace whose index is a multiple of 2, as the checkpoint's modeling_deepseek\.py/);
});

test('from_pretrained on the fixture folders builds what the config.json builds, and scripts reach the shared experts', () => {
  for (const [dir, total] of [['deepseek-v2-lite', DEEPSEEK_V2_LITE], ['qwen1.5-moe-a2.7b', QWEN15_MOE]] as const) {
    const { model, diagnostics } = script(`model = AutoModelForCausalLM.from_pretrained("./${dir}", torch_dtype=torch.bfloat16)\n`);
    assert.equal(model.totals.params, total, dir);
    assert.deepEqual(unsupported(diagnostics), [], dir);
    const direct = configJson(dir);
    assert.deepEqual(model.layers.map((l) => [l.name, l.workload.params]), direct.layers.map((l) => [l.name, l.workload.params]), dir);
  }
  const frozen = script('model = AutoModelForCausalLM.from_pretrained("./deepseek-v2-lite")\nmodel.model.layers[1].mlp.shared_experts.requires_grad_(False)\n').model;
  assert.deepEqual([frozen.totals.params, frozen.totals.frozenParams], [DEEPSEEK_V2_LITE - 3 * 2048 * 2816, 3 * 2048 * 2816]);
  const kv = script('model = AutoModelForCausalLM.from_pretrained("./deepseek-v3")\nmodel.model.layers[0].self_attn.kv_a_proj_with_mqa.requires_grad_(False)\n');
  assert.equal(kv.model.totals.frozenParams, 7168 * 576);
  assert.deepEqual(unsupported(kv.diagnostics), []);
});

test('the planner finds a feasible plan for DeepSeek-V2-Lite on 8 A100s, solving its MoE layers as the repeated block', () => {
  const m = configJson('deepseek-v2-lite', 2048);
  assert.deepEqual(unsupported(m.diagnostics), []);
  const outcome = planModel(m, resolveCluster('a100x8'), { batch: 64, objective: 'throughput', strategies: 'all', optimizer: 'adam', precision: 'bf16' });
  assert.ok(outcome.feasible, outcome.feasible ? '' : outcome.reason);
  assert.equal(outcome.search.method, 'parallel3d');
});
