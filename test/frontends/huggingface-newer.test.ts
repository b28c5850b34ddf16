/**
 * The 2025–2026 fine-tuning staples in WAP's Hugging Face catalogue: qwen3 (modeling_qwen3.py), phi3
 * (modeling_phi3.py) and gemma2 (modeling_gemma2.py), built from the checkpoints' config.json
 * (test/fixtures/huggingface/<name>/config.json; README.md there says where each came from) with transformers'
 * module names, through the Python and JSON frontends and the core's analyzeModel.
 *
 * Parameter counts by hand (h = hidden, I = intermediate, L = layers, V = vocab, a = heads, k = key/value heads,
 * d = head_dim; no projection has a bias; an RMSNorm is one weight vector):
 * - Qwen3-0.6B (h 1024, I 3072, L 28, a 16, k 8, d 128, V 151,936, tied): per layer
 *   q h·a·d 2,097,152 + k, v h·k·d 2 × 1,048,576 + o a·d·h 2,097,152 + q_norm, k_norm 2·128 + MLP 3hI 9,437,184
 *   + two norms 2,048 = 15,730,944; × 28 = 440,466,432; + final norm 1,024 = 440,467,456 non-embedding
 *   (model card: 0.44B); + V·h 155,582,464 once (tied) = 596,049,920 (model card: 0.6B).
 * - Qwen3-8B (h 4096, I 12288, L 36, a 32, k 8, d 128, untied): per layer 16,777,216 + 2 × 4,194,304
 *   + 16,777,216 + 256 + 150,994,944 + 8,192 = 192,946,432; × 36 + 4,096 = 6,946,075,648 non-embedding
 *   (model card: 6.95B); + 2·V·h 1,244,659,712 = 8,190,735,360 (model card: 8.2B).
 * - Phi-3-mini-4k-instruct (h 3072, I 8192, L 32, a = k = 32, d 96, V 32,064, untied): per layer
 *   qkv_proj h·(a + 2k)·d = 3072 × 9216 = 28,311,552 + o_proj 9,437,184 + gate_up_proj h·2I 50,331,648
 *   + down_proj 25,165,824 + two norms 6,144 = 113,252,352; × 32 + 3,072 + 2 × 98,500,608 = 3,821,079,552
 *   (Microsoft's model card: 3.8B).
 * - Gemma-2-2B (h 2304, I 9216, L 26, a 8, k 4, d 256, V 256,000, tied): per layer q 4,718,592 + k, v
 *   2 × 2,359,296 + o 4,718,592 + MLP 63,700,992 + four norms 9,216 = 77,865,984; × 26 + 2,304 + V·h 589,824,000
 *   = 2,614,341,888 (Google: 2.61B).
 * - Gemma-2-9B (h 3584, I 14336, L 42, a 16, k 8, d 256): per layer 14,680,064 + 2 × 7,340,032 + 14,680,064
 *   + 154,140,672 + 14,336 = 198,195,200; × 42 + 3,584 + 917,504,000 = 9,241,705,984 (Google: 9.24B).
 *   The Gemma 2 report (arXiv:2408.00118, Table 2) gives exactly these non-embedding counts, 2,024,517,888 and
 *   8,324,201,984; its embedding counts are of a 256,128-row table, the released checkpoints' has 256,000 rows.
 * LoRA at r = 8 adds r·(in + out) per targeted Linear (peft's lora_A and lora_B).
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { analyzeModel } from '../../src/core/analyze';
import { ACTIVATION_FLOPS, SOFTCAP_FLOPS_PER_ELEMENT, SOFTMAX_FLOPS_PER_ELEMENT } from '../../src/core/catalogue/costs';
import type { AnalyzedLayer, AnalyzedModel, Diagnostic } from '../../src/core/ir';
import { initFrontends, parseSource } from '../../src/frontends/index';
import { causalTileFraction, unfusedAttentionBytes } from '../../src/planner/cost/compute';
import { planModel, resolveCluster } from '../../src/planner/index';
import { savedUnderKernel } from '../../src/planner/memory/index';
import { HF_FIXTURES, billions, hfConfigModel, hfScriptModel, layerNamed } from './hfFixtures';

const fixtures = HF_FIXTURES;
const T = 256;

before(() => initFrontends());

function configJson(dir: string, tokens = T): AnalyzedModel {
  return hfConfigModel(dir, { inputShape: [tokens] });
}

/** A fine-tuning script next to the fixtures: the model it loads, analysed, and every diagnostic. */
function script(body: string): { model: AnalyzedModel; diagnostics: Diagnostic[] } {
  return hfScriptModel('finetune.py', `import torch\nfrom transformers import AutoModelForCausalLM\nfrom peft import LoraConfig, get_peft_model\n\n${body}`, { sequenceLength: T });
}

