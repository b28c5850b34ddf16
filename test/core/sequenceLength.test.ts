/**
 * `--seq-len` (AnalyzeOptions.sequenceLength) sets the tokens per sample of a
 * sequence model whose code does not state them, reaches the plan (activation
 * memory, step time) and the plan says where the number came from; where it
 * cannot apply it says why instead of being dropped.
 */
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { analyzeModel } from '../../src/core/analyze';
import type { AnalyzedModel, AnalyzeOptions, ModelSpec } from '../../src/core/ir';
import { initPythonFrontend, parsePythonSource } from '../../src/frontends/python';
import { planModel, resolveCluster } from '../../src/planner/index';

before(() => initPythonFrontend());

/** A small BERT from the Hugging Face catalogue: its length is the config's 512 positions, assumed. */
const BERT = `from transformers import BertConfig, BertModel
model = BertModel(BertConfig(hidden_size=256, num_hidden_layers=2, num_attention_heads=4, intermediate_size=1024, max_position_embeddings=4096))
`;

/** An embedding model with no stated length (the core assumes 1024 token ids). */
const TAGGER = `import torch
from torch import nn

class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(1000, 64)
        self.fc = nn.Linear(64, 10)

    def forward(self, ids):
        return self.fc(self.emb(ids))

model = Tagger()
`;

function specOf(source: string): ModelSpec {
  const spec = parsePythonSource('/tmp/seq.py', source).models.find((m) => m.name === 'model');
  assert.ok(spec, 'no model');
  return spec;
}

function analyse(source: string, options: AnalyzeOptions = {}): AnalyzedModel {
  return analyzeModel(specOf(source), options);
}

const codes = (m: AnalyzedModel, code: string) => m.diagnostics.filter((d) => d.code === code);

test("a Hugging Face model's assumed length is the config's positions; --seq-len replaces it and the model says so", () => {
  const plain = analyse(BERT);
  assert.deepEqual(plain.input, [4096]);
  assert.deepEqual(plain.sequence, { input: 'input_ids', length: 4096, source: "assumed: the max_position_embeddings of BertConfig(...) with transformers' defaults (4096 tokens)", assumed: true });
  const short = analyse(BERT, { sequenceLength: 512 });
  assert.deepEqual(short.input, [512]);
  assert.deepEqual(short.sequence, { input: 'input_ids', length: 512, source: '--seq-len', assumed: false });
  assert.equal(short.inputAssumed, false);
  assert.equal(codes(short, 'assumed-input').length, 0);
  assert.equal(codes(short, 'sequence-length-unused').length, 0);
  // Every layer follows: the attention scores are heads·T·T.
  const sdpa = short.layers.find((l) => l.op === 'sdpa')!;
  assert.deepEqual(sdpa.outputShape, [4, 512, 64]);
});

test('an embedding model with no stated length takes --seq-len instead of the 1024-token default', () => {
  assert.deepEqual(analyse(TAGGER).input, [1024]);
  const m = analyse(TAGGER, { sequenceLength: 300 });
  assert.deepEqual(m.input, [300]);
  assert.equal(m.sequence?.source, '--seq-len');
  assert.deepEqual(m.layers.find((l) => l.name === 'fc')!.outputShape, [300, 10]);
});

test('--input wins over --seq-len, a stated length is kept, an image takes none: each says --seq-len went unused', () => {
  const given = analyse(BERT, { inputShape: [128], sequenceLength: 512 });
  assert.deepEqual(given.input, [128]);
  assert.deepEqual(given.sequence, { input: 'input_ids', length: 128, source: '--input', assumed: false });
  assert.match(codes(given, 'sequence-length-unused')[0]?.message ?? '', /--seq-len 512 is not used: --input 128 gives/);

  const stated = specOf(TAGGER);
  stated.inputs = [{ id: 'ids', shape: [77], dtype: 'int' }];
  const kept = analyzeModel(stated, { sequenceLength: 512 });
  assert.deepEqual(kept.input, [77]);
  assert.equal(kept.sequence?.source, 'stated in the code');
  assert.match(codes(kept, 'sequence-length-unused')[0]?.message ?? '', /the code states 77 tokens/);

  const cnn = analyse('import torch\nfrom torch import nn\nmodel = nn.Sequential(nn.Conv2d(3, 8, 3), nn.ReLU())\n', { sequenceLength: 512 });
  assert.equal(cnn.sequence, undefined);
  assert.match(codes(cnn, 'sequence-length-unused')[0]?.message ?? '', /takes an image/);
});

