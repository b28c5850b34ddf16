/** Shared by the Python frontend tests: analyse one named model of a source text, and find a layer by name. */
import assert from 'node:assert/strict';
import { analyzeModel } from '../../src/core/analyze';
import type { AnalyzedLayer, AnalyzedModel } from '../../src/core/ir';
import { parsePythonSource } from '../../src/frontends/python';

export function analyzePythonModel(file: string, src: string, name: string, inputShape?: number[]): AnalyzedModel {
  const r = parsePythonSource(file, src);
  const spec = r.models.find((m) => m.name === name);
  assert.ok(spec, `model ${name} expected; got ${r.models.map((m) => m.name).join(', ')}`);
  return analyzeModel(spec, inputShape ? { inputShape } : {});
}

export function layerNamed(m: AnalyzedModel, name: string): AnalyzedLayer {
  const l = m.layers.find((x) => x.name === name);
  assert.ok(l, `${m.name} has no layer ${name}; layers: ${m.layers.map((x) => x.name).join(', ')}`);
  return l;
}
