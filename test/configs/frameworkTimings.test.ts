/**
 * The framework a config trains with decides when ZeRO-1/2 gather the updated weights: FSDP (any form: Accelerate's
 * plugin, a script's FullyShardedDataParallel or fully_shard, torchtitan) and Megatron's --overlap-param-gather in the
 * next forward; Megatron's distributed optimizer without that flag after its step; DeepSpeed says nothing (the
 * planner's default is its way). Read from real files, carried into "your config"'s options, found beside a model for
 * its own plan, and written back by the Megatron export.
 */
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { exportPlan, initConfigReaders, pinnedOptions, readConfigSetups, withStatedFramework } from '../../src/configs';
import { frameworkHint, withFrameworkFrom } from '../../src/configs/frameworkHint';
import { planModel, resolveCluster } from '../../src/planner/index';
import type { PlanOptions } from '../../src/protocol/planOptions';
import type { ZeroStage } from '../../src/protocol/plan';
import { gptModel } from '../planner/gptSpec';

before(() => initConfigReaders());

const MEGATRON = 'test/fixtures/megatron-llama/train_llama3_8b_h100_fp8.sh';
const read = (file: string, text = readFileSync(file, 'utf8')) => readConfigSetups(file, text)[0];
const BASE: PlanOptions = { batch: 128, objective: 'throughput', strategies: 'all', optimizer: 'adam' };

test('each framework’s gather, read from real configs', () => {
  const megatron = read(MEGATRON)!;
  assert.equal(megatron.zeroStage?.value, 1);
  assert.deepEqual(megatron.weightGather?.inForward, [1]);
  assert.match(megatron.weightGather!.why, /--overlap-param-gather/);
  // The same launch without the flag: the distributed optimizer gathers after its step.
  const plain = read(MEGATRON, readFileSync(MEGATRON, 'utf8').replace(/^\s*--overlap-param-gather\n/m, ''))!;
  assert.deepEqual(plain.weightGather?.inForward, []);
  // No distributed optimizer (pretrain_llama.sh): ZeRO-0, no gather to time.
  assert.equal(read('test/configs/data/llama/pretrain_llama.sh')!.weightGather, undefined);

  for (const file of ['test/configs/data/llama/accelerate_fsdp.yaml', 'test/fixtures/fsdp-dataclass/T5_training.py', 'test/fixtures/pytorch-examples/distributed/FSDP2/example.py', 'test/configs/data/llama/llama3_8b.toml']) {
    // FSDP gathers SHARD_GRAD_OP in the forward; it has no ZeRO-1 of its own.
    assert.deepEqual(read(file)?.weightGather?.inForward, [2], file);
  }
  // DeepSpeed gathers after the step, the planner's default: nothing to say of that. Its gradient sync hides behind
  // nothing without ZeRO and at ZeRO-1, nor at ZeRO-2 unless overlap_comm says so.
  const dsText = readFileSync('test/configs/data/llama/ds_config.json', 'utf8');
  const ds = read('test/configs/data/llama/ds_config.json', dsText)!;
  assert.deepEqual(ds.weightGather, { inForward: [], why: 'DeepSpeed gathers the updated weights inside its optimizer step' });
  assert.deepEqual(ds.serialSync?.stages, [0, 1, 2]);
  const overlap = (on: boolean) => dsText.replace('"stage": 0', `"stage": 0, "overlap_comm": ${on}`);
  assert.deepEqual(read('ds_config.json', overlap(true))!.serialSync?.stages, [0, 1]);
  assert.deepEqual(read('ds_config.json', overlap(false))!.serialSync?.stages, [0, 1, 2, 3]);
  // Accelerate's DeepSpeed plugin writes no overlap_comm: DeepSpeed's default.
  assert.deepEqual(read('accelerate.yaml', 'distributed_type: DEEPSPEED\ndeepspeed_config:\n  zero_stage: 2\nnum_processes: 8\n')!.serialSync?.stages, [0, 1, 2]);
  // FSDP syncs beside the backward, and Megatron with --overlap-grad-reduce, as its own Llama 3 launch passes it.
  assert.equal(read('test/configs/data/llama/accelerate_fsdp.yaml')!.serialSync, undefined);
  assert.deepEqual(read(MEGATRON)!.serialSync?.stages, []);
  // Without the flag (off by default in Megatron Core) the gradients are reduced after the backward, at any stage.
  const noOverlap = read(MEGATRON, readFileSync(MEGATRON, 'utf8').replace(/^\s*--overlap-grad-reduce\n/m, ''))!;
  assert.deepEqual(noOverlap.serialSync?.stages, [0, 1, 2, 3]);
  assert.match(noOverlap.serialSync!.why, /without --overlap-grad-reduce/);
  assert.deepEqual(read('test/configs/data/llama/pretrain_llama.sh')!.serialSync?.stages, [0, 1, 2, 3]);
});

