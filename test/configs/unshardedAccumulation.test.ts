/**
 * Whether a config's framework accumulates FSDP's gradients unsharded (no_sync) or reduce-scatters every micro-step,
 * read where the framework decides it (configs/unshardedAccumulation.ts): accelerate's FSDP1 plugin and the HF
 * Trainer's `--fsdp` pause the sync, `sync_each_batch` and FSDP2 under accelerate do not, Lightning and torchtitan
 * never do, and a plain script does where it calls `no_sync()` / `set_requires_gradient_sync(False)`. Carried into the
 * plan options by the path the framework's other timings take, and priced: the plan says which way and why.
 */
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { initConfigReaders, readConfigSetups, withStatedFramework } from '../../src/configs';
import { frameworkHint, withFrameworkFrom } from '../../src/configs/frameworkHint';
import { withNamedFramework } from '../../src/configs/namedFramework';
import { syncEachBatchIn, trainerFsdpVersionIn } from '../../src/configs/unshardedAccumulation';
import { planModel, resolveCluster } from '../../src/planner/index';
import type { PlanOptions } from '../../src/protocol/planOptions';
import { gptModel } from '../planner/gptSpec';

before(() => initConfigReaders());

const BASE: PlanOptions = { batch: 64, objective: 'throughput', strategies: 'all', optimizer: 'adam', precision: 'bf16' };
const read = (file: string, text = readFileSync(file, 'utf8')) => readConfigSetups(file, text)[0]!;
const ACCELERATE_FSDP = 'examples/configs/accelerate_fsdp.yaml';
/** The Trainer launched as the brief's run: FULL_SHARD, 8 accumulation steps, on 8 GPUs. */
const trainerLaunch = (extra = ''): string => `torchrun --nproc_per_node 8 train.py --fsdp "full_shard auto_wrap" --gradient_accumulation_steps 8 --per_device_train_batch_size 1 --bf16 ${extra}--output_dir out\n`;

