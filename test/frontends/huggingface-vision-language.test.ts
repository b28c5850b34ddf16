/**
 * Vision-language fine-tunes planned whole: the CLIP and SigLIP vision towers (modeling_clip.py, modeling_siglip.py;
 * src/frontends/huggingface/visionTowers.ts), alone and joined to their language models by Gemma 3's and LLaVA's
 * projectors (modeling_gemma3.py, modeling_llava.py; multimodal.ts), built from the checkpoints' config.json
 * (test/fixtures/huggingface/<name>/config.json) with transformers' module names.
 *
 * Parameter counts by hand (h = hidden, I = intermediate, L = layers; every tower Linear and LayerNorm has a bias):
 * - CLIP ViT-L/14 at 336 (h 1024, I 4096, L 24, patch 14: 24² = 576 patches and the class token, 577 tokens):
 *   class_embedding 1,024 + patch Conv2d 3·14·14·1024 = 602,112 (no bias) + position_embedding 577·1024 = 590,848
 *   + pre_layrnorm 2,048; per layer two LayerNorms 4,096 + q, k, v, out_proj 4·(1024² + 1024) = 4,198,400 + fc1
 *   1024·4096 + 4096 = 4,198,400 + fc2 4096·1024 + 1024 = 4,195,328 = 12,596,224, × 24 = 302,309,376; post_layernorm
 *   2,048: 303,507,456, the CLIPVisionModel of openai/clip-vit-large-patch14-336 as public code counts it.
 * - LLaVA-1.5-7B: that tower; multi_modal_projector linear_1 1024·4096 + 4096 = 4,198,400 and linear_2 4096² + 4096
 *   = 16,781,312 (20,979,712); the Llama-2-7B shape over 32,064 tokens, untied: per layer 4·4096² + 3·4096·11008
 *   + 2·4096 = 202,383,360, × 32 = 6,476,267,520, + norm 4,096 + 2·32064·4096 = 262,668,288 → 6,738,939,904.
 *   Total 7,063,427,072, the count published for llava-hf/llava-1.5-7b-hf (sum of p.numel()).
 * - SigLIP so400m (h 1152, I 4304, L 27, 16 heads, patch 14): per layer 4,608 + 4·(1152² + 1152) = 5,313,024
 *   + fc1 1152·4304 + 4304 = 4,962,512 + fc2 4304·1152 + 1152 = 4,959,360 = 15,239,504, × 27 = 411,466,608; patch
 *   Conv2d 3·14·14·1152 + 1152 = 678,528 (with bias); post_layernorm 2,304.
 *   At 384 (27² = 729 positions, 839,808) with the attention-pooling head (probe 1,152 + MultiheadAttention
 *   4·1152² + 4·1152 = 5,313,024 + LayerNorm 2,304 + MLP 9,921,872 = 15,238,352): 428,225,600, the vision model of
 *   google/siglip-so400m-patch14-384 as public code counts it.
 * - Gemma 3 4B: at 896 (64² = 4096 positions, 4,718,592), no head (vision_use_head false): 416,866,032; projector
 *   mm_soft_emb_norm 1,152 + mm_input_projection_weight 1152·2560 = 2,949,120; the text model 3,880,263,168
 *   (huggingface-newer.test.ts): 4,300,079,472, google/gemma-3-4b-it's published total.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { analyzeModel } from '../../src/core/analyze';
import type { AnalyzedModel, Diagnostic } from '../../src/core/ir';
import { configClassType, modelClassType } from '../../src/frontends/huggingface/configs';
import { initFrontends, parseSource } from '../../src/frontends/index';
import { planModel, resolveCluster } from '../../src/planner/index';
import { HF_FIXTURES, hfConfigModel, hfScriptModel, layerNamed } from './hfFixtures';

const fixtures = HF_FIXTURES;
const T = 2048;

const CLIP_L_336 = 303_507_456;
const LLAVA_7B = 7_063_427_072;
const SIGLIP_SO400M_384 = 428_225_600;
const SIGLIP_HEAD = 15_238_352;
const GEMMA3_4B = 4_300_079_472;
const GEMMA3_4B_TEXT = 3_880_263_168;

before(() => initFrontends());

/** A config.json as the JSON frontend reads it (`text` in place of the file's, for configs no fixture holds). */
function configJson(dir: string, options: { tokens?: number; text?: string } = {}): AnalyzedModel {
  return hfConfigModel(dir, { inputShape: [options.tokens ?? T] }, options.text);
}