test('“your config” is planned on its framework, and the best plan too unless a flag says otherwise', () => {
  const megatron = read(MEGATRON)!;
  const yours = pinnedOptions(BASE, megatron, 'train.sh');
  assert.deepEqual(yours.forwardGatherStages, [1]);
  assert.match(yours.forwardGatherSource!, /^train\.sh \(--overlap-param-gather/);
  assert.deepEqual(withStatedFramework(BASE, megatron, 'train.sh', true).forwardGatherStages, [1]);
  // A flag's word wins for the best plan.
  assert.deepEqual(withStatedFramework({ ...BASE, forwardGatherStages: [] }, megatron, 'train.sh', true).forwardGatherStages, []);
  const ds = pinnedOptions(BASE, read('test/configs/data/llama/ds_config.json')!, 'ds.json');
  assert.deepEqual([ds.forwardGatherStages, ds.forwardGatherSource], [[], 'ds.json (DeepSpeed gathers the updated weights inside its optimizer step)']);
  assert.deepEqual(ds.serialSyncStages, [0, 1, 2]);
  assert.match(ds.serialSyncSource!, /^ds\.json \(DeepSpeed: without ZeRO and at ZeRO-1 gradients are reduced after the backward/);
  // An FSDP config compared beside a model whose folder holds a DeepSpeed config: FSDP's sync, not DeepSpeed's.
  const fsdp = read('test/configs/data/llama/accelerate_fsdp.yaml')!;
  const fromFolder = { ...BASE, serialSyncStages: [0, 1, 2] as ZeroStage[], serialSyncSource: 'ds_config.json (DeepSpeed …)' };
  const onFsdp = withStatedFramework(fromFolder, fsdp, 'fsdp.yaml');
  assert.deepEqual([onFsdp.serialSyncStages, onFsdp.serialSyncSource], [[], 'fsdp.yaml (gradients reduced beside the backward)']);
});

test('a model’s own plan takes the framework from the configs beside it: the model’s file first, then the others', () => {
  const fsdp = { name: 'fsdp.yaml', text: readFileSync('test/configs/data/llama/accelerate_fsdp.yaml', 'utf8') };
  const ds = { name: 'ds_config.json', text: readFileSync('test/configs/data/llama/ds_config.json', 'utf8') };
  const megatron = { name: 'train.sh', text: readFileSync(MEGATRON, 'utf8').replace(/^\s*--overlap-param-gather\n/m, '') };
  // A DeepSpeed config names DeepSpeed: its gather is the default, its gradient sync serial below ZeRO-3.
  const deepspeed = frameworkHint([ds], 'model.py')!;
  assert.deepEqual([deepspeed.weightGather?.inForward, deepspeed.serialSync?.stages, deepspeed.file], [[], [0, 1, 2], 'ds_config.json']);
  const hint = frameworkHint([fsdp, ds], 'model.py')!;
  assert.deepEqual(hint.weightGather!.inForward, [2]);
  assert.equal(hint.serialSync, undefined);
  assert.equal(hint.file, 'fsdp.yaml');
  assert.deepEqual(frameworkHint([fsdp, megatron], 'train.sh')!.weightGather!.inForward, []);
  const options = withFrameworkFrom(BASE, hint);
  assert.deepEqual(options.forwardGatherStages, [2]);
  assert.match(options.forwardGatherSource!, /^fsdp\.yaml \(FSDP: SHARD_GRAD_OP gathers/);
  assert.deepEqual(withFrameworkFrom({ ...BASE, forwardGatherStages: [] }, hint).forwardGatherStages, []);
});

test('a DeepSpeed JSON that the script’s own in-code config supersedes says nothing of its run, as for the precision hint; one a launch names does', () => {
  const script = { name: 'train.py', text: 'import deepspeed\nds_config = {"train_batch_size": 64, "zero_optimization": {"stage": 2, "overlap_comm": True}}\nengine, *_ = deepspeed.initialize(model=model, config=ds_config)\n' };
  const json = { name: 'ds_config.json', text: readFileSync('test/configs/data/llama/ds_config.json', 'utf8') };
  assert.equal(frameworkHint([script, json], 'train.py'), undefined);
  const launch = { name: 'run.sh', text: 'deepspeed train.py --deepspeed_config ds_config.json\n' };
  assert.deepEqual(frameworkHint([script, json, launch], 'train.py')?.file, 'ds_config.json');
  // Without the in-code config the JSON beside the model is the one it trains with.
  assert.equal(frameworkHint([{ name: 'train.py', text: 'import torch\n' }, json], 'train.py')?.file, 'ds_config.json');
});

test('Megatron export: a ZeRO-1 plan priced with the gather in the next forward writes the flags that put it there; any data-parallel plan priced with its sync beside the backward writes --overlap-grad-reduce', () => {
  const model = gptModel({ layers: 8, hidden: 2048, heads: 16, seq: 512 });
  const planned = (inForward?: boolean) => {
    const out = planModel(model, resolveCluster('h100x16-2node', {}), { ...BASE, batch: 64, precision: 'bf16', gpus: 16, pins: { dataParallel: 16, tensorParallel: 1, pipelineStages: 1, zeroStage: 1, microBatch: 2 }, ...(inForward ? { forwardGatherStages: [1 as const] } : {}) });
    assert.ok(out.feasible, out.feasible ? '' : out.reason);
    return out;
  };
  const overlapped = exportPlan(planned(true), 'megatron');
  assert.match(overlapped.content, /^ {2}--overlap-grad-reduce$/m);
  assert.match(overlapped.content, /^ {2}--overlap-param-gather$/m);
  assert.doesNotMatch(overlapped.description, /expect the step/);
  // Read back, the export runs the plan's framework.
  assert.deepEqual(readConfigSetups(overlapped.fileName, overlapped.content)[0]?.weightGather?.inForward, [1]);
  const exposed = exportPlan(planned(), 'megatron');
  assert.doesNotMatch(exposed.content, /^ {2}--overlap-param-gather$/m);
  assert.match(exposed.description, /plan with --weight-gather next-forward/);
  // Its gradients were still priced beside the backward: --overlap-grad-reduce, or Megatron would reduce them after it.
  assert.match(exposed.content, /^ {2}--overlap-grad-reduce$/m);
  assert.deepEqual(readConfigSetups(exposed.fileName, exposed.content)[0]?.serialSync?.stages, []);
});

test('Lightning’s DeepSpeedStrategy overlaps ZeRO-2’s reduction by default (overlap_comm=True), so only ZeRO-0/1 sync after the backward; overlap_comm=False adds ZeRO-2 and -3', () => {
  const script = (strategy: string) => `import lightning as L\nfrom lightning.pytorch.strategies import DeepSpeedStrategy\ntrainer = L.Trainer(accelerator="gpu", devices=8, strategy=${strategy}, precision="bf16-mixed")\ntrainer.fit(model)\n`;
  const named = readConfigSetups('train.py', script('"deepspeed_stage_2"')).find((s) => s.label.startsWith('Lightning'));
  assert.deepEqual(named?.serialSync?.stages, [0, 1]);
  assert.match(named!.serialSync!.why, /^Lightning's DeepSpeedStrategy \(overlap_comm on, its default\)/);
  const off = readConfigSetups('train.py', script('DeepSpeedStrategy(stage=2, overlap_comm=False)')).find((s) => s.label.startsWith('Lightning'));
  assert.deepEqual(off?.serialSync?.stages, [0, 1, 2, 3]);
  // Lightning's own DDP and FSDP sync beside the backward.
  assert.equal(readConfigSetups('train.py', script('"ddp"')).find((s) => s.label.startsWith('Lightning'))?.serialSync, undefined);
});