test('more tokens than the position embeddings hold is a warning, whoever asked for them', () => {
  const src = BERT.replace('max_position_embeddings=4096', 'max_position_embeddings=512');
  assert.equal(codes(analyse(src, { sequenceLength: 512 }), 'sequence-too-long').length, 0);
  const long = analyse(src, { sequenceLength: 2048 });
  assert.match(codes(long, 'sequence-too-long')[0]?.message ?? '', /2048 tokens, more than the 512 positions BertModel is configured for/);
  assert.equal(codes(analyse(src, { inputShape: [1024] }), 'sequence-too-long').length, 1);
});

test('the plan follows --seq-len: 2048 tokens hold more activations and take longer than 512, and the plan reports its length and source', () => {
  const cluster = resolveCluster('a100x8');
  const plan = (tokens: number) => {
    const out = planModel(analyse(BERT, { sequenceLength: tokens }), cluster, { batch: 64, objective: 'throughput', strategies: 'dp', optimizer: 'adam', gpus: 1, maxGpus: 1, precision: 'bf16' });
    assert.ok(out.feasible, out.feasible ? '' : out.reason);
    return out;
  };
  const short = plan(512);
  const long = plan(2048);
  assert.deepEqual(short.sequence, { tokens: 512, source: '--seq-len' });
  assert.deepEqual(long.sequence, { tokens: 2048, source: '--seq-len' });
  assert.ok(long.plan.setup!.memoryPerGpu.activations > 3.5 * short.plan.setup!.memoryPerGpu.activations, 'activations grow at least with T');
  assert.ok(long.plan.stepTimeMs > 3.5 * short.plan.stepTimeMs, `step time grows at least with T: ${short.plan.stepTimeMs} → ${long.plan.stepTimeMs} ms`);
  // Without --seq-len the plan says the length is assumed and how to set it.
  const assumed = planModel(analyse(BERT), cluster, { batch: 64, objective: 'throughput', strategies: 'dp', optimizer: 'adam', gpus: 1, maxGpus: 1, precision: 'bf16' });
  assert.match(assumed.sequence?.source ?? '', /^assumed: the max_position_embeddings/);
  assert.ok(assumed.diagnostics.some((d) => /4096 tokens per sample is assumed .*pass --seq-len/.test(d.message)));
});

/** nanoGPT's shape of code: the length lives only in the position table's size and in `torch.arange(0, t)`. */
const POSITIONS = `import torch
from torch import nn

class GPT(nn.Module):
    def __init__(self, vocab_size=1000, block_size=256, n_embd=64):
        super().__init__()
        self.wte = nn.Embedding(vocab_size, n_embd)
        self.wpe = nn.Embedding(block_size, n_embd)
        self.head = nn.Linear(n_embd, vocab_size)

    def forward(self, idx):
        b, t = idx.size()
        pos = torch.arange(0, t, dtype=torch.long, device=idx.device)
        return self.head(self.wte(idx) + self.wpe(pos))

model = GPT(block_size=384)
`;

test("a position table applied to arange(T) bounds the assumed length: nanoGPT's wpe of block_size rows, not 1024", () => {
  const m = analyse(POSITIONS);
  assert.deepEqual(m.input, [384]);
  assert.match(codes(m, 'assumed-input')[0]?.message ?? '', /assumed \[384\], a sequence of 384 token ids, as many as wpe holds/);
  assert.deepEqual(m.layers.find((l) => l.name === 'head')!.outputShape, [384, 1000]);
  // The user's numbers still win, and asking for more than the table holds is said.
  assert.deepEqual(analyse(POSITIONS, { sequenceLength: 128 }).input, [128]);
  const long = analyse(POSITIONS, { sequenceLength: 1024 });
  assert.match(codes(long, 'sequence-too-long')[0]?.message ?? '', /1024 tokens, more than the 384 positions wpe holds/);
  // An embedding of token ids alone (no positions) does not bound anything.
  assert.deepEqual(analyse(TAGGER).input, [1024]);
});
