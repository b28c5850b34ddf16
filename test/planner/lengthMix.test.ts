/**
 * The length mix against hand calculations, and on the published Wikipedia histogram BERT pre-trains on; the
 * mix priced by the real planner on a real model.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { analyzeSource } from '../../src/frontends/index';
import { lengthMix, LengthMixError, parseBatching, parseLengthHistogram, pinsOfSetup, planModel, priceOverLengths, resolveCluster } from '../../src/planner/index';
import type { PlanReport } from '../../src/protocol/plan';
import type { PlanOptions } from '../../src/protocol/planOptions';

const close = (a: number, b: number, tol = 1e-9) => assert.ok(Math.abs(a - b) <= tol, `${a} ≠ ${b}`);

test('batches padded to their longest: two equally common lengths, two per batch, run at the longer 3 times in 4', () => {
  const h = parseLengthHistogram({ lengths: { '2': 1, '4': 1 } });
  const m = lengthMix(h, parseBatching('longest'), 2, 4);
  // P(longest ≤ 2) = (1/2)² = 1/4.
  assert.deepEqual(m.groups, [{ tokens: 2, share: 0.25 }, { tokens: 4, share: 0.75 }]);
  close(m.meanTokens, 3);
  close(m.meanPaddedTokens, 0.25 * 2 + 0.75 * 4);
  close(m.paddingFraction, 1 - 3 / 3.5);
  assert.equal(m.truncatedFraction, 0);
  // One sequence a batch: nothing is padded.
  close(lengthMix(h, parseBatching('longest'), 1, 4).paddingFraction, 0);
});

test('length bins keep short sequences out of long batches; padding to the model length pads everything', () => {
  const h = parseLengthHistogram({ lengths: { '2': 1, '4': 1 } });
  const binned = lengthMix(h, parseBatching('bins:2'), 2, 4);
  assert.deepEqual(binned.groups, [{ tokens: 2, share: 0.5 }, { tokens: 4, share: 0.5 }]);
  close(binned.paddingFraction, 0);
  const padded = lengthMix(h, parseBatching('padded'), 2, 4);
  assert.deepEqual(padded.groups, [{ tokens: 4, share: 1 }]);
  close(padded.paddingFraction, 0.25);
});

test('a padding multiple rounds each batch up; sequences longer than the model are truncated to it', () => {
  const aligned = lengthMix(parseLengthHistogram({ lengths: { '1': 1, '3': 1 } }), parseBatching('longest', 4), 1, 8);
  assert.deepEqual(aligned.groups, [{ tokens: 4, share: 1 }]);
  close(aligned.paddingFraction, 0.5);
  const long = lengthMix(parseLengthHistogram({ lengths: { '3': 3, '10': 1 } }), parseBatching('longest'), 1, 8);
  close(long.truncatedFraction, 0.25);
  close(long.meanTokens, (3 * 3 + 8) / 4);
  assert.deepEqual(long.groups, [{ tokens: 3, share: 0.75 }, { tokens: 8, share: 0.25 }]);
});

test('lengths fold into at most 8 groups, each priced at its mean; a rare group goes to the next longer one', () => {
  const counts = Array.from({ length: 64 }, () => 1);
  const m = lengthMix(parseLengthHistogram({ counts }), parseBatching('bins:1'), 1, 64);
  assert.equal(m.groups.length, 8);
  // Lengths 1..8 in the first group, each 1/64 of the batches: priced at their mean 4.5, rounded up to 5.
  assert.deepEqual(m.groups[0], { tokens: 5, share: 8 / 64 });
  close(m.groups.reduce((s, g) => s + g.share, 0), 1);
  const rare = lengthMix(parseLengthHistogram({ lengths: { '10': 1, '100': 9999 } }), parseBatching('bins:10'), 1, 100);
  assert.deepEqual(rare.groups, [{ tokens: 100, share: 1 }]);
});

test('the published Wikipedia histogram: over half of 512-token batches is padding, LDDL bins of 64 leave under a tenth', () => {
  const file = join(__dirname, '../../bench/data/wikipedia-bert-phase2-lengths.json');
  const h = parseLengthHistogram(JSON.parse(readFileSync(file, 'utf8')));
  const padded = lengthMix(h, parseBatching('padded'), 16, 512);
  // Krell et al. (2021): "over 16M sequences", padding "in excess of 50%" at 512.
  assert.equal(padded.sequences, 16_279_552);
  assert.ok(padded.paddingFraction > 0.5 && padded.paddingFraction < 0.51, `${padded.paddingFraction}`);
  const lddl = lengthMix(h, parseBatching('bins:64', 8), 16, 512);
  assert.ok(lddl.paddingFraction < 0.1, `${lddl.paddingFraction}`);
  assert.deepEqual(lddl.groups.map((g) => g.tokens), [64, 128, 192, 256, 320, 384, 448, 512]);
  // Full-length sequences (3.8 M of 16.3 M) and the 449-511 bin run at 512.
  assert.ok(Math.abs(lddl.groups[7]!.share - 0.272) < 0.001, `${lddl.groups[7]!.share}`);
  // Sixteen at random from all lengths: nearly every batch holds a 512-token one.
  assert.ok(lengthMix(h, parseBatching('longest'), 16, 512).groups.at(-1)!.share > 0.99);
});

test('bad histograms and batchings are refused by what is wrong', () => {
  assert.throws(() => parseLengthHistogram([1, 2]), LengthMixError);
  assert.throws(() => parseLengthHistogram({ counts: [0, 0] }), /counts no sequences/);
  assert.throws(() => parseLengthHistogram({ counts: [1, -2] }), /count for 2 tokens must be a number ≥ 0/);
  assert.throws(() => parseLengthHistogram({ lengths: { abc: 3 } }), /'abc' is not a positive whole number/);
  assert.throws(() => parseLengthHistogram({ sizes: [] }), /needs "counts"/);
  assert.throws(() => parseBatching('bins:0'), /padded, longest or bins:W/);
  assert.throws(() => parseBatching('longest', 0), /padding multiple must be a positive integer/);
  assert.throws(() => lengthMix(parseLengthHistogram({ counts: [1] }), parseBatching('longest'), 0, 8), /micro-batch/);
});

async function bert(tokens: number) {
  const src = 'from transformers import BertConfig, BertModel\nmodel = BertModel(BertConfig(hidden_size=256, num_hidden_layers=4, num_attention_heads=4, intermediate_size=1024))\n';
  const r = await analyzeSource('bert.py', src, { sequenceLength: tokens });
  return r.models.find((m) => m.name === 'model')!;
}

test('priced by the planner: shorter batches step faster, the configuration stays pinned, and a model that cannot be read at another length is refused', async () => {
  const cluster = resolveCluster('a100x8');
  const opts: PlanOptions = { batch: 64, objective: 'throughput', strategies: 'all', optimizer: 'adam', gpus: 2, precision: 'bf16', precisionSource: 'test' };
  const base = planModel(await bert(512), cluster, opts);
  assert.ok(base.feasible);
  const mix = lengthMix(parseLengthHistogram({ lengths: { '100': 1, '200': 1, '512': 2 } }), parseBatching('bins:128', 8), 8, 512);
  const seen: number[] = [];
  const report = await priceOverLengths(base, mix, parseBatching('bins:128', 8), async (tokens) => {
    seen.push(tokens);
    const out = planModel(await bert(tokens), cluster, { ...opts, gpus: base.plan.gpus, pins: pinsOfSetup(base.plan.setup!) });
    if (out.feasible) assert.deepEqual(pinsOfSetup(out.plan.setup!), pinsOfSetup(base.plan.setup!));
    return out;
  });
  assert.deepEqual(seen, [104, 200]);
  const steps = report.groups.map((g) => g.stepTimeMs);
  assert.ok(steps[0]! < steps[1]! && steps[1]! < steps[2]!, `${steps}`);
  assert.equal(steps[2], (base as PlanReport).plan.stepTimeMs);
  close(report.stepTimeMs, 0.25 * steps[0]! + 0.25 * steps[1]! + 0.5 * steps[2]!, 1e-9);
  close(report.samplesPerSec, (64 * 1000) / report.stepTimeMs, 1e-9);
  close(report.tokensPerSec, report.samplesPerSec * report.meanTokens, 1e-6);
  assert.ok(report.speedup > 1);
  // The same 512-token model offered for every length: its length is fixed where it was read.
  const fixed = await bert(512);
  await assert.rejects(priceOverLengths(base, mix, parseBatching('bins:128', 8), async () => planModel(fixed, cluster, opts)), /planning again at 104 tokens gave a model of 512 tokens/);
});
