/**
 * Hugging Face Trainer arguments on a launch command line (configs/trainerArgv.ts), as HfArgumentParser reads
 * them: each flag and transformers' defaults, shell variables left to the run, the GPUs from torchrun, deepspeed
 * and accelerate launch, the quick-fix's exact word edits (across `\` continuations), `--deepspeed ds.json` and
 * `--deepspeed_config ds.json` read with the JSON on disk, and half-typed commands.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { applyTextEdits, checkConfig, detectConfigFormats, fixAll, initConfigReaders, pinnedOptions, readConfigSetups } from '../../src/configs';
import { disk } from './helpers';
import { llamaPlan } from './llamaPlan';

before(() => initConfigReaders());

const setupOf = (text: string, file = 'run.sh') => {
  assert.ok(detectConfigFormats(file, text).includes('hf-trainer-args'), text);
  return readConfigSetups(file, text)[0]!;
};
/** One torchrun line on 8 GPUs with these script arguments. */
const torchrun = (args: string): string => `torchrun --nproc_per_node 8 train.py ${args} --output_dir out\n`;

test('each flag as HfArgumentParser reads it, and transformers’ defaults: micro-batch 8, accumulation 1, fp32, no FSDP, no checkpointing', () => {
  const d = setupOf(torchrun('--gradient_accumulation_steps 2'));
  assert.deepEqual(
    [d.label, d.precision?.value, d.precision?.stated, d.zeroStage?.value, d.hybridShard?.value, d.recompute?.value, d.microBatch?.value, d.microBatch?.stated, d.gradientAccumulation?.value],
    ['Hugging Face Trainer command line', 'fp32', false, 0, false, 'none', 8, false, 2],
  );
  assert.match(d.inexpressible.tensorParallel!, /no tensor, pipeline or context parallel degree/);
  // A bool alone is True (nargs="?", const=True); with a word, string_to_bool's words.
  for (const on of ['--bf16', '--bf16 True', '--bf16=true', '--bf16 1', '--bf16 yes']) assert.equal(setupOf(torchrun(`${on} --fsdp full_shard`)).precision?.value, 'bf16', on);
  for (const off of ['--bf16 False', '--bf16=0', '--bf16 no']) assert.equal(setupOf(torchrun(`${off} --fsdp full_shard`)).precision?.value, 'fp32', off);
  assert.equal(setupOf(torchrun('--fp16 --fsdp full_shard')).precision?.value, 'fp16');
  assert.equal(setupOf(torchrun('--tf32 True --fsdp full_shard')).precision?.value, 'tf32');
  // tf32 is Optional[bool] with no default: argparse wants its value, so a bare --tf32 says nothing.
  assert.equal(setupOf(torchrun('--tf32 --fsdp full_shard')).precision, undefined);
  // Both spellings, the last of a repeated option, and the value's own characters as the range.
  const text = torchrun('--per-device-train-batch-size=4 --gradient-accumulation-steps 8 --per_device_train_batch_size 2');
  const s = setupOf(text);
  assert.deepEqual([s.microBatch?.value, s.gradientAccumulation?.value], [2, 8]);
  assert.equal(text.slice(s.microBatch!.range.start, s.microBatch!.range.end), '2');
  // FSDP's words, quoted or not; its offload is parameter offload.
  const words = (fsdp: string) => {
    const f = setupOf(torchrun(`--fsdp ${fsdp}`));
    return [f.zeroStage?.value, f.hybridShard?.value, f.cpuOffload?.value, f.paramOffload?.value, f.zeroStage?.stated];
  };
  assert.deepEqual(words('"full_shard auto_wrap"'), [3, false, false, false, true]);
  assert.deepEqual(words("'hybrid_shard offload auto_wrap'"), [3, true, true, true, true]);
  assert.deepEqual(words('shard_grad_op'), [2, false, false, false, true]);
  assert.deepEqual(words('""'), [0, false, false, false, true]);
  assert.deepEqual([setupOf(torchrun('--fsdp full_shard --gradient_checkpointing')).recompute?.value, setupOf(torchrun('--fsdp full_shard --gradient_checkpointing False')).recompute?.value], ['full', 'none']);
  // Only the Trainer's own options make a launch script a Trainer command line; a Python file is the in-code reader's.
  assert.deepEqual(detectConfigFormats('run.sh', 'python train.py --bf16 --output_dir out\n'), []);
  assert.ok(detectConfigFormats('run.sh', 'deepspeed run_clm.py --deepspeed configs/ds_z3.json --bf16\n').includes('hf-trainer-args'));
  assert.ok(!detectConfigFormats('train.py', 'import os\n# torchrun train.py --per_device_train_batch_size 4\n').includes('hf-trainer-args'));
});

