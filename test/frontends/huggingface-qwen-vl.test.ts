/**
 * Qwen2.5-VL and Qwen2-VL fine-tunes planned whole: the vision tower and patch merger under `visual`
 * (modeling_qwen2_5_vl.py, modeling_qwen2_vl.py; src/frontends/huggingface/qwenVisionTower.ts) joined to the Qwen2
 * language model (`model.layers.N…`, `lm_head`, transformers 4.49–4.51's names, the checkpoints' keys;
 * multimodal.ts), built from the released config.json (test/fixtures/huggingface/<name>/config.json), one 448×448
 * image a sample: 32×32 patches of 14 px, 1024 patches, merged 2×2 into 256 tokens.
 *
 * Parameter counts by hand (w = tower width 1280, 16 heads, patch 14, temporal 2, merge 2, 32 blocks):
 * - Qwen2.5-VL tower: patch_embed.proj Conv3d 3·2·14·14·1280 = 1,505,280 (no bias); per block norm1 + norm2 RMSNorm
 *   2·1280 = 2,560, attn.qkv 1280·3840 + 3840 = 4,919,040, attn.proj 1280² + 1280 = 1,639,680, mlp.gate_proj and
 *   up_proj 1280·3420 + 3420 = 4,381,020 each, down_proj 3420·1280 + 1280 = 4,378,880: 19,702,200, × 32 =
 *   630,470,400; merger ln_q 1,280, mlp.0 5120² + 5120 = 26,219,520, mlp.2 5120·out + out (7B, out 3584: 18,353,664;
 *   3B, out 2048: 10,487,808). 7B tower 676,550,144; 3B tower 668,684,288. A public torchinfo print of
 *   Qwen2.5-VL-3B-Instruct shows the same Conv3d 1,505,280, block 19,702,200 and merger Sequential 36,707,328.
 * - Qwen2.5-VL-7B language model (qwen2: 3584, 28 layers, 28 / 4 heads of 128, 18944, vocab 152,064, untied): per
 *   layer q 3584² + 3584 = 12,848,640, k and v 3584·512 + 512 = 1,835,520 each, o 3584² = 12,845,056, MLP
 *   3·3584·18944 = 203,685,888, norms 7,168: 233,057,792, × 28 = 6,525,618,176; norm 3,584; embed_tokens and lm_head
 *   152064·3584 = 544,997,376 each: 7,615,616,512. Total 8,292,166,656, Qwen/Qwen2.5-VL-7B-Instruct's published count
 *   (its safetensors metadata; a public LLaMA-Factory log trains 7,615,616,512 of 8,292,166,656 with the visual frozen).
 * - Qwen2.5-VL-3B language model (2048, 36 layers, 16 / 2 heads of 128, 11008, vocab 151,936, tied): per layer q
 *   2048² + 2048 = 4,196,352, k and v 2048·256 + 256 = 524,544 each, o 2048² = 4,194,304, MLP 3·2048·11008 =
 *   67,633,152, norms 4,096: 77,076,992, × 36 = 2,774,771,712; norm 2,048; embed_tokens 151936·2048 = 311,164,928 (lm_head
 *   tied to it): 3,085,938,688. Total 3,754,622,976, Qwen/Qwen2.5-VL-3B-Instruct's published count.
 * - Qwen2-VL-7B tower: LayerNorm norms 2·2·1280 = 5,120, qkv 4,919,040, proj 1,639,680, fc1 1280·5120 + 5120 =
 *   6,558,720, fc2 5120·1280 + 1280 = 6,554,880: 19,677,440 a block, × 32 = 629,678,080; patch 1,505,280; merger ln_q
 *   (LayerNorm) 2,560 + 26,219,520 + 18,353,664: 675,759,104; with the 7B language model above 8,291,375,616,
 *   Qwen/Qwen2-VL-7B-Instruct's published count.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, test } from 'node:test';
import type { AnalyzedModel, Diagnostic } from '../../src/core/ir';
import { configClassType, modelClassType } from '../../src/frontends/huggingface/configs';
import { initFrontends } from '../../src/frontends/index';
import { planModel, resolveCluster } from '../../src/planner/index';
import { repeatedTransformer } from '../../src/planner/search/parallel3d/blocks';
import { HF_FIXTURES, hfConfigModel, hfScriptModel, layerNamed as layer } from './hfFixtures';

const T = 2048;
const IMAGE_TOKENS = 256;
const PATCHES = 1024;

const QWEN25_BLOCK = 2 * 1280 + (1280 * 3840 + 3840) + (1280 * 1280 + 1280) + 2 * (1280 * 3420 + 3420) + (3420 * 1280 + 1280);
const QWEN25_TOWER_7B = 3 * 2 * 14 * 14 * 1280 + 32 * QWEN25_BLOCK + 1280 + (5120 * 5120 + 5120) + (5120 * 3584 + 3584);
const QWEN25_TOWER_3B = 3 * 2 * 14 * 14 * 1280 + 32 * QWEN25_BLOCK + 1280 + (5120 * 5120 + 5120) + (5120 * 2048 + 2048);
const QWEN2_VL_TOWER_7B = 3 * 2 * 14 * 14 * 1280 + 32 * (2 * 2 * 1280 + (1280 * 3840 + 3840) + (1280 * 1280 + 1280) + (1280 * 5120 + 5120) + (5120 * 1280 + 1280)) + 2 * 1280 + (5120 * 5120 + 5120) + (5120 * 3584 + 3584);
const LM_7B = 28 * (3584 * 3584 + 3584 + 2 * (3584 * 512 + 512) + 3584 * 3584 + 3 * 3584 * 18944 + 2 * 3584) + 3584 + 2 * 152064 * 3584;
const LM_3B = 36 * (2048 * 2048 + 2048 + 2 * (2048 * 256 + 256) + 2048 * 2048 + 3 * 2048 * 11008 + 2 * 2048) + 2048 + 151936 * 2048;

/** The published totals (each checkpoint's safetensors parameter count). */
const QWEN25_VL_7B = 8_292_166_656;
const QWEN25_VL_3B = 3_754_622_976;
const QWEN2_VL_7B = 8_291_375_616;