const layer = layerNamed;

const QWEN3_06B = 596_049_920;
const QWEN3_8B = 8_190_735_360;
const PHI3_MINI = 3_821_079_552;
const GEMMA2_2B = 2_614_341_888;
const GEMMA2_9B = 9_241_705_984;

test("Qwen3-0.6B and Qwen3-8B from their config.json: transformers' counts, the model cards' totals, per-head q_norm/k_norm", () => {
  const small = configJson('qwen3-0.6b');
  const large = configJson('qwen3-8b');
  assert.equal(small.totals.params, QWEN3_06B);
  assert.equal(large.totals.params, QWEN3_8B);
  assert.equal(small.completeness?.complete, true);
  // The model cards: "0.6B, non-embedding 0.44B" and "8.2B, non-embedding 6.95B".
  const tables = (m: AnalyzedModel) => layer(m, 'model.embed_tokens').workload.params + layer(m, 'lm_head').workload.params;
  assert.deepEqual([small.totals.params - tables(small), large.totals.params - tables(large)], [440_467_456, 6_946_075_648]);
  assert.deepEqual([billions(QWEN3_06B, 1), billions(440_467_456, 2)], [0.6, 0.44]);
  assert.deepEqual([billions(QWEN3_8B, 1), billions(6_946_075_648, 2)], [8.2, 6.95]);

  // No q/k/v/o bias (attention_bias false), q_proj 16 heads × head_dim 128 = 2048 wide on a 1024 hidden.
  for (const proj of ['q_proj', 'k_proj', 'v_proj', 'o_proj']) assert.equal(layer(small, `model.layers.0.self_attn.${proj}`).attrs.bias, false, proj);
  assert.equal(layer(small, 'model.layers.0.self_attn.q_proj').attrs.outFeatures, 16 * 128);
  // q_norm / k_norm: one head_dim weight each, on the viewed heads, before the transpose and the rotary products.
  for (const [role, shape] of [['q', [T, 8, 2, 128]], ['k', [T, 8, 1, 128]]] as const) {
    const norm = layer(small, `model.layers.0.self_attn.${role}_norm`);
    assert.equal(norm.op, 'layernorm');
    assert.equal(norm.workload.params, 128);
    assert.deepEqual(norm.outputShape, shape);
    assert.deepEqual(norm.inputs, [`model.layers.0.self_attn.${role}_view`]);
    assert.deepEqual(layer(small, `model.layers.0.self_attn.${role}_transpose`).inputs, [norm.id]);
  }
  assert.ok(!small.layers.some((l) => l.name === 'model.layers.0.self_attn.v_norm'));
  // Tied only when tie_word_embeddings: the 0.6B shares embed_tokens, the 8B has its own head.
  assert.equal(layer(small, 'lm_head').weightOwner, 'model.embed_tokens');
  assert.equal(layer(large, 'lm_head').workload.params, 151_936 * 4096);
  assert.deepEqual(large.input, [T]);
});

test("Qwen3-30B-A3B from its config.json: 30,532,122,624 parameters, 128 experts of 768 a layer with top-8 routing, qwen3's q_norm/k_norm", () => {
  const m = configJson('qwen3-30b-a3b');
  // Embeddings and the untied head 2·151936·2048, the final norm; per layer attention (q 2048→4096, k and v 2048→512,
  // o 4096→2048, two per-head norms of 128), two norms, the router 2048→128 and 128 experts of 3·2048·768.
  const perLayer = 2048 * 4096 + 2 * 2048 * 512 + 4096 * 2048 + 2 * 128 + 2 * 2048 + 2048 * 128 + 128 * 3 * 2048 * 768;
  assert.equal(m.totals.params, 2 * 151936 * 2048 + 2048 + 48 * perLayer);
  assert.equal(m.totals.params, 30_532_122_624);
  assert.equal(layer(m, 'model.layers.47.mlp.experts.127.down_proj').workload.params, 768 * 2048);
  const router = layer(m, 'model.layers.0.mlp.gate');
  assert.deepEqual(router.attrs.moe, { experts: 128, topK: 8, role: 'router' });
  // Balanced routing: each expert sees T·k/E tokens.
  assert.deepEqual(layer(m, 'model.layers.0.mlp.experts.5.gate_proj').inputShapes, [[T * 8 / 128, 2048]]);
  assert.ok(layer(m, 'model.layers.0.self_attn.q_norm'));
});

