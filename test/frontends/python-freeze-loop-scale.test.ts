/**
 * Freeze-by-name loops over the largest MoE checkpoints (src/frontends/python/freezeLoops.ts, freezeNamePatterns.ts,
 * freezeLoopBudget.ts; src/frontends/freezing/unreadSteps.ts), built from the released config.json
 * (test/fixtures/huggingface/<name>/config.json):
 *
 *     for name, param in model.named_parameters():
 *         if "experts" in name:
 *             param.requires_grad = False
 *
 * A condition that reads the name only through fixed digit-free strings is decided once per name pattern (DeepSeek-V3:
 * 24 patterns for 45,337 names); any other condition name by name, on the loop's own step budget. A loop that spends
 * its budget is applied to nothing and said at the loop, with the model still reported, marked incomplete; before,
 * that budget was the file's, spent when the graph was built, and the file read as "internal error ([object Object])".
 *
 * Counts by hand, with transformers' modules (modeling_deepseek_v3.py: a decoder layer's `mlp` is DeepseekV3MoE from
 * `first_k_dense_replace` on, its `experts` a ModuleList of `n_routed_experts` DeepseekV3MLP of
 * `moe_intermediate_size`, gate/up/down without bias, `shared_experts` one MLP of `moe_intermediate_size ×
 * n_shared_experts`, its router `gate.weight`; modeling_qwen3_moe.py alike without shared experts):
 * - DeepSeek-V3 (hidden 7168, 61 layers, first 3 dense, 256 routed experts and 1 shared of 2048): 58 MoE layers;
 *   an expert's three projections 3 · 7168 · 2048 = 44,040,192; routed 58 · 256 · 44,040,192 = 653,908,770,816;
 *   shared 58 · 1 · 44,040,192 = 2,554,331,136; `"experts" in name` matches both (`shared_experts`): 656,463,101,952.
 * - Qwen3-30B-A3B (hidden 2048, 48 layers, all MoE, 128 experts of 768, 32 heads and 4 KV heads of 128): a layer's
 *   q and o 2048 · 4096 = 8,388,608 each, k and v 2048 · 512 = 1,048,576 each, q_norm and k_norm 128 each, two
 *   RMSNorms 2048 each, router 2048 · 128 = 262,144, experts 128 · 3 · 2048 · 768 = 603,979,776: 623,120,640 a layer;
 *   embed_tokens and the untied lm_head 151936 · 2048 = 311,164,928 each, final norm 2048: 30,532,122,624 in all.
 *   Its parameter tensors: 48 · (4 + 2 + 2 + 1 + 128 · 3) + 3 = 18,867.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, test } from 'node:test';
import type { AnalyzedModel, Diagnostic } from '../../src/core/ir';
import { initFrontends } from '../../src/frontends/index';
import { thrownMessage } from '../../src/frontends/python/thrownMessage';
import { BreakSignal, LimitSignal } from '../../src/frontends/python/signals';
import { HF_FIXTURES, hfScriptModel } from './hfFixtures';

before(() => initFrontends());

const config = (name: string): Record<string, number | boolean> => JSON.parse(readFileSync(join(HF_FIXTURES, name, 'config.json'), 'utf8'));

const DEEPSEEK = config('deepseek-v3');
const DEEPSEEK_MOE_LAYERS = 61 - 3;
const DEEPSEEK_EXPERT = 3 * 7168 * 2048;
const DEEPSEEK_ROUTED = DEEPSEEK_MOE_LAYERS * 256 * DEEPSEEK_EXPERT;
const DEEPSEEK_SHARED = DEEPSEEK_MOE_LAYERS * 1 * DEEPSEEK_EXPERT;

const QWEN3 = config('qwen3-30b-a3b');
const QWEN3_LAYER = 2 * 2048 * 4096 + 2 * 2048 * 512 + 2 * 128 + 2 * 2048 + 2048 * 128 + 128 * 3 * 2048 * 768;
const QWEN3_TABLE = 151936 * 2048;
const QWEN3_TOTAL = 48 * QWEN3_LAYER + 2 * QWEN3_TABLE + 2048;
const QWEN3_TENSORS = 48 * (4 + 2 + 2 + 1 + 128 * 3) + 3;

const LOAD = (dir: string): string => `import torch\nfrom transformers import AutoModelForCausalLM\nmodel = AutoModelForCausalLM.from_pretrained("./${dir}")\n`;

function script(dir: string, body: string): { model: AnalyzedModel; diagnostics: Diagnostic[] } {
  return hfScriptModel('freeze_loop_scale.py', LOAD(dir) + body, { sequenceLength: 4096 });
}

const warnings = (diagnostics: readonly Diagnostic[]): Diagnostic[] => diagnostics.filter((d) => d.severity !== 'info');

test('the hand counts, from config.json', () => {
  assert.deepEqual(
    [DEEPSEEK.hidden_size, DEEPSEEK.num_hidden_layers, DEEPSEEK.first_k_dense_replace, DEEPSEEK.n_routed_experts, DEEPSEEK.n_shared_experts, DEEPSEEK.moe_intermediate_size, DEEPSEEK.moe_layer_freq],
    [7168, 61, 3, 256, 1, 2048, 1],
  );
  assert.deepEqual([DEEPSEEK_EXPERT, DEEPSEEK_ROUTED, DEEPSEEK_SHARED], [44_040_192, 653_908_770_816, 2_554_331_136]);
  assert.deepEqual(
    [QWEN3.hidden_size, QWEN3.num_hidden_layers, QWEN3.num_experts, QWEN3.moe_intermediate_size, QWEN3.num_attention_heads, QWEN3.num_key_value_heads, QWEN3.head_dim, QWEN3.vocab_size, QWEN3.decoder_sparse_step, QWEN3.tie_word_embeddings],
    [2048, 48, 128, 768, 32, 4, 128, 151936, 1, false],
  );
  assert.deepEqual([QWEN3_LAYER, QWEN3_TOTAL, QWEN3_TENSORS], [623_120_640, 30_532_122_624, 18_867]);
});

test('DeepSeek-V3 (671B): `"experts" in name` freezes every routed and shared expert, unsaid', () => {
  const { model, diagnostics } = script('deepseek-v3', 'for name, param in model.named_parameters():\n    if "experts" in name:\n        param.requires_grad = False\n');
  assert.equal(model.totals.frozenParams, DEEPSEEK_ROUTED + DEEPSEEK_SHARED);
  assert.equal(model.totals.frozenParams, 656_463_101_952);
  assert.deepEqual(warnings(diagnostics).map((d) => d.message), []);
  assert.equal(model.completeness?.complete, true);
});

test("DeepSeek-V3: the routed experts alone, by 4.x's names and by transformers 5's fused ones, whose readings agree", () => {
  const older = 'for name, param in model.named_parameters():\n    if ".experts." in name:\n        param.requires_grad = False\n';
  const newer = 'for name, param in model.named_parameters():\n    param.requires_grad = not name.endswith(("experts.gate_up_proj", "experts.down_proj"))\n';
  for (const body of [older, newer]) {
    const { model, diagnostics } = script('deepseek-v3', body);
    assert.equal(model.totals.frozenParams, DEEPSEEK_ROUTED, body);
    assert.deepEqual(warnings(diagnostics).map((d) => d.message), [], body);
  }
});

test('a condition over 300 fixed strings is read once per name pattern: per name it would spend the loop budget many times over', () => {
  // 300 digit-free words and "experts": about 1,200 evaluation steps a name, ×45,337 names ≈ 54 million, 27 times
  // the loop's 2,000,000. Read once per pattern (24 of them), it costs about 29,000.
  const words = Array.from({ length: 300 }, (_, i) => `unused_${String.fromCharCode(97 + (i % 26))}${String.fromCharCode(97 + Math.floor(i / 26))}`);
  const body = `FROZEN = ${JSON.stringify([...words, 'experts'])}\nfor name, param in model.named_parameters():\n    if any(k in name for k in FROZEN):\n        param.requires_grad = False\n`;
  const { model, diagnostics } = script('deepseek-v3', body);
  assert.equal(model.totals.frozenParams, DEEPSEEK_ROUTED + DEEPSEEK_SHARED);
  assert.deepEqual(warnings(diagnostics).map((d) => d.message), []);
});

test('Qwen3-30B-A3B: the experts by name, and a prefix test with a number in it read name by name', () => {
  const experts = script('qwen3-30b-a3b', 'for name, param in model.named_parameters():\n    if "mlp.experts" in name:\n        param.requires_grad = False\n');
  assert.equal(experts.model.totals.frozenParams, 48 * 128 * 3 * 2048 * 768);
  assert.equal(experts.model.totals.frozenParams, 28_991_029_248);
  // "layers.1." names layer 1 only, not 10–19: a string with a digit is no pattern test.
  const layerOne = script('qwen3-30b-a3b', 'for name, param in model.named_parameters():\n    if "layers.1." in name:\n        param.requires_grad = False\n');
  assert.equal(layerOne.model.totals.frozenParams, QWEN3_LAYER);
  // The first 30 layers by the number in the name: read name by name, within the loop's budget.
  const first30 = script('qwen3-30b-a3b', 'for name, param in model.named_parameters():\n    if name.startswith("model.layers.") and int(name.split(".")[2]) < 30:\n        param.requires_grad = False\n');
  assert.equal(first30.model.totals.frozenParams, 30 * QWEN3_LAYER);
  for (const { diagnostics } of [experts, layerOne, first30]) assert.deepEqual(warnings(diagnostics).map((d) => d.message), []);
});

test('a loop whose condition spends its budget is said at the loop and applied to nothing; the model is still reported, incomplete', () => {
  const body = [
    'def is_frozen(name):',
    '    parts = name.split(".")',
    '    hits = [p for p in parts for q in range(40) if p == str(q)]',
    '    return len(hits) > 1',
    '',
    'for name, param in model.named_parameters():',
    '    if is_frozen(name):',
    '        param.requires_grad = False',
    '',
  ].join('\n');
  const { model, diagnostics } = script('qwen3-30b-a3b', body);
  assert.equal(model.totals.params + (model.totals.frozenParams ?? 0), QWEN3_TOTAL);
  assert.equal(model.totals.frozenParams ?? 0, 0);
  assert.equal(diagnostics.filter((d) => d.code === 'internal-error').length, 0);
  const said = warnings(diagnostics);
  assert.equal(said.length, 1, said.map((d) => d.message).join('\n'));
  assert.equal(said[0].line, 9, 'at the `for` (the script loads the model on lines 1–3)');
  assert.equal(said[0].incomplete, true);
  assert.match(said[0].message, /^This loop runs 18,867 iterations over the model's parameters, more than WAP reads: .*after 2,000,000 evaluation steps.*its freezes are not applied/);
  assert.equal(model.completeness?.complete, false);
});

test("a Hugging Face model's loop that spends its budget halfway freezes none of its parameters", () => {
  // Llama-2-7B: 32 layers of 9 tensors (q, k, v, o, gate, up, down, two norms) and embed_tokens, norm, lm_head = 291;
  // 32 · 202,383,360 + 2 · 32000 · 4096 + 4096 = 6,738,415,616 (huggingface-transformers5-paths.test.ts's layer). At
  // about 60,000 steps a name the budget is spent after some 30 names, which must not stay frozen.
  const body = 'def costly(name):\n    return len([i for i in range(20000)]) > 0\nfor name, param in model.named_parameters():\n    if costly(name):\n        param.requires_grad = False\n';
  const { model, diagnostics } = script('llama-2-7b', body);
  assert.equal(model.totals.params, 32 * 202_383_360 + 2 * 32000 * 4096 + 4096);
  assert.equal(model.totals.frozenParams ?? 0, 0);
  const said = warnings(diagnostics);
  assert.equal(said.length, 1, said.map((d) => d.message).join('\n'));
  assert.match(said[0].message, /^This loop runs 291 iterations over the model's parameters/);
});

test("a torch model's loop that spends its budget halfway freezes none of its parameters", () => {
  const source = [
    'import torch.nn as nn',
    'model = nn.Sequential(*[nn.Linear(8, 8) for _ in range(40)])',
    'def costly(name):',
    '    return len([i for i in range(20000)]) > 0',
    'for name, param in model.named_parameters():',
    '    if costly(name):',
    '        param.requires_grad = False',
    '',
  ].join('\n');
  const { model, diagnostics } = hfScriptModel('freeze_loop_scale_torch.py', source);
  assert.equal(model.totals.params, 40 * (8 * 8 + 8));
  assert.equal(model.totals.frozenParams ?? 0, 0);
  const said = diagnostics.filter((d) => d.code === 'frozen-parameters');
  assert.equal(said.length, 1, said.map((d) => d.message).join('\n'));
  assert.match(said[0].message, /^This loop runs 80 iterations over the model's parameters/);
  assert.equal(said[0].line, 5);
  assert.equal(said[0].incomplete, true);
});

test("the loop's condition reads the names the script had bound when the loop ran, not what it rebinds them to later", () => {
  const body = 'keep = "lm_head"\nfor name, param in model.named_parameters():\n    if keep not in name:\n        param.requires_grad = False\nkeep = "mlp"\n';
  const { model } = script('qwen3-30b-a3b', body);
  assert.equal(model.totals.params, QWEN3_TABLE);
  assert.equal(model.totals.frozenParams, QWEN3_TOTAL - QWEN3_TABLE);
});

test('a throw that is no Error says what it is: the evaluator signals print their reason, not "[object Object]"', () => {
  assert.equal(thrownMessage(new LimitSignal('evaluation step budget exhausted')), 'evaluation step budget exhausted');
  assert.equal(thrownMessage(new BreakSignal()), 'BreakSignal');
  assert.equal(thrownMessage(new Error('boom')), 'boom');
  assert.equal(thrownMessage({ code: 7 }), '{"code":7}');
  assert.equal(thrownMessage('text'), 'text');
});