before(() => initFrontends());

const configJson = (dir: string, tokens = T, text?: string): AnalyzedModel => hfConfigModel(dir, { inputShape: [tokens] }, text);

function script(body: string): { model: AnalyzedModel; diagnostics: Diagnostic[] } {
  return hfScriptModel('qwen_vl_finetune.py', `import torch\n${body}`, { sequenceLength: T });
}

/** Built whole: neither left out as an unknown architecture nor with its tower dropped. */
function builtWhole(m: AnalyzedModel, diagnostics: readonly Diagnostic[] = m.diagnostics): void {
  const missing = diagnostics.filter((d) => d.code === 'hf-unsupported' || d.code === 'hf-vision-tower');
  assert.deepEqual(missing.map((d) => d.message), []);
  assert.equal(m.completeness?.complete, true);
}

const sdpaNames = (m: AnalyzedModel): string[] => m.layers.filter((l) => l.op === 'sdpa' && l.name.startsWith('visual.')).map((l) => l.name);

test('the hand counts are the published totals', () => {
  assert.deepEqual([QWEN25_TOWER_7B, LM_7B, QWEN25_TOWER_7B + LM_7B], [676_550_144, 7_615_616_512, QWEN25_VL_7B]);
  assert.deepEqual([QWEN25_TOWER_3B, LM_3B, QWEN25_TOWER_3B + LM_3B], [668_684_288, 3_085_938_688, QWEN25_VL_3B]);
  assert.deepEqual([QWEN2_VL_TOWER_7B, QWEN2_VL_TOWER_7B + LM_7B], [675_759_104, QWEN2_VL_7B]);
});

test('Qwen2.5-VL-7B-Instruct builds whole to its published 8,292,166,656 from config.json, its ForConditionalGeneration class and AutoModelForImageTextToText', () => {
  const fromJson = configJson('qwen2.5-vl-7b-instruct');
  assert.equal(fromJson.totals.params, QWEN25_VL_7B);
  builtWhole(fromJson);
  for (const cls of ['Qwen2_5_VLForConditionalGeneration', 'AutoModelForImageTextToText']) {
    const { model: m, diagnostics } = script(`from transformers import ${cls}\nmodel = ${cls}.from_pretrained("./qwen2.5-vl-7b-instruct", torch_dtype=torch.bfloat16, attn_implementation="flash_attention_2")\n`);
    assert.equal(m.totals.params, QWEN25_VL_7B, cls);
    builtWhole(m, diagnostics);
    assert.ok(!diagnostics.some((d) => d.code === 'hf-config-mismatch'), cls);
  }
  const tower = fromJson.layers.filter((l) => l.name.startsWith('visual.')).reduce((sum, l) => sum + l.workload.params, 0);
  assert.equal(tower, QWEN25_TOWER_7B);
});

