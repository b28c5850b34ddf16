/**
 * A transformers model held and called by the script's own nn.Module (frontends/python/transformersCalls.ts): the
 * classifier fine-tuning tutorials teach (`self.bert = BertModel.from_pretrained(…)` and a Linear on its pooled
 * output), a frozen backbone, a decoder read through `return_dict=False`, and DeepSpeedExamples' HelloDeepSpeed
 * (`class RobertaMLMModel(RobertaPreTrainedModel)`), parts of a held model called on their own, and models assembled
 * from transformers' blocks (`BertLayer(config)`). Before, each lost every layer after the call. The counts are
 * transformers' own: bert-base-uncased's BertModel has 109,482,240 parameters (its config.json as published, in
 * test/fixtures/huggingface); the rest are worked out below from the configs' sizes.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { analyzeModel } from '../../src/core/analyze';
import type { AnalyzedModel, Diagnostic } from '../../src/core/ir';
import { initFrontends, parseSource } from '../../src/frontends/index';
import { planModel, resolveCluster } from '../../src/planner/index';

const fixtures = join(__dirname, '..', 'fixtures');
const BERT_BODY = 109_482_240;

before(() => initFrontends());

function read(file: string, source = readFileSync(file, 'utf8'), name = 'model'): { model: AnalyzedModel; diagnostics: Diagnostic[] } {
  const result = parseSource(file, source, {}, { sequenceLength: 128 });
  const spec = result?.models.find((m) => m.name === name);
  assert.ok(spec, `a model '${name}' is read: ${result?.diagnostics.map((d) => d.message).join('\n')}`);
  const model = analyzeModel(spec, { sequenceLength: 128 });
  return { model, diagnostics: [...(result?.diagnostics ?? []), ...model.diagnostics] };
}

const layer = (model: AnalyzedModel, name: string) => {
  const found = model.layers.find((l) => l.name === name);
  assert.ok(found, `${name} is in the graph`);
  return found;
};

test("the tutorials' sentiment classifier: BERT's layers under `bert.`, and the head on its pooled output", () => {
  const { model, diagnostics } = read(join(fixtures, 'huggingface', 'sentiment_classifier.py'));
  const head = 768 * 3 + 3;
  assert.equal(model.totals.params, BERT_BODY + head);
  assert.equal(model.completeness?.complete, true, diagnostics.map((d) => d.message).join('\n'));
  assert.equal(layer(model, 'bert.encoder.layer.11.output.dense').workload.params, 3072 * 768 + 768);
  // `_, pooled_output = self.bert(…, return_dict=False)`: the dropout takes the pooler's tanh, the second field.
  assert.deepEqual(layer(model, 'drop').inputs, ['bert.pooler.activation']);
  assert.deepEqual(layer(model, 'out').inputs, ['drop']);
  // The script's forward takes token ids: the config's positions bound the assumed length, --seq-len sets it.
  assert.deepEqual(model.input, [128]);
  assert.equal(model.inputs.find((i) => i.id === 'input_ids')?.dtype, 'int');
  assert.ok(diagnostics.some((d) => d.code === 'hf-config' && /BertModel built from .*bert-base-uncased\/config\.json/.test(d.message)));
});

test('the wrapped model plans as the same model built whole: the step and memory match', () => {
  const cluster = resolveCluster('a100x8');
  const wrapped = read(join(fixtures, 'huggingface', 'sentiment_classifier.py')).model;
  const whole = read(join(fixtures, 'huggingface', 'whole.py'), 'from transformers import AutoModelForSequenceClassification\nmodel = AutoModelForSequenceClassification.from_pretrained("./bert-base-uncased", num_labels=3)\n').model;
  assert.equal(wrapped.totals.params, whole.totals.params);
  assert.equal(wrapped.totals.forwardFlops, whole.totals.forwardFlops);
  const options = { batch: 64, objective: 'throughput' as const, strategies: 'all' as const, optimizer: 'adam' as const, precision: 'bf16' as const };
  const [a, b] = [wrapped, whole].map((m) => planModel(m, cluster, options));
  assert.ok(a.feasible && b.feasible);
  assert.equal(a.plan.stepTimeMs.toFixed(3), b.plan.stepTimeMs.toFixed(3));
  assert.deepEqual(a.plan.setup?.memoryPerGpu, b.plan.setup?.memoryPerGpu);
});

test('a frozen backbone read through `out.last_hidden_state[:, 0, :]`: the encoder is frozen and runs no backward', () => {
  const source = `import torch.nn as nn
from transformers import AutoModel

class Classifier(nn.Module):
    def __init__(self, name="./bert-base-uncased", n_classes=5):
        super().__init__()
        self.encoder = AutoModel.from_pretrained(name)
        for p in self.encoder.parameters():
            p.requires_grad = False
        self.head = nn.Linear(self.encoder.config.hidden_size, n_classes)

    def forward(self, input_ids, attention_mask=None):
        out = self.encoder(input_ids=input_ids, attention_mask=attention_mask)
        return self.head(out.last_hidden_state[:, 0, :])

model = Classifier()
`;
  const { model, diagnostics } = read(join(fixtures, 'huggingface', 'frozen_backbone.py'), source);
  assert.deepEqual([model.totals.params, model.totals.frozenParams], [768 * 5 + 5, BERT_BODY]);
  assert.equal(layer(model, 'encoder.encoder.layer.3.intermediate.dense').workload.backwardFlops, 0);
  assert.ok(!diagnostics.some((d) => d.code === 'frozen-parameters'), 'the freeze is attributed');
  // The head reads the first token of the last hidden state, not the pooler (which BertModel still runs).
  const headInput = layer(model, 'head').inputs[0];
  assert.ok(!headInput.startsWith('encoder.pooler'), headInput);
  assert.deepEqual(layer(model, 'head').inputShapes, [[768]]);
  assert.equal(model.completeness?.complete, true, diagnostics.map((d) => d.message).join('\n'));
});

test("LoRA on the held model (`self.encoder = get_peft_model(base, LoraConfig(…))`): its adapters are in the graph and only they and the head train", () => {
  const source = `import torch.nn as nn
from transformers import AutoModel
from peft import LoraConfig, get_peft_model

class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        base = AutoModel.from_pretrained("./bert-base-uncased")
        self.encoder = get_peft_model(base, LoraConfig(r=8, target_modules=["query", "value"]))
        self.head = nn.Linear(768, 4)

    def forward(self, input_ids):
        return self.head(self.encoder(input_ids=input_ids).pooler_output)

model = Classifier()
`;
  const { model, diagnostics } = read(join(fixtures, 'huggingface', 'lora_wrapped.py'), source);
  // peft's count for bert-base with r=8 on query and value: 12 layers × 2 × (768·8 + 8·768) = 294,912.
  assert.deepEqual([model.totals.params, model.totals.frozenParams], [294_912 + 768 * 4 + 4, BERT_BODY]);
  assert.deepEqual(layer(model, 'encoder.encoder.layer.0.attention.self.query.lora_add').inputs[0], 'encoder.encoder.layer.0.attention.self.query');
  assert.ok(diagnostics.some((d) => d.code === 'lora' && /on 24 layers/.test(d.message)));
});

test('a decoder read as a tuple: `self.lm(ids, return_dict=False)[0]` is the last hidden state; a causal LM computes its loss only when given labels', () => {
  const source = `import torch.nn as nn
from transformers import LlamaConfig, LlamaModel, LlamaForCausalLM

class RewardModel(nn.Module):
    def __init__(self):
        super().__init__()
        config = LlamaConfig(hidden_size=512, intermediate_size=1376, num_hidden_layers=4, num_attention_heads=8, vocab_size=32000, max_position_embeddings=2048)
        self.lm = LlamaModel(config)
        self.value_head = nn.Linear(config.hidden_size, 1, bias=False)

    def forward(self, ids):
        hidden = self.lm(ids, return_dict=False)[0]
        return self.value_head(hidden).squeeze(-1)

class Distilled(nn.Module):
    def __init__(self):
        super().__init__()
        self.student = LlamaForCausalLM(LlamaConfig(hidden_size=256, intermediate_size=688, num_hidden_layers=2, num_attention_heads=4, vocab_size=32000))

    def forward(self, ids, labels):
        return self.student(input_ids=ids, labels=labels).loss

class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.lm = LlamaForCausalLM(LlamaConfig(hidden_size=256, intermediate_size=688, num_hidden_layers=2, num_attention_heads=4, vocab_size=32000))

    def forward(self, ids):
        return self.lm(input_ids=ids).logits

reward = RewardModel()
student = Distilled()
tagger = Tagger()
`;
  const file = join(fixtures, 'huggingface', 'reward.py');
  const { model: reward } = read(file, source, 'reward');
  // Per layer: q, k, v, o 4·512², gate/up/down 3·512·1376, two RMSNorms 2·512; the embeddings, the final norm, the head.
  const perLayer = 4 * 512 * 512 + 3 * 512 * 1376 + 2 * 512;
  assert.equal(reward.totals.params, 32000 * 512 + 4 * perLayer + 512 + 512);
  assert.deepEqual(layer(reward, 'value_head').inputs, ['lm.norm']);
  assert.ok(!reward.layers.some((l) => l.name.startsWith('lm.loss')), 'LlamaModel has no loss');
  const { model: student } = read(file, source, 'student');
  // With labels the causal LM computes its loss, as transformers' forward does (fp32 logits, log_softmax).
  assert.ok(student.layers.some((l) => l.name === 'student.loss'));
  assert.deepEqual(layer(student, 'student.loss.float').inputs, ['student.lm_head']);
  // Without labels the same model's loss is None, and its logits are the output.
  const { model: tagger } = read(file, source, 'tagger');
  assert.ok(!tagger.layers.some((l) => l.name.startsWith('lm.loss')));
  assert.deepEqual(tagger.outputs, ['lm.lm_head']);
});

test("Lightning's fine-tuning layout: `forward(self, **inputs)` handing the batch to the model it holds is fed the model's own inputs; `from_pretrained(name, config=config)` builds from the config given (3 labels)", () => {
  const source = `import lightning as L
import torch
from transformers import AutoConfig, AutoModelForSequenceClassification

class GLUETransformer(L.LightningModule):
    def __init__(self, model_name_or_path="./bert-base-uncased", num_labels=3):
        super().__init__()
        self.config = AutoConfig.from_pretrained(model_name_or_path, num_labels=num_labels)
        self.model = AutoModelForSequenceClassification.from_pretrained(model_name_or_path, config=self.config)

    def forward(self, **inputs):
        return self.model(**inputs)

    def training_step(self, batch, batch_idx):
        return self(**batch)[0]

model = GLUETransformer()
`;
  const { model, diagnostics } = read(join(fixtures, 'huggingface', 'glue.py'), source);
  assert.equal(model.totals.params, BERT_BODY + 768 * 3 + 3);
  assert.deepEqual(model.inputs.map((i) => [i.id, i.dtype]), [['input_ids', 'int']]);
  assert.deepEqual(model.outputs, ['model.classifier']);
  assert.equal(model.completeness?.complete, true, diagnostics.map((d) => d.message).join('\n'));
});

test("parts of a held model called on their own: `self.bert.embeddings(ids)` then `self.bert.encoder(h).last_hidden_state`, named as torch names them; a stack that takes two tensors from outside (T5's decoder) is said", () => {
  const source = `import torch.nn as nn
from transformers import BertConfig, BertModel, T5Config, T5Model

class Truncated(nn.Module):
    def __init__(self):
        super().__init__()
        self.bert = BertModel(BertConfig(hidden_size=128, num_hidden_layers=2, num_attention_heads=2, intermediate_size=256))
        self.proj = nn.Linear(128, 8)

    def forward(self, ids):
        h = self.bert.embeddings(ids)
        h = self.bert.encoder(h)[0]
        return self.proj(h)

class DecoderOnly(nn.Module):
    def __init__(self):
        super().__init__()
        self.t5 = T5Model(T5Config(d_model=64, d_ff=128, num_layers=1, num_heads=2, d_kv=32))
        self.proj = nn.Linear(64, 8)

    def forward(self, ids):
        return self.proj(self.t5.decoder(ids)[0])

model = Truncated()
decoder = DecoderOnly()
`;
  const file = join(fixtures, 'huggingface', 'parts.py');
  const { model, diagnostics } = read(file, source);
  // BertConfig(128, 2 layers, 2 heads, 256): the embeddings 30522·128 + 512·128 + 2·128 + LayerNorm 256; per layer
  // q, k, v, o 4·(128² + 128), two LayerNorms, 128·256 + 256 and 256·128 + 128. The pooler is never called.
  const perLayer = 4 * (128 * 128 + 128) + 2 * 256 + (128 * 256 + 256) + (256 * 128 + 128);
  assert.equal(model.totals.params, 30522 * 128 + 512 * 128 + 2 * 128 + 256 + 2 * perLayer + 128 * 8 + 8);
  assert.deepEqual(layer(model, 'bert.encoder.layer.0.attention.self.query').inputs, ['bert.embeddings.dropout']);
  assert.deepEqual(layer(model, 'proj').inputs, ['bert.encoder.layer.1.output.LayerNorm']);
  assert.ok(!model.layers.some((l) => l.name.startsWith('bert.pooler')));
  // torch still counts the pooler's weights: said, as for a torch module forward never runs.
  assert.match(diagnostics.find((d) => d.code === 'uncalled-modules')?.message ?? '', /^A module forward never runs holds parameters: bert\.pooler\.dense \(Linear\)/);
  assert.equal(model.completeness?.complete, true, diagnostics.map((d) => d.message).join('\n'));
  // A head model's parts: its base model returns a ModelOutput, and the LM head's decoder stays tied to the embeddings.
  const probe = `import torch.nn as nn
from transformers import BertConfig, BertForMaskedLM

class Probe(nn.Module):
    def __init__(self):
        super().__init__()
        self.mlm = BertForMaskedLM(BertConfig(hidden_size=128, num_hidden_layers=2, num_attention_heads=2, intermediate_size=256))

    def forward(self, ids):
        return self.mlm.cls(self.mlm.bert(ids)[0])

model = Probe()
`;
  const { model: mlm, diagnostics: mlmSaid } = read(file, probe);
  // BertForMaskedLM's bert has no pooler; cls: the transform's dense 128² + 128, its LayerNorm, the decoder's own bias.
  assert.equal(mlm.totals.params, 30522 * 128 + 512 * 128 + 2 * 128 + 256 + 2 * perLayer + (128 * 128 + 128) + 256 + 30522);
  assert.deepEqual(layer(mlm, 'mlm.cls.predictions.transform.dense').inputs, ['mlm.bert.encoder.layer.1.output.LayerNorm']);
  assert.equal(mlm.completeness?.complete, true, mlmSaid.map((d) => d.message).join('\n'));
  const { model: decoder, diagnostics: said } = read(file, source, 'decoder');
  const unread = said.find((d) => d.code === 'unread-hf-part');
  assert.match(unread?.message ?? '', /^t5\.decoder \(decoder of T5Model\) takes 2 tensors from outside it, which WAP cannot match to the call's arguments/);
  assert.equal(decoder.completeness?.complete, false);
});

test("a model assembled from transformers' blocks: `BertEmbeddings`, `nn.ModuleList([BertLayer(config) …])`, `BertPooler`, and `LlamaDecoderLayer(cfg, layer_idx=i)`, each block its own weights", () => {
  const source = `import torch.nn as nn
from transformers import BertConfig, LlamaConfig
from transformers.models.bert.modeling_bert import BertEmbeddings, BertLayer, BertPooler
from transformers.models.llama.modeling_llama import LlamaDecoderLayer

class CrossEncoder(nn.Module):
    def __init__(self, n_layers=4):
        super().__init__()
        config = BertConfig(hidden_size=256, num_attention_heads=4, intermediate_size=1024)
        self.embeddings = BertEmbeddings(config)
        self.layers = nn.ModuleList([BertLayer(config) for _ in range(n_layers)])
        self.pooler = BertPooler(config)
        self.head = nn.Linear(256, 2)

    def forward(self, input_ids):
        x = self.embeddings(input_ids)
        for layer in self.layers:
            x = layer(x)[0]
        return self.head(self.pooler(x))

class Tiny(nn.Module):
    def __init__(self):
        super().__init__()
        cfg = LlamaConfig(hidden_size=256, intermediate_size=512, num_attention_heads=4, num_key_value_heads=2, vocab_size=1000)
        self.emb = nn.Embedding(1000, 256)
        self.blocks = nn.ModuleList([LlamaDecoderLayer(cfg, layer_idx=i) for i in range(3)])
        self.out = nn.Linear(256, 1000)

    def forward(self, ids):
        x = self.emb(ids)
        for b in self.blocks:
            x = b(x)[0]
        return self.out(x)

model = CrossEncoder()
tiny = Tiny()
`;
  const file = join(fixtures, 'huggingface', 'blocks.py');
  const { model, diagnostics } = read(file, source);
  // BertConfig(256, 4 heads, 1024): embeddings 30522·256 + 512·256 + 2·256 + 512; a block 4·(256² + 256) + 2·512 +
  // (256·1024 + 1024) + (1024·256 + 256); the pooler 256² + 256; the head 256·2 + 2.
  const block = 4 * (256 * 256 + 256) + 2 * 512 + (256 * 1024 + 1024) + (1024 * 256 + 256);
  assert.equal(model.totals.params, 30522 * 256 + 512 * 256 + 2 * 256 + 512 + 4 * block + 256 * 256 + 256 + 256 * 2 + 2);
  assert.deepEqual(layer(model, 'layers.3.attention.self.query').inputs, ['layers.2.output.LayerNorm']);
  assert.deepEqual(layer(model, 'head').inputs, ['pooler.activation']);
  // The position table bounds the assumed length, as BertModel's does.
  assert.deepEqual(model.input, [128]);
  assert.equal(model.completeness?.complete, true, diagnostics.map((d) => d.message).join('\n'));
  const { model: tiny } = read(file, source, 'tiny');
  // LlamaDecoderLayer(256, 4 heads, 2 key/value heads of 64, 512): q and o 256², k and v 256·128, the MLP 3·256·512, two RMSNorms.
  assert.equal(tiny.totals.params, 1000 * 256 + 3 * (2 * 256 * 256 + 2 * 256 * 128 + 3 * 256 * 512 + 2 * 256) + 256 * 1000 + 1000);
  assert.deepEqual(layer(tiny, 'blocks.1.input_layernorm').inputs, ['blocks.0.residual_mlp']);
});

test("HelloDeepSpeed: the RobertaPreTrainedModel subclass is read as an nn.Module, its encoder's layers in full, and its RobertaLMHead subclass as the head, its decoder tied to the encoder's word embeddings", () => {
  const file = join(fixtures, 'hello-deepspeed', 'train_bert_ds.py');
  const { model, diagnostics } = read(file);
  // RobertaConfig(hidden 256, 6 layers, 8 heads, ff 512, 514 positions, 1 token type, vocab 50265): the embeddings
  // 50265·256 + 514·256 + 256 + LayerNorm 512; per layer 4·(256² + 256) + 2·512 + (256·512 + 512) + (512·256 + 256);
  // the pooler 256² + 256; the LM head's dense 256² + 256, its LayerNorm 512 and the decoder's bias, its weight tied.
  const embeddings = 50265 * 256 + 514 * 256 + 256 + 512;
  const perLayer = 4 * (256 * 256 + 256) + 2 * 512 + (256 * 512 + 512) + (512 * 256 + 256);
  assert.equal(model.totals.params, embeddings + 6 * perLayer + 256 * 256 + 256 + (256 * 256 + 256) + 512 + 50265);
  assert.ok(layer(model, 'encoder.encoder.layer.5.output.dense'));
  assert.equal(layer(model, 'lm_head.decoder').weightKey, 'encoder.embeddings.word_embeddings');
  assert.deepEqual(layer(model, 'lm_head.gelu').inputs, ['lm_head.dense']);
  assert.ok(!diagnostics.some((d) => d.code === 'unread-hf-part' || d.code === 'unread-model-base'));
  // What is left unread is the data's: the masked tokens torch.nonzero picks, so the head is priced on every token.
  assert.deepEqual(model.completeness?.reasons.length, 1);
  assert.match(model.completeness!.reasons[0]!, /torch\.nonzero\(condition\) returns indices that depend on the data/);
});

test('a part weight set to a value WAP cannot follow is said: the part keeps its own, so a shared weight would count twice', () => {
  const source = `import torch.nn as nn
from transformers import RobertaConfig
from transformers.models.roberta.modeling_roberta import RobertaLMHead

class Head(RobertaLMHead):
    def __init__(self, config):
        super().__init__(config)
        self.decoder.weight = load_shared_weight()

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.head = Head(RobertaConfig(hidden_size=64, num_attention_heads=2, intermediate_size=128, vocab_size=1000))

    def forward(self, x):
        return self.head(x)

model = Net()
`;
  const { model, diagnostics } = read(join(fixtures, 'huggingface', 'tie.py'), source);
  const said = diagnostics.find((d) => d.code === 'hf-tie-unread');
  assert.match(said?.message ?? '', /^lm_head\.decoder\.weight is set to a value WAP cannot follow to its module/);
  assert.equal(said?.line, 8);
  // The head's own decoder weight is planned: 64·1000 + its bias.
  assert.equal(layer(model, 'head.decoder').workload.params, 64 * 1000 + 1000);
});