/** A script next to the fixtures: the model named `model`, analysed at T tokens, and every diagnostic. */
function script(body: string): { model: AnalyzedModel; diagnostics: Diagnostic[] } {
  return hfScriptModel('vl_finetune.py', `import torch\n${body}`, { sequenceLength: T });
}

const layer = layerNamed;

const noTowerLeftOut = (m: AnalyzedModel): void => assert.ok(!m.diagnostics.some((d) => d.code === 'hf-vision-tower'), m.diagnostics.map((d) => d.message).join('\n'));

test("CLIPVisionModel from openai/clip-vit-large-patch14-336's CLIPConfig: its vision_config's tower, 577 tokens at 336/14, 303,507,456 parameters", () => {
  const { model: m, diagnostics } = script('from transformers import CLIPVisionModel\nmodel = CLIPVisionModel.from_pretrained("./clip-vit-large-patch14-336")\n');
  assert.equal(m.totals.params, CLIP_L_336);
  // The checkpoint's model_type 'clip' is the dual encoder whose vision_config CLIPVisionModel reads: no mismatch.
  assert.ok(!diagnostics.some((d) => d.code === 'hf-config-mismatch'), diagnostics.map((d) => d.message).join('\n'));
  assert.equal(m.totals.params, 1024 + 3 * 14 * 14 * 1024 + 577 * 1024 + 2048 + 24 * (4 * 2048 / 2 + 4 * (1024 * 1024 + 1024) + (1024 * 4096 + 4096) + (4096 * 1024 + 1024)) + 2048);
  assert.deepEqual(m.inputs.map((i) => [i.id, i.shape]), [['pixel_values', [3, 336, 336]]]);
  assert.equal(layer(m, 'vision_model.embeddings.patch_embedding').attrs.bias, false);
  assert.deepEqual(layer(m, 'vision_model.embeddings.position_embedding').outputShape, [577, 1024]);
  assert.deepEqual(layer(m, 'vision_model.pre_layrnorm').outputShape, [577, 1024]);
  assert.deepEqual(layer(m, 'vision_model.encoder.layers.23.self_attn.q_proj').outputShape, [577, 1024]);
  // quick_gelu is x·sigmoid(1.702x): the scale, the sigmoid and the product.
  assert.deepEqual(['.scale', '.sigmoid', ''].map((s) => layer(m, `vision_model.encoder.layers.0.mlp.activation_fn${s}`).op), ['mul', 'activation', 'mul']);
  // post_layernorm norms the pooled class token only.
  assert.deepEqual(layer(m, 'vision_model.post_layernorm').outputShape, [1, 1024]);
});

test('SiglipVisionModel: so400m at 384 builds to 428,225,600 with its attention-pooling head, which vision_use_head=False leaves out', () => {
  const so400m = 'SiglipVisionConfig(hidden_size=1152, intermediate_size=4304, num_hidden_layers=27, num_attention_heads=16, image_size=384, patch_size=14';
  const { model: m } = script(`from transformers import SiglipVisionConfig, SiglipVisionModel\nmodel = SiglipVisionModel(${so400m}))\n`);
  assert.equal(m.totals.params, SIGLIP_SO400M_384);
  assert.equal(m.totals.params, 678_528 + 729 * 1152 + 27 * 15_239_504 + 2304 + SIGLIP_HEAD);
  assert.equal(layer(m, 'vision_model.embeddings.patch_embedding').attrs.bias, true);
  assert.deepEqual(layer(m, 'vision_model.post_layernorm').outputShape, [729, 1152]);
  const pooled = layer(m, 'vision_model.head.attention');
  assert.deepEqual([pooled.op, pooled.outputShape, pooled.workload.params], ['mha', [1, 1152], 4 * 1152 * 1152 + 4 * 1152]);
  const { model: headless } = script(`from transformers import SiglipVisionConfig, SiglipVisionModel\nmodel = SiglipVisionModel(${so400m}, vision_use_head=False))\n`);
  assert.equal(headless.totals.params, SIGLIP_SO400M_384 - SIGLIP_HEAD);
  assert.ok(!headless.layers.some((l) => l.name.startsWith('vision_model.head.')));
});

