/**
 * `wap analyze` on a script that sizes its model with argparse: the launch script beside it gives the arguments,
 * `--script-args="…"` overrides them, and without either every option is at its default; the command's own code
 * (in-process), on real files in a temporary folder.
 */
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { analyzeCommand } from '../../src/cli/commands/analyze';
import { planCommand } from '../../src/cli/commands/plan';
import { formatPlanTable } from '../../src/planner/format';
import type { PlanReport } from '../../src/protocol/plan';
import { capture, root } from './helpers';

const project = join(mkdtempSync(join(tmpdir(), 'wap-script-args-cli-')), 'project');

before(() => {
  mkdirSync(project);
  copyFileSync(join(root, 'test', 'fixtures', 'nanogpt', 'argparse_train.py'), join(project, 'train.py'));
  copyFileSync(join(root, 'test', 'fixtures', 'nanogpt', 'model.py'), join(project, 'model.py'));
});

async function analyze(...args: string[]): Promise<{ layers: number; note: string }> {
  const r = await capture(() => analyzeCommand.run([join(project, 'train.py'), '--json', ...args]));
  assert.equal(r.code, 0, r.err);
  const out = JSON.parse(r.out) as { models: Array<{ name: string; layers: Array<{ name: string }> }>; diagnostics: Array<{ code?: string; message: string }> };
  const model = out.models.find((m) => m.name === 'model')!;
  return { layers: model.layers.filter((l) => /\.attn\.c_attn$/.test(l.name)).length, note: out.diagnostics.find((d) => d.code === 'script-arguments')?.message ?? '' };
}

test('the defaults, then the launch script’s arguments, then --script-args over them', async () => {
  const none = await analyze();
  assert.equal(none.layers, 6);
  assert.match(none.note, /run with no arguments/);
  writeFileSync(join(project, 'run.sh'), '#!/bin/bash\nARCH=(--n-layer 4 --n_embd 256 --n_head 4)\ntorchrun --nproc_per_node 8 train.py "${ARCH[@]}" --compile > train.log 2>&1\n');
  const launched = await analyze();
  assert.equal(launched.layers, 4);
  assert.match(launched.note, /with the arguments run\.sh gives \(--n-layer 4 --n_embd 256 --n_head 4 --compile\)/);
  const given = await analyze('--script-args=--n-layer 2 --n_embd "128" --n_head 4');
  assert.equal(given.layers, 2);
  assert.match(given.note, /with the arguments --script-args gives \(--n-layer 2 --n_embd 128 --n_head 4\)/);
  // Two launch scripts that disagree: which one is the run is the user's to say, so the defaults, said as such.
  writeFileSync(join(project, 'sweep.sh'), '#!/bin/bash\ntorchrun --nproc_per_node 8 train.py --n-layer 12\n');
  const disagree = await analyze();
  assert.equal(disagree.layers, 6);
  assert.match(disagree.note, /as the script run with no arguments \(run\.sh and sweep\.sh run it with different arguments\), each option at its default: n_layer=6/);
});

test('wap plan trains at the launch’s global batch and precision: run_clm.py as run.sh runs it, unless --batch says otherwise', async () => {
  const script = join(root, 'test', 'fixtures', 'hf-example', 'run_clm.py');
  const plan = async (...args: string[]): Promise<{ batch: number; batchSource?: string; batchAssumed?: boolean; precision: string; precisionReason: string; header: string }> => {
    const r = await capture(() => planCommand.run([script, '--cluster', 'a100x8', '--json', ...args]));
    assert.equal(r.code, 0, r.err);
    const out = JSON.parse(r.out) as PlanReport;
    return { batch: out.batch, batchSource: out.batchSource, batchAssumed: out.batchAssumed, precision: out.plan.setup!.precision, precisionReason: out.plan.setup!.precisionReason, header: formatPlanTable(out).split('\n')[0]! };
  };
  const launched = await plan();
  assert.equal(launched.batch, 32, 'torchrun --nproc_per_node 8 × --per_device_train_batch_size 4');
  assert.equal(launched.batchAssumed, undefined);
  assert.match(launched.header, /batch 32 \(run\.sh's Hugging Face Trainer command line: micro-batch 4 × /);
  assert.equal(launched.precision, 'bf16');
  assert.match(launched.precisionReason, /run\.sh/);
  const given = await plan('--batch', '64', '--precision', 'fp16');
  assert.deepEqual([given.batch, given.batchSource, given.precision], [64, '--batch', 'fp16']);
  // A model nothing launches: the default, said as assumed.
  const r = await capture(() => planCommand.run([join(root, 'examples', 'pytorch', 'alexnet.py'), '--cluster', 'pcie4']));
  assert.match(r.out.split('\n')[0]!, /batch 128 \(assumed: no launch or training config beside the model states one\)/);
});
