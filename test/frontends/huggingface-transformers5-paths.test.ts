/**
 * Fine-tuning scripts written for newer transformers freeze the modules they name (src/frontends/huggingface/
 * newerNames.ts, moduleLayouts.ts's `newer`; src/frontends/freezing/stepNaming.ts), the same parameters the scripts
 * written for 4.46–4.51 reach by the older names, built from the released config.json
 * (test/fixtures/huggingface/<name>/config.json):
 * - LLaVA and Gemma 3 since 4.52 (modeling_llava.py, modeling_gemma3.py): `model.model.vision_tower`,
 *   `model.model.multi_modal_projector`, `model.model.language_model` (the bare decoder) and `model.lm_head`, as
 *   `_checkpoint_conversion_mapping` renames `vision_tower`, `multi_modal_projector`, `language_model.model` and
 *   `language_model.lm_head`;
 * - transformers 5's experts as one module with a tensor per projection (conversion_mapping.py):
 *   `mlp.experts.gate_up_proj` stacks every expert's gate and up projections (Mixtral's w1 and w3, under `mlp`
 *   where 4.x said `block_sparse_moe`), `mlp.experts.down_proj` their down projections (w2); GPT-OSS's were so from
 *   its first release, with `gate_up_proj_bias` and `down_proj_bias` beside them.
 *
 * Counts by hand:
 * - LLaVA-1.5-7B (huggingface-vision-language.test.ts): CLIP tower 303,507,456; projector linear_1 1024·4096 + 4096 =
 *   4,198,400 and linear_2 4096² + 4096 = 16,781,312, 20,979,712; a Llama decoder layer 4·4096² + 3·4096·11008 +
 *   2·4096 = 202,383,360; embed_tokens and lm_head (untied) 32064·4096 = 131,334,144 each; norm 4,096. Decoder without
 *   lm_head: 32·202,383,360 + 4,096 + 131,334,144 = 6,607,605,760.
 * - Gemma 3 4B (same file): SigLIP tower at 896 416,866,032; projector 1,152 + 1152·2560 = 2,950,272; text model
 *   3,880,263,168, its lm_head tied to embed_tokens.
 * - Mixtral-8x7B (4096 wide, 32 layers, 8 experts of 14336): an expert's w1 and w3 4096·14336 = 58,720,256 each, w2
 *   the same: gate_up_proj stacks 8·2·58,720,256 = 939,524,096 a layer, down_proj 8·58,720,256 = 469,762,048; a
 *   layer's experts 1,409,286,144 and its router 4096·8 = 32,768.
 * - Qwen1.5-MoE-A2.7B (qwen2_moe: 2048 wide, 24 layers, 60 experts of 1408, a shared expert of 5632): an expert's
 *   gate, up and down 2048·1408 = 2,883,584 each; a layer's experts 60·3·2,883,584 = 519,045,120, their down_proj
 *   60·2,883,584 = 173,015,040.
 * - Qwen3-30B-A3B (qwen3_moe: 2048 wide, 48 layers, 128 experts of 768): gate and up 2048·768 = 1,572,864 each;
 *   gate_up_proj 128·2·1,572,864 = 402,653,184 a layer, down_proj 128·1,572,864 = 201,326,592.
 * - GPT-OSS-20B (2880 wide, 24 layers, 32 experts of 2880): gate_up_proj 2880·5760 = 16,588,800 and
 *   gate_up_proj_bias 5,760 an expert; down_proj 2880² = 8,294,400 and down_proj_bias 2,880.
 */
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import type { AnalyzedModel, Diagnostic } from '../../src/core/ir';
import { initFrontends } from '../../src/frontends/index';
import { hfScriptModel } from './hfFixtures';

before(() => initFrontends());

const TOWER_CLIP = 303_507_456;
const PROJECTOR_LLAVA = 4_198_400 + 16_781_312;
const LLAMA_LAYER = 4 * 4096 * 4096 + 3 * 4096 * 11008 + 2 * 4096;
const LLAVA_TABLE = 32064 * 4096;
const LLAVA_DECODER = 32 * LLAMA_LAYER + 4096 + LLAVA_TABLE;

const TOWER_SIGLIP_896 = 416_866_032;
const PROJECTOR_GEMMA3 = 1152 + 1152 * 2560;
const GEMMA3_TEXT = 3_880_263_168;

const MIXTRAL_PROJECTION = 4096 * 14336;
const QWEN15_PROJECTION = 2048 * 1408;
const QWEN3_PROJECTION = 2048 * 768;
const OSS_GATE_UP = 2880 * 5760 + 5760;
const OSS_DOWN = 2880 * 2880 + 2880;

