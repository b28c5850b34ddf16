/**
 * torch.autocast's dtypes on real model graphs: transformers' BERT as WAP's Hugging Face catalogue builds it, and the
 * casts fixture's Meta Llama attention read from source. The expected dtypes are PyTorch's documented CUDA autocast
 * policy (docs "Automatic Mixed Precision package", CUDA Op-Specific Behavior): linear/matmul/conv/attention in 16
 * bits with their inputs cast, layer_norm/softmax/pow/rsqrt in fp32, embeddings at their fp32 weights' dtype, and
 * everything else by type promotion. CPU autocast (the only one torch runs here) follows other lists (its softmax
 * stays bf16), so the CNN check against measured torch is in test/planner/activationMemory.test.ts.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { autocastLayers, autocastModel } from '../../src/core/autocast';
import type { AnalyzedLayer, AnalyzedModel, LayerSpec } from '../../src/core/ir';
import { analyzeSource, analyzeSourceSync } from '../../src/frontends/index';
import { initPythonFrontend } from '../../src/frontends/python';

before(() => initPythonFrontend());

async function bert(layers: number): Promise<AnalyzedModel> {
  const src = ['from transformers import BertConfig, BertModel', `config = BertConfig(num_hidden_layers=${layers})`, 'model = BertModel(config)', ''].join('\n');
  const r = await analyzeSource('bert.py', src, { sequenceLength: 128 });
  assert.ok(r.models[0], JSON.stringify(r.diagnostics));
  return r.models[0];
}

const byId = (m: AnalyzedModel) => new Map(m.layers.map((l) => [l.id, l]));
const dtypeOf = (l: AnalyzedLayer | undefined) => (l ? l.activationDtype ?? 'plan' : 'missing');
const savedTotal = (m: AnalyzedModel) => m.layers.reduce((a, l) => a + l.workload.savedActivationBytes, 0);

test('BERT under bf16 autocast: embeddings, LayerNorms and residual adds in fp32, projections in bf16, each projection casting its own input', async () => {
  const plain = await bert(1);
  const { model, insertedCasts, fp32Layers } = autocastModel(plain, 'bf16');
  const l = byId(model);
  const p = 'encoder.layer.0.';
  for (const id of ['embeddings.word_embeddings', 'embeddings.sum', 'embeddings.LayerNorm', 'embeddings.dropout', `${p}attention.output.residual`, `${p}attention.output.LayerNorm`, `${p}output.residual`, `${p}output.LayerNorm`]) {
    assert.equal(dtypeOf(l.get(id)), 'fp32', id);
  }
  for (const id of [`${p}attention.self.query`, `${p}attention.self.sdpa`, `${p}attention.output.dense`, `${p}attention.output.dropout`, `${p}intermediate.intermediate_act_fn`, `${p}output.dense`]) {
    assert.equal(dtypeOf(l.get(id)), 'plan', `${id} runs at the plan's bf16`);
  }
  // query, key and value each cast the fp32 LayerNorm output: three conversions, three saved bf16 copies.
  for (const proj of ['query', 'key', 'value']) {
    const linear = l.get(`${p}attention.self.${proj}`)!;
    const cast = l.get(linear.inputs[0]!)!;
    assert.deepEqual({ fn: cast.attrs.fn, from: cast.attrs.from, to: cast.attrs.to, input: cast.inputs[0] }, { fn: 'cast', from: 'fp32', to: 'bf16', input: 'embeddings.dropout' });
  }
  // q, k, v, the FFN's first projection (its input is the attention LayerNorm's fp32 output) and the pooler.
  assert.equal(insertedCasts, 5);
  assert.equal(model.layers.length, plain.layers.length + 5);
  assert.ok(fp32Layers >= 10, `${fp32Layers} fp32 layers`);
  // Parameters do not change; the graph saves more: fp32 LayerNorm inputs and three cast copies where one was kept.
  assert.equal(model.totals.params, plain.totals.params);
  assert.ok(savedTotal(model) > savedTotal(plain), `${savedTotal(model)} vs ${savedTotal(plain)}`);
  // The fp32 layers' saved bytes are fixed: the plan's precision does not halve them.
  const ln = l.get(`${p}output.LayerNorm`)!;
  assert.equal(ln.workload.savedFixedBytes, ln.workload.savedActivationBytes);
});

test('the same block repeats identically under autocast: every encoder layer gets the same casts and dtypes', async () => {
  const { model } = autocastModel(await bert(3), 'fp16');
  const shape = (i: number) => model.layers.filter((x) => x.id.startsWith(`encoder.layer.${i}.`)).map((x) => `${x.id.replace(`encoder.layer.${i}.`, '')}:${x.activationDtype ?? 'plan'}:${String(x.attrs.from ?? '')}>${String(x.attrs.to ?? '')}`);
  assert.deepEqual(shape(1), shape(0));
  assert.deepEqual(shape(2), shape(0));
  assert.ok(shape(0).length > 10);
});

test("Meta's Llama attention (casts fixture): its own .float() before the softmax is a bf16→fp32 conversion under autocast, and type_as converts back", () => {
  const file = join(__dirname, '..', 'fixtures', 'casts', 'forms.py');
  const r = analyzeSourceSync(file, readFileSync(file, 'utf8'), { inputShape: [16, 32] });
  const plain = r.models.find((m) => m.name === 'Net');
  assert.ok(plain, JSON.stringify(r.diagnostics));
  const { model } = autocastModel(plain, 'bf16');
  const softmax = model.layers.find((x) => x.op === 'activation' && x.attrs.fn === 'softmax' && x.id.startsWith('attention.'));
  assert.ok(softmax, model.layers.map((x) => x.id).join(' '));
  assert.equal(softmax.activationDtype, 'fp32');
  const upcast = model.layers.find((x) => x.id === softmax.inputs[0])!;
  assert.deepEqual([upcast.attrs.fn, upcast.attrs.from, upcast.attrs.to], ['cast', 'bf16', 'fp32']);
  const back = model.layers.find((x) => x.inputs[0] === softmax.id && x.attrs.fn === 'cast');
  assert.ok(back, 'type_as(xq) after the softmax');
  assert.deepEqual([back.attrs.from, back.attrs.to, back.activationDtype], ['fp32', 'bf16', undefined]);
  // type_as(xq) takes xq's dtype: the frontend names the tensor, and under autocast xq is the bf16 output of wq.
  assert.equal(plain.layers.find((x) => x.id === back.id)?.dtypeLike, 'attention.permute');
  // Fp32Gate's `h.to(x.dtype)`: x is the RMSNorm's output, fp32 under autocast, so neither of its casts converts.
  const gate = model.layers.filter((x) => x.id.startsWith('gate') && x.attrs.fn === 'cast');
  assert.deepEqual(gate.map((x) => `${x.id}:${String(x.attrs.from)}>${String(x.attrs.to)}`), ['gate.float:fp32>fp32', 'gate:fp32>fp32']);
  assert.equal(plain.layers.find((x) => x.id === 'gate')?.dtypeLike, 'ffn_norm');
});

test('autocast rules on a hand-made graph: fp32 inputs cast once per 16-bit consumer, promotion, fp32-list ops, a cast that converts nothing', () => {
  const at = (id: string, op: LayerSpec['op'], inputs: string[], attrs: Record<string, string> = {}): LayerSpec => ({ id, name: id, type: id, op, attrs, inputs, range: { line: 1, column: 1, endLine: 1, endColumn: 1 } });
  const g = autocastLayers(
    [
      at('fc', 'linear', ['x']),
      at('act', 'activation', ['fc'], { fn: 'relu' }),
      at('res', 'add', ['act', 'x']),
      at('sm', 'activation', ['act'], { fn: 'softmax' }),
      at('exp', 'activation', ['act'], { fn: 'exp' }),
      at('up', 'activation', ['res'], { fn: 'cast', to: 'fp32' }),
      at('bn', 'batchnorm', ['act']),
    ],
    new Set(['x']),
    'fp16',
  );
  const d = new Map(g.layers.map((l) => [l.id, l]));
  assert.deepEqual(d.get('fc')!.inputs, ['fc:autocast0']);
  assert.deepEqual([d.get('fc:autocast0')!.attrs.from, d.get('fc:autocast0')!.attrs.to], ['fp32', 'fp16']);
  assert.equal(d.get('act')!.activationDtype, undefined, 'relu runs in its input dtype: fp16');
  assert.equal(d.get('res')!.activationDtype, 'fp32', 'fp16 + fp32 promotes');
  assert.equal(d.get('sm')!.activationDtype, 'fp32');
  assert.deepEqual(d.get('sm')!.inputs, ['act'], 'softmax takes dtype=float32 in one kernel: no separate cast');
  assert.deepEqual(d.get('exp')!.inputs, ['exp:autocast0'], 'exp casts its fp16 input first');
  assert.deepEqual([d.get('up')!.attrs.from, d.get('up')!.attrs.to], ['fp32', 'fp32'], 'a .float() of an fp32 tensor converts nothing');
  assert.equal(d.get('bn')!.activationDtype, undefined, 'batch_norm is in no autocast list: the input dtype');
  assert.equal(g.insertedCasts, 2);
});

test('nn.MultiheadAttention casts one tensor once: self-attention runs one packed in-projection, cross-attention two (as torch 1.13 runs it)', () => {
  // Counted with torch.profiler under torch.autocast("cpu", bfloat16): mha(h, h, h) runs one aten::_to_copy of h,
  // mha(h, x, x) one of h and one of x (F.multi_head_attention_forward's _in_projection_packed).
  const at = (id: string, op: LayerSpec['op'], inputs: string[]): LayerSpec => ({ id, name: id, type: id, op, attrs: {}, inputs, range: { line: 1, column: 1, endLine: 1, endColumn: 1 } });
  const g = autocastLayers([at('ln', 'layernorm', ['x']), at('self', 'mha', ['ln', 'ln', 'ln']), at('cross', 'mha', ['ln', 'x', 'x']), at('mm', 'matmul', ['ln', 'ln'])], new Set(['x']), 'bf16');
  const d = new Map(g.layers.map((l) => [l.id, l]));
  assert.deepEqual(d.get('self')!.inputs, ['self:autocast0', 'self:autocast0', 'self:autocast0']);
  assert.deepEqual(d.get('cross')!.inputs, ['cross:autocast0', 'cross:autocast1', 'cross:autocast1']);
  // Any other op casts per argument: autocast keeps no cache for activations.
  assert.deepEqual(d.get('mm')!.inputs, ['mm:autocast0', 'mm:autocast1']);
  assert.equal(g.insertedCasts, 1 + 2 + 2);
});