test('accelerate with FSDP1 (examples/configs/accelerate_fsdp.yaml, FULL_SHARD): ZeRO-2/3 accumulate unsharded; fsdp_version 2 reduces every micro-step', () => {
  const fsdp1 = read(ACCELERATE_FSDP);
  assert.equal(fsdp1.zeroStage?.value, 3);
  assert.deepEqual(fsdp1.unshardedAccumulation?.stages, [2, 3]);
  assert.match(fsdp1.unshardedAccumulation!.why, /FSDP1.*no_sync/);
  const text = readFileSync(ACCELERATE_FSDP, 'utf8').replace('fsdp_config:\n', 'fsdp_config:\n  fsdp_version: 2\n');
  const fsdp2 = read('accelerate_fsdp2.yaml', text);
  assert.deepEqual(fsdp2.unshardedAccumulation?.stages, []);
  assert.match(fsdp2.unshardedAccumulation!.why, /FSDP2.*lack/);
  // Carried into the options with the config named as the source.
  const options = withStatedFramework(BASE, fsdp1, ACCELERATE_FSDP);
  assert.deepEqual(options.unshardedAccumulationStages, [2, 3]);
  assert.match(options.unshardedAccumulationSource!, /^examples\/configs\/accelerate_fsdp\.yaml \(accelerate's accumulate\(\)/);
});

test('the HF Trainer with --fsdp full_shard and 8 accumulation steps accumulates unsharded; sync_each_batch and FSDP2 turn it off', () => {
  const trainer = read('run.sh', trainerLaunch());
  assert.deepEqual([trainer.zeroStage?.value, trainer.gradientAccumulation?.value], [3, 8]);
  assert.deepEqual(trainer.unshardedAccumulation?.stages, [2, 3]);
  // The FSDP version is transformers' default here: said, as 5.x's FSDP2 would reduce each micro-step.
  assert.match(trainer.unshardedAccumulation!.why, /states no version: transformers 4\.x runs FSDP1, 5\.x FSDP2/);
  const synced = read('run.sh', trainerLaunch(`--accelerator_config '{"gradient_accumulation_kwargs": {"sync_each_batch": true}}' `));
  assert.deepEqual(synced.unshardedAccumulation?.stages, []);
  assert.match(synced.unshardedAccumulation!.why, /sync_each_batch/);
  const fsdp2 = read('run.sh', trainerLaunch(`--fsdp_config '{"version": 2}' `));
  assert.deepEqual(fsdp2.unshardedAccumulation?.stages, []);
  // In code: TrainingArguments(fsdp=…, accelerator_config={…}) reads the same way.
  const inCode = (extra: string) => `from transformers import Trainer, TrainingArguments\nargs = TrainingArguments(output_dir="out", fsdp="full_shard auto_wrap", gradient_accumulation_steps=8${extra})\ntrainer = Trainer(model=model, args=args)\ntrainer.train()\n`;
  assert.deepEqual(read('train.py', inCode('')).unshardedAccumulation?.stages, [2, 3]);
  assert.deepEqual(read('train.py', inCode(', accelerator_config={"gradient_accumulation_kwargs": {"sync_each_batch": True}}')).unshardedAccumulation?.stages, []);
  // DeepSpeed under the Trainer never enters no_sync (trainer.py: "except DeepSpeed"): nothing unsharded to say.
  assert.equal(read('run.sh', `torchrun --nproc_per_node 8 train.py --deepspeed ds.json --gradient_accumulation_steps 8 --output_dir out\n`).unshardedAccumulation, undefined);
});

test('the text readers: sync_each_batch as JSON, YAML, Python and an escaped shell string; the Trainer\'s fsdp_config version only beside fsdp_config', () => {
  assert.equal(syncEachBatchIn('{"gradient_accumulation_kwargs": {"sync_each_batch": true}}'), true);
  assert.equal(syncEachBatchIn('accelerator_config:\n  gradient_accumulation_kwargs:\n    sync_each_batch: false\n'), false);
  assert.equal(syncEachBatchIn('GradientAccumulationPlugin(num_steps=8, sync_each_batch=True)'), true);
  assert.equal(syncEachBatchIn('--accelerator_config "{\\"gradient_accumulation_kwargs\\": {\\"sync_each_batch\\": true}}"'), true);
  assert.equal(syncEachBatchIn('gradient_accumulation_steps: 8'), undefined);
  assert.equal(trainerFsdpVersionIn('fsdp_config:\n  version: 2\n'), 2);
  assert.equal(trainerFsdpVersionIn('--fsdp_config \'{"fsdp_version": 1}\''), 1);
  assert.equal(trainerFsdpVersionIn('transformers_version: 2'), undefined, 'no fsdp_config named');
  assert.equal(trainerFsdpVersionIn('fsdp_config: {}\ntransformers_version: 2\n'), undefined, 'another key that ends in version');
});

test('Lightning\'s FSDPStrategy and torchtitan reduce every micro-batch; a plain FSDP script does so unless it pauses the sync', () => {
  // Lightning's Trainer pauses only DDP's sync for accumulate_grad_batches (block_backward_sync).
  const lightning = read('train.py', 'import lightning as L\nfrom lightning.pytorch.strategies import FSDPStrategy\ntrainer = L.Trainer(devices=8, strategy=FSDPStrategy(sharding_strategy="FULL_SHARD"), accumulate_grad_batches=8)\ntrainer.fit(model)\n');
  assert.deepEqual(lightning.unshardedAccumulation?.stages, []);
  assert.match(lightning.unshardedAccumulation!.why, /Lightning/);
  assert.deepEqual(read('test/configs/data/llama/llama3_8b.toml').unshardedAccumulation?.stages, []);

  // pytorch/examples' FSDP2 script (fully_shard per block) never calls set_requires_gradient_sync.
  const FSDP2 = 'test/fixtures/pytorch-examples/distributed/FSDP2/example.py';
  const plain = read(FSDP2);
  assert.deepEqual(plain.unshardedAccumulation?.stages, []);
  assert.match(plain.unshardedAccumulation!.why, /never calls set_requires_gradient_sync\(False\)/);
  // The same loop accumulating over 8 micro-batches with the sync paused on all but the last.
  const accumulating = readFileSync(FSDP2, 'utf8').replace(
    '        loss = model(x).sum()\n        loss.backward()\n',
    '        for micro in range(8):\n            model.set_requires_gradient_sync(micro == 7)\n            loss = model(x).sum()\n            loss.backward()\n',
  );
  assert.notEqual(accumulating, readFileSync(FSDP2, 'utf8'), 'the loop was rewritten');
  const paused = read(FSDP2, accumulating);
  assert.deepEqual(paused.unshardedAccumulation?.stages, [2, 3]);
  assert.match(paused.unshardedAccumulation!.why, /^line 3\d calls set_requires_gradient_sync\(False\)/);

  // FSDP1: no_sync() as torch's docstring shows it, on every micro-step but the last.
  const fsdp1 = (loop: string) => `import torch\nfrom torch.distributed.fsdp import FullyShardedDataParallel as FSDP\nmodel = FSDP(Net())\nopt = torch.optim.AdamW(model.parameters())\nfor step, batch in enumerate(loader):\n${loop}`;
  const withNoSync = fsdp1('    if (step + 1) % 8 != 0:\n        with model.no_sync():\n            model(batch).sum().backward()\n    else:\n        model(batch).sum().backward()\n        opt.step()\n');
  assert.deepEqual(read('train.py', withNoSync).unshardedAccumulation?.stages, [2, 3]);
  assert.deepEqual(read('train.py', fsdp1('    model(batch).sum().backward()\n    opt.step()\n')).unshardedAccumulation?.stages, []);
});

test('beside a model: the accelerate config is the hint; --framework fsdp defaults to the Trainer\'s and accelerate\'s no_sync, DeepSpeed to reducing every micro-step', () => {
  const hint = frameworkHint([{ name: 'fsdp.yaml', text: readFileSync(ACCELERATE_FSDP, 'utf8') }]);
  assert.deepEqual(hint?.unshardedAccumulation?.stages, [2, 3]);
  const options = withFrameworkFrom(BASE, hint);
  assert.deepEqual(options.unshardedAccumulationStages, [2, 3]);
  // An explicit option wins over the file.
  assert.deepEqual(withFrameworkFrom({ ...BASE, unshardedAccumulationStages: [] }, hint).unshardedAccumulationStages, []);
  // The Trainer without fsdp or deepspeed names no framework, but its ZeRO-2/3 would be FSDP under no_sync: the one
  // hint beside the model that says so, unless a file that names a framework is there too.
  const trainerScript = { name: 'train.py', text: 'from transformers import Trainer, TrainingArguments\nargs = TrainingArguments(output_dir="out", gradient_accumulation_steps=8)\nTrainer(model=model, args=args).train()\n' };
  assert.deepEqual(frameworkHint([trainerScript])?.unshardedAccumulation?.stages, [2, 3]);
  assert.equal(frameworkHint([trainerScript])?.weightGather, undefined);
  const beside = frameworkHint([trainerScript, { name: 'torchtitan.toml', text: readFileSync('test/configs/data/llama/llama3_8b.toml', 'utf8') }], 'train.py');
  assert.deepEqual([beside?.file, beside?.unshardedAccumulation?.stages], ['torchtitan.toml', []]);
  const named = withNamedFramework(BASE, 'fsdp', '--framework');
  assert.deepEqual(named.unshardedAccumulationStages, [2, 3]);
  assert.match(named.unshardedAccumulationSource!, /^--framework \(FSDP as the HF Trainer and accelerate/);
  assert.deepEqual(withNamedFramework(BASE, 'deepspeed', '--framework').unshardedAccumulationStages, []);
});

test('priced: the Trainer launch plans its FSDP accumulation unsharded and says so; with sync_each_batch every micro-step reduces, in less memory and more time', () => {
  const model = gptModel({ layers: 8, hidden: 1024, heads: 16, seq: 512 });
  const cluster = resolveCluster('a100x8', {});
  const planAs = (text: string) => {
    const options = withStatedFramework({ ...BASE, gpus: 8, pins: { zeroStage: 3, dataParallel: 8, tensorParallel: 1, pipelineStages: 1, contextParallel: 1, microBatch: 1 } }, read('run.sh', text), 'run.sh');
    const out = planModel(model, cluster, options);
    assert.ok(out.feasible, out.feasible ? '' : out.reason);
    return out;
  };
  const noSync = planAs(trainerLaunch());
  const synced = planAs(trainerLaunch(`--accelerator_config '{"gradient_accumulation_kwargs": {"sync_each_batch": true}}' `));
  assert.equal(noSync.plan.setup!.gradientAccumulation, 8);
  assert.equal(noSync.plan.setup!.gradientAccumulationSync, 'unsharded');
  assert.match(noSync.plan.setup!.gradientAccumulationSyncReason!, /^run\.sh \(the Trainer's accumulation with FSDP1/);
  assert.equal(synced.plan.setup!.gradientAccumulationSync, 'every-micro-step');
  assert.match(synced.plan.setup!.gradientAccumulationSyncReason!, /sync_each_batch/);
  // The full gradients are 8× the shard; the step saves the 7 earlier reduce-scatters.
  assert.equal(noSync.plan.setup!.memoryPerGpu.gradients, 8 * synced.plan.setup!.memoryPerGpu.gradients);
  assert.ok(noSync.plan.stepTimeMs < synced.plan.stepTimeMs, `${noSync.plan.stepTimeMs} vs ${synced.plan.stepTimeMs} ms`);
  assert.ok(noSync.diagnostics.some((d) => /gradients accumulated unsharded over the 8 micro-steps/.test(d.message)));
});
