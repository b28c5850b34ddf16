/**
 * What the Hugging Face catalogue tests share: the config.json fixtures (test/fixtures/huggingface/<name>/, README.md
 * there says where each came from) read by the JSON frontend, scripts beside them read by the Python frontend, and
 * a layer looked up by its transformers name.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { analyzeModel } from '../../src/core/analyze';
import type { AnalyzedLayer, AnalyzedModel, AnalyzeOptions, Diagnostic } from '../../src/core/ir';
import { expertOf, moeOf } from '../../src/core/moe';
import { parseSource } from '../../src/frontends/index';

export const HF_FIXTURES = join(__dirname, '..', 'fixtures', 'huggingface');

/** A fixture's config.json as the JSON frontend reads it (`text` in place of the file's, for configs no fixture holds). */
export function hfConfigModel(dir: string, options: AnalyzeOptions = {}, text?: string): AnalyzedModel {
  const file = join(HF_FIXTURES, dir, 'config.json');
  const parsed = parseSource(file, text ?? readFileSync(file, 'utf8'));
  assert.ok(parsed?.models[0], `a model from ${dir}`);
  return analyzeModel(parsed.models[0], options);
}

/** A script named `fileName` beside the fixtures: the model it names `model`, analysed, and every diagnostic. */
export function hfScriptModel(fileName: string, source: string, options: AnalyzeOptions = {}): { model: AnalyzedModel; diagnostics: Diagnostic[] } {
  const result = parseSource(join(HF_FIXTURES, fileName), source, {});
  const spec = result?.models.find((m) => m.name === 'model');
  assert.ok(spec, `a model is read from:\n${source}\n${JSON.stringify(result?.diagnostics.map((d) => d.message))}`);
  const model = analyzeModel(spec, options);
  return { model, diagnostics: [...(result?.diagnostics ?? []), ...model.diagnostics] };
}

/** A layer by its transformers name, or by its id where a module runs twice (DeBERTa's shared `key_proj#2`). */
export function layerNamed(m: AnalyzedModel, name: string): AnalyzedLayer {
  const l = m.layers.find((x) => x.name === name) ?? m.layers.find((x) => x.id === name);
  assert.ok(l, `${m.name} has no layer ${name}`);
  return l;
}

/** A total in billions as a model card rounds it (to `places` decimals). */
export const billions = (n: number, places: number): number => Number((n / 1e9).toFixed(places));

/** The parameters one token's forward multiplies by: all but the experts it is not routed to (top-k of E). */
export function activatedParams(m: AnalyzedModel): number {
  const topK = m.layers.map((l) => moeOf(l)).find((x) => x)?.topK ?? 0;
  let always = 0;
  let routed = 0;
  let experts = 1;
  for (const l of m.layers) {
    const expert = expertOf(l);
    if (expert) [routed, experts] = [routed + l.workload.params, expert.count];
    else always += l.workload.params;
  }
  return always + (routed * topK) / experts;
}

/** The diagnostics that say a model fell outside the catalogue. */
export const unsupportedDiagnostics = (diagnostics: readonly Diagnostic[]): Diagnostic[] => diagnostics.filter((d) => d.code === 'hf-unsupported');
