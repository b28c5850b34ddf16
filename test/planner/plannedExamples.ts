/**
 * What planner tests over the repository's own examples share: a model read from an example file as the editor reads
 * it, a plan asserted feasible (its reason shown when not), and the small Mixtral the expert-parallel tests plan.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AnalyzedModel } from '../../src/core/ir';
import { analyzeSource } from '../../src/frontends/index';
import type { planModel } from '../../src/planner/index';
import type { PlanReport } from '../../src/protocol/plan';

const root = new URL('../..', import.meta.url).pathname;

/** The model named `name` in an example file (a path from the repository's root). */
export async function exampleModel(file: string, name: string): Promise<AnalyzedModel> {
  const r = await analyzeSource(file, readFileSync(join(root, file), 'utf8'));
  const m = r.models.find((x) => x.name === name);
  assert.ok(m, `no ${name} in ${file}`);
  return m;
}

export function feasible(out: ReturnType<typeof planModel>): PlanReport {
  assert.ok(out.feasible, out.feasible ? '' : out.reason);
  return out;
}

/** Mixtral's block at a small width: 4 layers of 1024, 8 experts, top-2, 32k vocabulary, read as transformers builds it. */
export async function smallMixtral(sequenceLength: number): Promise<AnalyzedModel> {
  const source = [
    'from transformers import MixtralConfig, MixtralForCausalLM',
    'config = MixtralConfig(hidden_size=1024, intermediate_size=3584, num_hidden_layers=4, num_attention_heads=16, num_key_value_heads=4, num_local_experts=8, num_experts_per_tok=2, vocab_size=32000)',
    'model = MixtralForCausalLM(config)',
    '',
  ].join('\n');
  return (await analyzeSource('mixtral.py', source, { sequenceLength })).models[0]!;
}
