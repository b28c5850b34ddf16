/**
 * axolotl's YAML configs (configs/axolotl.ts) as axolotl's examples write them: a full fine-tune with a DeepSpeed
 * JSON by path, an FSDP one whose fsdp_config offloads, a QLoRA one; read with the Trainer's semantics over axolotl's
 * names and defaults (micro_batch_size 1, `bf16: auto` left to the run, batch_size's accumulation), the fix's exact
 * text, the GPUs of `accelerate launch -m axolotl.cli.train`, the model `base_model` names, detection and half-typed
 * files.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { applyTextEdits, checkConfig, detectConfigFormats, readConfigSetups, resolveLaunchedModel } from '../../src/configs';
import { disk, writeFolder } from './helpers';
import { llamaPlan } from './llamaPlan';

const project = mkdtempSync(join(tmpdir(), 'wap-axolotl-'));
after(() => rmSync(project, { recursive: true, force: true }));

/** A full fine-tune as axolotl's examples/llama-3 configs write it, DeepSpeed ZeRO-3 by path. */
const FFT = [
  'base_model: NousResearch/Meta-Llama-3-8B',
  '',
  'datasets:',
  '  - path: tatsu-lab/alpaca',
  '    type: alpaca',
  'sequence_len: 8192',
  'sample_packing: true',
  '',
  'gradient_accumulation_steps: 8',
  'micro_batch_size: 1',
  'num_epochs: 1',
  'optimizer: paged_adamw_8bit',
  'learning_rate: 2e-5',
  '',
  'bf16: auto',
  'tf32: false',
  '',
  'gradient_checkpointing: true',
  'flash_attention: true',
  'deepspeed: deepspeed_configs/zero3_bf16.json',
  'output_dir: ./outputs/out',
  '',
].join('\n');

/** A DeepSpeed JSON as axolotl ships it: ZeRO-3, batch keys "auto" for the Trainer to fill. */
const ZERO3 = '{\n  "zero_optimization": {"stage": 3, "overlap_comm": true, "stage3_gather_16bit_weights_on_model_save": true},\n  "bf16": {"enabled": "auto"},\n  "gradient_accumulation_steps": "auto",\n  "train_batch_size": "auto",\n  "train_micro_batch_size_per_gpu": "auto"\n}\n';

/** FSDP1 as axolotl's fsdp examples write it: the Trainer's words, and fsdp_config offloading the parameters. */
const FSDP = [
  'base_model: meta-llama/Meta-Llama-3-8B',
  'sequence_len: 4096',
  'gradient_accumulation_steps: 4',
  'micro_batch_size: 2',
  'bf16: true',
  'gradient_checkpointing: true',
  'fsdp:',
  '  - full_shard',
  '  - auto_wrap',
  'fsdp_config:',
  '  fsdp_offload_params: true',
  '  fsdp_state_dict_type: FULL_STATE_DICT',
  '  fsdp_transformer_layer_cls_to_wrap: LlamaDecoderLayer',
  '',
].join('\n');

/** QLoRA as examples/llama-3/qlora.yml writes it: a 4-bit base, adapters, checkpoints offloaded. */
const QLORA = 'base_model: NousResearch/Meta-Llama-3-8B\nload_in_4bit: true\nadapter: qlora\nlora_r: 32\nlora_alpha: 16\nlora_target_linear: true\nsequence_len: 4096\ngradient_accumulation_steps: 4\nmicro_batch_size: 2\nbf16: auto\ngradient_checkpointing: offload\n';

