/**
 * Hydra projects read as Hydra runs them (frontends/python/hydraRuntime.ts): `@hydra.main` hands `main` the config
 * composed from its defaults list and the command line's overrides, `hydra.utils.instantiate` builds what `_target_`
 * names, and OmegaConf's `${…}` interpolations resolve. Real files: nanoGPT's model trained from a Hydra config, and a
 * project in lightning-hydra-template's shape. Parameter counts are real torch's, built at the sizes the run uses.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, test } from 'node:test';
import type { AnalyzeOptions, Diagnostic } from '../../src/core/ir';
import { analyzeSource, initFrontends } from '../../src/frontends';
import { NANOGPT, nanogptParams } from './nanogptTruth';

const LIGHTNING = join(__dirname, '..', 'fixtures', 'hydra-lightning');

before(async () => {
  await initFrontends();
});

const analyze = (file: string, root: string, options: AnalyzeOptions = {}, text = readFileSync(file, 'utf8')) => analyzeSource(file, text, options, { workspaceFolders: [root] });
const allDiagnostics = (r: { diagnostics: Diagnostic[]; models: Array<{ diagnostics?: Diagnostic[] }> }): Diagnostic[] => [...r.diagnostics, ...r.models.flatMap((m) => m.diagnostics ?? [])];
const run = (words: string): AnalyzeOptions => ({ scriptArguments: { words: words.split(' '), source: 'run.sh' } });

/** torch's parameter count of the fixture's SimpleDenseNet at these sizes, imported from the project as Hydra would. */
function denseNetParams(sizes: string): number {
  const code = `import sys; sys.path.insert(0, ${JSON.stringify(LIGHTNING)})\nfrom src.models.components.simple_dense_net import SimpleDenseNet\nprint(sum(p.numel() for p in SimpleDenseNet(${sizes}).parameters()))`;
  const r = spawnSync('/usr/bin/python3', ['-c', code], { encoding: 'utf8', timeout: 60_000 });
  assert.equal(r.status, 0, `/usr/bin/python3 needs torch (CI installs python3-torch): ${r.stderr}`);
  return Number(r.stdout.trim().split('\n').pop());
}

test('@hydra.main: main gets the composed config, a group default and an interpolated block size; the command line picks another group and overrides keys', async () => {
  const file = join(NANOGPT, 'hydra_train.py');
  const plain = await analyze(file, NANOGPT);
  assert.deepEqual(plain.models.map((m) => m.name), ['GPT'], 'the GPT main trains (at the composed sizes below), named by its class, not GPT at its defaults beside it');
  assert.equal(plain.models[0]!.totals.params, nanogptParams('n_layer=2, n_head=8, n_embd=512, block_size=128, bias=False'));
  const note = allDiagnostics(plain).find((d) => d.code === 'script-arguments');
  assert.match(note?.message ?? '', /Hydra composes from train\.yaml, model\/small\.yaml, as the script run with no arguments/);

  const overridden = await analyze(file, NANOGPT, run('model=gpt2 model.n_layer=4 data.block_size=256'));
  assert.equal(overridden.models[0]!.totals.params, nanogptParams('n_layer=4, n_head=12, n_embd=768, block_size=256, bias=True'));
  assert.match(allDiagnostics(overridden).find((d) => d.code === 'script-arguments')?.message ?? '', /model\/gpt2\.yaml, with the arguments run\.sh gives \(model=gpt2 model\.n_layer=4 data\.block_size=256\)/);
});

