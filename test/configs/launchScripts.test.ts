/**
 * torchrun / python -m torch.distributed.run launch lines in shell scripts and
 * Makefiles (torchrun --help: --nproc_per_node, --nnodes, flag-only options
 * such as --standalone), CUDA_VISIBLE_DEVICES lists, and the fixes' exact edits.
 */
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { applyTextEdits, checkConfig, detectConfigFormats, initConfigReaders } from '../../src/configs';
import type { PlanReport } from '../../src/protocol/plan';

before(() => initConfigReaders());
/** 8 GPUs planned on one 8-GPU machine (or 16 on two). */
const plan = (gpus: number, clusterGpus = 8, nodes = 1) =>
  ({ model: 'M', cluster: { name: 'c', gpus: clusterGpus, nodes }, scaling: [], plan: { gpus, samplesPerSec: 10, energyJPerSample: 0, layers: [] } }) as unknown as PlanReport;
const count = (file: string, text: string, p = plan(8)) => checkConfig(file, text, p).findings.filter((f) => f.code === 'gpu-count' || f.code === 'node-count' || f.code === 'device-ids-mismatch');
const fixed = (file: string, text: string, p = plan(8)) => applyTextEdits(text, count(file, text, p)[0]!.fix!.edits);

test('launch lines: torchrun, python -m torch.distributed.run/launch, quoted and variable values, flag-only options', () => {
  // Each form, and what the fix makes of it: only the count's characters change.
  const forms: Array<[string, string]> = [
    ['torchrun --nproc_per_node=4 train.py', 'torchrun --nproc_per_node=8 train.py'],
    ['torchrun --nproc-per-node 4 train.py', 'torchrun --nproc-per-node 8 train.py'],
    ['torchrun --standalone --nproc_per_node 4 train.py', 'torchrun --standalone --nproc_per_node 8 train.py'],
    ['python -m torch.distributed.run --nproc_per_node "4" train.py', 'python -m torch.distributed.run --nproc_per_node "8" train.py'],
    ['python3.10 -u -m torch.distributed.launch --nproc_per_node 4 train.py', 'python3.10 -u -m torch.distributed.launch --nproc_per_node 8 train.py'],
    ['/usr/bin/torchrun --nproc_per_node 4 train.py', '/usr/bin/torchrun --nproc_per_node 8 train.py'],
    ['NGPU=4\ntorchrun --nproc_per_node $NGPU train.py', 'NGPU=8\ntorchrun --nproc_per_node $NGPU train.py'],
    ['torchrun --nproc_per_node ${NGPU:-4} train.py', 'torchrun --nproc_per_node ${NGPU:-8} train.py'],
  ];
  for (const [f, want] of forms) {
    const found = count('run.sh', `${f}\n`);
    assert.equal(found.length, 1, f);
    assert.match(found[0]!.message, /^4 processes requested/, f);
    assert.equal(fixed('run.sh', `${f}\n`), `${want}\n`, f);
  }
  // The script's own arguments are not torchrun's.
  assert.deepEqual(count('run.sh', 'torchrun --nproc_per_node 8 train.py --nproc_per_node 2\n'), []);
  // python without -m torch.distributed.*: not a launch.
  assert.deepEqual(count('run.sh', 'python train.py --nproc_per_node 2\n'), []);
  assert.deepEqual(count('run.sh', 'python -m mymodule --nproc_per_node 2\n'), []);
  // gpu/auto and computed counts cannot be checked; a word that is not a count is reported.
  assert.deepEqual(count('run.sh', 'torchrun --nproc_per_node gpu train.py\n'), []);
  assert.deepEqual(count('run.sh', 'torchrun --nproc_per_node $((2*2)) train.py\n'), []);
  assert.match(checkConfig('run.sh', 'torchrun --nproc_per_node four train.py\n', plan(8)).findings[0]!.message, /--nproc_per_node must be a whole number \(or gpu\/auto\), got 'four'/);
  assert.match(checkConfig('run.sh', 'torchrun --nnodes x --nproc_per_node 8 train.py\n', plan(8)).findings[0]!.message, /--nnodes must be a whole number, got 'x'/);
  assert.deepEqual(count('run.sh', 'torchrun --nnodes 1:2 --nproc_per_node 8 train.py\n'), [], 'elastic min:max');
  // The fix's title names --nnodes only for a plan on more than one machine.
  assert.equal(count('run.sh', 'torchrun --nproc_per_node=4 train.py\n')[0]!.fix!.title, 'Use 8 GPUs as planned (--nproc_per_node=8)');
  assert.equal(count('run.sh', 'torchrun --nproc_per_node=4 train.py\n', plan(16, 16, 2))[0]!.fix!.title, 'Use 16 GPUs as planned (--nproc_per_node=8 --nnodes=2)');
});