test('a full fine-tune with DeepSpeed: ZeRO-3 from the JSON, bf16: auto left to the run, the GPUs of accelerate launch -m axolotl.cli.train', () => {
  const dir = writeFolder(project, 'fft', { 'examples/llama-3/fft-8b.yaml': FFT, 'deepspeed_configs/zero3_bf16.json': ZERO3, 'train.sh': '#!/bin/bash\naccelerate launch --num_processes 8 -m axolotl.cli.train examples/llama-3/fft-8b.yaml\n' });
  const file = join(dir, 'examples/llama-3/fft-8b.yaml');
  assert.deepEqual(detectConfigFormats(file, FFT), ['axolotl']);
  const [s] = readConfigSetups(file, FFT, disk);
  assert.deepEqual([s!.label, s!.microBatch?.value, s!.gradientAccumulation?.value, s!.recompute?.value, s!.zeroStage?.value, s!.zeroStage?.source, s!.world, s!.worldFrom], ['axolotl config', 1, 8, 'full', 3, 'deepspeed_configs/zero3_bf16.json', 8, 'train.sh']);
  // "auto" is bf16 on a GPU that has it, fp16 elsewhere: neither the config nor its "auto" JSON states a precision.
  assert.equal(s!.precision, undefined);
  assert.equal(s!.link?.mustMatch?.startsWith('transformers'), true);
  // The fix writes micro-batch and recompute at the global batch 64 (1 × 8 × 8 GPUs).
  const fix = checkConfig(file, FFT, llamaPlan(), undefined, disk).findings.find((f) => f.code === 'setup-differs')!.fix!;
  const fixed = applyTextEdits(FFT, fix.edits);
  assert.equal(fixed, FFT.replace('gradient_accumulation_steps: 8', 'gradient_accumulation_steps: 4').replace('micro_batch_size: 1', 'micro_batch_size: 2'));
  // `axolotl train` (its CLI starts accelerate with the machine's config) passes the file without a GPU count.
  const cli = writeFolder(project, 'cli', { 'fft.yml': FFT, 'run.sh': 'axolotl train fft.yml\n' });
  assert.equal(readConfigSetups(join(cli, 'fft.yml'), FFT, disk)[0]!.world, undefined);
  const torchrun = writeFolder(project, 'torchrun', { 'fft.yml': FFT, 'run.sh': 'torchrun --nproc_per_node 4 -m axolotl.cli.train fft.yml\n' });
  assert.equal(readConfigSetups(join(torchrun, 'fft.yml'), FFT, disk)[0]!.world, 4);
});

test('FSDP: the words with fsdp_config\'s parameter offload; a plan without offload cannot be written into fsdp_config', () => {
  const [s] = readConfigSetups('fsdp.yml', FSDP);
  assert.deepEqual([s!.zeroStage?.value, s!.hybridShard?.value, s!.cpuOffload?.value, s!.paramOffload?.value, s!.precision?.value, s!.microBatch?.value, s!.gradientAccumulation?.value], [3, false, true, true, 'bf16', 2, 4]);
  const finding = checkConfig('fsdp.yml', FSDP, llamaPlan()).findings.find((f) => f.code === 'setup-differs')!;
  assert.match(finding.message, /^This axolotl config trains with CPU offload, parameter offload; the plan .* uses no offload, no parameter offload$/);
  // fsdp_config's offload is nested: no edit of the top-level keys says it, so no fix is offered.
  assert.equal(finding.fix, undefined);
  // The plan's ZeRO-2 with offload kept: the list's word changes, fsdp_config stays.
  const zero2 = checkConfig('fsdp.yml', FSDP, llamaPlan({ zeroStage: 2, cpuOffload: true, paramOffload: true, recompute: 'full', microBatch: 2, gradientAccumulation: 8 })).findings.find((f) => f.code === 'setup-differs')!;
  assert.equal(applyTextEdits(FSDP, zero2.fix!.edits), FSDP.replace('  - full_shard\n', '  - shard_grad_op\n'));
  // FSDP2 with no words: reshard_after_forward false keeps the parameters gathered (ZeRO-2).
  const fsdp2 = 'base_model: Qwen/Qwen2.5-7B\nmicro_batch_size: 1\ngradient_accumulation_steps: 4\nfsdp_version: 2\nfsdp_config:\n  offload_params: false\n  reshard_after_forward: false\n  auto_wrap_policy: TRANSFORMER_BASED_WRAP\n';
  assert.deepEqual([readConfigSetups('fsdp2.yml', fsdp2)[0]!.zeroStage?.value, readConfigSetups('fsdp2.yml', fsdp2)[0]!.cpuOffload?.value], [2, false]);
  assert.equal(readConfigSetups('fsdp2.yml', fsdp2.replace('false\n  auto', 'true\n  auto'))[0]!.zeroStage?.value, 3);
  // Without fsdp or deepspeed: plain data parallel.
  assert.equal(readConfigSetups('ddp.yml', 'base_model: x/y\nmicro_batch_size: 4\ngradient_accumulation_steps: 1\n')[0]!.zeroStage?.value, 0);
});

test('QLoRA: adapters and the 4-bit base are said, offloaded checkpoints are full recompute and said; batch_size makes the accumulation', () => {
  const [s] = readConfigSetups('qlora.yml', QLORA);
  assert.deepEqual(s!.unmodelled!.map((u) => u.short), ['QLoRA adapters', 'quantized base model', 'offloaded checkpoints']);
  assert.match(s!.unmodelled![0]!.message, /^adapter: qlora trains LoRA adapters of rank 32 with the base model frozen and loaded in 4 bits: WAP models LoRA only where the code builds it/);
  assert.deepEqual([s!.recompute?.value, s!.precision, s!.microBatch?.value], ['full', undefined, 2]);
  // fp16: true turns auto off; bf16: false alone trains fp32.
  assert.equal(readConfigSetups('q.yml', `${QLORA}fp16: true\n`)[0]!.precision?.value, 'fp16');
  assert.equal(readConfigSetups('q.yml', QLORA.replace('bf16: auto', 'bf16: false'))[0]!.precision?.value, 'fp32');
  // micro_batch_size defaults to 1 (not the Trainer's 8); batch_size 16 over micro-batch 4 is 4 steps.
  assert.equal(readConfigSetups('a.yml', 'base_model: x/y\ngradient_accumulation_steps: 4\nbatch_size: 8\n')[0]!.microBatch?.value, 1);
  const batch = readConfigSetups('b.yml', 'base_model: x/y\nmicro_batch_size: 4\nbatch_size: 16\n')[0]!;
  assert.deepEqual([batch.microBatch?.value, batch.gradientAccumulation?.value], [4, 4]);
});

