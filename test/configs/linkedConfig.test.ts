/**
 * A config that names a DeepSpeed JSON by path (accelerate's
 * deepspeed_config_file, the Trainer's deepspeed="…", Lightning's
 * DeepSpeedStrategy(config=…)) is read with that file: before, such an
 * accelerate config was "ZeRO 0, no offload" whatever the JSON said, and
 * "your config" planned that. Real files on disk, read through the same
 * file access the CLI uses.
 */
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { checkConfig, initConfigReaders, pinnedOptions, readConfigSetups } from '../../src/configs';
import type { PlanOptions } from '../../src/protocol/planOptions';
import { disk, root } from './helpers';
import { llamaPlan } from './llamaPlan';

const dir = mkdtempSync(join(tmpdir(), 'wap-linked-'));
const configs = join(dir, 'configs');
const BASE: PlanOptions = { batch: 64, objective: 'throughput', strategies: 'all', optimizer: 'adam' };
const ZERO3_OFFLOAD = '{\n  "zero_optimization": {"stage": 3, "offload_optimizer": {"device": "cpu"}},\n  "bf16": {"enabled": "auto"},\n  "train_micro_batch_size_per_gpu": "auto",\n  "gradient_accumulation_steps": "auto"\n}\n';
const accelerateLinking = (path: string): string => `distributed_type: DEEPSPEED\ndeepspeed_config:\n  deepspeed_config_file: ${path}\n  zero3_init_flag: true\nmixed_precision: bf16\nnum_processes: 8\n`;

before(async () => {
  await initConfigReaders();
  mkdirSync(configs);
  writeFileSync(join(configs, 'ds_z3.json'), ZERO3_OFFLOAD);
  // The DeepSpeed config of the Llama fixture: stage 0, fp16 off (fp32), micro-batch 4, accumulation 32.
  copyFileSync(join(root, 'test/configs/data/llama/ds_config.json'), join(dir, 'ds_config.json'));
});
after(() => rmSync(dir, { recursive: true, force: true }));

test('accelerate deepspeed_config_file: the stage and offload come from the JSON, found from the launch folder above the YAML', () => {
  const yaml = join(configs, 'accel.yaml');
  const text = accelerateLinking('configs/ds_z3.json');
  writeFileSync(yaml, text);
  const [setup] = readConfigSetups(yaml, text, disk);
  assert.deepEqual([setup!.zeroStage?.value, setup!.cpuOffload?.value, setup!.paramOffload?.value], [3, true, false]);
  // Shown on the reference, fixed in the JSON: no edit of this YAML can change them.
  const ref = text.indexOf('configs/ds_z3.json');
  assert.deepEqual([setup!.zeroStage!.range.start, setup!.zeroStage!.source, setup!.zeroStage!.set], [ref, 'configs/ds_z3.json', undefined]);
  // The YAML's own precision stays (the JSON says "auto", which accelerate fills from mixed_precision).
  assert.equal(setup!.precision?.value, 'bf16');
  const pins = pinnedOptions(BASE, setup!, 'accel.yaml').pins!;
  assert.deepEqual([pins.zeroStage, pins.cpuOffload, pins.paramOffload], [3, true, false]);

  const findings = checkConfig(yaml, text, llamaPlan({ zeroStage: 1 }), undefined, disk).findings;
  const differs = findings.find((f) => f.code === 'setup-differs');
  assert.match(differs!.message, /trains with ZeRO 3, CPU offload \(in configs\/ds_z3\.json\); the plan .* uses ZeRO 1, no offload/);
  assert.equal(differs!.fix, undefined, 'the stage is fixed in the JSON, not by inserting zero_stage here (accelerate would ignore it)');
});