test("Qwen2.5-VL's tower: 1024 patch rows, RMSNorm blocks with a gated MLP, 28 blocks in 16 windows of 64 patches and blocks 7, 15, 23, 31 over all 1024, merged to 256 tokens", () => {
  const m = configJson('qwen2.5-vl-7b-instruct');
  assert.deepEqual(m.inputs.map((i) => [i.id, i.shape]), [['input_ids', [T]], ['pixel_values', [PATCHES, 3 * 2 * 14 * 14]]]);
  assert.match(m.inputs[1].assumed ?? '', /one 448×448 image a sample \(256 merged tokens/);
  const patchEmbed = layer(m, 'visual.patch_embed.proj');
  assert.deepEqual([patchEmbed.type, patchEmbed.outputShape, patchEmbed.attrs.bias], ['Conv3d', [PATCHES, 1280], false]);
  assert.equal(layer(m, 'visual.blocks.0.norm1').attrs.center, false, 'Qwen2RMSNorm has no bias');
  assert.deepEqual(layer(m, 'visual.blocks.0.attn.qkv').outputShape, [PATCHES, 3840]);
  assert.deepEqual(['gate_proj', 'up_proj', 'down_proj'].map((p) => layer(m, `visual.blocks.0.mlp.${p}`).attrs.bias), [true, true, true]);
  assert.equal(layer(m, 'visual.blocks.0.mlp.act_fn').attrs.fn, 'silu');
  // window_size 112 // merge 2 // patch 14 = 4 merged tokens a side: 16 windows of 4·4·2·2 = 64 patches.
  const windowed = layer(m, 'visual.blocks.0.attn.sdpa');
  assert.deepEqual(windowed.inputShapes[0], [16, 16, 64, 80]);
  const full = layer(m, 'visual.blocks.7.attn.sdpa');
  assert.deepEqual(full.inputShapes[0], [1, 16, PATCHES, 80]);
  const fullBlocks = sdpaNames(m).filter((n) => layer(m, n).inputShapes[0]?.[0] === 1);
  assert.deepEqual(fullBlocks, [7, 15, 23, 31].map((i) => `visual.blocks.${i}.attn.sdpa`));
  // Scores within a window: 16 windows of 64² against 1024², a sixteenth of the full block's attention FLOPs.
  assert.equal(windowed.workload.forwardFlops * 16, full.workload.forwardFlops);
  assert.deepEqual(layer(m, 'visual.blocks.0.attn.out_view').outputShape, [PATCHES, 1280]);
  assert.deepEqual(layer(m, 'visual.merger.view').outputShape, [IMAGE_TOKENS, 5120]);
  const merger = layer(m, 'visual.merger.mlp.2');
  assert.deepEqual([merger.outputShape, merger.workload.params], [[IMAGE_TOKENS, 3584], 5120 * 3584 + 3584]);
  assert.equal(layer(m, 'visual.merger.mlp.1').attrs.fn, 'gelu');
  assert.match(m.diagnostics.find((d) => d.code === 'hf-vision-language')?.message ?? '', /28 attending within 16 windows of 64 patches, 4 over all 1024.*1024 patches merged 2×2 by visual\.merger .* into 256 tokens of 3584/);
});

test("Qwen2.5-VL's 256 image tokens join the text's in the Qwen2 language model, named model.layers.N and lm_head", () => {
  const m = configJson('qwen2.5-vl-7b-instruct');
  const merge = layer(m, 'merge_image_features');
  assert.deepEqual(merge.inputs, ['visual.reverse_indices', 'model.embed_tokens']);
  assert.deepEqual(merge.outputShape, [T + IMAGE_TOKENS, 3584]);
  assert.deepEqual(layer(m, 'model.layers.0.input_layernorm').inputs, ['merge_image_features']);
  const attention = layer(m, 'model.layers.27.self_attn.sdpa');
  assert.deepEqual(attention.inputShapes[0].slice(-2), [T + IMAGE_TOKENS, 128]);
  assert.equal(layer(m, 'model.layers.0.self_attn.q_proj').attrs.bias, true);
  assert.equal(layer(m, 'model.layers.0.self_attn.o_proj').attrs.bias, false);
  assert.deepEqual(layer(m, 'lm_head').outputShape, [T + IMAGE_TOKENS, 152_064]);
  assert.deepEqual(layer(m, 'loss.float').inputs, ['lm_head']);
  assert.ok(!m.layers.some((l) => l.name.startsWith('language_model.')));
  assert.equal(m.inputs.find((i) => i.id === 'input_ids')?.maxLength?.tokens, 128_000 - IMAGE_TOKENS);
});

test('Qwen2.5-VL-3B-Instruct builds to its published 3,754,622,976, its lm_head tied to model.embed_tokens and its merger projecting to 2048', () => {
  const m = configJson('qwen2.5-vl-3b-instruct');
  assert.equal(m.totals.params, QWEN25_VL_3B);
  builtWhole(m);
  assert.equal(layer(m, 'lm_head').weightOwner, 'model.embed_tokens');
  assert.deepEqual(layer(m, 'visual.merger.mlp.2').outputShape, [IMAGE_TOKENS, 2048]);
  assert.deepEqual(layer(m, 'merge_image_features').outputShape, [T + IMAGE_TOKENS, 2048]);
});

test('Qwen2-VL-7B-Instruct builds to its published 8,291,375,616: LayerNorm blocks with fc1 → quick_gelu → fc2, every block over the whole image', () => {
  const m = configJson('qwen2-vl-7b-instruct');
  assert.equal(m.totals.params, QWEN2_VL_7B);
  builtWhole(m);
  const { model: loaded, diagnostics } = script('from transformers import Qwen2VLForConditionalGeneration\nmodel = Qwen2VLForConditionalGeneration.from_pretrained("./qwen2-vl-7b-instruct")\n');
  assert.equal(loaded.totals.params, QWEN2_VL_7B);
  builtWhole(loaded, diagnostics);
  assert.equal(layer(m, 'visual.blocks.0.norm1').attrs.center, true, 'nn.LayerNorm has a bias');
  assert.deepEqual(layer(m, 'visual.blocks.0.mlp.fc1').outputShape, [PATCHES, 5120]);
  assert.deepEqual(['.scale', '.sigmoid', ''].map((s) => layer(m, `visual.blocks.0.mlp.act${s}`).op), ['mul', 'activation', 'mul']);
  assert.equal(layer(m, 'visual.merger.ln_q').attrs.center, true);
  const blocks = sdpaNames(m);
  assert.equal(blocks.length, 32);
  assert.ok(blocks.every((n) => layer(m, n).inputShapes[0]?.join() === [1, 16, PATCHES, 80].join()), 'no windows in Qwen2-VL');
  assert.ok(!m.layers.some((l) => l.name === 'visual.window_index'));
  assert.deepEqual(layer(m, 'merge_image_features').outputShape, [T + IMAGE_TOKENS, 3584]);
});

test("a fine-tune that freezes model.visual, the standard Qwen-VL recipe, freezes exactly the tower and merger and trains the language model's 7,615,616,512", () => {
  const load = 'from transformers import Qwen2_5_VLForConditionalGeneration\nmodel = Qwen2_5_VLForConditionalGeneration.from_pretrained("./qwen2.5-vl-7b-instruct")\n';
  const { model: m } = script(`${load}model.visual.requires_grad_(False)\n`);
  assert.deepEqual([m.totals.params, m.totals.frozenParams], [LM_7B, QWEN25_TOWER_7B]);
  // The same by a loop over its parameters.
  const { model: looped } = script(`${load}for p in model.visual.parameters():\n    p.requires_grad = False\n`);
  assert.deepEqual([looped.totals.params, looped.totals.frozenParams], [LM_7B, QWEN25_TOWER_7B]);
  // Written for transformers ≥ 4.52, whose parts sit under `model` (model.visual, model.language_model): the same parameters.
  const { model: newer } = script(`${load}model.model.visual.requires_grad_(False)\n`);
  assert.deepEqual([newer.totals.params, newer.totals.frozenParams], [LM_7B, QWEN25_TOWER_7B]);
  const { model: firstLayer } = script(`${load}model.model.language_model.layers[0].requires_grad_(False)\n`);
  assert.equal(firstLayer.totals.frozenParams, 3584 * 3584 + 3584 + 2 * (3584 * 512 + 512) + 3584 * 3584 + 3 * 3584 * 18944 + 2 * 3584);
  const { model: qwen2 } = script('from transformers import Qwen2VLForConditionalGeneration\nmodel = Qwen2VLForConditionalGeneration.from_pretrained("./qwen2-vl-7b-instruct")\nmodel.visual.requires_grad_(False)\n');
  assert.deepEqual([qwen2.totals.params, qwen2.totals.frozenParams], [LM_7B, QWEN2_VL_TOWER_7B]);
});

test('a Qwen2.5-VL-7B fine-tune at 2048 text tokens plans feasibly on 8 A100s, its tower priced: more work and more time than its language model alone', () => {
  const options = { batch: 32, objective: 'throughput', strategies: 'all', optimizer: 'adam', precision: 'bf16' } as const;
  const model = configJson('qwen2.5-vl-7b-instruct');
  const whole = planModel(model, resolveCluster('a100x8'), options);
  assert.ok(whole.feasible, whole.feasible ? '' : whole.reason);
  // Planned by the block-stack search over the language model's 28 layers, the stack holding the compute, not the
  // tower's 32 blocks, which hold more layers and a fiftieth of the FLOPs.
  const stack = repeatedTransformer(model);
  assert.deepEqual([stack?.repeats, stack?.block[0]?.name], [28, 'model.layers.0.input_layernorm']);
  assert.equal(whole.search?.method, 'parallel3d');
  // The same Qwen2 language model over the same 2048 + 256 tokens, with no tower.
  const { vision_config: _vision, ...text } = JSON.parse(readFileSync(join(HF_FIXTURES, 'qwen2.5-vl-7b-instruct', 'config.json'), 'utf8')) as Record<string, unknown>;
  const lmOnly = configJson('qwen2.5-vl-7b-instruct', T + IMAGE_TOKENS, JSON.stringify({ ...text, model_type: 'qwen2', architectures: ['Qwen2ForCausalLM'] }));
  assert.equal(lmOnly.totals.params, LM_7B);
  const alone = planModel(lmOnly, resolveCluster('a100x8'), options);
  assert.ok(alone.feasible, alone.feasible ? '' : alone.reason);
  // The same language model's work over the same tokens, plus exactly the tower's: nothing of it is left unpriced.
  const towerFlops = model.layers.filter((l) => l.name.startsWith('visual.')).reduce((sum, l) => sum + l.workload.forwardFlops, 0);
  assert.ok(towerFlops > 0);
  assert.equal(model.totals.forwardFlops - lmOnly.totals.forwardFlops, towerFlops);
  assert.ok(whole.plan.stepTimeMs > alone.plan.stepTimeMs, `${whole.plan.stepTimeMs} vs ${alone.plan.stepTimeMs} ms`);
});

test("a config saved by transformers ≥ 4.52 (text_config nested as 'qwen2_5_vl_text', vision_config typed 'qwen2_5_vl') builds the same model", () => {
  const released = JSON.parse(readFileSync(join(HF_FIXTURES, 'qwen2.5-vl-7b-instruct', 'config.json'), 'utf8')) as Record<string, unknown>;
  const { vision_config: vision, architectures, model_type: type, ...text } = released;
  const nested = { architectures, model_type: type, text_config: { ...text, model_type: 'qwen2_5_vl_text' }, vision_config: { ...(vision as object), model_type: 'qwen2_5_vl' } };
  const m = configJson('qwen2.5-vl-7b-instruct', T, JSON.stringify(nested));
  assert.equal(m.totals.params, QWEN25_VL_7B);
  builtWhole(m);
});

test("Qwen's classes: the Config and ForConditionalGeneration name the vision-language model; Qwen2_5_VLModel is 4.49–4.51's text decoder alone, said", () => {
  assert.equal(configClassType('Qwen2_5_VLConfig'), 'qwen2_5_vl');
  assert.equal(configClassType('Qwen2VLConfig'), 'qwen2_vl');
  assert.deepEqual(modelClassType('Qwen2_5_VLForConditionalGeneration'), { modelType: 'qwen2_5_vl', head: 'seq2seq-lm' });
  assert.deepEqual(modelClassType('Qwen2VLForConditionalGeneration'), { modelType: 'qwen2_vl', head: 'seq2seq-lm' });
  const { model: base } = script('from transformers import Qwen2_5_VLModel\nmodel = Qwen2_5_VLModel.from_pretrained("./qwen2.5-vl-7b-instruct")\n');
  assert.equal(base.totals.params, LM_7B - 152_064 * 3584);
  assert.ok(!base.layers.some((l) => l.name.startsWith('visual.')));
  assert.match(base.diagnostics.find((d) => d.code === 'hf-text-model')?.message ?? '', /text decoder alone in the layout WAP follows/);
});