test('Qwen3MoeConfig from code: mlp_only_layers and decoder_sparse_step leave dense gated MLPs of intermediate_size where modeling_qwen3_moe.py does', () => {
  const src = 'from transformers import Qwen3MoeConfig, Qwen3MoeForCausalLM\nmodel = Qwen3MoeForCausalLM(Qwen3MoeConfig(num_hidden_layers=4, hidden_size=256, intermediate_size=1024, moe_intermediate_size=128, num_experts=8, num_experts_per_tok=2, num_attention_heads=4, num_key_value_heads=2, head_dim=64, vocab_size=1000, decoder_sparse_step=2, mlp_only_layers=[3]))\n';
  const parsed = parseSource(join(fixtures, 'moe.py'), src);
  const m = analyzeModel(parsed!.models[0]!, { inputShape: [T] });
  const names = new Set(m.layers.map((l) => l.name));
  // (i + 1) % 2 == 0 → layers 1 and 3 are sparse, but 3 is in mlp_only_layers: only layer 1 routes.
  assert.deepEqual([0, 1, 2, 3].map((i) => names.has(`model.layers.${i}.mlp.gate`)), [false, true, false, false]);
  assert.equal(layer(m, 'model.layers.0.mlp.up_proj').workload.params, 256 * 1024);
  assert.equal(layer(m, 'model.layers.1.mlp.experts.7.up_proj').workload.params, 256 * 128);
});

test('Qwen3Config from code: its defaults, and attention_bias=True puts a bias on q, k, v and o alike (unlike qwen2)', () => {
  const defaults = script('from transformers import Qwen3Config, Qwen3ForCausalLM\nmodel = Qwen3ForCausalLM(Qwen3Config())\n').model;
  // Qwen3Config(): h 4096, I 22016, L 32, a = k = 32, d 128, untied: per layer 4 × 4096² + 256 + 3·4096·22016 + 8192.
  assert.equal(defaults.totals.params, 32 * (4 * 4096 * 4096 + 256 + 3 * 4096 * 22016 + 2 * 4096) + 4096 + 2 * 151_936 * 4096);
  const biased = script(
    'from transformers import Qwen3Config, Qwen3ForCausalLM\nmodel = Qwen3ForCausalLM(Qwen3Config(attention_bias=True, num_hidden_layers=1, hidden_size=64, intermediate_size=128, num_attention_heads=4, num_key_value_heads=2, head_dim=32, vocab_size=100))\n',
  ).model;
  for (const proj of ['q_proj', 'k_proj', 'v_proj', 'o_proj']) assert.equal(layer(biased, `model.layers.0.self_attn.${proj}`).attrs.bias, true, proj);
  // q 64·128 + 128, k and v 64·64 + 64 each, o 128·64 + 64, q/k norms 2·32, MLP 3·64·128, norms 2·64; untied 2·100·64; final norm 64.
  assert.equal(biased.totals.params, 64 * 128 + 128 + 2 * (64 * 64 + 64) + 128 * 64 + 64 + 2 * 32 + 3 * 64 * 128 + 2 * 64 + 2 * 100 * 64 + 64);
});

test('one Qwen3-8B layer: the forward is 2·params·tokens in its projections plus 4·T²·(heads·head_dim) in attention', () => {
  const m = configJson('qwen3-8b');
  const block = m.layers.filter((l) => l.name.startsWith('model.layers.0.'));
  const sum = (ls: AnalyzedLayer[], f: (l: AnalyzedLayer) => number) => ls.reduce((a, l) => a + f(l), 0);
  const linears = block.filter((l) => l.op === 'linear');
  const params = sum(block, (l) => l.workload.params);
  assert.equal(params, 192_946_432);
  // Bias-free projections: exactly two FLOPs per weight per token.
  assert.equal(sum(linears, (l) => l.workload.forwardFlops), 2 * T * sum(linears, (l) => l.workload.params));
  // QKᵀ and P·V, 2·T²·d each per query head, and the softmax over the 32 heads' T×T scores.
  const sdpa = block.find((l) => l.op === 'sdpa')!;
  assert.equal(sdpa.workload.forwardFlops, 4 * T * T * 32 * 128 + SOFTMAX_FLOPS_PER_ELEMENT * 32 * T * T);
  const expected = 2 * params * T + 4 * T * T * 32 * 128;
  const forward = sum(block, (l) => l.workload.forwardFlops);
  assert.ok(Math.abs(forward / expected - 1) < 0.01, `layer forward ${forward} vs 2·N·T + 4·T²·h ${expected}`);
});