test('what the run decides is not stated: shell variables, auto_find_batch_size, a DeepSpeed config named by a variable', () => {
  const s = setupOf(torchrun('--per_device_train_batch_size $BS --gradient_accumulation_steps "${ACC}" --bf16 $BF16 --gradient_checkpointing ${GC} --fsdp "$FSDP"'));
  assert.deepEqual([s.microBatch, s.gradientAccumulation, s.precision, s.recompute, s.zeroStage, s.cpuOffload], [undefined, undefined, undefined, undefined, undefined, undefined]);
  const auto = setupOf(torchrun('--auto_find_batch_size --per_device_train_batch_size 64'));
  assert.deepEqual([auto.microBatch, auto.gradientAccumulation?.value], [undefined, 1]);
  const ds = setupOf(torchrun('--deepspeed $DS_CONFIG --per_device_train_batch_size 4'));
  assert.deepEqual([ds.link, ds.zeroStage, ds.precision], [undefined, undefined, undefined]);
  assert.match(ds.unmodelled![0]!.message, /^--deepspeed \$DS_CONFIG is chosen at run time/);
});

test('the GPUs from the launcher on the same command: torchrun, deepspeed, accelerate launch; the torchrun GPU-count finding is not repeated', () => {
  const args = 'train.py --per_device_train_batch_size 2 --output_dir out';
  const cases: Array<[string, number | undefined]> = [
    ['torchrun --nproc_per_node=4 --nnodes 2', 8],
    ['torchrun --nproc-per-node 8', 8],
    ['NGPU=4\ntorchrun --standalone --nproc_per_node $NGPU', 4],
    ['python -m torch.distributed.run --nproc_per_node 2 --nnodes 2:2', 4],
    ['torchrun --nnodes 1:4 --nproc_per_node 8', undefined],
    ['torchrun --nproc_per_node gpu', undefined],
    ['deepspeed --num_gpus 8 --num_nodes 2', 16],
    ['deepspeed --num_gpus=8', 8],
    ['deepspeed --include localhost:0,1,2', 3],
    ['deepspeed --include "node1:0,1@node2:0,1"', 4],
    ['deepspeed --hostfile hosts --num_gpus 8', undefined],
    ['deepspeed', undefined],
    ['accelerate launch --num_processes 8 --num_machines 2', 8],
    ['accelerate launch --config_file fsdp.yaml', undefined],
    ['python', undefined],
  ];
  for (const [launcher, world] of cases) assert.equal(setupOf(`${launcher} ${args}\n`).world, world, launcher);
  // A Makefile recipe's `@` is make's, not the program's name.
  assert.equal(setupOf(`NGPU ?= 4\ntrain:\n\t@torchrun --nproc_per_node=$(NGPU) ${args}\n`, 'Makefile').world, 4);
  // Every GPU is a data-parallel replica: "your config" plans on the launched GPUs with the global batch they make.
  const two = setupOf('deepspeed --num_gpus 8 --num_nodes 2 train.py --per_device_train_batch_size 2 --gradient_accumulation_steps 4\n');
  const options = pinnedOptions({ batch: 1, objective: 'throughput', strategies: 'all', optimizer: 'adam' }, two, 'run.sh');
  assert.deepEqual([options.gpus, options.pins?.dataParallel, options.batch], [16, 16, 128]);
  const text = 'torchrun --nproc_per_node 16 train.py --fsdp "full_shard auto_wrap" --bf16 --gradient_checkpointing --per_device_train_batch_size 2 --gradient_accumulation_steps 4\n';
  const findings = checkConfig('run.sh', text, llamaPlan()).findings;
  assert.deepEqual(findings.filter((f) => f.code === 'gpu-count').map((f) => f.format), ['torchrun']);
  // 16 replicas × 2 × 4 = 128 samples; on the plan's 8 the same batch needs accumulation 8.
  const batch = findings.find((f) => f.format === 'hf-trainer-args');
  assert.equal(batch?.message, 'This Hugging Face Trainer command line trains on 16 data-parallel replicas; the plan uses 8');
  assert.equal(applyTextEdits(text, batch!.fix!.edits), text.replace('--gradient_accumulation_steps 4', '--gradient_accumulation_steps 8'));
});