const LOAD = {
  llava: 'from transformers import LlavaForConditionalGeneration\nmodel = LlavaForConditionalGeneration.from_pretrained("./llava-1.5-7b")\n',
  gemma3: 'from transformers import Gemma3ForConditionalGeneration\nmodel = Gemma3ForConditionalGeneration.from_pretrained("./gemma-3-4b-it")\n',
  qwenVl: 'from transformers import Qwen2_5_VLForConditionalGeneration\nmodel = Qwen2_5_VLForConditionalGeneration.from_pretrained("./qwen2.5-vl-7b-instruct")\n',
  mixtral: 'from transformers import AutoModelForCausalLM\nmodel = AutoModelForCausalLM.from_pretrained("./mixtral-8x7b")\n',
  qwen15Moe: 'from transformers import AutoModelForCausalLM\nmodel = AutoModelForCausalLM.from_pretrained("./qwen1.5-moe-a2.7b")\n',
  qwen3Moe: 'from transformers import AutoModelForCausalLM\nmodel = AutoModelForCausalLM.from_pretrained("./qwen3-30b-a3b")\n',
  gptOss: 'from transformers import AutoModelForCausalLM\nmodel = AutoModelForCausalLM.from_pretrained("./gpt-oss-20b")\n',
};

/** The script's model (text long enough for the image tokens of a vision-language model) and every diagnostic. */
function script(load: string, body: string): { model: AnalyzedModel; diagnostics: Diagnostic[] } {
  return hfScriptModel('transformers5_finetune.py', `import torch\n${load}${body}`, { sequenceLength: 2048 });
}

const frozenBy = (load: string, body: string): number => script(load, body).model.totals.frozenParams ?? 0;

/** The freeze warnings: parameters WAP could not attribute, layers left split, readings that depend on the release. */
const freezeWarnings = (diagnostics: readonly Diagnostic[]): string[] => diagnostics.filter((d) => d.code === 'frozen-parameters' && d.severity === 'warning').map((d) => d.message);

/** Each script's frozen count, and that they raise no freeze warning. */
function sameFrozen(load: string, bodies: readonly string[], expected: number): void {
  for (const body of bodies) {
    const { model, diagnostics } = script(load, body);
    assert.equal(model.totals.frozenParams ?? 0, expected, body);
    assert.deepEqual(freezeWarnings(diagnostics), [], body);
  }
}

test('the hand counts', () => {
  assert.deepEqual([PROJECTOR_LLAVA, LLAMA_LAYER, LLAVA_TABLE, LLAVA_DECODER], [20_979_712, 202_383_360, 131_334_144, 6_607_605_760]);
  assert.equal(TOWER_CLIP + PROJECTOR_LLAVA + LLAVA_DECODER + LLAVA_TABLE, 7_063_427_072, "llava-hf/llava-1.5-7b-hf's published total");
  assert.equal(TOWER_SIGLIP_896 + PROJECTOR_GEMMA3 + GEMMA3_TEXT, 4_300_079_472, "google/gemma-3-4b-it's published total");
  assert.deepEqual([8 * 2 * MIXTRAL_PROJECTION, 8 * MIXTRAL_PROJECTION, 8 * 3 * MIXTRAL_PROJECTION], [939_524_096, 469_762_048, 1_409_286_144]);
  assert.deepEqual([60 * 3 * QWEN15_PROJECTION, 60 * QWEN15_PROJECTION], [519_045_120, 173_015_040]);
  assert.deepEqual([128 * 2 * QWEN3_PROJECTION, 128 * QWEN3_PROJECTION], [402_653_184, 201_326_592]);
});

test("LLaVA since 4.52: model.model.vision_tower, model.model.multi_modal_projector, model.model.language_model's layers and model.lm_head freeze what 4.46's paths do", () => {
  const { llava } = LOAD;
  sameFrozen(llava, ['model.vision_tower.requires_grad_(False)\n', 'model.model.vision_tower.requires_grad_(False)\n'], TOWER_CLIP);
  sameFrozen(llava, ['model.multi_modal_projector.requires_grad_(False)\n', 'model.model.multi_modal_projector.requires_grad_(False)\n'], PROJECTOR_LLAVA);
  // The decoder's first layer by 4.46's path, 4.52's, and the 4.52 property `language_model` (the bare decoder).
  sameFrozen(llava, ['model.language_model.model.layers[0].requires_grad_(False)\n', 'model.model.language_model.layers[0].requires_grad_(False)\n', 'model.language_model.layers[0].requires_grad_(False)\n'], LLAMA_LAYER);
  sameFrozen(llava, ['model.language_model.lm_head.requires_grad_(False)\n', 'model.lm_head.requires_grad_(False)\n', 'model.lm_head.weight.requires_grad = False\n'], LLAVA_TABLE);
  sameFrozen(llava, ['for p in model.language_model.model.parameters():\n    p.requires_grad = False\n', 'for p in model.model.language_model.parameters():\n    p.requires_grad = False\n'], LLAVA_DECODER);
  // LLaVA's recipe, tower and projector frozen, by each release's names: 4.52's match no 4.46 name, so they are read as 4.52's.
  const older = 'for n, p in model.named_parameters():\n    if n.startswith(("vision_tower", "multi_modal_projector")):\n        p.requires_grad = False\n';
  const newer = 'for n, p in model.named_parameters():\n    if n.startswith(("model.vision_tower", "model.multi_modal_projector")):\n        p.requires_grad = False\n';
  const trainOnlyLanguage = 'for n, p in model.named_parameters():\n    p.requires_grad = n.startswith(("model.language_model", "lm_head"))\n';
  sameFrozen(llava, [older, newer, trainOnlyLanguage], TOWER_CLIP + PROJECTOR_LLAVA);
});

