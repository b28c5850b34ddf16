/**
 * Hugging Face models from their configs: exact parameter counts against the
 * published/hand-derived totals, transformers' module names, GQA, biases, tied
 * heads, MoE experts, and where configs come from (a folder next to the file,
 * the local hub cache, a config.json opened directly) — all through the real
 * Python frontend and the core's analyzeModel.
 *
 * How each expected total is known (h = hidden, I = intermediate, V = vocab, L = layers):
 * - Llama-2-7B 6,738,415,616: Meta's model card lists 6.74B; by hand 2·V·h (untied) +
 *   L·(4h² + 3hI + 2h) + h = 262,144,000 + 32·202,383,360 + 4,096.
 * - GPT-2 medium 354,823,168 and BERT-large 335,141,888: issue 11's checks (torch counts of
 *   GPT2LMHeadModel / BertModel with those configs).
 * - Mistral-7B 7,241,732,096: 2·V·h + L·(2h² + 2h·(kv·d) + 3hI + 2h) + h with kv·d = 1,024.
 * - Mixtral-8x7B 46,702,792,704: as Mistral with 8 experts·3hI + the router h·8 per layer.
 * - Qwen2-0.5B 494,032,768 (tied): V·h + L·(h² + h + 2(h·128 + 128) + h² + 3hI + 2h) + h.
 * - T5-small 60,506,624: the count transformers reports for t5-small (tied head).
 * - ViT-base 86,389,248: google/vit-base-patch16-224-in21k's ViTModel (with pooler).
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { analyzeModel } from '../../src/core/analyze';
import type { AnalyzedModel, FrontendResult } from '../../src/core/ir';
import { parseSource } from '../../src/frontends/index';
import { initPythonFrontend, parsePythonSource } from '../../src/frontends/python';
import { findPretrainedConfig } from '../../src/frontends/huggingface/sources';

const fixtures = join(__dirname, '..', 'fixtures', 'huggingface');

before(() => initPythonFrontend());

function py(file: string, text: string): FrontendResult {
  return parsePythonSource(file, text);
}

function only(result: FrontendResult, name?: string, input?: number[]): AnalyzedModel {
  const spec = name ? result.models.find((m) => m.name === name) : result.models[0];
  assert.ok(spec, `no model ${name ?? ''}; got ${result.models.map((m) => m.name).join(', ')}; ${JSON.stringify(result.diagnostics)}`);
  return analyzeModel(spec, input ? { inputShape: input } : {});
}

function configJson(dir: string): AnalyzedModel {
  const file = join(fixtures, dir, 'config.json');
  const parsed = parseSource(file, readFileSync(file, 'utf8'));
  assert.ok(parsed);
  return only(parsed, undefined, [256]);
}

function layer(m: AnalyzedModel, name: string) {
  const l = m.layers.find((x) => x.name === name);
  assert.ok(l, `${m.name} has no layer ${name}`);
  return l;
}

test("Llama-2-7B's config.json, read by from_pretrained('./llama-2-7b') next to the file: 6,738,415,616 params", () => {
  const file = join(fixtures, 'train_llama.py');
  const m = only(py(file, readFileSync(file, 'utf8')));
  assert.equal(m.totals.params, 6_738_415_616);
  assert.equal(m.completeness?.complete, true);
  assert.deepEqual(m.input, [4096]);
  assert.equal(m.inputAssumed, true, 'the sequence length comes from max_position_embeddings and is reported as assumed');
  assert.ok(m.diagnostics.some((d) => d.code === 'assumed-input' && d.message.includes('max_position_embeddings')));
  // HF's own module names, no q/k/v bias in Llama, untied head.
  assert.equal(layer(m, 'model.layers.0.self_attn.q_proj').attrs.bias, false);
  assert.equal(layer(m, 'model.layers.31.mlp.down_proj').workload.params, 11008 * 4096);
  assert.equal(layer(m, 'lm_head').workload.params, 32000 * 4096);
  assert.equal(layer(m, 'model.norm').workload.params, 4096, 'RMSNorm has a weight and no bias');
});

test("LlamaForCausalLM(LlamaConfig()) takes transformers' LlamaConfig defaults (Llama-2-7B's shape)", () => {
  const m = only(py('/tmp/x.py', 'from transformers import LlamaConfig, LlamaForCausalLM\nmodel = LlamaForCausalLM(LlamaConfig())\n'));
  assert.equal(m.totals.params, 6_738_415_616);
  assert.deepEqual(m.input, [2048], 'LlamaConfig().max_position_embeddings is 2048');
});

test('GPT2LMHeadModel(GPT2Config(n_layer=24, n_embd=1024, n_head=16)) is 354,823,168 with the head tied to wte', () => {
  const m = only(py('/tmp/g.py', 'from transformers import GPT2Config, GPT2LMHeadModel\nmodel = GPT2LMHeadModel(GPT2Config(n_layer=24, n_embd=1024, n_head=16))\n'));
  assert.equal(m.totals.params, 354_823_168);
  const head = layer(m, 'lm_head');
  assert.equal(head.weightOwner, 'transformer.wte');
  assert.equal(head.workload.params, 0);
  assert.equal(layer(m, 'transformer.h.0.attn.c_attn').workload.params, 1024 * 3072 + 3072);
  assert.equal(m.completeness?.complete, true);
});

test('BertModel with BERT-large dimensions is 335,141,888 (pooler included); BertForMaskedLM unties only the decoder bias', () => {
  const src = (cls: string) =>
    `from transformers import BertConfig, ${cls}\ncfg = BertConfig(hidden_size=1024, num_hidden_layers=24, num_attention_heads=16, intermediate_size=4096)\nmodel = ${cls}(cfg)\n`;
  const bare = only(py('/tmp/b.py', src('BertModel')), 'model');
  assert.equal(bare.totals.params, 335_141_888);
  assert.ok(bare.layers.some((l) => l.name === 'encoder.layer.0.attention.self.query'));
  const mlm = only(py('/tmp/b.py', src('BertForMaskedLM')), 'model');
  // − pooler (h² + h) + transform dense (h² + h) + LayerNorm (2h) + decoder bias (V).
  assert.equal(mlm.totals.params, 335_141_888 + 2 * 1024 + 30522);
  assert.equal(layer(mlm, 'bert.encoder.layer.0.attention.self.query').workload.params, 1024 * 1024 + 1024);
  assert.equal(layer(mlm, 'cls.predictions.decoder').workload.params, 30522, 'only the bias is its own');
  const pre = only(py('/tmp/b.py', src('BertForPreTraining')), 'model');
  // BertModel (pooler kept) + transform dense (h² + h) + LayerNorm (2h) + decoder bias (V) + seq_relationship (2h + 2).
  assert.equal(pre.totals.params, 335_141_888 + 1024 * 1024 + 1024 + 2 * 1024 + 30522 + 2 * 1024 + 2);
  assert.deepEqual(pre.outputs, ['cls.predictions.decoder', 'cls.seq_relationship']);
  assert.deepEqual(layer(pre, 'cls.seq_relationship').outputShape, [1, 2], 'next-sentence logits from the pooled first token');
});

test('Mistral-7B (GQA 32/8 heads), Mixtral-8x7B (experts as layers) and Qwen2-0.5B (qkv bias, tied) from their config.json', () => {
  const mistral = configJson('mistral-7b');
  assert.equal(mistral.totals.params, 7_241_732_096);
  assert.equal(layer(mistral, 'model.layers.0.self_attn.k_proj').attrs.outFeatures, 8 * 128);
  assert.deepEqual(layer(mistral, 'model.layers.0.self_attn.sdpa').outputShape, [8, 4, 256, 128], 'query heads grouped over the 8 key/value heads');
  // Rotary embeddings on the split query and key heads: x·cos + rotate_half(x)·sin, element-wise and weightless.
  for (const [role, shape] of [['q', [8, 4, 256, 128]], ['k', [8, 1, 256, 128]]] as const) {
    const rotated = layer(mistral, `model.layers.0.self_attn.${role}_rotary`);
    assert.deepEqual(rotated.outputShape, shape);
    assert.deepEqual(rotated.inputs, [`model.layers.0.self_attn.${role}_rotary_cos`, `model.layers.0.self_attn.${role}_rotary_sin`]);
    for (const part of ['cos', 'sin']) {
      const product = layer(mistral, `model.layers.0.self_attn.${role}_rotary_${part}`);
      assert.equal(product.op, 'mul');
      assert.deepEqual(product.inputs, [`model.layers.0.self_attn.${role}_transpose`]);
      assert.equal(product.workload.params, 0);
    }
  }
  assert.deepEqual(layer(mistral, 'model.layers.0.self_attn.sdpa').inputs.slice(0, 2), ['model.layers.0.self_attn.q_rotary', 'model.layers.0.self_attn.k_rotary']);

  const mixtral = configJson('mixtral-8x7b');
  assert.equal(mixtral.totals.params, 46_702_792_704);
  const w1 = layer(mixtral, 'model.layers.3.block_sparse_moe.experts.5.w1');
  // Grouped: transformers 5 runs the experts as one grouped GEMM per projection by default (expertsKernel.ts).
  assert.deepEqual(w1.attrs.expert, { index: 5, count: 8, grouped: true });
  assert.deepEqual(w1.outputShape, [64, 14336], 'each expert sees T·k/E = 256·2/8 tokens under balanced routing');
  assert.equal(layer(mixtral, 'model.layers.3.block_sparse_moe.gate').workload.params, 4096 * 8);
  // An MoE layer's FLOPs are those of top-2, not all 8 experts.
  const expertFlops = mixtral.layers.filter((l) => l.name.startsWith('model.layers.0.block_sparse_moe.experts.') && l.op === 'linear').reduce((a, l) => a + l.workload.forwardFlops, 0);
  assert.equal(expertFlops, 256 * 2 * 3 * 2 * 4096 * 14336);

  const qwen = configJson('qwen2-0.5b');
  assert.equal(qwen.totals.params, 494_032_768);
  assert.equal(layer(qwen, 'model.layers.0.self_attn.q_proj').attrs.bias, true);
  assert.equal(layer(qwen, 'model.layers.0.self_attn.o_proj').attrs.bias, false);
  assert.equal(layer(qwen, 'lm_head').weightOwner, 'model.embed_tokens');
});

test('T5, ViT, RoBERTa, GPT-NeoX and Gemma build with their real sizes', () => {
  const cases: Array<[string, number]> = [
    ['from transformers import T5Config, T5ForConditionalGeneration\nmodel = T5ForConditionalGeneration(T5Config())\n', 60_506_624],
    ['from transformers import ViTConfig, ViTModel\nmodel = ViTModel(ViTConfig())\n', 86_389_248],
    // roberta-base: vocab 50265, 514 positions, one token type.
    ['from transformers import RobertaConfig, RobertaModel\nmodel = RobertaModel(RobertaConfig(vocab_size=50265, max_position_embeddings=514, type_vocab_size=1))\n', 124_645_632],
    // GPT-NeoX-20B (GPTNeoXConfig defaults): EleutherAI's reported 20,554,567,680.
    ['from transformers import GPTNeoXConfig, GPTNeoXForCausalLM\nmodel = GPTNeoXForCausalLM(GPTNeoXConfig())\n', 20_554_567_680],
    // Gemma-7B (GemmaConfig defaults): 8.54 B with the tied head.
    ['from transformers import GemmaConfig, GemmaForCausalLM\nmodel = GemmaForCausalLM(GemmaConfig())\n', 8_537_680_896],
  ];
  for (const [src, params] of cases) {
    const m = only(py('/tmp/m.py', src), undefined, src.includes('ViT') ? undefined : [128]);
    assert.equal(m.totals.params, params, src);
    assert.equal(m.completeness?.complete, true, src);
  }
  const t5 = only(py('/tmp/t.py', cases[0][0]), undefined, [128]);
  assert.equal(layer(t5, 'encoder.block.0.layer.0.SelfAttention.relative_attention_bias').workload.params, 32 * 8);
  assert.deepEqual(layer(t5, 'encoder.block.0.layer.0.SelfAttention.relative_attention_bias').outputShape, [128, 128, 8]);
});

test('DistilBERT and XLM-RoBERTa from their config.json: the counts fine-tuning scripts print, and the positions RoBERTa reserves', () => {
  const counts: Array<[string, string, number]> = [
    // DistilBertModel: no token types, no pooler; the classifier adds pre_classifier (768²+768) and 768·2+2.
    ['distilbert-base-uncased', 'AutoModel', 66_362_880],
    ['distilbert-base-uncased', 'AutoModelForSequenceClassification', 66_955_010],
    ['xlm-roberta-base', 'AutoModel', 278_043_648],
    // RoBERTa's classification head has no pooler: dense 768²+768 and out_proj 768·2+2 on the first token.
    ['xlm-roberta-base', 'AutoModelForSequenceClassification', 278_045_186],
  ];
  for (const [dir, cls, params] of counts) {
    const source = `from transformers import ${cls}\nmodel = ${cls}.from_pretrained("./${dir}")\n`;
    const m = only(py(join(fixtures, 'catalogue.py'), source));
    assert.equal(m.totals.params, params, `${cls} ${dir}`);
    assert.equal(m.completeness?.complete, true, `${cls} ${dir}`);
  }
  const distil = only(py(join(fixtures, 'catalogue.py'), 'from transformers import AutoModelForSequenceClassification\nmodel = AutoModelForSequenceClassification.from_pretrained("./distilbert-base-uncased")\n'), undefined, [128]);
  assert.deepEqual(layer(distil, 'classifier').inputs, ['dropout']);
  assert.equal(layer(distil, 'distilbert.transformer.layer.5.ffn.lin1').workload.params, 768 * 3072 + 3072);
  // xlm-roberta-base's 514 position rows hold 512 tokens: position ids start after the padding index (1).
  const xlmr = only(py(join(fixtures, 'catalogue.py'), 'from transformers import AutoModel\nmodel = AutoModel.from_pretrained("./xlm-roberta-base")\n'));
  assert.deepEqual(xlmr.input, [512]);
  // Sinusoidal positions are fixed: the table trains nothing.
  const sinusoidal = only(py('/tmp/s.py', 'from transformers import DistilBertConfig, DistilBertModel\nmodel = DistilBertModel(DistilBertConfig(sinusoidal_pos_embds=True))\n'), undefined, [128]);
  assert.equal(sinusoidal.totals.frozenParams, 512 * 768);
});

test("token classification and question answering (NER, SQuAD): no pooler, a label per token or start and end logits; the counts published checkpoints print", () => {
  const cases: Array<[string, number]> = [
    // dslim/bert-base-NER: bert-base-cased (vocab 28,996) with 9 labels, 107,726,601.
    ['from transformers import BertConfig, BertForTokenClassification\nmodel = BertForTokenClassification(BertConfig(vocab_size=28996, num_labels=9))\n', 107_726_601],
    // BertModel without its pooler (109,482,240 − 590,592) and qa_outputs 768·2 + 2.
    ['from transformers import AutoModelForQuestionAnswering\nmodel = AutoModelForQuestionAnswering.from_pretrained("./bert-base-uncased")\n', 108_893_186],
    ['from transformers import AutoModelForQuestionAnswering\nmodel = AutoModelForQuestionAnswering.from_pretrained("./distilbert-base-uncased")\n', 66_364_418],
    ['from transformers import AutoModelForTokenClassification\nmodel = AutoModelForTokenClassification.from_pretrained("./xlm-roberta-base", num_labels=7)\n', 278_043_648 - 590_592 + 768 * 7 + 7],
  ];
  for (const [src, params] of cases) {
    const m = only(py(join(fixtures, 'heads.py'), src), undefined, [128]);
    assert.equal(m.totals.params, params, src);
    assert.equal(m.completeness?.complete, true, src);
    assert.ok(!m.layers.some((l) => l.name.includes('pooler')), src);
  }
  const qa = only(py(join(fixtures, 'heads.py'), cases[1][0]), undefined, [128]);
  assert.deepEqual(qa.outputs, ['start_logits', 'end_logits']);
  assert.deepEqual([layer(qa, 'start_logits').outputShape, layer(qa, 'end_logits').outputShape], [[128, 1], [128, 1]]);
  const ner = only(py(join(fixtures, 'heads.py'), cases[0][0]), undefined, [128]);
  assert.deepEqual(layer(ner, 'classifier').outputShape, [128, 9]);
});

test('configs edited before building, AutoModel.from_config, and --input sequence lengths flow through', () => {
  const src = `from transformers import AutoConfig, AutoModelForCausalLM, LlamaConfig
cfg = LlamaConfig(hidden_size=512, intermediate_size=1024, num_attention_heads=8, num_key_value_heads=2, vocab_size=1000)
cfg.num_hidden_layers = 2
model = AutoModelForCausalLM.from_config(cfg)
`;
  const m = only(py('/tmp/c.py', src), 'model', [64]);
  const perLayer = 512 * 512 * 2 + 2 * 512 * 128 + 3 * 512 * 1024 + 2 * 512;
  assert.equal(m.totals.params, 2 * 1000 * 512 + 2 * perLayer + 512);
  assert.deepEqual(layer(m, 'model.layers.1.self_attn.o_proj').outputShape, [64, 512]);
  assert.equal(m.inputAssumed, false);
});

test('from_pretrained("org/name") reads the local hub cache; a missing id names every place looked in and how to fetch it', () => {
  const cache = mkdtempSync(join(tmpdir(), 'wap-hub-'));
  const saved = process.env.HF_HUB_CACHE;
  try {
    const snap = join(cache, 'models--acme--tiny-gpt2', 'snapshots', 'abc123');
    mkdirSync(snap, { recursive: true });
    mkdirSync(join(cache, 'models--acme--tiny-gpt2', 'refs'), { recursive: true });
    writeFileSync(join(cache, 'models--acme--tiny-gpt2', 'refs', 'main'), 'abc123');
    writeFileSync(join(snap, 'config.json'), JSON.stringify({ model_type: 'gpt2', n_layer: 2, n_embd: 64, n_head: 4, vocab_size: 100, n_positions: 32 }));
    process.env.HF_HUB_CACHE = cache;
    const found = only(py('/tmp/h.py', 'from transformers import AutoModelForCausalLM\nm = AutoModelForCausalLM.from_pretrained("acme/tiny-gpt2")\n'));
    assert.equal(found.totals.params, 100 * 64 + 32 * 64 + 2 * (2 * 64 + 64 * 192 + 192 + 64 * 64 + 64 + 2 * 64 + 64 * 256 + 256 + 256 * 64 + 64) + 2 * 64);
    assert.deepEqual(found.input, [32]);

    const missing = py('/tmp/h.py', 'from transformers import AutoModelForCausalLM\nm = AutoModelForCausalLM.from_pretrained("acme/absent-model")\n');
    assert.equal(missing.models.length, 0);
    const d = missing.diagnostics.find((x) => x.code === 'hf-config-missing');
    assert.ok(d, JSON.stringify(missing.diagnostics));
    assert.equal(d.line, 2);
    assert.match(d.message, /acme\/absent-model/);
    assert.ok(d.message.includes(join(cache, 'models--acme--absent-model', 'snapshots', '*', 'config.json')), d.message);
    assert.match(d.message, /\.cache\/huggingface\/hub/);
    assert.match(d.message, /huggingface-cli download acme\/absent-model config\.json/);
    const direct = findPretrainedConfig('acme/tiny-gpt2', undefined);
    assert.ok('config' in direct && direct.path.endsWith(join('abc123', 'config.json')));
  } finally {
    if (saved === undefined) delete process.env.HF_HUB_CACHE;
    else process.env.HF_HUB_CACHE = saved;
    rmSync(cache, { recursive: true, force: true });
  }
});

test('an architecture outside the catalogue is an opaque, incomplete model with the reason, never a silent zero', () => {
  const dir = mkdtempSync(join(tmpdir(), 'wap-hf-'));
  try {
    writeFileSync(join(dir, 'config.json'), JSON.stringify({ model_type: 'falcon', hidden_size: 64 }));
    const m = only(py(join(dir, 'train.py'), 'from transformers import AutoModel\nmodel = AutoModel.from_pretrained(".")\n'));
    assert.equal(m.completeness?.complete, false);
    assert.equal(m.completeness?.opaqueLayers, 1);
    assert.ok(m.diagnostics.some((d) => d.message.includes("model_type 'falcon' is not in WAP's Hugging Face catalogue")));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a transformers class outside the catalogue (architecture or head) is an error naming what is known, not an empty file', () => {
  const errors = (src: string) => py('train.py', src).diagnostics.filter((d) => d.code === 'hf-unknown-architecture').map((d) => [d.severity, d.line, d.message]);
  const falcon = errors('from transformers import FalconConfig, FalconForCausalLM\nmodel = FalconForCausalLM(FalconConfig())\n');
  assert.equal(falcon.length, 1);
  assert.deepEqual(falcon[0].slice(0, 2), ['error', 2]);
  assert.match(falcon[0][2] as string, /^transformers\.FalconForCausalLM is not in WAP's Hugging Face catalogue \(known architectures: llama, .*vit\)/);
  assert.match(errors('from transformers import CLIPModel, CLIPConfig\nmodel = CLIPModel(CLIPConfig())\n')[0][2] as string, /CLIPModel is not in WAP's Hugging Face catalogue/);
  // A catalogued architecture with a head WAP does not build says which heads it has.
  assert.match(errors('from transformers import BertConfig, BertForMultipleChoice\nmodel = BertForMultipleChoice(BertConfig())\n')[0][2] as string, /its architecture \(bert\) is, but not the ForMultipleChoice head \(heads: ForCausalLM/);
  assert.match(errors("from transformers import AutoModelForMultipleChoice\nmodel = AutoModelForMultipleChoice.from_pretrained('bert-base-uncased')\n")[0][2] as string, /the MultipleChoice head is not \(auto classes: AutoModel, AutoModelForCausalLM/);
  // Catalogued classes and library helpers that are not models say nothing.
  assert.deepEqual(errors('from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedModel\nmodel = LlamaForCausalLM(LlamaConfig(num_hidden_layers=2))\n'), []);
});
