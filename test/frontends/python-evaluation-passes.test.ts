/**
 * Evaluation inside a training loop is skipped while reading it: nanoGPT's loop opens with estimate_loss(), an
 * @torch.no_grad() function of 2 × 200 forwards on memmapped batches, which spent the loop's whole budget before the
 * training step and the autocast it runs under. Outside a training loop, grad-free code still runs: a check call
 * under `torch.no_grad()` is how a script states its input.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { analyzeSource, initFrontends } from '../../src/frontends/index';

const dir = join(__dirname, '..', 'fixtures', 'nanogpt');

before(async () => {
  await initFrontends();
});

test('the autocast of a training step after a 400-forward estimate_loss() is the run’s precision; both evaluation passes are said as skipped', async () => {
  const file = join(dir, 'eval_first_train.py');
  const r = await analyzeSource(file, readFileSync(file, 'utf8'), {}, { workspaceFolders: [dir] });
  const model = r.models[0]!;
  assert.deepEqual(model.runPrecision, { precision: 'bf16', holding: 'autocast', source: 'eval_first_train.py:53 (torch.autocast, dtype torch.bfloat16)' });
  assert.equal(model.totals.params, 124_373_760, 'the GPT is read whole: torch counts 124,373,760 parameters for this config of model.py');
  const skipped = [...r.diagnostics, ...model.diagnostics].filter((d) => d.code === 'evaluation-skipped');
  assert.deepEqual(
    skipped.map((d) => [d.line, d.severity, d.message]),
    [
      [30, 'info', 'estimate_loss() (line 30) runs under @torch.no_grad(): an evaluation pass, not the training step, which WAP skips inside the training loop; its result is unknown'],
      [50, 'info', 'the `with torch.no_grad():` block at line 50 is an evaluation pass, which WAP skips inside the training loop'],
    ],
  );
});

test('outside a training loop grad-free code still runs: an nn.Sequential’s check call under inference_mode states its input', async () => {
  const source = `import torch
import torch.nn as nn

model = nn.Sequential(nn.Conv2d(3, 16, 3), nn.ReLU(), nn.Flatten(), nn.LazyLinear(10))

if __name__ == "__main__":
    with torch.inference_mode():
        logits = model(torch.randn(4, 3, 40, 40))
`;
  const r = await analyzeSource('check.py', source, {});
  const model = r.models[0]!;
  assert.deepEqual([model.input, model.inputAssumed], [[3, 40, 40], false]);
  // LazyLinear takes its inputs from the check call: 16 channels of 38 × 38.
  assert.equal(model.totals.params, 3 * 16 * 9 + 16 + 16 * 38 * 38 * 10 + 10);
  assert.ok(![...r.diagnostics, ...model.diagnostics].some((d) => d.code === 'evaluation-skipped'));
});