test('a linked file that is missing, unreadable or not read leaves the stage to the search, and says so', () => {
  const yaml = join(configs, 'missing.yaml');
  const text = accelerateLinking('configs/ds_gone.json');
  const [missing] = readConfigSetups(yaml, text, disk);
  assert.equal(missing!.zeroStage, undefined);
  assert.equal(pinnedOptions(BASE, missing!, 'missing.yaml').pins?.zeroStage, undefined);
  const note = checkConfig(yaml, text, undefined, undefined, disk).findings.find((f) => f.code === 'setup-unmodelled');
  assert.match(note!.message, /deepspeed_config_file configs\/ds_gone\.json was not found as a readable file from missing\.yaml's folder or the 3 above it: the ZeRO stage and offload it sets are unknown/);
  assert.match(readConfigSetups(yaml, text)[0]!.unmodelled![0]!.message, /was not read/);

  writeFileSync(join(configs, 'broken.json'), '{"zero_optimization": {"stage": 3,');
  const broken = readConfigSetups(yaml, accelerateLinking('broken.json'), disk)[0]!;
  assert.equal(broken.zeroStage, undefined);
  assert.match(broken.unmodelled![0]!.message, /broken\.json could not be read \(/);
});

test('Trainer deepspeed="…": the JSON states stage, precision and batch; values transformers would refuse as mismatched are errors', () => {
  const script = join(dir, 'train.py');
  const text = 'from transformers import TrainingArguments\nargs = TrainingArguments(output_dir="out", per_device_train_batch_size=16, gradient_accumulation_steps=2, deepspeed="ds_config.json")\n';
  const [setup] = readConfigSetups(script, text, disk);
  assert.deepEqual([setup!.zeroStage?.value, setup!.precision?.value, setup!.microBatch?.value, setup!.gradientAccumulation?.value, setup!.globalBatch?.value], [0, 'fp32', 4, 32, 1024]);
  const conflicts = checkConfig(script, text, undefined, undefined, disk).findings.filter((f) => f.code === 'linked-config-conflict');
  assert.deepEqual(conflicts.map((f) => [f.severity, text.slice(f.range.start, f.range.end)]), [['error', '16'], ['error', '2']]);
  assert.match(conflicts[0]!.message, /says micro-batch 16 and ds_config\.json says 4: transformers .* refuses to start/);

  // Agreeing values, and a default that agrees, are no conflict; the default 8 against the file's 4 is one.
  const agrees = text.replace('per_device_train_batch_size=16, gradient_accumulation_steps=2', 'per_device_train_batch_size=4, gradient_accumulation_steps=32');
  assert.deepEqual(checkConfig(script, agrees, undefined, undefined, disk).findings.filter((f) => f.code === 'linked-config-conflict'), []);
  const byDefault = text.replace('per_device_train_batch_size=16, gradient_accumulation_steps=2, ', 'gradient_accumulation_steps=32, ');
  const defaulted = checkConfig(script, byDefault, undefined, undefined, disk).findings.filter((f) => f.code === 'linked-config-conflict');
  assert.equal(defaulted.length, 1);
  assert.match(defaulted[0]!.message, /micro-batch 8 \(its default\) and ds_config\.json says 4/);
});

test('Trainer precision: each of bf16/fp16 is compared only where the JSON gives it a bool', () => {
  const script = join(dir, 'bf16.py');
  const withJson = (json: string): string[] => {
    writeFileSync(join(dir, 'p.json'), json);
    const text = 'from transformers import TrainingArguments\nargs = TrainingArguments(output_dir="out", bf16=True, deepspeed="p.json")\n';
    return checkConfig(script, text, undefined, undefined, disk).findings.filter((f) => f.code === 'linked-config-conflict').map((f) => f.message);
  };
  // No bf16 section: transformers checks nothing there, and DeepSpeed trains in fp32, which the setup then says.
  assert.deepEqual(withJson('{"zero_optimization": {"stage": 2}, "fp16": {"enabled": false}}'), []);
  assert.deepEqual(withJson('{"zero_optimization": {"stage": 2}, "bf16": {"enabled": "auto"}}'), []);
  const off = withJson('{"zero_optimization": {"stage": 2}, "bf16": {"enabled": false}}');
  assert.equal(off.length, 1);
  assert.match(off[0]!, /says precision bf16 and p\.json says fp32/);
});

test('Lightning DeepSpeedStrategy(config=…): a path or a dict replaces the stage argument; anything else is said', () => {
  const script = join(configs, 'train_lightning.py');
  const lightning = (strategy: string): string => `import lightning as L\nfrom lightning.pytorch.strategies import DeepSpeedStrategy\ntrainer = L.Trainer(devices=8, strategy=${strategy})\n`;
  const fromFile = readConfigSetups(script, lightning('DeepSpeedStrategy(stage=2, config="ds_z3.json")'), disk)[0]!;
  assert.deepEqual([fromFile.zeroStage?.value, fromFile.cpuOffload?.value, fromFile.world], [3, true, 8]);
  const fromDict = readConfigSetups(script, lightning('DeepSpeedStrategy(config={"zero_optimization": {"stage": 1}})'), disk)[0]!;
  assert.deepEqual([fromDict.zeroStage?.value, fromDict.cpuOffload?.value], [1, false]);
  const fromVariable = readConfigSetups(script, lightning('DeepSpeedStrategy(config=ds_cfg)'), disk)[0]!;
  assert.equal(fromVariable.zeroStage, undefined);
  assert.match(fromVariable.unmodelled![0]!.message, /DeepSpeedStrategy\(config=ds_cfg\) is neither a file path nor a dict WAP can read/);
});

test('Trainer deepspeed= set by an expression: the stage is unknown and the finding says so', () => {
  const text = 'from transformers import TrainingArguments\nargs = TrainingArguments(output_dir="out", deepspeed=cli.ds_config)\n';
  const notes = checkConfig(join(dir, 'expr.py'), text, undefined, undefined, disk).findings.filter((f) => f.code === 'setup-unmodelled');
  assert.equal(notes.length, 1);
  assert.match(notes[0]!.message, /deepspeed=cli\.ds_config is chosen at run time/);
});
