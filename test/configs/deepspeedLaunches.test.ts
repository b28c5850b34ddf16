/**
 * Two launch scripts that run one script differently, in the layout of DeepSpeedExamples' training/imagenet: both
 * pass `-a resnet50`, each names its own DeepSpeed config (one fp32, one fp16 with ZeRO-1). Before, any difference
 * dropped every argument, so the model was read at the script's default ResNet-18 while the batch came from a launch,
 * and the disagreeing precisions silently gave the GPU's default. The truth for the model is torch's own count.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { initConfigReaders, launchedArguments, launchedSetupHint, pinnedOptions, readConfigSetups, versusLine, weighedByVersus, withLaunchedSetup } from '../../src/configs';
import type { ConfigFinding } from '../../src/configs/types';
import { impliedDataParallel } from '../../src/configs/setup';
import { analyzeSource, initFrontends } from '../../src/frontends';
import { planModel, resolveCluster } from '../../src/planner/index';
import type { PlanOptions } from '../../src/protocol/planOptions';
import { configCommand } from '../../src/cli/commands/config';
import { capture } from '../cli/helpers';
import { disk, root } from './helpers';

const PYTHON = '/usr/bin/python3';
const PROJECT = join(root, 'test/fixtures/deepspeed-launches');
const script = join(PROJECT, 'main.py');
const ASSUMED: PlanOptions = { batch: 128, batchAssumed: true, objective: 'throughput', strategies: 'dp', optimizer: 'adam' };

before(async () => {
  await initFrontends();
  await initConfigReaders();
});

function libraryRoots(): string[] {
  const r = spawnSync(PYTHON, ['-c', 'import json, sys; print(json.dumps(sys.path))'], { encoding: 'utf8' });
  return (JSON.parse(r.stdout) as string[]).filter(Boolean);
}

test('the options every launch passes alike are read; the one they differ on is named and left at its default', () => {
  assert.deepEqual(launchedArguments(script, disk), {
    words: ['-a', 'resnet50', '--deepspeed', '--multiprocessing_distributed', '/data/imagenet'],
    source: 'every launch of it (run_ds.sh, run_ds_fp16_z1.sh)',
    differing: ['--deepspeed_config'],
  });
});

test('the model read is the ResNet-50 both launches train: torch’s parameter count, and the note names the differing option', async () => {
  const args = launchedArguments(script, disk);
  assert.ok(args && 'words' in args);
  const r = await analyzeSource(script, readFileSync(script, 'utf8'), { scriptArguments: args }, { workspaceFolders: [PROJECT], libraryRoots: libraryRoots(), interpreter: PYTHON });
  const truth = spawnSync(PYTHON, ['-c', 'import torchvision; m = torchvision.models.resnet50(); print(sum(p.numel() for p in m.parameters()))'], { encoding: 'utf8' });
  assert.equal(r.models[0]?.totals.params, Number(truth.stdout.trim()));
  const note = [...r.diagnostics, ...r.models[0]!.diagnostics].find((d) => /parse_args/.test(d.message));
  assert.match(note?.message ?? '', /every launch of it \(run_ds\.sh, run_ds_fp16_z1\.sh\) gives \(-a resnet50 .*; the launches differ on --deepspeed_config, read at the script's defaults\): .*arch='resnet50'/);
});

test('launches that state different precisions are named beside the default the plan falls back to', async () => {
  const hint = launchedSetupHint(script, disk);
  assert.equal(hint.precision, undefined);
  assert.equal(hint.precisionUnsettled, 'the launches that train the model state different precisions (run_ds.sh fp32, run_ds_fp16_z1.sh fp16): pass --precision for the run you mean');
  const options = withLaunchedSetup(ASSUMED, hint);
  assert.deepEqual([options.batch, options.precision], [256, undefined]);
  const r = await analyzeSource(script, readFileSync(script, 'utf8'), { scriptArguments: launchedArguments(script, disk) }, { workspaceFolders: [PROJECT], libraryRoots: libraryRoots(), interpreter: PYTHON });
  const plan = planModel(r.models[0]!, resolveCluster('a100x8', {}), options);
  assert.ok(plan.feasible && plan.plan.setup);
  if (!plan.feasible) return;
  assert.equal(plan.plan.setup!.precision, 'bf16');
  assert.equal(plan.plan.setup!.precisionReason, `default: A100-SXM4-80GB has bf16 tensor cores; ${hint.precisionUnsettled}`);
  // Pinned by the user, the precision is theirs and nothing is said of the launches.
  const pinned = planModel(r.models[0]!, resolveCluster('a100x8', {}), { ...options, precision: 'fp16', precisionSource: '--precision' });
  assert.ok(pinned.feasible && pinned.plan.setup!.precisionReason === 'from --precision', JSON.stringify(pinned.feasible && pinned.plan.setup!.precisionReason));
});

test('wap config on the ZeRO-1 launch: the plan weighs ZeRO-1 against ZeRO-0 as well, agrees with the launch, and finds nothing to change', async () => {
  const launch = join(PROJECT, 'run_ds_fp16_z1.sh');
  const r = await capture(() => configCommand.run([launch, '--cluster', 'a100x8', '--python', PYTHON, '--json']));
  const report = JSON.parse(r.out) as { findings: Array<{ severity: string; code: string; message: string }>; yours: { stepTimeMs: number }; best: { stepTimeMs: number; setup: { zeroStage: number } } };
  // On one NVSwitch node the sharded optimizer step saves more than the after-step all-gather costs.
  assert.equal(report.best.setup.zeroStage, 1);
  assert.ok(Math.abs(report.yours.stepTimeMs - report.best.stepTimeMs) <= 1e-6 * report.best.stepTimeMs, `${report.yours.stepTimeMs} ms (yours) against ${report.best.stepTimeMs} ms`);
  assert.deepEqual(report.findings.filter((f) => f.code === 'setup-differs'), [], JSON.stringify(report.findings));
  assert.equal(r.code, 0, 'nothing left to fix');
});

test('a DeepSpeed JSON that writes all three batch keys runs on the one data-parallel count they imply: "your config" is planned there, and says why', async () => {
  const json = (steps: number) => `{\n  "train_batch_size": 256,\n  "train_micro_batch_size_per_gpu": 32,\n  "gradient_accumulation_steps": ${steps},\n  "zero_optimization": {"stage": 0}\n}\n`;
  const [one] = readConfigSetups('ds_config.json', json(1));
  const [two] = readConfigSetups('ds_config.json', json(2));
  assert.deepEqual([impliedDataParallel(one!), impliedDataParallel(two!)], [8, 4]);
  const options = pinnedOptions(ASSUMED, two!, 'ds_config.json');
  assert.deepEqual([options.gpus, options.batch], [4, 256]);
  // Without the accumulation key, DeepSpeed computes it from the ranks: nothing is implied.
  const [open] = readConfigSetups('ds_config.json', json(1).replace('  "gradient_accumulation_steps": 1,\n', ''));
  assert.equal(impliedDataParallel(open!), undefined);
  const run = { feasible: true, gpus: 4, stepTimeMs: 12, mfu: 0.19, memoryPerGpuBytes: 1e9, describe: '4 GPUs', warnings: [] };
  assert.match(versusLine(run, { ...run, gpus: 8, stepTimeMs: 6.3 }, two), /^your config \(4 data-parallel GPUs: 256 = 32 × 2 × 4\): 12\.0 ms\/step/);
});

test('a setup-differs finding whose setup WAP estimates at least as fast as the plan becomes information, its fix no longer preferred; a slower one stays a warning', () => {
  const range = { start: { line: 0, character: 0 }, end: { line: 0, character: 4 } };
  const finding = { format: 'deepspeed', severity: 'warning', code: 'setup-differs', message: 'trains with ZeRO 2; the plan uses ZeRO 1', range, fix: { title: 'use ZeRO 1', edits: [], preferred: true } } as unknown as ConfigFinding;
  const other = { ...finding, code: 'gpu-count' } as ConfigFinding;
  const run = (ms: number) => ({ feasible: true, gpus: 8, stepTimeMs: ms, describe: '8 GPUs', warnings: [] });
  const [weighed, untouched] = weighedByVersus([finding, other], run(20), run(21));
  assert.equal(weighed!.severity, 'info');
  assert.match(weighed!.message, /; WAP estimates your setup at least as fast \(20\.0 ms\/step against 21\.0 ms\/step\), so this is no reason to change it$/);
  assert.equal((weighed!.fix as { preferred?: boolean }).preferred, false);
  assert.equal(untouched, other);
  assert.deepEqual(weighedByVersus([finding], run(22), run(21)), [finding]);
});