test('base_model is the model: a local folder or a cached hub id through pretrainedConfig, never a guess', () => {
  const dir = writeFolder(project, 'model', { 'qlora.yml': QLORA.replace('NousResearch/Meta-Llama-3-8B', './models/llama') });
  mkdirSync(join(dir, 'models', 'llama'), { recursive: true });
  writeFileSync(join(dir, 'models', 'llama', 'config.json'), '{"model_type": "llama"}');
  const text = QLORA.replace('NousResearch/Meta-Llama-3-8B', './models/llama');
  const asked: string[] = [];
  const files = { ...disk, pretrainedConfig: (ref: string) => (asked.push(ref), ref === './models/llama' ? join(dir, 'models', 'llama', 'config.json') : undefined) };
  assert.deepEqual(resolveLaunchedModel(join(dir, 'qlora.yml'), text, files), { file: join(dir, 'models', 'llama', 'config.json'), how: 'base_model: ./models/llama in qlora.yml' });
  assert.deepEqual(asked, ['./models/llama']);
  assert.equal(resolveLaunchedModel(join(dir, 'qlora.yml'), text, disk), undefined);
  assert.equal(resolveLaunchedModel(join(dir, 'other.yml'), QLORA, files), undefined);
});

test('detection: axolotl configs are axolotl\'s; Trainer recipes, accelerate, DeepSpeed and Hydra files stay theirs', () => {
  for (const [file, text] of [['fft.yaml', FFT], ['fsdp.yml', FSDP], ['qlora.yml', QLORA], ['lora.yml', 'micro_batch_size: 2\nsequence_len: 2048\nadapter: lora\n']] as const) {
    assert.deepEqual(detectConfigFormats(file, text), ['axolotl'], file);
  }
  assert.deepEqual(detectConfigFormats('sft.yaml', 'model_name_or_path: x/y\nbf16: true\nper_device_train_batch_size: 4\ngradient_accumulation_steps: 2\n'), ['hf-trainer-recipe']);
  assert.deepEqual(detectConfigFormats('zero3.yaml', 'distributed_type: DEEPSPEED\nnum_processes: 8\nbase_model: x\ngradient_accumulation_steps: 1\n'), ['accelerate']);
  assert.deepEqual(detectConfigFormats('conf/config.yaml', 'defaults:\n  - model: llama\nbase_model: x\nbatch_size: 4\n'), []);
  assert.deepEqual(detectConfigFormats('ds.json', ZERO3), ['deepspeed']);
  assert.deepEqual(detectConfigFormats('base.json', '{"base_model": "x", "micro_batch_size": 2}'), []);
});

test('a half-typed axolotl config never throws: unfinished values state nothing, broken YAML is one malformed-config finding', () => {
  for (const text of ['base_model: x/y\nmicro_batch_size: 2\nbf16: tru', 'base_model: x/y\nmicro_batch_size:\n', 'base_model: x/y\nmicro_batch_size: 2\nfsdp: [full_shard, 3]\n', 'base_model: x/y\nmicro_batch_size: 2\nfsdp:\n  - full_shard\nfsdp_config: offload\n', 'base_model: x/y\nbatch_size: two\nmicro_batch_size: 2\n', 'base_model: x/y\nmicro_batch_size: 2\nfsdp_config:\n  fsdp_offload_params: "true"\nfsdp: [full_shard]\n', 'base_model: x/y\nmicro_batch_size: 2\nadapter:\ngradient_checkpointing: unsloth\n']) {
    const findings = checkConfig('axo.yml', text, llamaPlan()).findings;
    assert.ok(!findings.some((f) => f.code === 'malformed-config'), `${text}: ${JSON.stringify(findings)}`);
    for (const f of findings) if (f.fix) applyTextEdits(text, f.fix.edits);
  }
  assert.deepEqual(checkConfig('axo.yml', 'base_model: x/y\nmicro_batch_size: [2\n', llamaPlan()).findings.map((f) => f.code), ['malformed-config']);
});