test("LLaVA's `language_model` is the causal LM before 4.52 and the bare decoder after: planned the older way, lm_head included, and said", () => {
  const { model, diagnostics } = script(LOAD.llava, 'model.language_model.requires_grad_(False)\n');
  assert.equal(model.totals.frozenParams, LLAVA_DECODER + LLAVA_TABLE);
  const said = freezeWarnings(diagnostics);
  assert.equal(said.length, 1, said.join('\n'));
  assert.match(said[0], /`language_model` of LlavaForConditionalGeneration is a different module.*before 4\.52 `language_model`.*from 4\.52 `model\.language_model`.*`language_model\.lm_head\.weight` is under it only before 4\.52/);
});

test("Gemma 3 since 4.52: the same paths; its tied lm_head makes `language_model` freeze the same parameters in either release, unsaid", () => {
  const { gemma3 } = LOAD;
  sameFrozen(gemma3, ['model.vision_tower.requires_grad_(False)\n', 'model.model.vision_tower.requires_grad_(False)\n'], TOWER_SIGLIP_896);
  sameFrozen(gemma3, ['model.multi_modal_projector.requires_grad_(False)\n', 'model.model.multi_modal_projector.requires_grad_(False)\n'], PROJECTOR_GEMMA3);
  sameFrozen(gemma3, ['model.language_model.requires_grad_(False)\n', 'model.model.language_model.requires_grad_(False)\n', 'model.language_model.model.requires_grad_(False)\n'], GEMMA3_TEXT);
});