test("Phi-3-mini-4k-instruct: fused qkv_proj and gate_up_proj sliced as Phi3Attention and Phi3MLP do; 3.8B; the window said", () => {
  const m = configJson('phi-3-mini-4k-instruct');
  assert.equal(m.totals.params, PHI3_MINI);
  assert.equal(billions(PHI3_MINI, 1), 3.8);
  assert.equal(m.completeness?.complete, true);
  const qkv = layer(m, 'model.layers.0.self_attn.qkv_proj');
  assert.deepEqual([qkv.attrs.outFeatures, qkv.attrs.bias, qkv.workload.params], [(32 + 2 * 32) * 96, false, 3072 * 9216]);
  for (const role of ['query_states', 'key_states', 'value_states']) {
    const part = layer(m, `model.layers.0.self_attn.${role}`);
    assert.deepEqual([part.op, part.outputShape, part.inputs], ['split', [T, 3072], [qkv.id]], role);
  }
  const gateUp = layer(m, 'model.layers.0.mlp.gate_up_proj');
  assert.deepEqual([gateUp.attrs.outFeatures, gateUp.attrs.bias], [2 * 8192, false]);
  // gate, up = chunk(2): the first half is activated (SiLU) and multiplies the second.
  assert.deepEqual(layer(m, 'model.layers.0.mlp.gate').outputShape, [T, 8192]);
  assert.deepEqual(layer(m, 'model.layers.0.mlp.activation_fn').inputs, ['model.layers.0.mlp.gate']);
  assert.equal(layer(m, 'model.layers.0.mlp.activation_fn').attrs.fn, 'silu');
  assert.deepEqual(layer(m, 'model.layers.0.mlp.mul').inputs, ['model.layers.0.mlp.up_states', 'model.layers.0.mlp.activation_fn']);
  assert.equal(layer(m, 'model.layers.0.mlp.down_proj').workload.params, 8192 * 3072);
  assert.equal(layer(m, 'lm_head').workload.params, 32_064 * 3072, 'untied');
  // Every layer attends a 2047-token window: full attention priced, and said (a windowed flash kernel would skip a quarter at 4096).
  const note = m.diagnostics.find((d) => d.code === 'hf-sliding-window');
  assert.equal(note?.severity, 'info');
  assert.match(note?.message ?? '', /^phi3: all 32 layers attend a sliding window of 2047 tokens; WAP prices them over the full causal sequence.* computes 75% of the causal scores at the configured 4096 tokens/);
  assert.equal(m.layers.filter((l) => l.op === 'dropout').length, 0, "the checkpoint's dropouts are 0");
});

test("Phi3Config dropouts as transformers applies them: resid_pdrop twice per layer, attention_dropout on the probabilities, embd_pdrop nowhere", () => {
  const m = script('from transformers import Phi3Config, Phi3ForCausalLM\nmodel = Phi3ForCausalLM(Phi3Config(num_hidden_layers=2, resid_pdrop=0.1, embd_pdrop=0.1, attention_dropout=0.05))\n').model;
  const names = m.layers.filter((l) => l.op === 'dropout').map((l) => [l.name, (l.attrs as { rate: number }).rate]);
  assert.deepEqual(names, [0, 1].flatMap((i) => [[`model.layers.${i}.resid_attn_dropout`, 0.1], [`model.layers.${i}.resid_mlp_dropout`, 0.1]]));
  assert.ok(m.layers.filter((l) => l.op === 'sdpa').every((l) => (l.attrs as { dropout: number }).dropout === 0.05));
  // Phi3Config() is Phi-3-mini's shape (no sliding window: none said).
  const defaults = script('from transformers import Phi3Config, Phi3ForCausalLM\nmodel = Phi3ForCausalLM(Phi3Config())\n');
  assert.equal(defaults.model.totals.params, PHI3_MINI);
  assert.ok(!defaults.diagnostics.some((d) => d.code === 'hf-sliding-window'));
});

