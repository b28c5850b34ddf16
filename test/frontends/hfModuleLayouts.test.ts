/**
 * The modules fine-tuning scripts reach by method on the catalogue's newer architectures (moduleLayouts.ts):
 * `get_encoder()`, `get_input_embeddings()`, `model.base_model` and Whisper's `freeze_encoder()`, checked by the
 * parameters each freeze leaves training against the counts transformers prints for the same checkpoints:
 * whisper-small trains 153,580,800 with its encoder frozen (its decoder, proj_out tied to embed_tokens), and its
 * encoder holds 88,154,112 of which the sinusoidal embed_positions (1500 × 768 = 1,152,000) never trains; bart-base
 * (139,420,416) keeps its decoder's 6 × 9,451,776 + embed_positions 1026 × 768 + layernorm_embedding 1,536 training
 * with the encoder frozen, the shared table frozen with it (BartEncoder's embed_tokens is `shared`).
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { analyzeModel } from '../../src/core/analyze';
import type { AnalyzedModel, Diagnostic } from '../../src/core/ir';
import { hfModuleLayout, laidOutModelTypes } from '../../src/frontends/huggingface/moduleLayouts';
import { supportedModelTypes } from '../../src/frontends/huggingface/registry';
import { initFrontends, parseSource } from '../../src/frontends/index';

const fixtures = join(__dirname, '..', 'fixtures', 'huggingface');

before(() => initFrontends());

function script(body: string): { model: AnalyzedModel; diagnostics: Diagnostic[] } {
  const result = parseSource(join(fixtures, 'layouts.py'), body, {});
  const spec = result?.models.find((m) => m.name === 'model');
  assert.ok(spec, `a model is read from:\n${body}`);
  const model = analyzeModel(spec, {});
  return { model, diagnostics: [...(result?.diagnostics ?? []), ...model.diagnostics] };
}

const WHISPER_SMALL = 241_734_912;
const WHISPER_SMALL_DECODER = 153_580_800;
const BART_BASE = 139_420_416;

test('every architecture the catalogue builds says where its base model, embeddings and head are', () => {
  const missing = supportedModelTypes().filter((t) => !laidOutModelTypes().includes(t));
  assert.deepEqual(missing, []);
  assert.equal(hfModuleLayout('whisper')?.freezesEncoder, true);
  assert.equal(hfModuleLayout('bart')?.freezesEncoder, undefined, 'BART has no freeze_encoder()');
  assert.equal(hfModuleLayout('no-such-type'), undefined);
});

test("Whisper's freeze_encoder() freezes the encoder transformers freezes: whisper-small then trains its decoder's 153,580,800", () => {
  const load = "from transformers import WhisperForConditionalGeneration\nmodel = WhisperForConditionalGeneration.from_pretrained('./whisper-small')\n";
  const whole = script(load).model;
  const frozen = script(`${load}model.freeze_encoder()\n`);
  assert.equal(whole.totals.params + (whole.totals.frozenParams ?? 0), WHISPER_SMALL);
  assert.equal(frozen.model.totals.params, WHISPER_SMALL_DECODER);
  assert.equal(frozen.model.totals.params + (frozen.model.totals.frozenParams ?? 0), WHISPER_SMALL);
  assert.ok(!frozen.diagnostics.some((d) => d.code === 'frozen-parameters' && d.severity === 'warning'), JSON.stringify(frozen.diagnostics.map((d) => d.message)));
  // The same step written out by hand.
  const byHand = script(`${load}model.model.encoder.requires_grad_(False)\n`).model;
  assert.equal(byHand.totals.params, WHISPER_SMALL_DECODER);
});

test("BART's get_encoder() is model.encoder under its base model, and freezing it freezes the shared table its embed_tokens is", () => {
  const load = "from transformers import BartForConditionalGeneration\nmodel = BartForConditionalGeneration.from_pretrained('./bart-base')\n";
  const viaMethod = script(`${load}model.get_encoder().requires_grad_(False)\n`).model;
  const decoderTrained = 6 * 9_451_776 + 1026 * 768 + 2 * 768;
  assert.equal(viaMethod.totals.params, decoderTrained);
  assert.equal(viaMethod.totals.params + (viaMethod.totals.frozenParams ?? 0), BART_BASE);
  // The base model's own get_encoder() returns the same stack.
  assert.equal(script(`${load}model.base_model.get_encoder().requires_grad_(False)\n`).model.totals.params, decoderTrained);
  // get_input_embeddings() is `model.shared`: 50,265 × 768 frozen, everything else trains.
  const embeddings = script(`${load}model.get_input_embeddings().requires_grad_(False)\n`).model;
  assert.equal(embeddings.totals.frozenParams, 50_265 * 768);
});