test("Qwen2.5-VL's `model` is the decoder before 4.52 and the tower with it after: planned the older way, and said", () => {
  const { model, diagnostics } = script(LOAD.qwenVl, 'model.model.requires_grad_(False)\n');
  // The decoder without lm_head: 28 layers of 233,057,792, norm 3,584, embed_tokens 152064·3584 (huggingface-qwen-vl.test.ts).
  assert.equal(model.totals.frozenParams, 28 * 233_057_792 + 3584 + 152064 * 3584);
  assert.match(freezeWarnings(diagnostics).join('\n'), /`model` of Qwen2_5_VLForConditionalGeneration is a different module.*`visual\.[^`]+` is under it only from 4\.52/);
});

test("Mixtral in transformers 5: mlp (block_sparse_moe), mlp.experts, and gate_up_proj / down_proj reach every expert's w1 and w3 / w2", () => {
  const { mixtral } = LOAD;
  sameFrozen(mixtral, ['model.model.layers[3].block_sparse_moe.experts.requires_grad_(False)\n', 'model.model.layers[3].mlp.experts.requires_grad_(False)\n'], 8 * 3 * MIXTRAL_PROJECTION);
  sameFrozen(mixtral, ['model.model.layers[3].block_sparse_moe.requires_grad_(False)\n', 'model.model.layers[3].mlp.requires_grad_(False)\n'], 8 * 3 * MIXTRAL_PROJECTION + 4096 * 8);
  const w2Loop = 'for n, p in model.model.layers[0].block_sparse_moe.experts.named_parameters():\n    if n.endswith(".w2.weight"):\n        p.requires_grad = False\n';
  sameFrozen(mixtral, [w2Loop, 'model.model.layers[0].mlp.experts.down_proj.requires_grad = False\n', 'model.model.layers[0].mlp.experts.down_proj.requires_grad_(False)\n'], 8 * MIXTRAL_PROJECTION);
  const older = 'for n, p in model.named_parameters():\n    if ".w1." in n or ".w3." in n:\n        p.requires_grad = False\n';
  const newer = 'for n, p in model.named_parameters():\n    if "experts.gate_up_proj" in n:\n        p.requires_grad = False\n';
  const newerUnder = 'for layer in model.model.layers[:32]:\n    for n, p in layer.mlp.experts.named_parameters():\n        if n == "gate_up_proj":\n            p.requires_grad = False\n';
  sameFrozen(mixtral, [older, newer, newerUnder], 32 * 8 * 2 * MIXTRAL_PROJECTION);
});

test('Mixtral: a name test both releases tell parameters apart by, differently, is planned with the 4.x names and said', () => {
  // "gate": the routers (block_sparse_moe.gate) in 4.x; the routers (mlp.gate) and every gate_up_proj in 5.
  const { model, diagnostics } = script(LOAD.mixtral, 'for n, p in model.named_parameters():\n    p.requires_grad = "gate" in n\n');
  assert.equal(model.totals.params, 32 * 4096 * 8);
  const said = freezeWarnings(diagnostics);
  assert.equal(said.length, 1, said.join('\n'));
  assert.match(said[0], /transformers 5 renamed them.*`model\.layers\.0\.block_sparse_moe\.experts\.0\.w1\.weight` is frozen; read with 5's \(`model\.layers\.0\.mlp\.experts\.gate_up_proj`\), it is trained.*plans the earlier reading/);
});

test("Qwen1.5-MoE and Qwen3-MoE: experts.gate_up_proj / experts.down_proj are every routed expert's, never the shared expert's", () => {
  const { qwen15Moe, qwen3Moe } = LOAD;
  // Both releases name ".mlp.experts." alike: the same parameters either way, the shared expert left.
  sameFrozen(qwen15Moe, ['for n, p in model.named_parameters():\n    if ".mlp.experts." in n:\n        p.requires_grad = False\n'], 24 * 60 * 3 * QWEN15_PROJECTION);
  const olderDown = 'for n, p in model.named_parameters():\n    if ".mlp.experts." in n and n.endswith("down_proj.weight"):\n        p.requires_grad = False\n';
  sameFrozen(qwen15Moe, [olderDown, 'for n, p in model.named_parameters():\n    if "experts.down_proj" in n:\n        p.requires_grad = False\n'], 24 * 60 * QWEN15_PROJECTION);
  const olderGateUp = 'for n, p in model.named_parameters():\n    if ".experts." in n and n.endswith(("gate_proj.weight", "up_proj.weight")):\n        p.requires_grad = False\n';
  sameFrozen(qwen3Moe, [olderGateUp, 'for n, p in model.named_parameters():\n    if n.endswith("mlp.experts.gate_up_proj"):\n        p.requires_grad = False\n'], 48 * 128 * 2 * QWEN3_PROJECTION);
  const olderLayer = 'for n, p in model.model.layers[3].mlp.experts.named_parameters():\n    p.requires_grad = not n.endswith("down_proj.weight")\n';
  sameFrozen(qwen3Moe, [olderLayer, 'for n, p in model.model.layers[3].mlp.experts.named_parameters():\n    p.requires_grad = n != "down_proj"\n'], 128 * QWEN3_PROJECTION);
});

test("GPT-OSS: its experts' fused names reach the per-expert layers; a weight without its bias splits them, said as before", () => {
  const { gptOss } = LOAD;
  sameFrozen(gptOss, ['for n, p in model.named_parameters():\n    if "gate_up_proj" in n:\n        p.requires_grad = False\n', 'for n, p in model.named_parameters():\n    if "experts.gate_up_proj" in n:\n        p.requires_grad = False\n'], 24 * 32 * OSS_GATE_UP);
  sameFrozen(gptOss, ['model.model.layers[0].mlp.experts.requires_grad_(False)\n', 'for n, p in model.model.layers[0].mlp.experts.named_parameters():\n    p.requires_grad = False\n'], 32 * (OSS_GATE_UP + OSS_DOWN));
  const both = 'e = model.model.layers[0].mlp.experts\ne.down_proj.requires_grad = False\ne.down_proj_bias.requires_grad = False\n';
  sameFrozen(gptOss, [both], 32 * OSS_DOWN);
  // The weight alone: every expert's down_proj layer keeps a trained bias, so it is planned trained and said.
  const { model, diagnostics } = script(gptOss, 'model.model.layers[0].mlp.experts.down_proj.requires_grad = False\n');
  assert.equal(model.totals.frozenParams ?? 0, 0);
  assert.match(freezeWarnings(diagnostics).join('\n'), /freezes part of 32 layers \(e\.g\. `model\.layers\.0\.mlp\.experts\.0\.down_proj\.weight` frozen, `model\.layers\.0\.mlp\.experts\.0\.down_proj\.bias` trained\)/);
});

test('paths neither release names stay unattributed, as before', () => {
  const { diagnostics } = script(LOAD.mixtral, 'model.model.layers[3].moe.experts.requires_grad_(False)\n');
  assert.match(diagnostics.map((d) => d.message).join('\n'), /cannot attribute to a module/);
  assert.equal(frozenBy(LOAD.llava, 'model.model.vision_model.requires_grad_(False)\n'), 0);
});