test('Gemma-2-2B and 9B: four sandwich norms a layer, √h embedding scale, GeGLU, tied head; 2.61B and 9.24B', () => {
  const small = configJson('gemma-2-2b');
  const large = configJson('gemma-2-9b');
  assert.equal(small.totals.params, GEMMA2_2B);
  assert.equal(large.totals.params, GEMMA2_9B);
  assert.deepEqual([billions(GEMMA2_2B, 2), billions(GEMMA2_9B, 2)], [2.61, 9.24]);
  const nonEmbedding = (m: AnalyzedModel) => m.totals.params - layer(m, 'model.embed_tokens').workload.params;
  assert.deepEqual([nonEmbedding(small), nonEmbedding(large)], [2_024_517_888, 8_324_201_984], "the report's non-embedding counts");
  assert.equal(large.completeness?.complete, true);
  const p = 'model.layers.0';
  for (const norm of ['input_layernorm', 'post_attention_layernorm', 'pre_feedforward_layernorm', 'post_feedforward_layernorm']) {
    const l = layer(small, `${p}.${norm}`);
    assert.deepEqual([l.type, l.workload.params], ['Gemma2RMSNorm', 2304], norm);
  }
  // post_attention_layernorm normalises the attention output before the residual add; the MLP is sandwiched the same way.
  assert.deepEqual(layer(small, `${p}.post_attention_layernorm`).inputs, [`${p}.self_attn.o_proj`]);
  assert.deepEqual(layer(small, `${p}.residual_attn`).inputs, ['model.embed_scale', `${p}.post_attention_layernorm`]);
  assert.deepEqual(layer(small, `${p}.mlp.gate_proj`).inputs, [`${p}.pre_feedforward_layernorm`]);
  assert.deepEqual(layer(small, `${p}.post_feedforward_layernorm`).inputs, [`${p}.mlp.down_proj`]);
  assert.equal(layer(small, `${p}.mlp.act_fn`).attrs.fn, 'gelu');
  // head_dim 256 with 16 heads on a 3584 hidden: q_proj is 4096 wide, o_proj comes back to 3584.
  assert.deepEqual([layer(large, `${p}.self_attn.q_proj`).attrs.outFeatures, layer(large, `${p}.self_attn.o_proj`).attrs.outFeatures], [4096, 3584]);
  assert.equal(layer(large, 'lm_head').weightOwner, 'model.embed_tokens');
  // Gemma2ForCausalLM(Gemma2Config()) is Gemma-2-2B.
  assert.equal(script('from transformers import Gemma2Config, Gemma2ForCausalLM\nmodel = Gemma2ForCausalLM(Gemma2Config())\n').model.totals.params, GEMMA2_2B);
});

test("Gemma-3-1B from its config.json: 999,885,952 parameters, Gemma 2's sandwich norms with per-head q_norm/k_norm, no soft-caps, every sixth layer global", () => {
  const m = configJson('gemma-3-1b');
  // Embeddings 262144·1152 (tied head); per layer q 1152→1024, k and v 1152→256, o 1024→1152, q_norm and k_norm of
  // 256, the GeGLU MLP 3·1152·6912 and four RMSNorms of 1152; the final norm.
  const perLayer = 1152 * 1024 + 2 * 1152 * 256 + 1024 * 1152 + 2 * 256 + 3 * 1152 * 6912 + 4 * 1152;
  assert.equal(m.totals.params, 262144 * 1152 + 26 * perLayer + 1152);
  assert.equal(m.totals.params, 999_885_952);
  assert.ok(layer(m, 'model.layers.3.self_attn.k_norm'));
  assert.ok(!m.layers.some((l) => l.name.includes('softcap')), 'Gemma 3 caps nothing');
  const window = m.diagnostics.find((d) => d.code === 'hf-sliding-window');
  assert.match(window?.message ?? '', /^gemma3_text: 22 of 26 layers \(0, 1, 2, …, 25\) attend a sliding window of 512 tokens/);
  // Globals at 5, 11, 17, 23: with a kernel that skips the window only the sliding layers' attention shrinks.
  const src = 'from transformers import AutoModelForCausalLM\nmodel = AutoModelForCausalLM.from_pretrained("./gemma-3-1b", attn_implementation="flash_attention_2")\n';
  const parsed = parseSource(join(fixtures, 'flash.py'), src);
  const flash = analyzeModel(parsed!.models[0]!, { inputShape: [4096] });
  const windowed = (i: number) => flash.layers.find((l) => l.name === `model.layers.${i}.self_attn.sdpa`)!.attrs.window;
  assert.deepEqual([4, 5, 6, 11].map(windowed), [512, undefined, 512, undefined]);
});