test('a config group option that is not there is said, never a silent default model', async () => {
  const r = await analyze(join(NANOGPT, 'hydra_train.py'), NANOGPT, run('model=nope'));
  const said = allDiagnostics(r).find((d) => d.code === 'hydra-config');
  assert.ok(said, JSON.stringify(allDiagnostics(r).map((d) => d.message)));
  assert.match(said.message, /could not be composed \(.*model\/nope\.yaml/);
  // GPTConfig(**cfg.model) of the unknown config: the model that results says it was read without those arguments.
  assert.ok(allDiagnostics(r).some((d) => d.code === 'unread-arguments'), JSON.stringify(allDiagnostics(r).map((d) => d.code)));
});

test('lightning-hydra-template: instantiate builds the LightningModule and its net from _target_, trainer.fit trains it, run.sh’s override counts', async () => {
  const file = join(LIGHTNING, 'src', 'train.py');
  const asConfigured = await analyze(file, LIGHTNING);
  assert.deepEqual(asConfigured.models.map((m) => m.name), ['MNISTLitModule']);
  assert.equal(asConfigured.models[0]!.totals.params, denseNetParams('784, 64, 128, 64, 10'));
  const launched = await analyze(file, LIGHTNING, run('model.net.lin1_size=128 trainer.max_epochs=20'));
  assert.equal(launched.models[0]!.totals.params, denseNetParams('784, 128, 128, 64, 10'));
  assert.match(allDiagnostics(launched).find((d) => d.code === 'script-arguments')?.message ?? '', /composes from train\.yaml, data\/mnist\.yaml, model\/mnist\.yaml, paths\/default\.yaml, trainer\/default\.yaml/);
  // The template's experiment: a @package _global_ file whose `override /model: mnist` and net sizes win; its
  // git-ignored `optional local: default` is skipped without a word, as Hydra skips it.
  const experiment = await analyze(file, LIGHTNING, run('experiment=example'));
  assert.equal(experiment.models[0]!.totals.params, denseNetParams('784, 128, 256, 64, 10'));
  assert.deepEqual(allDiagnostics(experiment).filter((d) => d.code === 'hydra-config').map((d) => d.message), []);
});

test('a _target_ that cannot be imported names itself and what to do, so "no model" says why', async () => {
  // Opened from src/ alone, `src.models…` is not importable: Hydra would need the project root on sys.path too.
  const r = await analyze(join(LIGHTNING, 'src', 'train.py'), join(LIGHTNING, 'src'));
  assert.equal(r.models.length, 0);
  const said = allDiagnostics(r).find((d) => d.code === 'hydra-target');
  assert.ok(said, JSON.stringify(allDiagnostics(r).map((d) => d.message)));
  assert.match(said.message, /_target_ src\.\w+\.\S+ could not be imported .*open the project root as the workspace folder/);
});

test('OmegaConf.load resolves interpolations; a plain training loop’s optimizer says which model main trains', async () => {
  const file = join(NANOGPT, 'omega_loop.py');
  const text = [
    'import torch',
    'from torch import nn',
    'from omegaconf import OmegaConf',
    '',
    'def main():',
    '    cfg = OmegaConf.load("conf/train.yaml")',
    '    model = nn.Sequential(nn.Embedding(50304, 64), nn.Linear(64, cfg.model.block_size))',
    '    opt = torch.optim.AdamW([{"params": model.parameters(), "weight_decay": 0.1}], lr=cfg.lr)',
    '',
    'if __name__ == "__main__":',
    '    main()',
    '',
  ].join('\n');
  const r = await analyze(file, NANOGPT, {}, text);
  assert.deepEqual(r.models.map((m) => m.name), ['main'], JSON.stringify(r.diagnostics.map((d) => d.message)));
  // ${data.block_size} in conf/train.yaml is 128: the head's out features.
  assert.equal(r.models[0]!.totals.params, 50304 * 64 + 64 * 128 + 128);
});

test('the precision the trainer is built with, as the run computes it: Lightning’s default 32-true, a Hydra override, TrainingArguments from argparse', async () => {
  const file = join(LIGHTNING, 'src', 'train.py');
  const asConfigured = (await analyze(file, LIGHTNING)).models[0]!;
  assert.deepEqual([asConfigured.runPrecision?.precision, asConfigured.runPrecision?.holding], ['fp32', undefined]);
  assert.match(asConfigured.runPrecision!.source, /^train\.py:17 \(a Lightning Trainer without precision= trains in "32-true"\)$/);
  const bf16 = (await analyze(file, LIGHTNING, run('trainer.precision=bf16-mixed'))).models[0]!;
  assert.deepEqual([bf16.runPrecision?.precision, bf16.runPrecision?.holding], ['bf16', 'autocast']);
  const pure = (await analyze(file, LIGHTNING, run('+trainer.precision=16-true'))).models[0]!;
  assert.deepEqual([pure.runPrecision?.precision, pure.runPrecision?.holding], ['fp16', 'pure']);

  const script = join(NANOGPT, 'hf_args.py');
  const text = [
    'import argparse',
    'import torch',
    'from transformers import Trainer, TrainingArguments',
    'from model import GPT, GPTConfig',
    '',
    'parser = argparse.ArgumentParser()',
    'parser.add_argument("--bf16", action="store_true")',
    'parser.add_argument("--deepspeed", default=None)',
    'args = parser.parse_args()',
    'model = GPT(GPTConfig(n_layer=2, n_head=8, n_embd=512, block_size=128, bias=False))',
    'training_args = TrainingArguments(output_dir="out", bf16=args.bf16, deepspeed=args.deepspeed, per_device_train_batch_size=4)',
    'Trainer(model=model, args=training_args).train()',
    '',
  ].join('\n');
  const at = async (words: string) => (await analyze(script, NANOGPT, words ? run(words) : {}, text)).models.find((m) => m.name === 'model')!.runPrecision;
  assert.deepEqual(await at(''), { precision: 'fp32', source: 'hf_args.py:11 (TrainingArguments(…) sets neither bf16 nor fp16)' });
  assert.deepEqual(await at('--bf16'), { precision: 'bf16', holding: 'autocast', source: 'hf_args.py:11 (TrainingArguments(bf16=True))' });
  assert.equal((await at('--bf16 --deepspeed ds.json'))?.holding, 'master-weights', 'DeepSpeed keeps fp32 master weights');
});

test('structured configs: ConfigStore dataclasses compose like YAML files, a stored group added from the command line', async () => {
  const file = join(NANOGPT, 'hydra_structured.py');
  const plain = await analyze(file, NANOGPT);
  assert.equal(plain.models[0]!.totals.params, nanogptParams('n_layer=2, n_head=8, n_embd=512, block_size=128, bias=False'));
  assert.match(allDiagnostics(plain).find((d) => d.code === 'script-arguments')?.message ?? '', /composes from train \(ConfigStore\), as the script run with no arguments/);
  const wide = await analyze(file, NANOGPT, run('+model=wide model.n_layer=3'));
  assert.equal(wide.models[0]!.totals.params, nanogptParams('n_layer=3, n_head=12, n_embd=768, block_size=128, bias=False'));
  assert.match(allDiagnostics(wide).find((d) => d.code === 'script-arguments')?.message ?? '', /train \(ConfigStore\), model\/wide \(ConfigStore\), with the arguments run\.sh gives/);
});