test('the quick-fix edits the words: a flag swapped in place, missing ones after the script word (inside `\\` continuations), values rewritten, switched-off flags dropped', () => {
  const accelerate = 'accelerate launch --num_processes 8 sft.py --per_device_train_batch_size=4 --fp16 --output_dir out\n';
  const fixed = fixAll('run.sh', accelerate, llamaPlan()).text;
  // 4 × 1 × 8 = 32 samples at the plan's micro-batch 2: accumulation 2.
  assert.equal(fixed, 'accelerate launch --num_processes 8 sft.py --fsdp "full_shard auto_wrap" --gradient_checkpointing --gradient_accumulation_steps 2 --per_device_train_batch_size=2 --bf16 --output_dir out\n');
  assert.deepEqual(checkConfig('run.sh', fixed, llamaPlan()).findings, []);

  const continued = [
    '#!/bin/bash',
    'torchrun --nproc_per_node 8 train.py \\',
    '    --model_name_or_path meta-llama/Meta-Llama-3-8B \\',
    "    --fsdp 'full_shard offload auto_wrap' \\",
    '    --bf16 False \\',
    '    --fp16 True \\',
    '    --gradient_checkpointing \\',
    '    --per_device_train_batch_size 2 \\',
    '    --gradient_accumulation_steps 8 \\',
    '    --output_dir out',
    '',
  ].join('\n');
  const want = continued
    .replace("'full_shard offload auto_wrap'", "'hybrid_shard_zero2 auto_wrap'")
    .replace('--bf16 False', '--bf16 True').replace('--fp16 True', '--fp16 False')
    .replace('    --gradient_checkpointing \\\n', '');
  assert.equal(fixAll('run.sh', continued, llamaPlan({ zeroStage: 2, hybridShard: true, recompute: 'none' })).text, want);

  // Missing options go on the script's line, before its `\`; a bare flag is swapped for the plan's in place.
  const bare = 'torchrun --nproc_per_node 8 train.py \\\n    --fp16 \\\n    --per_device_train_batch_size 4 \\\n    --output_dir out\n';
  assert.equal(
    fixAll('run.sh', bare, llamaPlan()).text,
    'torchrun --nproc_per_node 8 train.py --fsdp "full_shard auto_wrap" --gradient_checkpointing --gradient_accumulation_steps 2 \\\n    --bf16 \\\n    --per_device_train_batch_size 2 \\\n    --output_dir out\n',
  );
  // A switched-off flag on a command's last continued line leaves its line empty: the command still ends there.
  const lastLine = 'torchrun --nproc_per_node 8 train.py \\\n    --fsdp "full_shard auto_wrap" --bf16 --per_device_train_batch_size 2 --gradient_accumulation_steps 8 \\\n    --gradient_checkpointing\necho done\n';
  assert.equal(fixAll('run.sh', lastLine, llamaPlan({ recompute: 'none' })).text, lastLine.replace('    --gradient_checkpointing', ''));
  // A positional word after the script would be taken as a bare flag's value: the flag says True.
  const positional = 'torchrun --nproc_per_node 8 train.py run1 --fsdp "full_shard auto_wrap" --bf16 --per_device_train_batch_size 2 --gradient_accumulation_steps 8\n';
  assert.equal(fixAll('run.sh', positional, llamaPlan()).text, positional.replace('train.py run1', 'train.py --gradient_checkpointing True run1'));
  // No sharding in the plan: the --fsdp argument goes, value and all.
  const sharded = torchrun('--fsdp "full_shard auto_wrap" --bf16 --gradient_checkpointing --per_device_train_batch_size 2 --gradient_accumulation_steps 8');
  assert.equal(fixAll('run.sh', sharded, llamaPlan({ zeroStage: 0 })).text, sharded.replace(' --fsdp "full_shard auto_wrap"', ''));
  // ZeRO-1 has no FSDP word: said, with where to write it, and not "fixed" into something else.
  const one = checkConfig('run.sh', sharded, llamaPlan({ zeroStage: 1 })).findings;
  assert.deepEqual(one.map((f) => f.code), ['cannot-express']);
  assert.match(one[0]!.message, /ZeRO 1, which a Hugging Face Trainer command line cannot express: .*--deepspeed ds_config\.json/);
  const tp = checkConfig('run.sh', sharded, llamaPlan({ tensorParallel: 2 })).findings;
  assert.ok(tp.some((f) => f.code === 'cannot-express' && /TP 2, .*--format megatron/.test(f.message)), JSON.stringify(tp));
});