test("Gemma 3 4B's vision-language checkpoint: Gemma3ForConditionalGeneration and AutoModelForCausalLM built whole (4,300,079,472 parameters, its published total), Gemma3ForCausalLM its text model (3,880,263,168, its published text backbone), as transformers loads each", () => {
  const cases: Array<[string, number, string]> = [
    // The SigLIP tower and projector join the language model (huggingface-vision-language.test.ts counts them).
    ['Gemma3ForConditionalGeneration', 4_300_079_472, 'language_model.model.layers.0.self_attn.sdpa'],
    // transformers' current causal-LM auto mapping names Gemma3ForConditionalGeneration for gemma3.
    ['AutoModelForCausalLM', 4_300_079_472, 'language_model.model.layers.0.self_attn.sdpa'],
    // auto_factory hands Gemma3ForCausalLM the text_config: no tower is built or loaded.
    ['Gemma3ForCausalLM', 3_880_263_168, 'model.layers.0.self_attn.sdpa'],
  ];
  for (const [cls, params, firstAttention] of cases) {
    const src = `from transformers import ${cls}\nmodel = ${cls}.from_pretrained("./gemma-3-4b-it", attn_implementation="flash_attention_2")\n`;
    const parsed = parseSource(join(fixtures, 'vl.py'), src);
    assert.ok(!parsed!.diagnostics.some((d) => d.code === 'hf-config-mismatch'), cls);
    const m = analyzeModel(parsed!.models[0]!, { inputShape: [4096] });
    assert.equal(m.totals.params, params, cls);
    assert.ok(!m.diagnostics.some((d) => d.code === 'hf-vision-tower'), cls);
    assert.equal(m.completeness?.complete, true, cls);
    // The kernel asked for at load time reaches the language model: its sliding layers are priced over the window.
    assert.equal(m.layers.find((l) => l.name === firstAttention)?.attrs.window, 1024, cls);
  }
  // The call's config keywords are the language model's too.
  const shallow = parseSource(join(fixtures, 'vl.py'), 'from transformers import Gemma3ForCausalLM\nmodel = Gemma3ForCausalLM.from_pretrained("./gemma-3-4b-it", num_hidden_layers=2)\n');
  const two = analyzeModel(shallow!.models[0]!, { inputShape: [256] });
  assert.ok(two.layers.some((l) => l.name === 'model.layers.1.mlp.down_proj') && !two.layers.some((l) => l.name.startsWith('model.layers.2.')));
});

test("Gemma 2's soft-capping: the final logits' divide, tanh and multiply are element-wise layers; the attention cap is priced on the scores", () => {
  const m = configJson('gemma-2-2b');
  const V = 256_000;
  const div = layer(m, 'logits.softcap_div');
  const tanh = layer(m, 'logits.softcap_tanh');
  const mul = layer(m, 'logits.softcap_mul');
  assert.deepEqual(div.inputs, ['lm_head']);
  assert.deepEqual(layer(m, 'loss.float').inputs, [mul.id]);
  assert.deepEqual([div.op, tanh.op, tanh.attrs.fn, mul.op], ['mul', 'activation', 'tanh', 'mul']);
  for (const l of [div, tanh, mul]) assert.deepEqual(l.outputShape, [T, V], l.name);
  assert.equal(tanh.workload.forwardFlops, ACTIVATION_FLOPS.tanh * T * V);
  assert.equal(div.workload.forwardFlops, T * V);
  // tanh keeps its result for the backward; a product with a number keeps nothing.
  assert.deepEqual([div.workload.savedActivationBytes, tanh.workload.savedActivationBytes, mul.workload.savedActivationBytes], [0, T * V * 4, 0]);

  // Attention: cap 50 and the query_pre_attn_scalar 256 scale on the sdpa node; the cap's three ops per score
  // (8 query heads: 4 key/value heads × 2) add to the forward and, as element-wise ops do, as much to the backward.
  const sdpa = layer(m, 'model.layers.0.self_attn.sdpa');
  assert.deepEqual([sdpa.attrs.softcap, sdpa.attrs.scale], [50, 1 / 16]);
  const scores = 8 * T * T;
  const products = 4 * scores * 256 + SOFTMAX_FLOPS_PER_ELEMENT * scores;
  assert.equal(sdpa.workload.forwardFlops, products + SOFTCAP_FLOPS_PER_ELEMENT * scores);
  assert.equal(sdpa.workload.backwardFlops, 2 * products + SOFTCAP_FLOPS_PER_ELEMENT * scores);
  // Eager attention runs the three kernels over the scores (6 passes forward, 7 backward) and keeps tanh's result;
  // a fused kernel keeps only Q, K, V and its log-sum-exp.
  const uncapped = { ...sdpa, attrs: { ...sdpa.attrs, softcap: null } };
  const [capped, plain] = [unfusedAttentionBytes(sdpa, 2), unfusedAttentionBytes(uncapped, 2)];
  assert.deepEqual([capped.forward - plain.forward, capped.backward - plain.backward], [scores * 6 * 2, scores * 7 * 2]);
  const qkv = (4 * 2 + 4 + 4) * T * 256;
  assert.equal(savedUnderKernel(sdpa, 'unfused', 4).saved, (qkv + 2 * scores) * 4, 'Q, K, V, the probabilities and the capped scores');
  assert.equal(savedUnderKernel(sdpa, 'fused', 4).saved, qkv * 4 + 8 * T * 4);
  const caps = m.diagnostics.find((d) => d.code === 'hf-softcap');
  assert.match(caps?.message ?? '', /^gemma2: every layer soft-caps its attention scores, 50·tanh\(scores \/ 50\)/);

  // Null caps switch both off.
  const off = script('from transformers import Gemma2Config, Gemma2ForCausalLM\nmodel = Gemma2ForCausalLM(Gemma2Config(num_hidden_layers=2, attn_logit_softcapping=None, final_logit_softcapping=None))\n').model;
  assert.ok(!off.layers.some((l) => l.name.startsWith('logits.softcap')));
  assert.ok(off.layers.filter((l) => l.op === 'sdpa').every((l) => l.attrs.softcap === undefined));
});

