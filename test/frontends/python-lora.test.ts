/**
 * PEFT's LoRA read from fine-tuning code (frontends/python/peftCalls.ts) and
 * applied to the model's IR (frontends/peft/lora.ts), against what peft
 * itself prints with print_trainable_parameters():
 * - huggingface/peft's README quickstart, LoRA r=8 on bigscience/mt0-large:
 *   "trainable params: 2359296 || all params: 1231940608";
 * - Llama-2-7b with peft's default targets (q_proj, v_proj) at r=8: 32 layers ×
 *   2 projections × 8 × (4096 + 4096) = 4,194,304 trainable of 6,742,609,920;
 *   with target_modules="all-linear" (all seven projections, not the LM head):
 *   19,988,480;
 * - peft's sequence-classification example, roberta-large r=8 on GLUE MRPC:
 *   "trainable params: 1,838,082 || all params: 357,199,876" (the classifier
 *   head trains whole, and peft counts its frozen original beside its copy).
 * The configs are the checkpoints' config.json files under
 * test/fixtures/huggingface.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { analyzeModel } from '../../src/core/analyze';
import type { AnalyzedModel } from '../../src/core/ir';
import { analyzeSource, initFrontends, parseSource } from '../../src/frontends/index';
import { planModel, resolveCluster } from '../../src/planner/index';

const fixtures = join(__dirname, '..', 'fixtures', 'huggingface');

before(() => initFrontends());

function read(file: string, source = readFileSync(file, 'utf8')): { model: AnalyzedModel; codes: string[] } {
  const result = parseSource(file, source, {});
  const spec = result?.models.find((m) => m.name === 'model');
  assert.ok(spec, `a model is read from ${file}`);
  const model = analyzeModel(spec, {});
  return { model, codes: [...(result?.diagnostics ?? []), ...model.diagnostics].map((d) => d.code ?? '') };
}

test("peft's README quickstart: LoRA on mt0-large trains peft's 2,359,296 parameters of 1,231,940,608", () => {
  const { model, codes } = read(join(fixtures, 'lora_mt0.py'));
  assert.equal(model.totals.params, 2_359_296);
  assert.equal(model.totals.params + (model.totals.frozenParams ?? 0), 1_231_940_608);
  assert.ok(codes.includes('lora') && !codes.includes('peft-adapters') && !codes.includes('frozen-parameters'), codes.join(' '));
  // lora_dropout=0.1: a dropout on each adapter's input; the base projections compute no weight gradient.
  const q = model.layers.find((l) => l.name === 'encoder.block.0.layer.0.SelfAttention.q')!;
  assert.equal(q.workload.params, 0);
  assert.equal(q.workload.frozenParams, 1024 * 1024);
  assert.ok(model.layers.some((l) => l.name === 'encoder.block.0.layer.0.SelfAttention.q.lora_dropout' && l.op === 'dropout'));
  const loraA = model.layers.find((l) => l.name === 'encoder.block.0.layer.0.SelfAttention.q.lora_A')!;
  assert.deepEqual([loraA.workload.params, loraA.outputShape?.at(-1)], [8 * 1024, 8]);
});

const llama = (config: string): string => `import torch
from transformers import AutoModelForCausalLM
from peft import LoraConfig, get_peft_model

model = AutoModelForCausalLM.from_pretrained("./llama-2-7b", torch_dtype=torch.bfloat16)
model = get_peft_model(model, LoraConfig(${config}))
`;

test("Llama-2-7b: peft's default targets and all-linear train the parameters peft counts; the LM head stays frozen", () => {
  const file = join(fixtures, 'lora_llama.py');
  const qv = read(file, llama('r=8, lora_alpha=16, lora_dropout=0.05, task_type="CAUSAL_LM"')).model;
  assert.deepEqual([qv.totals.params, qv.totals.frozenParams], [4_194_304, 6_738_415_616]);
  const all = read(file, llama('r=8, target_modules="all-linear", task_type="CAUSAL_LM"')).model;
  assert.equal(all.totals.params, 19_988_480);
  assert.ok(!all.layers.some((l) => l.name === 'lm_head.lora_A'));
  const regex = read(file, llama('r=16, target_modules=r".*\\.self_attn\\.(q|k)_proj"')).model;
  assert.equal(regex.totals.params, 32 * 2 * 16 * (4096 + 4096));
});

test('a LoRA fine-tune of Llama-2-7b plans with 16-bit frozen weights and optimizer state for the adapters alone', () => {
  const { model } = read(join(fixtures, 'lora_llama.py'));
  const outcome = planModel(model, resolveCluster('a100x8'), { batch: 64, objective: 'throughput', strategies: 'all', optimizer: 'adam', precision: 'bf16' });
  assert.ok(outcome.feasible, outcome.feasible ? '' : outcome.reason);
  const memory = outcome.plan.setup!.memoryPerGpu;
  // 6.76 B parameters held once per data-parallel replica at 2 bytes, unless sharded; Adam state only for the 20 M adapter parameters.
  assert.ok(memory.optimizer < 20e6 * 12 * 1.01, `optimizer ${memory.optimizer}`);
  assert.ok(memory.weights <= 6.76e9 * 2 * 1.01, `weights ${memory.weights}`);
  assert.ok(outcome.diagnostics.some((d) => d.message.startsWith('frozen parameters: 6.74 B of 6.76 B do not train')), outcome.diagnostics.map((d) => d.message).join('\n'));
});

test("peft's sequence-classification example: roberta-large with LoRA r=8 trains peft's 1,838,082 parameters, its classifier head whole", () => {
  const { model, codes } = read(join(fixtures, 'lora_roberta_seq_cls.py'));
  assert.equal(model.totals.params, 1_838_082);
  // peft's 357,199,876 "all params" count the classifier twice: the original, frozen, and the copy it trains.
  const classifier = 1024 * 1024 + 1024 + 1024 * 2 + 2;
  assert.equal(model.totals.params + (model.totals.frozenParams ?? 0) + classifier, 357_199_876);
  assert.ok(model.layers.find((l) => l.name === 'classifier.dense')!.workload.params > 0);
  assert.ok(!codes.includes('lora-unmodelled'), codes.join(' '));
});

test('layers_to_transform narrows the targets to those layers; modules_to_save trains a module whole; DoRA and trained biases are said', () => {
  const file = join(fixtures, 'lora_llama.py');
  const last2 = read(file, llama('r=8, target_modules=["q_proj", "v_proj"], layers_to_transform=[30, 31]')).model;
  assert.equal(last2.totals.params, 2 * 2 * 8 * (4096 + 4096));
  const patterned = read(file, llama('r=8, target_modules=["q_proj", "v_proj"], layers_to_transform=0, layers_pattern="layers"')).model;
  assert.equal(patterned.totals.params, 2 * 8 * (4096 + 4096));
  const head = read(file, llama('r=8, target_modules=["q_proj", "v_proj"], modules_to_save=["lm_head"]')).model;
  assert.equal(head.totals.params, 4_194_304 + 32_000 * 4096);
  const dora = read(file, llama('r=8, use_dora=True, bias="lora_only"'));
  assert.equal(dora.model.totals.params, 4_194_304);
  const warning = dora.model.diagnostics.find((d) => d.code === 'lora-unmodelled');
  assert.match(warning?.message ?? '', /^LoRA settings WAP does not model: use_dora \(DoRA's magnitude vector and the weight norm it recomputes every forward\); bias='lora_only'/);
  const plan = planModel(dora.model, resolveCluster('a100x8'), { batch: 8, objective: 'throughput', strategies: 'dp', optimizer: 'adam', precision: 'bf16' });
  assert.ok(plan.diagnostics.some((d) => d.severity === 'warning' && d.message === warning!.message));
});

test("LoRA on convolutions and embeddings, as peft builds them: lora_A with the conv's kernel, stride and padding, a 1×1 lora_B; an embedding's r-wide table and r → dim", async () => {
  const src = `import torch
from torch import nn
from peft import LoraConfig, get_peft_model

class ConvNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 64, 7, stride=2, padding=3)
        self.body = nn.Conv2d(64, 128, 3, padding=1)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.head = nn.Linear(128, 10)
    def forward(self, x):
        x = self.body(torch.relu(self.stem(x)))
        return self.head(torch.flatten(self.pool(x), 1))

model = get_peft_model(ConvNet(), LoraConfig(r=4, target_modules=["stem", "body"]))
`;
  const r = await analyzeSource(join(__dirname, 'lora_conv.py'), src, { inputShape: [3, 64, 64] });
  const m = r.models.find((x) => x.name === 'model')!;
  assert.equal(m.totals.params, 3 * 4 * 7 * 7 + 4 * 64 + 64 * 4 * 3 * 3 + 4 * 128);
  const stemA = m.layers.find((l) => l.name === 'stem.lora_A')!;
  // The adapter path sees what the convolution sees and gives what it gives: 4 channels at the stem's stride, then 64.
  assert.deepEqual([stemA.outputShape, m.layers.find((l) => l.name === 'stem.lora_B')!.outputShape], [[4, 32, 32], [64, 32, 32]]);
  const file = join(fixtures, 'lora_llama.py');
  const embed = read(file, llama('r=8, lora_dropout=0.1, target_modules=["embed_tokens", "q_proj"]')).model;
  assert.equal(embed.totals.params, 8 * (32_000 + 4096) + 32 * 8 * (4096 + 4096));
  // A dropout on the q_proj adapters' input, none on the token ids the embedding's adapter looks up.
  assert.deepEqual([embed.layers.some((l) => l.name === 'model.layers.0.self_attn.q_proj.lora_dropout'), embed.layers.some((l) => l.name === 'model.embed_tokens.lora_dropout')], [true, false]);
});

const MODEL = `import torch
from torch import nn
from peft import LoraConfig, PromptTuningConfig, get_peft_model

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 256), nn.LayerNorm(256))
        self.head = nn.Linear(256, 10)
    def forward(self, x):
        return self.head(self.backbone(x))

model = Net()
`;

test('LoRA on a PyTorch module: adapters on the named Linears, a target that is not a Linear and a config that matches nothing are said', async () => {
  const at = join(__dirname, 'lora_net.py');
  const net = async (tail: string) => {
    const r = await analyzeSource(at, MODEL + tail, { inputShape: [64] });
    const m = r.models.find((x) => x.name === 'model')!;
    return { m, byCode: (code: string) => m.diagnostics.filter((d) => d.code === code) };
  };
  const base = 64 * 256 + 256 + 256 * 256 + 256 + 2 * 256 + 256 * 10 + 10;
  const two = await net('model = get_peft_model(model, LoraConfig(r=4, target_modules=["backbone.0", "head"]))\n');
  assert.deepEqual([two.m.totals.params, two.m.totals.frozenParams], [4 * (64 + 256) + 4 * (256 + 10), base]);
  const conv = await net('model = get_peft_model(model, LoraConfig(r=4, target_modules=["3", "2"]))\n');
  assert.equal(conv.m.totals.params, 4 * (256 + 256));
  assert.match(conv.byCode('lora-unmodelled-target')[0]?.message ?? '', /backbone\.3 \(LayerNorm\): WAP models LoRA on Linear, convolution and Embedding layers of known size only/);
  const none = await net('model = get_peft_model(model, LoraConfig(r=4, target_modules=["q_proj"]))\n');
  assert.deepEqual([none.m.totals.params, none.byCode('lora-no-target').length], [0, 1]);
  // No target_modules on a plain nn.Module: peft has no default for it, so the adapters are not read and the plan says so.
  const unread = await net('model = get_peft_model(model, LoraConfig(r=4))\n');
  assert.deepEqual([unread.m.totals.params, unread.m.totals.frozenParams, unread.byCode('peft-adapters').length], [0, base, 1]);
  const prompt = await net('model = get_peft_model(model, PromptTuningConfig(num_virtual_tokens=20))\n');
  assert.match(prompt.byCode('peft-adapters')[0]?.message ?? '', /^PEFT \(`get_peft_model`\) freezes the base model, which WAP plans frozen; the adapters it trains are not modelled/);
});