const dir = mkdtempSync(join(tmpdir(), 'wap-argv-'));
after(() => rmSync(dir, { recursive: true, force: true }));

test('--deepspeed ds.json hands ZeRO and offload to the JSON, and values transformers refuses as mismatched are errors; --deepspeed_config is DeepSpeed’s own', () => {
  mkdirSync(join(dir, 'scripts'));
  writeFileSync(join(dir, 'ds_z3.json'), '{\n  "zero_optimization": {"stage": 3, "offload_optimizer": {"device": "cpu"}},\n  "bf16": {"enabled": "auto"},\n  "train_micro_batch_size_per_gpu": "auto"\n}\n');
  writeFileSync(join(dir, 'ds_mb4.json'), '{"zero_optimization": {"stage": 2}, "bf16": {"enabled": true}, "train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 8}\n');
  // The script lives a folder below where the job is launched, and the JSON is found from there.
  const script = join(dir, 'scripts', 'train.sh');
  const text = 'deepspeed --num_gpus 8 run_clm.py --model_name_or_path gpt2 --deepspeed ds_z3.json --bf16 --per_device_train_batch_size 4 --gradient_accumulation_steps 8 --gradient_checkpointing --output_dir out\n';
  const [setup] = readConfigSetups(script, text, disk);
  assert.deepEqual([setup!.zeroStage?.value, setup!.cpuOffload?.value, setup!.zeroStage?.source, setup!.precision?.value, setup!.microBatch?.value, setup!.world], [3, true, 'ds_z3.json', 'bf16', 4, 8]);
  assert.equal(text.slice(setup!.zeroStage!.range.start, setup!.zeroStage!.range.end), 'ds_z3.json');
  const differs = checkConfig(script, text, llamaPlan({ zeroStage: 2 }), undefined, disk).findings.find((f) => f.code === 'setup-differs');
  assert.match(differs!.message, /trains with ZeRO 3, CPU offload \(in ds_z3\.json\); the plan .* uses ZeRO 2, no offload/);

  const mismatched = 'deepspeed --num_gpus 8 run_clm.py --deepspeed ds_mb4.json --bf16 --per_device_train_batch_size 16 --output_dir out\n';
  const conflicts = checkConfig(script, mismatched, undefined, undefined, disk).findings.filter((f) => f.code === 'linked-config-conflict');
  assert.deepEqual(conflicts.map((f) => [f.severity, mismatched.slice(f.range.start, f.range.end)]), [['error', '16'], ['error', 'ds_mb4.json']]);
  assert.match(conflicts[0]!.message, /says micro-batch 16 and ds_mb4\.json says 4: transformers .* refuses to start/);
  assert.match(conflicts[1]!.message, /gradient accumulation 1 \(its default\) and ds_mb4\.json says 8/);

  // A plain DeepSpeed script: its own argparse takes --deepspeed as a switch and the JSON by --deepspeed_config.
  const plain = 'deepspeed --num_gpus 4 pretrain.py --deepspeed --deepspeed_config ds_mb4.json\n';
  assert.ok(detectConfigFormats(script, plain).includes('hf-trainer-args'));
  const [own] = readConfigSetups(script, plain, disk);
  assert.deepEqual([own!.label, own!.zeroStage?.value, own!.precision?.value, own!.microBatch?.value, own!.gradientAccumulation?.value, own!.world, own!.link?.mustMatch], ['DeepSpeed launch', 2, 'bf16', 4, 8, 4, undefined]);
  assert.deepEqual(checkConfig(script, plain, undefined, undefined, disk).findings, []);
});