test("Gemma 2's alternate sliding-window layers stay full attention, identical blocks for the 3D search, and the info says so", () => {
  const m = configJson('gemma-2-9b');
  const note = m.diagnostics.find((d) => d.code === 'hf-sliding-window');
  assert.match(note?.message ?? '', /^gemma2: 21 of 42 layers \(0, 2, 4, …, 40\) attend a sliding window of 4096 tokens; .* computes 75% of the causal scores at the configured 8192 tokens, so for it these layers' attention is over-estimated \(attn_implementation="flash_attention_2" in the code prices the window\)$/);
  // A layer_types list in the config decides instead of the index rule.
  const listed = script(
    'from transformers import Gemma2Config, Gemma2ForCausalLM\nmodel = Gemma2ForCausalLM(Gemma2Config(num_hidden_layers=3, layer_types=["full_attention", "sliding_attention", "full_attention"]))\n',
  );
  assert.match(listed.diagnostics.find((d) => d.code === 'hf-sliding-window')?.message ?? '', /^gemma2: 1 of 3 layers \(1\) attend/);
  const outcome = planModel(configJson('gemma-2-2b', 2048), resolveCluster('a100x8'), { batch: 64, objective: 'throughput', strategies: 'all', optimizer: 'adam', precision: 'bf16' });
  assert.ok(outcome.feasible, outcome.feasible ? '' : outcome.reason);
  assert.equal(outcome.search.method, 'parallel3d');
});

test("scripts reach the new models' modules: q_norm, the embeddings, fused projections, Gemma 2's extra norms", () => {
  const QWEN_SMALL = 'model = AutoModelForCausalLM.from_pretrained("./qwen3-0.6b")\n';
  const QWEN_LARGE = 'model = AutoModelForCausalLM.from_pretrained("./qwen3-8b", torch_dtype=torch.bfloat16)\n';
  const PHI = 'model = AutoModelForCausalLM.from_pretrained("./phi-3-mini-4k-instruct")\n';
  const GEMMA = 'model = AutoModelForCausalLM.from_pretrained("./gemma-2-2b")\n';
  const cases: Array<[string, number, number]> = [
    [`${QWEN_SMALL}model.model.layers[0].self_attn.q_norm.requires_grad_(False)\n`, QWEN3_06B, 128],
    // Tied: the output embeddings are the input table, one parameter.
    [`${QWEN_SMALL}model.get_output_embeddings().requires_grad_(False)\n`, QWEN3_06B, 151_936 * 1024],
    [`${QWEN_LARGE}model.get_input_embeddings().requires_grad_(False)\n`, QWEN3_8B, 151_936 * 4096],
    [`${PHI}model.model.layers[0].self_attn.qkv_proj.requires_grad_(False)\n`, PHI3_MINI, 3072 * 9216],
    [`${PHI}for layer in model.model.layers[:16]:\n    for p in layer.parameters():\n        p.requires_grad = False\n`, PHI3_MINI, 16 * 113_252_352],
    [`${GEMMA}model.model.layers[0].pre_feedforward_layernorm.requires_grad_(False)\n`, GEMMA2_2B, 2304],
    [`${GEMMA}model.get_output_embeddings().weight.requires_grad = False\n`, GEMMA2_2B, 256_000 * 2304],
  ];
  for (const [body, total, frozen] of cases) {
    const { model, diagnostics } = script(body);
    assert.deepEqual([model.totals.params, model.totals.frozenParams], [total - frozen, frozen], body);
    assert.ok(!diagnostics.some((d) => d.code === 'frozen-parameters'), diagnostics.map((d) => d.message).join('\n'));
  }
});

test("peft's default LoRA targets: q_proj and v_proj for qwen3 and gemma2; phi3 has none in peft, so its targets must be named", () => {
  const lora = (load: string, config: string) => script(`model = AutoModelForCausalLM.from_pretrained("${load}")\nmodel = get_peft_model(model, LoraConfig(${config}))\n`);
  // print_trainable_parameters() at r=8: r·(in + out) for q_proj and v_proj in every layer, the rest frozen.
  const expectations: Array<[string, number, number]> = [
    ['./qwen3-0.6b', 28 * 8 * ((1024 + 2048) + (1024 + 1024)), QWEN3_06B], // 1,146,880 || all 597,196,800
    ['./qwen3-8b', 36 * 8 * ((4096 + 4096) + (4096 + 1024)), QWEN3_8B], // 3,833,856 || all 8,194,569,216
    ['./gemma-2-2b', 26 * 8 * ((2304 + 2048) + (2304 + 1024)), GEMMA2_2B], // 1,597,440 || all 2,615,939,328
  ];
  for (const [load, trainable, base] of expectations) {
    const { model, diagnostics } = lora(load, 'r=8, lora_alpha=16, lora_dropout=0.05, task_type="CAUSAL_LM"');
    assert.deepEqual([model.totals.params, model.totals.frozenParams], [trainable, base], load);
    assert.ok(model.layers.some((l) => l.name === 'model.layers.0.self_attn.v_proj.lora_A') && !model.layers.some((l) => l.name === 'model.layers.0.self_attn.k_proj.lora_A'), load);
    assert.ok(diagnostics.some((d) => d.code === 'lora'), load);
  }
  // Phi-3: peft raises for want of target_modules; WAP freezes the base and says the adapters are not modelled.
  const unnamed = lora('./phi-3-mini-4k-instruct', 'r=8, task_type="CAUSAL_LM"');
  assert.deepEqual([unnamed.model.totals.params, unnamed.model.totals.frozenParams], [0, PHI3_MINI]);
  assert.ok(unnamed.diagnostics.some((d) => d.code === 'peft-adapters'));
  // Named, the fused projection takes one adapter pair: 32 × 8 · (3072 + 9216) = 3,145,728 || all 3,824,225,280.
  const named = lora('./phi-3-mini-4k-instruct', 'r=8, target_modules=["qkv_proj"], task_type="CAUSAL_LM"').model;
  assert.deepEqual([named.totals.params, named.totals.frozenParams], [32 * 8 * (3072 + 9216), PHI3_MINI]);
});

/**
 * Under a kernel that skips outside the window (the code asks for flash_attention_2), the windowed layers' sdpa nodes
 * carry the window: their FLOPs count 4096 keys a query, not T, and the planner runs the tiles within reach.
 * Mistral-7B v0.1 attends 4096 back at 32,768 tokens: with 128-token tiles a query block runs at most
 * ⌈4096 / 128⌉ + 1 = 33 of 256 key blocks (Σ min(i + 1, 33) over 256 query blocks = 528 + 224 · 33 = 7,920 tiles)
 * of the 256 · 32 = 8,192 the FLOPs count; causal alone runs 256 · 257 / 2 = 32,896 of 65,536.
 */
test('a window the code\'s kernel honours is priced: flash_attention_2 marks the windowed layers, and their attention runs its tiles only', () => {
  const mistral = (impl: string) => script(`model = AutoModelForCausalLM.from_pretrained("./mistral-7b", attn_implementation="${impl}")\n`);
  const flash = mistral('flash_attention_2');
  const sdpa = mistral('sdpa');
  const attention = (m: AnalyzedModel) => m.layers.filter((l) => l.op === 'sdpa');
  assert.equal(attention(flash.model).length, 32);
  assert.ok(attention(flash.model).every((l) => (l.attrs as { window?: number }).window === 4096));
  assert.ok(attention(sdpa.model).every((l) => (l.attrs as { window?: number }).window === undefined));
  assert.match(flash.diagnostics.find((d) => d.code === 'hf-sliding-window')?.message ?? '', /^mistral: all 32 layers attend a sliding window of 4096 tokens, and the code runs flash_attention_2, which skips the keys outside it/);
  assert.match(sdpa.diagnostics.find((d) => d.code === 'hf-sliding-window')?.message ?? '', /over-estimated/);
  const fraction = (m: AnalyzedModel) => causalTileFraction(attention(m)[0]!, 'fused');
  const at32k = (impl: string) => {
    const r = parseSource(join(fixtures, 'finetune.py'), `from transformers import AutoModelForCausalLM\nmodel = AutoModelForCausalLM.from_pretrained("./mistral-7b", attn_implementation="${impl}")\n`, {});
    return analyzeModel(r!.models[0]!, { sequenceLength: 32_768 });
  };
  const flash32k = at32k('flash_attention_2');
  const sdpa32k = at32k('sdpa');
  assert.equal(fraction(flash32k), 7_920 / 8_192);
  assert.equal(fraction(sdpa32k), 32_896 / 65_536);
  // The windowed layer's attention FLOPs are 4096 / 32,768 of the full one's (the projections around it are not in the node).
  assert.equal(attention(flash32k)[0]!.workload.forwardFlops / attention(sdpa32k)[0]!.workload.forwardFlops, 4096 / 32_768);
  // Eager attention computes every key whatever the attr says: 8× the windowed FLOPs.
  assert.equal(causalTileFraction(attention(flash32k)[0]!, 'unfused'), 8);
});