test('machines: a missing --nnodes is added after the launcher; Makefile variables resolve', () => {
  const two = plan(16, 16, 2);
  const text = 'torchrun --nproc_per_node 4 train.py\n';
  assert.equal(fixed('run.sh', text, two), 'torchrun --nnodes=2 --nproc_per_node 8 train.py\n');
  const mk = 'PYTHON := python3\nNGPU ?= 4\ntrain:\n\t@$(PYTHON) -m torch.distributed.run --nproc_per_node=$(NGPU) train.py\n';
  assert.equal(detectConfigFormats('Makefile', mk).includes('torchrun'), true);
  assert.equal(fixed('Makefile', mk), mk.replace('NGPU ?= 4', 'NGPU ?= 8'));
});

test('CUDA_VISIBLE_DEVICES: the command’s own list wins over an export above; lists alone are compared with the plan', () => {
  const text = 'export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7\nCUDA_VISIBLE_DEVICES=0,1 torchrun --nproc_per_node 8 train.py\n';
  const f = count('run.sh', text);
  assert.equal(f.length, 1);
  assert.equal(f[0]!.code, 'device-ids-mismatch');
  assert.equal(text.slice(f[0]!.range.start, f[0]!.range.end), '0,1');
  assert.equal(applyTextEdits(text, f[0]!.fix!.edits), text.replace('=0,1 ', '=0,1,2,3,4,5,6,7 '));
  // Inherited from the export above.
  const inherited = 'export CUDA_VISIBLE_DEVICES=0,1\ntorchrun --nproc_per_node 2 train.py\n';
  const g = count('run.sh', inherited);
  assert.equal(g[0]!.code, 'gpu-count');
  assert.equal(applyTextEdits(inherited, g[0]!.fix!.edits), 'export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7\ntorchrun --nproc_per_node 8 train.py\n');
  // A list alone: "exposes 2 GPUs".
  const alone = '#!/bin/bash\nexport CUDA_VISIBLE_DEVICES="0,1"\npython train.py\n';
  const h = checkConfig('job.sh', alone, plan(8)).findings;
  assert.equal(h.length, 1);
  assert.match(h[0]!.message, /^CUDA_VISIBLE_DEVICES exposes 2 GPUs/);
  assert.equal(applyTextEdits(alone, h[0]!.fix!.edits), alone.replace('"0,1"', '"0,1,2,3,4,5,6,7"'));
  assert.match(checkConfig('job.sh', '#!/bin/bash\nexport CUDA_VISIBLE_DEVICES=3\npython t.py\n', plan(8)).findings[0]!.message, /exposes 1 GPU;/);
  // UUIDs are not countable here.
  assert.deepEqual(checkConfig('job.sh', '#!/bin/bash\nexport CUDA_VISIBLE_DEVICES=GPU-abc\npython t.py\n', plan(8)).findings, []);
  // Which files are launch scripts.
  assert.deepEqual(detectConfigFormats('train.slurm', 'torchrun --nproc_per_node 8 t.py\n'), ['torchrun']);
  assert.deepEqual(detectConfigFormats('launch', '#!/usr/bin/env bash\ntorchrun --nproc_per_node 8 t.py\n'), ['torchrun']);
  assert.deepEqual(detectConfigFormats('notes.md', 'torchrun --nproc_per_node 8 t.py\n'), []);
});