test('a half-typed command never throws and states no value for an option still missing its value', () => {
  for (const text of [
    'torchrun --nproc_per_node 8 train.py --bf16 --per_device_train_batch_size',
    'torchrun --nproc_per_node 8 train.py --per_device_train_batch_size --bf16\n',
    'torchrun --nproc_per_node 8 train.py --bf16 --per_device_train_batch_size 4 --fsdp',
    'torchrun --nproc_per_node 8 train.py --bf16 --gradient_accumulation_steps four\n',
  ]) {
    const s = setupOf(text);
    assert.equal(s.precision?.value, 'bf16', text);
    if (text.includes('4 --fsdp')) assert.equal(s.zeroStage, undefined, text);
    else if (text.includes('four')) assert.equal(s.gradientAccumulation, undefined, text);
    else assert.equal(s.microBatch, undefined, text);
    const findings = checkConfig('run.sh', text, llamaPlan()).findings;
    assert.ok(!findings.some((f) => f.code === 'malformed-config'), JSON.stringify(findings));
  }
});

test('accelerate launch --config_file: the Trainer takes that config\'s plugin, read with its own deepspeed_config_file, and its num_processes', () => {
  const project = join(dir, 'accelerate-plugin');
  mkdirSync(join(project, 'configs'), { recursive: true });
  writeFileSync(join(project, 'configs', 'ds_z2_offload.json'), '{"zero_optimization": {"stage": 2, "offload_optimizer": {"device": "cpu"}}, "bf16": {"enabled": "auto"}}\n');
  writeFileSync(join(project, 'configs', 'zero.yaml'), 'distributed_type: DEEPSPEED\ndeepspeed_config:\n  deepspeed_config_file: configs/ds_z2_offload.json\nmixed_precision: bf16\nnum_processes: 16\nnum_machines: 2\n');
  const launch = join(project, 'run.sh');
  const text = 'accelerate launch --config_file configs/zero.yaml train.py --bf16 --per_device_train_batch_size 4 --output_dir out\n';
  writeFileSync(launch, text);
  const [s] = readConfigSetups(launch, text, disk);
  assert.deepEqual([s!.zeroStage?.value, s!.cpuOffload?.value, s!.world, s!.worldFrom, s!.zeroStage?.source], [2, true, 16, 'configs/zero.yaml', 'configs/zero.yaml, configs/ds_z2_offload.json']);
  assert.equal(text.slice(s!.zeroStage!.range.start, s!.zeroStage!.range.end), 'configs/zero.yaml');
  // The GPU count on the command line wins over the config's.
  const counted = 'accelerate launch --config_file configs/zero.yaml --num_processes 8 train.py --bf16 --per_device_train_batch_size 4\n';
  assert.equal(readConfigSetups(launch, counted, disk)[0]!.world, 8);
  // --deepspeed on the Trainer's own arguments takes precedence over the launcher's plugin.
  writeFileSync(join(project, 'ds_z3.json'), '{"zero_optimization": {"stage": 3}}\n');
  const own = readConfigSetups(launch, 'accelerate launch --config_file configs/zero.yaml train.py --deepspeed ds_z3.json --per_device_train_batch_size 4\n', disk)[0]!;
  assert.equal(own.zeroStage?.value, 3);
});

test('how 16-bit tensors are held goes with the precision: the plain Trainer autocasts, DeepSpeed keeps fp32 masters, FSDP and a run-time choice say nothing', () => {
  assert.equal(setupOf(torchrun('--bf16 --per_device_train_batch_size 4')).ampStyle?.value, 'autocast');
  assert.match(setupOf(torchrun('--fp16 --per_device_train_batch_size 4')).ampStyle!.why, /torch\.autocast over fp32 parameters/);
  assert.equal(setupOf(torchrun('--bf16 --deepspeed ds.json')).ampStyle?.value, 'master-weights');
  assert.equal(setupOf(torchrun('--bf16 --fsdp "full_shard auto_wrap"')).ampStyle, undefined);
  assert.equal(setupOf(torchrun('--tf32 True --per_device_train_batch_size 4')).ampStyle, undefined, 'no 16-bit tensors');
  assert.equal(setupOf(torchrun('--per_device_train_batch_size 4')).ampStyle, undefined, 'fp32');
  // "Your config" is priced with it, and says where it came from.
  const options = pinnedOptions({ batch: 64, objective: 'throughput', strategies: 'all', optimizer: 'adam' }, setupOf(torchrun('--bf16 --per_device_train_batch_size 4')), 'run.sh');
  assert.deepEqual([options.precision, options.ampStyle], ['bf16', 'autocast']);
  assert.match(options.ampStyleSource!, /^run\.sh \(bf16: the Trainer runs forward under torch\.autocast/);
});