test("Gemma 3 4B built whole: SigLIP's 4096 patches pooled to 256 tokens, projected and merged into the language model, 4,300,079,472 parameters", () => {
  const fromJson = configJson('gemma-3-4b-it');
  for (const cls of ['AutoModelForImageTextToText', 'Gemma3ForConditionalGeneration']) {
    const { model: m } = script(`from transformers import ${cls}\nmodel = ${cls}.from_pretrained("./gemma-3-4b-it", torch_dtype=torch.bfloat16)\n`);
    assert.equal(m.totals.params, GEMMA3_4B, cls);
  }
  const m = fromJson;
  assert.equal(m.totals.params, GEMMA3_4B);
  assert.equal(m.totals.params, GEMMA3_4B_TEXT + 678_528 + 4096 * 1152 + 27 * 15_239_504 + 2304 + 1152 + 1152 * 2560);
  noTowerLeftOut(m);
  assert.equal(m.completeness?.complete, true);
  assert.deepEqual(layer(m, 'vision_tower.vision_model.embeddings.position_embedding').outputShape, [4096, 1152]);
  assert.deepEqual(layer(m, 'vision_tower.vision_model.post_layernorm').outputShape, [4096, 1152]);
  assert.ok(!m.layers.some((l) => l.name.includes('.head.')), 'Gemma 3 keeps no SigLIP head');
  assert.deepEqual(layer(m, 'multi_modal_projector.avg_pool').outputShape, [1152, 16, 16]);
  assert.deepEqual(layer(m, 'multi_modal_projector.mm_soft_emb_norm').outputShape, [256, 1152]);
  const projection = layer(m, 'multi_modal_projector.mm_input_projection_weight');
  assert.deepEqual([projection.outputShape, projection.workload.params], [[256, 2560], 1152 * 2560]);
  // input_ids are the text's T tokens; the language model runs them and the image's 256.
  const merge = layer(m, 'merge_image_features');
  assert.deepEqual(merge.inputs, ['multi_modal_projector.mm_input_projection_weight', 'language_model.model.embed_scale']);
  assert.deepEqual(merge.outputShape, [T + 256, 2560]);
  assert.deepEqual(layer(m, 'language_model.model.layers.0.input_layernorm').inputs, ['merge_image_features']);
  assert.deepEqual(layer(m, 'language_model.lm_head').outputShape, [T + 256, 262_208]);
  assert.equal(layer(m, 'language_model.lm_head').weightOwner, 'language_model.model.embed_tokens');
  // The tower's backward is priced: its weights train, as the LM's do.
  assert.ok(layer(m, 'vision_tower.vision_model.encoder.layers.0.mlp.fc1').workload.backwardFlops > 0);
  assert.match(m.diagnostics.find((d) => d.code === 'hf-vision-language')?.message ?? '', /4096 patches average-pooled 4×4 to 256 tokens/);
});

