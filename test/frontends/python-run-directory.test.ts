/**
 * nanochat's layout (test/fixtures/nanochat): scripts/base_train.py is run from the repository root as a module
 * (`torchrun -m scripts.base_train -- --depth=6`) and execs `open(os.path.join("nanochat", "configurator.py"))`, a
 * path relative to that root, not to the script's folder. WAP looked only beside the script, so `--depth=6` was
 * silently ignored (nanochat's d26 read as d20). Its token budget is divided by a divisor named through two
 * assignments (`world_tokens_per_fwdbwd = tokens_per_fwdbwd * ddp_world_size`, `tokens_per_fwdbwd = device_batch_size
 * * max_seq_len`), which WAP followed one hop only, planning an assumed batch of 128. The truth for the model is torch's
 * parameter count of the fixture's GPT at the configuration the script derives from its depth.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, test } from 'node:test';
import type { AnalyzeOptions } from '../../src/core/ir';
import { analyzeSource, initFrontends } from '../../src/frontends';
import { planModel, resolveCluster } from '../../src/planner/index';

const PYTHON = '/usr/bin/python3';
const root = join(__dirname, '..', 'fixtures', 'nanochat');
const script = join(root, 'scripts', 'base_train.py');
const written = readFileSync(script, 'utf8');

before(async () => {
  await initFrontends();
});

const trained = async (words: string[], text = written) => {
  const options: AnalyzeOptions = { scriptArguments: { words, source: 'speedrun.sh' } };
  const r = await analyzeSource(script, text, options, { workspaceFolders: [root] });
  const model = r.models.find((m) => m.name === 'model');
  assert.ok(model, JSON.stringify(r.diagnostics.map((d) => d.message)));
  return model;
};

/** torch's parameter count of the fixture's GPT as base_train.py builds it at `depth` (model_dim = depth × 64). */
function torchParams(depth: number): number {
  const code = `import sys
sys.path.insert(0, ${JSON.stringify(root)})
from nanochat.gpt import GPT, GPTConfig
d = ${depth} * 64
m = GPT(GPTConfig(sequence_len=256, vocab_size=512, n_layer=${depth}, n_head=max(1, d // 64), n_embd=d))
print(sum(p.numel() for p in m.parameters()))`;
  const r = spawnSync(PYTHON, ['-c', code], { encoding: 'utf8', timeout: 60_000 });
  assert.equal(r.status, 0, `${PYTHON} needs torch (CI installs python3-torch): ${r.stderr}`);
  return Number(r.stdout.trim().split('\n').pop());
}

test('a configurator opened by a path relative to the repository root applies --depth=6, and says where it was read', async () => {
  const deeper = await trained(['--depth=6']);
  assert.equal(deeper.totals.params, torchParams(6));
  assert.notEqual(torchParams(6), torchParams(4));
  assert.equal((await trained([])).totals.params, torchParams(4));
  const note = deeper.diagnostics.find((d) => d.code === 'run-directory');
  assert.ok(note?.carriesToPlan, 'a plan repeats where the configurator was read');
  assert.equal(note.line, 16);
  assert.match(note.message, new RegExp(`^'nanochat/configurator\\.py' is not beside base_train\\.py: WAP read ${join(root, 'nanochat', 'configurator.py').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}, the file a run started in .*\\('\\.\\.' from the script's folder\\)`));
});

test('a configurator WAP cannot read says the run’s arguments were not applied, and why', async () => {
  const missing = await trained(['--depth=6'], written.replace('"configurator.py"', '"settings.py"'));
  assert.equal(missing.totals.params, torchParams(4), 'the values the file writes');
  const warning = missing.diagnostics.find((d) => d.code === 'script-arguments-unapplied');
  assert.ok(warning?.carriesToPlan, JSON.stringify(missing.diagnostics.map((d) => d.message)));
  assert.equal(warning.severity, 'warning');
  assert.match(warning.message, /runs code WAP could not read \(nanochat\/settings\.py: .*does not exist, nor is it in .*\): the arguments speedrun\.sh gives \(--depth=6\) are not applied through it/);
});

test('a token budget divided by a product named through two assignments is the global batch: total ÷ tokens per sample', async () => {
  const model = await trained(['--depth=6']);
  assert.deepEqual(model.runBatch, {
    samples: 16384 / 256, perProcess: false,
    source: 'base_train.py: total_batch_size 16384 tokens ÷ max_seq_len 256 per sample, grad_accum_steps = `total_batch_size // world_tokens_per_fwdbwd` (world_tokens_per_fwdbwd = device_batch_size * max_seq_len * ddp_world_size) at line 27 splits it over the processes',
  });
  // The assert on the same divisor limits the GPU counts to those dividing 16384 / (8 × 256) = 8.
  assert.deepEqual(model.processCountRules?.map((r) => [r.dividend, r.factor]), [[16384, 8 * 256]]);
  const plan = planModel(model, resolveCluster('a100x8', {}), { batch: 128, batchAssumed: true, objective: 'throughput', strategies: 'dp', optimizer: 'adam' });
  assert.deepEqual([plan.batch, plan.batchAssumed, plan.batchSource], [64, undefined, model.runBatch!.source]);
  // --max_seq_len=512 halves the samples the same budget holds.
  assert.equal((await trained(['--max_seq_len=512'])).runBatch?.samples, 16384 / 512);
});
