/** `wap plan --seq-lengths`: the throughput on the data's own lengths, in JSON and in the table; bad input refused by flag. */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CliError } from '../../src/cli/cliError';
import { commands } from '../../src/cli/commands/registry';
import type { PlanReport } from '../../src/protocol/plan';
import { capture } from './helpers';

const dir = mkdtempSync(join(tmpdir(), 'wap-lengths-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const model = join(dir, 'bert.py');
writeFileSync(model, 'from transformers import BertConfig, BertModel\nmodel = BertModel(BertConfig(hidden_size=128, num_hidden_layers=2, num_attention_heads=2, intermediate_size=512))\n');
const lengths = join(dir, 'lengths.json');
writeFileSync(lengths, JSON.stringify({ lengths: { '60': 30, '250': 50, '700': 20 } }));
const plan = (...extra: string[]) => capture(() => commands.plan!.run([model, '--cluster', 'a100x8', '--gpus', '2', '--batch', '32', ...extra]));

test('wap plan --seq-lengths --batching bins:W reports the throughput on those lengths next to the padded plan', async () => {
  const r = await plan('--json', '--seq-lengths', lengths, '--batching', 'bins:128', '--pad-multiple', '8');
  assert.equal(r.code, 0, r.err);
  const out = JSON.parse(r.out) as PlanReport;
  const mix = out.lengthMix!;
  assert.equal(out.sequence!.tokens, 512);
  assert.equal(mix.source, lengths);
  // 700 is truncated to the model's 512 tokens.
  assert.equal(mix.truncatedFraction, 0.2);
  assert.equal(mix.meanTokens, 0.3 * 60 + 0.5 * 250 + 0.2 * 512);
  assert.deepEqual(mix.groups.map((g) => g.tokens), [64, 256, 512]);
  assert.equal(mix.groups[2]!.stepTimeMs, out.plan.stepTimeMs);
  assert.ok(mix.groups[0]!.stepTimeMs < mix.groups[1]!.stepTimeMs && mix.groups[1]!.stepTimeMs < mix.groups[2]!.stepTimeMs);
  // A 2-layer, 128-wide BERT is dominated by fixed per-kernel costs: well short of 512 ÷ 245, but faster.
  assert.ok(mix.speedup > 1.1, `speedup ${mix.speedup}`);
  assert.ok(Math.abs(mix.samplesPerSec - (32 * 1000) / mix.stepTimeMs) < 1e-9);
  const table = await plan('--seq-lengths', lengths, '--batching', 'bins:128');
  assert.equal(table.code, 0, table.err);
  assert.match(table.out, /^lengths \(.*lengths\.json\): mean 245 tokens, run at \d+ \(\d+% padding\), batches drawn from 128-token length bins, each padded to its longest; 20\.0% truncated$/m);
  assert.match(table.out, /^on these lengths: step [\d.]+ ms {2}\d+ samples\/s {2}\d+ tokens\/s \([\d.]+× the padded plan\); batches at 60:30% 250:50% 512:20%$/m);
});

test('random batches of 16 almost always hold a long sequence: padding to the longest gains little over padding everything', async () => {
  const longest = JSON.parse((await plan('--json', '--seq-lengths', lengths)).out) as PlanReport;
  assert.ok(longest.lengthMix!.speedup < 1.1, `speedup ${longest.lengthMix!.speedup}`);
  const padded = JSON.parse((await plan('--json', '--seq-lengths', lengths, '--batching', 'padded')).out) as PlanReport;
  assert.equal(padded.lengthMix!.speedup, 1);
  assert.equal(padded.lengthMix!.groups.length, 1);
});

test('bad --seq-lengths input is refused by flag, before anything is planned', async () => {
  const notJson = join(dir, 'broken.json');
  writeFileSync(notJson, '{"counts": [1, 2,');
  const cases: Array<[string[], RegExp]> = [
    [['--seq-lengths', notJson], /--seq-lengths '.*broken\.json' is not JSON/],
    [['--seq-lengths', join(dir, 'missing.json')], /cannot read sequence-length histogram '.*missing\.json'/],
    [['--batching', 'bins:64'], /--batching applies only with --seq-lengths/],
    [['--seq-lengths', lengths, '--batching', 'buckets'], /--batching: batching must be padded, longest or bins:W/],
    [['--seq-lengths', lengths, '--pad-multiple', '0'], /--pad-multiple expects a positive integer/],
    [['--seq-lengths', lengths, '--input', '128'], /give its length with --seq-len or in the code, not --input/],
    [['--seq-lengths', lengths, '--measure'], /cannot be combined with measured layer times/],
  ];
  for (const [flags, message] of cases) {
    await assert.rejects(plan(...flags), (e: unknown) => {
      assert.ok(e instanceof CliError && e.exitCode === 2, `${flags.join(' ')}: not a CliError: ${String(e)}`);
      assert.ok(!e.message.includes('\n'), `more than one line: ${e.message}`);
      assert.match(e.message, message);
      return true;
    });
  }
});