test('on the Gemma 3 checkpoint Gemma3ForCausalLM is its text model alone and AutoModelForCausalLM the whole model, as transformers loads each', () => {
  const { model: text } = script('from transformers import Gemma3ForCausalLM\nmodel = Gemma3ForCausalLM.from_pretrained("./gemma-3-4b-it")\n');
  assert.equal(text.totals.params, GEMMA3_4B_TEXT);
  assert.ok(!text.layers.some((l) => l.name.startsWith('vision_tower.')));
  assert.match(text.diagnostics.find((d) => d.code === 'hf-text-model')?.message ?? '', /is its text model alone/);
  noTowerLeftOut(text);
  // transformers' current MODEL_FOR_CAUSAL_LM_MAPPING maps gemma3 to Gemma3ForConditionalGeneration.
  const { model: auto } = script('from transformers import AutoModelForCausalLM\nmodel = AutoModelForCausalLM.from_pretrained("./gemma-3-4b-it")\n');
  assert.equal(auto.totals.params, GEMMA3_4B);
  assert.ok(auto.layers.some((l) => l.name.startsWith('vision_tower.')));
  assert.match(auto.diagnostics.find((d) => d.code === 'hf-auto-class')?.message ?? '', /loads gemma3's whole vision-language model.*Gemma3ForCausalLM/);
  noTowerLeftOut(auto);
});

test('LLaVA-1.5-7B built whole: the CLIP tower read at hidden_states[-2] without its class token, the two-Linear projector, 576 image tokens, 7,063,427,072 parameters', () => {
  const fromJson = configJson('llava-1.5-7b');
  const { model: loaded } = script('from transformers import LlavaForConditionalGeneration\nmodel = LlavaForConditionalGeneration.from_pretrained("./llava-1.5-7b")\n');
  for (const m of [fromJson, loaded]) {
    assert.equal(m.totals.params, LLAVA_7B);
    noTowerLeftOut(m);
  }
  const m = fromJson;
  assert.equal(m.totals.params, CLIP_L_336 + 20_979_712 + 6_738_939_904);
  assert.deepEqual(layer(m, 'vision_tower.vision_model.encoder.layers.0.self_attn.q_proj').outputShape, [577, 1024]);
  // hidden_states[-2] is layer 22's output; layer 23 is built, run and counted, its output read by nothing.
  const dropped = layer(m, 'image_features.drop_first_token');
  assert.deepEqual([dropped.inputs, dropped.outputShape], [['vision_tower.vision_model.encoder.layers.22.residual_mlp'], [576, 1024]]);
  assert.ok(layer(m, 'vision_tower.vision_model.encoder.layers.23.mlp.fc2'));
  assert.match(m.diagnostics.map((d) => d.message).join('\n'), /reads hidden_states\[23\] of 25: transformers still builds and runs the tower's last layer/);
  const linear1 = layer(m, 'multi_modal_projector.linear_1');
  assert.deepEqual([linear1.attrs.inFeatures, linear1.attrs.outFeatures, linear1.attrs.bias], [1024, 4096, true]);
  assert.equal(layer(m, 'multi_modal_projector.act').attrs.fn, 'gelu');
  assert.deepEqual(layer(m, 'merge_image_features').outputShape, [T + 576, 4096]);
  assert.deepEqual(layer(m, 'language_model.model.layers.31.self_attn.sdpa').outputShape?.slice(-2), [T + 576, 128]);
  // The loss is the composite's own forward's, over the language model's logits.
  assert.deepEqual(layer(m, 'loss.float').inputs, ['language_model.lm_head']);
  // The text's positions are what the image leaves: 4096 − 576.
  const text = m.inputs.find((i) => i.id === 'input_ids');
  assert.equal(text?.maxLength?.tokens, 4096 - 576);
  assert.deepEqual(m.inputs.map((i) => i.id), ['input_ids', 'pixel_values']);
});

test("a LLaVA fine-tune that freezes the vision tower, as LLaVA's recipe does, freezes exactly the CLIP tower's weights", () => {
  const { model: m } = script('from transformers import LlavaForConditionalGeneration\nmodel = LlavaForConditionalGeneration.from_pretrained("./llava-1.5-7b")\nmodel.vision_tower.requires_grad_(False)\n');
  assert.deepEqual([m.totals.params, m.totals.frozenParams], [LLAVA_7B - CLIP_L_336, CLIP_L_336]);
});

test('vision configs WAP does not build keep the language model alone, said and incomplete, naming what is left out', () => {
  const llava = JSON.parse(readFileSync(join(fixtures, 'llava-1.5-7b', 'config.json'), 'utf8')) as Record<string, unknown>;
  const pixtral = JSON.stringify({ ...llava, vision_config: { model_type: 'pixtral', hidden_size: 1024, num_hidden_layers: 24 } });
  const other = configJson('llava-1.5-7b', { text: pixtral });
  assert.equal(other.totals.params, 6_738_939_904);
  const said = other.diagnostics.find((d) => d.code === 'hf-vision-tower');
  assert.match(said?.message ?? '', /not its vision tower \(pixtral, 24 layers\).*WAP builds clip_vision_model and siglip_vision_model towers, not pixtral/);
  assert.equal(other.completeness?.complete, false);
  const paligemma = JSON.stringify({ architectures: ['PaliGemmaForConditionalGeneration'], model_type: 'paligemma', text_config: { model_type: 'gemma', num_hidden_layers: 2 }, vision_config: { model_type: 'siglip_vision_model', num_hidden_layers: 27 } });
  const unjoined = configJson('llava-1.5-7b', { text: paligemma, tokens: 256 });
  assert.match(unjoined.diagnostics.find((d) => d.code === 'hf-vision-tower')?.message ?? '', /not its vision tower \(siglip_vision_model, 27 layers\).*not paligemma/);
  assert.equal(unjoined.completeness?.complete, false);
});

test('a LLaVA-1.5-7B fine-tune at 2048 text tokens plans feasibly on 8 A100s, its tower priced: more time, weights and activations than its language model alone', () => {
  const options = { batch: 32, objective: 'throughput', strategies: 'all', optimizer: 'adam', precision: 'bf16' } as const;
  const whole = planModel(configJson('llava-1.5-7b'), resolveCluster('a100x8'), options);
  assert.ok(whole.feasible, whole.feasible ? '' : whole.reason);
  // The same language model over the same 2048 + 576 tokens, its (unbuilt) tower left out.
  const llava = JSON.parse(readFileSync(join(fixtures, 'llava-1.5-7b', 'config.json'), 'utf8')) as Record<string, unknown>;
  const lmOnly = configJson('llava-1.5-7b', { text: JSON.stringify({ ...llava, vision_config: { model_type: 'pixtral' } }), tokens: T + 576 });
  const alone = planModel(lmOnly, resolveCluster('a100x8'), options);
  assert.ok(alone.feasible, alone.feasible ? '' : alone.reason);
  assert.ok(whole.plan.stepTimeMs > alone.plan.stepTimeMs, `${whole.plan.stepTimeMs} vs ${alone.plan.stepTimeMs} ms`);
  const [withTower, without] = [whole.plan.setup?.memoryPerGpu, alone.plan.setup?.memoryPerGpu];
  assert.ok(withTower && without);
  assert.ok(withTower.weights > without.weights && withTower.activations > without.activations, JSON.stringify([withTower, without]));
});

test("Gemma 3's classes: Gemma3Config, Gemma3ForConditionalGeneration and Gemma3Model are the vision-language model, the Text ones and Gemma3ForCausalLM its text model", () => {
  assert.equal(configClassType('Gemma3Config'), 'gemma3');
  assert.equal(configClassType('Gemma3TextConfig'), 'gemma3_text');
  assert.deepEqual(modelClassType('Gemma3ForConditionalGeneration'), { modelType: 'gemma3', head: 'seq2seq-lm' });
  assert.deepEqual(modelClassType('Gemma3Model'), { modelType: 'gemma3', head: 'base' });
  assert.deepEqual(modelClassType('Gemma3ForCausalLM'), { modelType: 'gemma3_text', head: 'causal-lm' });
  assert.deepEqual(modelClassType('Gemma3TextModel'), { modelType: 'gemma3_text', head: 'base' });
  // Gemma3Config() in code: SigLIP's 224-pixel defaults cannot pool to 256 tokens (nor can transformers' projector), said.
  const parsed = parseSource(join(fixtures, 'g3.py'), 'from transformers import Gemma3Config, Gemma3ForConditionalGeneration\nmodel = Gemma3ForConditionalGeneration(Gemma3Config())\n');
  const m = analyzeModel(parsed!.models[0]!, {});
  assert.match(m.diagnostics.find((d) => d.code === 'hf-vision-tower')?.message ?? '', /mm_tokens_per_image 256 is not a square that the 14×14 patch grid pools to evenly/);
  assert.equal(m.completeness?.complete, false);
});
