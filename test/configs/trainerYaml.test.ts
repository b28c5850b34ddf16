/**
 * The Trainer's arguments as a YAML/JSON recipe (configs/trainerRecipe.ts), as HfArgumentParser, TrlParser and
 * LLaMA-Factory load it: alignment-handbook-style SFT and DPO recipes, LLaMA-Factory full and LoRA recipes, read
 * with the command line's semantics (transformers' defaults, auto_find_batch_size, YAML's own bools), the fix's
 * exact text (comments and key order kept), a DeepSpeed JSON on disk with the values transformers refuses as
 * mismatched, the GPUs of the launch scripts that pass the recipe, the model they lead to, detection that leaves
 * other YAML and JSON files alone, and half-typed files.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { applyTextEdits, checkConfig, detectConfigFormats, fixAll, initConfigReaders, pinnedOptions, readConfigSetups, resolveLaunchedModel } from '../../src/configs';
import type { PlanOptions } from '../../src/protocol/planOptions';
import { disk, writeFolder } from './helpers';
import { llamaPlan } from './llamaPlan';

const BASE: PlanOptions = { batch: 64, objective: 'throughput', strategies: 'all', optimizer: 'adam' };

/** An SFT recipe as the alignment-handbook writes them: model, data and trainer sections, comments between. */
const SFT = [
  '# Model arguments',
  'model_name_or_path: mistralai/Mistral-7B-v0.1',
  'torch_dtype: bfloat16',
  'attn_implementation: flash_attention_2',
  '',
  '# Data training arguments',
  'dataset_mixture:',
  '  datasets:',
  '    - id: HuggingFaceH4/ultrachat_200k',
  '      split: train_sft',
  '',
  '# SFT trainer config',
  'bf16: true',
  'do_eval: true',
  'gradient_accumulation_steps: 1',
  'gradient_checkpointing: true  # saves memory',
  'gradient_checkpointing_kwargs:',
  '  use_reentrant: False',
  'learning_rate: 2.0e-05',
  'max_seq_length: 2048',
  'output_dir: data/zephyr-7b-sft-full',
  'per_device_train_batch_size: 16',
  'report_to:',
  '- wandb',
  '',
].join('\n');

const DPO = 'model_name_or_path: alignment-handbook/zephyr-7b-sft-full\ntorch_dtype: null\n\n# DPOTrainer arguments\nbf16: true\nbeta: 0.01\ngradient_accumulation_steps: 2\ngradient_checkpointing: true\nlearning_rate: 5.0e-7\noptim: adamw_torch\noutput_dir: data/zephyr-7b-dpo-full\nper_device_train_batch_size: 8\n';

/** LLaMA-Factory's recipes: `### section` comments, its own method keys beside TrainingArguments'. */
const LF_FULL = '### model\nmodel_name_or_path: meta-llama/Meta-Llama-3-8B-Instruct\n\n### method\nstage: sft\ndo_train: true\nfinetuning_type: full\ndeepspeed: examples/deepspeed/ds_z3_config.json\n\n### dataset\ndataset: identity,alpaca_en_demo\ntemplate: llama3\ncutoff_len: 2048\n\n### train\nper_device_train_batch_size: 1\ngradient_accumulation_steps: 2\nlearning_rate: 1.0e-5\nbf16: true\noutput_dir: saves/llama3-8b/full/sft\n';
const LF_LORA = '### model\nmodel_name_or_path: meta-llama/Meta-Llama-3-8B-Instruct\n\n### method\nstage: sft\ndo_train: true\nfinetuning_type: lora\nlora_rank: 8\nlora_target: all\n\n### train\nper_device_train_batch_size: 1\ngradient_accumulation_steps: 8\nbf16: true\noutput_dir: saves/llama3-8b/lora/sft\n';
/** A DeepSpeed JSON as LLaMA-Factory and the Trainer docs ship it: ZeRO-3, everything else "auto". */
const DS_Z3 = '{\n  "train_batch_size": "auto",\n  "train_micro_batch_size_per_gpu": "auto",\n  "gradient_accumulation_steps": "auto",\n  "bf16": {"enabled": "auto"},\n  "zero_optimization": {"stage": 3, "overlap_comm": false, "stage3_gather_16bit_weights_on_model_save": true}\n}\n';
const DS_MB2 = '{"zero_optimization": {"stage": 2}, "bf16": {"enabled": true}, "train_micro_batch_size_per_gpu": 2, "gradient_accumulation_steps": "auto"}\n';

const project = mkdtempSync(join(tmpdir(), 'wap-recipe-'));
const folder = (name: string, files: Record<string, string>): string => writeFolder(project, name, files);

before(() => initConfigReaders());
after(() => rmSync(project, { recursive: true, force: true }));

const setupOf = (text: string, file = 'config_full.yaml') => {
  assert.deepEqual(detectConfigFormats(file, text), ['hf-trainer-recipe'], text);
  return readConfigSetups(file, text)[0]!;
};
const dims = (s: ReturnType<typeof setupOf>) => [s.precision?.value, s.zeroStage?.value, s.recompute?.value, s.microBatch?.value, s.gradientAccumulation?.value];

test('alignment-handbook recipes: each key as TrainingArguments reads it, YAML’s own bools, and transformers’ defaults', () => {
  const sft = setupOf(SFT);
  assert.deepEqual([sft.label, ...dims(sft), sft.precision?.stated, sft.zeroStage?.stated], ['Hugging Face Trainer recipe', 'bf16', 0, 'full', 16, 1, true, false]);
  assert.equal(SFT.slice(sft.microBatch!.range.start, sft.microBatch!.range.end), '16');
  assert.match(sft.inexpressible.tensorParallel!, /no tensor, pipeline or context parallel degree/);
  assert.deepEqual(dims(setupOf(DPO)), ['bf16', 0, 'full', 8, 2]);
  // Nothing said: micro-batch 8, accumulation 1, fp32, no FSDP, no checkpointing, all transformers' defaults.
  const bare = setupOf('output_dir: out\nbf16: false\n');
  assert.deepEqual([...dims(bare), bare.microBatch?.stated, bare.gradientAccumulation?.stated], ['fp32', 0, 'none', 8, 1, false, false]);
  // PyYAML (yaml.safe_load) reads yes/on as true; a quoted "true" is a string TrlParser and parse_yaml_file read apart.
  assert.equal(setupOf('output_dir: out\nbf16: yes\n').precision?.value, 'bf16');
  assert.equal(setupOf('output_dir: out\nfp16: True\n').precision?.value, 'fp16');
  assert.equal(setupOf('output_dir: out\nbf16: "true"\n').precision, undefined);
  // fsdp as words, as a list, as a bool; its offload is parameter offload.
  const fsdp = (value: string) => {
    const s = setupOf(`per_device_train_batch_size: 2\nfsdp: ${value}\n`);
    return [s.zeroStage?.value, s.hybridShard?.value, s.cpuOffload?.value, s.paramOffload?.value];
  };
  assert.deepEqual(fsdp('full_shard auto_wrap'), [3, false, false, false]);
  assert.deepEqual(fsdp('[hybrid_shard, offload, auto_wrap]'), [3, true, true, true]);
  assert.deepEqual(fsdp('\n  - shard_grad_op\n  - auto_wrap'), [2, false, false, false]);
  assert.deepEqual(fsdp('true'), [3, false, false, false]);
  assert.deepEqual(fsdp('""'), [0, false, false, false]);
  // A count the Trainer cannot run states nothing.
  assert.equal(setupOf('per_device_train_batch_size: 0\nbf16: true\n').microBatch, undefined);
});

test('auto_find_batch_size: the stated micro-batch is only where the run starts halving', () => {
  assert.equal(setupOf(`${DPO}auto_find_batch_size: true\n`).microBatch, undefined);
  assert.equal(setupOf(`${DPO}auto_find_batch_size: false\n`).microBatch?.value, 8);
  // Still the accumulation the run uses.
  assert.equal(setupOf(`${DPO}auto_find_batch_size: true\n`).gradientAccumulation?.value, 2);
});

test('the fix writes the plan’s values into the recipe: values in place, missing keys appended, comments and key order kept', () => {
  // Plan: ZeRO-3 + bf16 + recompute, micro-batch 2 × accumulation 8 on 8 GPUs = 128, the recipe's own 16 × 1 × 8.
  const fixed = fixAll('config_full.yaml', SFT, llamaPlan()).text;
  assert.equal(fixed, SFT
    .replace('gradient_accumulation_steps: 1', 'gradient_accumulation_steps: 8')
    .replace('per_device_train_batch_size: 16', 'per_device_train_batch_size: 2')
    .replace('- wandb\n', '- wandb\nfsdp: full_shard auto_wrap\n'));
  assert.deepEqual(checkConfig('config_full.yaml', fixed, llamaPlan()).findings, []);
  // fp16 without checkpointing and sharding: the precision key renamed in place, the bool rewritten (its comment kept).
  const fp16 = fixAll('config_full.yaml', SFT, llamaPlan({ precision: 'fp16', recompute: 'none', zeroStage: 0 })).text;
  assert.equal(fp16, SFT
    .replace('bf16: true', 'fp16: true')
    .replace('gradient_checkpointing: true  # saves memory', 'gradient_checkpointing: false  # saves memory')
    .replace('gradient_accumulation_steps: 1', 'gradient_accumulation_steps: 8')
    .replace('per_device_train_batch_size: 16', 'per_device_train_batch_size: 2'));
  // A key written without a value is the default, and is written in place, never a second time.
  const empty = 'output_dir: out\nbf16: true\ngradient_checkpointing: True\nfsdp: full_shard auto_wrap\nper_device_train_batch_size:\ngradient_accumulation_steps: 2\n';
  assert.equal(setupOf(empty).microBatch?.value, 8);
  assert.equal(fixAll('config_full.yaml', empty, llamaPlan({ recompute: 'none' })).text,
    'output_dir: out\nbf16: true\ngradient_checkpointing: False\nfsdp: full_shard auto_wrap\nper_device_train_batch_size: 2\ngradient_accumulation_steps: 8\n');
  // No sharding in the plan: the fsdp key goes, with its line.
  assert.equal(fixAll('config_full.yaml', empty, llamaPlan({ zeroStage: 0, microBatch: 8, gradientAccumulation: 2 })).text, empty.replace('fsdp: full_shard auto_wrap\n', ''));
  // ZeRO-1 has no FSDP word: said, with where to write it, and nothing is "fixed" into something else.
  const one = checkConfig('config_full.yaml', empty, llamaPlan({ zeroStage: 1, microBatch: 8, gradientAccumulation: 2 })).findings;
  assert.deepEqual(one.map((f) => f.code), ['cannot-express']);
  assert.match(one[0]!.message, /ZeRO 1, which a Hugging Face Trainer recipe cannot express: in a recipe the Trainer shards with FSDP's words.*name it with deepspeed: ds_config\.json/);

  // JSON (parse_json_file): values in place, the swapped flag renamed, a missing key first, a list kept a list.
  const json = '{\n  "output_dir": "out",\n  "fp16": true,\n  "fsdp": ["full_shard", "offload", "auto_wrap"],\n  "per_device_train_batch_size": 4\n}\n';
  assert.deepEqual(detectConfigFormats('args.json', json), ['hf-trainer-recipe']);
  assert.equal(fixAll('args.json', json, llamaPlan()).text,
    '{\n  "gradient_checkpointing": true,\n  "gradient_accumulation_steps": 2,\n  "output_dir": "out",\n  "bf16": true,\n  "fsdp": ["full_shard", "auto_wrap"],\n  "per_device_train_batch_size": 2\n}\n');
  assert.equal(fixAll('args.json', json, llamaPlan({ zeroStage: 0, recompute: 'none', microBatch: 4, gradientAccumulation: 4 })).text,
    '{\n  "output_dir": "out",\n  "bf16": true,\n  "per_device_train_batch_size": 4\n}\n');
});

test('LLaMA-Factory: checkpointing on unless disabled, LoRA and quantized bases said, pure_bf16 is bf16', () => {
  const full = setupOf(LF_FULL, 'llama3_full_sft.yaml');
  // Full fine-tuning: nothing to say but that the JSON was not read (no file access here).
  assert.deepEqual([full.label, full.recompute?.value, full.recompute?.stated, full.link?.path, full.unmodelled?.map((u) => u.short)], ['LLaMA-Factory recipe', 'full', false, 'examples/deepspeed/ds_z3_config.json', ['examples/deepspeed/ds_z3_config.json not read']]);
  const off = `${LF_LORA}disable_gradient_checkpointing: true\n`;
  assert.equal(setupOf(off, 'x.yaml').recompute?.value, 'none');
  assert.equal(setupOf(`${off}gradient_checkpointing: true\n`, 'x.yaml').recompute?.value, 'full');
  // The plan recomputes nothing: LLaMA-Factory is told not to checkpoint.
  assert.equal(fixAll('x.yaml', LF_LORA, llamaPlan({ recompute: 'none', zeroStage: 0, microBatch: 1 })).text, `${LF_LORA}disable_gradient_checkpointing: true\n`);
  assert.equal(fixAll('x.yaml', off, llamaPlan({ zeroStage: 0, microBatch: 1 })).text, off.replace('disable_gradient_checkpointing: true', 'disable_gradient_checkpointing: false'));

  // What is trained changes: said on the key, in the plan line, never silently planned as full.
  const lora = setupOf(LF_LORA, 'x.yaml');
  assert.equal(lora.unmodelled?.length, 1);
  assert.match(lora.unmodelled![0]!.message, /^finetuning_type: lora trains LoRA adapters of rank 8 on every Linear layer with the base model frozen: WAP models LoRA only where the code builds it .* trains every parameter/);
  assert.equal(LF_LORA.slice(lora.unmodelled![0]!.range.start, lora.unmodelled![0]!.range.end), 'lora');
  const notes = checkConfig('x.yaml', LF_LORA, undefined).findings;
  assert.deepEqual(notes.map((f) => [f.code, f.severity]), [['setup-unmodelled', 'warning']]);
  // LLaMA-Factory's default method is LoRA; QLoRA's quantized base is said too.
  const implicit = setupOf(`${LF_LORA.replace('finetuning_type: lora\n', '')}quantization_bit: 4\n`, 'x.yaml');
  assert.deepEqual(implicit.unmodelled?.map((u) => u.short), ['LoRA adapters', 'quantized base model']);
  assert.match(implicit.unmodelled![0]!.message, /^finetuning_type: lora \(LLaMA-Factory's default\)/);
  // trl's ModelConfig in an alignment-handbook QLoRA recipe.
  const qlora = setupOf(`${SFT}use_peft: true\nlora_r: 16\nload_in_4bit: true\n`);
  assert.deepEqual(qlora.unmodelled?.map((u) => u.short), ['LoRA adapters', 'quantized base model']);
  assert.equal(setupOf(`${LF_LORA}pure_bf16: true\n`.replace('bf16: true\n', ''), 'x.yaml').precision?.value, 'bf16');
});

test('deepspeed: a JSON read from disk with the mismatches transformers refuses; a mapping read in place, or said', () => {
  const dir = folder('lf', { 'examples/deepspeed/ds_z3_config.json': DS_Z3, 'examples/deepspeed/ds_mb2.json': DS_MB2 });
  const recipe = join(dir, 'examples/train_full/llama3_full_sft.yaml');
  const [setup] = readConfigSetups(recipe, LF_FULL, disk);
  assert.deepEqual([setup!.zeroStage?.value, setup!.zeroStage?.source, setup!.precision?.value, setup!.microBatch?.value], [3, 'examples/deepspeed/ds_z3_config.json', 'bf16', 1]);
  assert.equal(checkConfig(recipe, LF_FULL, undefined, undefined, disk).findings.length, 0);
  const differs = checkConfig(recipe, LF_FULL, llamaPlan({ zeroStage: 2 }), undefined, disk).findings.find((f) => f.code === 'setup-differs');
  assert.match(differs!.message, /trains with ZeRO 3 \(in examples\/deepspeed\/ds_z3_config\.json\); the plan .* uses ZeRO 2/);

  // The JSON's micro-batch 2 against the recipe's 1: transformers stops at start-up.
  const mismatched = LF_FULL.replace('ds_z3_config.json', 'ds_mb2.json');
  const conflicts = checkConfig(recipe, mismatched, undefined, undefined, disk).findings.filter((f) => f.code === 'linked-config-conflict');
  assert.deepEqual(conflicts.map((f) => [f.severity, mismatched.slice(f.range.start, f.range.end)]), [['error', '1']]);
  assert.match(conflicts[0]!.message, /LLaMA-Factory recipe says micro-batch 1 and examples\/deepspeed\/ds_mb2\.json says 2: transformers .* refuses to start/);

  const inline = setupOf('per_device_train_batch_size: 2\nbf16: true\ndeepspeed:\n  zero_optimization:\n    stage: 2\n    offload_optimizer:\n      device: cpu\n');
  assert.deepEqual([inline.zeroStage?.value, inline.cpuOffload?.value, inline.paramOffload?.value, inline.link], [2, true, false, undefined]);
  const unreadable = setupOf('per_device_train_batch_size: 2\ndeepspeed:\n  zero_optimization:\n    stage: "3"\n');
  assert.equal(unreadable.zeroStage, undefined);
  assert.match(unreadable.unmodelled![0]!.message, /^deepspeed: is a DeepSpeed config whose zero_optimization\.stage is not a number WAP can read/);
});

test('the GPUs are those of the launch scripts that pass the recipe; an accelerate config that shards decides the sharding', () => {
  const dir = folder('handbook', {
    'recipes/zephyr/sft/config_full.yaml': SFT,
    'recipes/zephyr/dpo/config_full.yaml': DPO,
    'scripts/run_sft.py': 'from trl import SFTConfig, TrlParser\nfrom mymodel import Zephyr\nmodel = Zephyr()\n',
    'scripts/mymodel.py': 'class Zephyr: ...\n',
    'sft.sh': '#!/bin/bash\nACCELERATE_LOG_LEVEL=info accelerate launch --num_processes 8 --num_machines 1 scripts/run_sft.py recipes/zephyr/sft/config_full.yaml\n',
    'dpo.sh': 'accelerate launch --config_file recipes/accelerate_configs/zero3.yaml scripts/run_dpo.py --config recipes/zephyr/dpo/config_full.yaml\n',
  });
  const sft = join(dir, 'recipes/zephyr/sft/config_full.yaml');
  const [setup] = readConfigSetups(sft, SFT, disk);
  assert.deepEqual([setup!.world, setup!.worldFrom, pinnedOptions(BASE, setup!, sft).gpus, pinnedOptions(BASE, setup!, sft).batch], [8, 'sft.sh', 8, 128]);
  // Launched on 8 GPUs, compared on the plan's 8: the global batch 16 × 1 × 8 is kept.
  assert.equal(fixAll(sft, SFT, llamaPlan(), undefined, disk).text, fixAll('config_full.yaml', SFT, llamaPlan()).text);
  // The model is the one the script that loads the recipe builds: a script that parses its run (TrlParser) is read
  // itself, with the run's arguments, not the class it imports at its defaults.
  assert.deepEqual(resolveLaunchedModel(sft, SFT, disk), { file: join(dir, 'scripts/run_sft.py'), how: 'sft.sh runs with config_full.yaml' });

  // accelerate's zero3.yaml (the handbook's, as released) decides ZeRO, offload and the GPU count; the recipe's own values stay.
  const dpo = join(dir, 'recipes/zephyr/dpo/config_full.yaml');
  const missing = readConfigSetups(dpo, DPO, disk)[0]!;
  assert.deepEqual([missing.zeroStage, missing.cpuOffload, missing.world], [undefined, undefined, undefined]);
  assert.match(missing.unmodelled![0]!.message, /^dpo\.sh's accelerate launch --config_file recipes\/accelerate_configs\/zero3\.yaml was not found as a readable file/);
  mkdirSync(join(dir, 'recipes/accelerate_configs'), { recursive: true });
  writeFileSync(join(dir, 'recipes/accelerate_configs/zero3.yaml'), 'compute_environment: LOCAL_MACHINE\ndebug: false\ndeepspeed_config:\n  deepspeed_multinode_launcher: standard\n  offload_optimizer_device: none\n  offload_param_device: none\n  zero3_init_flag: true\n  zero3_save_16bit_model: true\n  zero_stage: 3\ndistributed_type: DEEPSPEED\ndowncast_bf16: \'no\'\nmachine_rank: 0\nmain_training_function: main\nmixed_precision: bf16\nnum_machines: 1\nnum_processes: 8\nrdzv_backend: static\nsame_network: true\ntpu_env: []\ntpu_use_cluster: false\ntpu_use_sudo: false\nuse_cpu: false\n');
  const [byConfig] = readConfigSetups(dpo, DPO, disk);
  assert.deepEqual([byConfig!.zeroStage?.value, byConfig!.cpuOffload?.value, byConfig!.paramOffload?.value, byConfig!.world, byConfig!.microBatch?.value, byConfig!.precision?.value], [3, false, false, 8, 8, 'bf16']);
  assert.equal(byConfig!.zeroStage!.source, 'recipes/accelerate_configs/zero3.yaml');
  const differs = checkConfig(dpo, DPO, llamaPlan({ zeroStage: 1, microBatch: 8, gradientAccumulation: 2 }), undefined, disk).findings.find((f) => f.code === 'setup-differs');
  assert.match(differs!.message, /trains with ZeRO 3 \(in recipes\/accelerate_configs\/zero3\.yaml\)/);

  // LLaMA-Factory's CLI: NNODES × NPROC_PER_NODE, or the GPUs CUDA_VISIBLE_DEVICES lists; torchrun on its train.py.
  const world = (launch: string): number | undefined => {
    const lf = folder(`lf-${launch.length}-${launch.charCodeAt(0)}`, { 'examples/train_lora/llama3_lora_sft.yaml': LF_LORA, 'run.sh': launch });
    return readConfigSetups(join(lf, 'examples/train_lora/llama3_lora_sft.yaml'), LF_LORA, disk)[0]!.world;
  };
  assert.equal(world('FORCE_TORCHRUN=1 NNODES=2 NODE_RANK=0 NPROC_PER_NODE=8 llamafactory-cli train examples/train_lora/llama3_lora_sft.yaml\n'), 16);
  assert.equal(world('export CUDA_VISIBLE_DEVICES=0,1,2,3\nllamafactory-cli train examples/train_lora/llama3_lora_sft.yaml\n'), 4);
  assert.equal(world('llamafactory-cli train examples/train_lora/llama3_lora_sft.yaml\n'), undefined);
  assert.equal(world('torchrun --nproc_per_node 4 src/train.py examples/train_lora/llama3_lora_sft.yaml\n'), 4);
  assert.equal(world('llamafactory-cli train examples/train_lora/other.yaml\n'), undefined);
  // Only a hub model and LLaMA-Factory's own CLI: no model WAP can plan from code.
  const lf = folder('lf-model', { 'examples/train_lora/llama3_lora_sft.yaml': LF_LORA, 'run.sh': 'llamafactory-cli train examples/train_lora/llama3_lora_sft.yaml\n' });
  assert.equal(resolveLaunchedModel(join(lf, 'examples/train_lora/llama3_lora_sft.yaml'), LF_LORA, disk), undefined);
});

test('a command line that passes a recipe states only what it writes; a launcher that shards decides the sharding', () => {
  const overrides = 'accelerate launch --num_processes 8 run_sft.py recipe.yaml --per_device_train_batch_size 4 --gradient_accumulation_steps 2\n';
  const [s] = readConfigSetups('run.sh', overrides);
  assert.deepEqual([s!.microBatch?.value, s!.gradientAccumulation?.value, s!.precision, s!.recompute, s!.zeroStage, s!.world], [4, 2, undefined, undefined, undefined, 8]);
  // The micro-batch alone makes no global batch while the recipe holds the accumulation.
  const alone = readConfigSetups('run.sh', 'python sft.py --config recipe.yaml --per_device_train_batch_size 4\n')[0]!;
  assert.deepEqual([alone.microBatch, alone.gradientAccumulation], [undefined, undefined]);
  const sharded = 'accelerate launch --config_file fsdp.yaml train.py --bf16 --per_device_train_batch_size 4\n';
  const [t] = readConfigSetups('run.sh', sharded);
  assert.deepEqual([t!.zeroStage, t!.precision?.value, t!.microBatch?.value], [undefined, 'bf16', 4]);
  // Without file access the config it names is not read: the stage stays the search's, and that is said.
  assert.match(t!.unmodelled![0]!.message, /^accelerate launch --config_file fsdp\.yaml was not read: the ZeRO stage and offload it sets are unknown/);
  const plugin = readConfigSetups('run.sh', 'accelerate launch --use_deepspeed train.py --bf16 --per_device_train_batch_size 4\n')[0]!;
  assert.match(plugin.unmodelled![0]!.message, /^launched with accelerate launch --use_deepspeed: its DeepSpeed or FSDP settings decide/);
});

test('detection: accelerate, DeepSpeed and other YAML/JSON files stay theirs; Trainer keys nested deeper are no recipe', () => {
  assert.deepEqual(detectConfigFormats('zero3.yaml', 'compute_environment: LOCAL_MACHINE\ndeepspeed_config:\n  gradient_accumulation_steps: 1\n  zero_stage: 3\ndistributed_type: DEEPSPEED\nmixed_precision: bf16\nnum_processes: 8\n'), ['accelerate']);
  assert.deepEqual(detectConfigFormats('ds.json', '{"bf16": {"enabled": true}, "gradient_accumulation_steps": 4, "zero_optimization": {"stage": 2}}'), ['deepspeed']);
  assert.deepEqual(detectConfigFormats('ds.json', DS_Z3), ['deepspeed']);
  const workflow = 'name: tests\non: [push]\njobs:\n  train:\n    runs-on: ubuntu-latest\n    env:\n      per_device_train_batch_size: 2\n    steps:\n      - run: torchrun train.py --per_device_train_batch_size 2 --bf16\n';
  const compose = 'services:\n  trainer:\n    image: pytorch/pytorch\n    command: python train.py --output_dir /out --bf16\n    environment:\n      - gradient_accumulation_steps=4\n';
  const hydra = 'defaults:\n  - model: llama\n  - _self_\noutput_dir: outputs\ngradient_accumulation_steps: 4\nbf16: true\n';
  const axolotl = 'base_model: NousResearch/Llama-2-7b-hf\nmicro_batch_size: 2\ngradient_accumulation_steps: 4\nbf16: auto\noutput_dir: ./out\n';
  const torchtune = 'output_dir: /tmp/llama\nbatch_size: 2\ngradient_accumulation_steps: 8\ndtype: bf16\nenable_activation_checkpointing: True\n';
  for (const [file, text] of [['.github/workflows/ci.yml', workflow], ['docker-compose.yml', compose], ['conf/config.yaml', hydra], ['8B_full.yaml', torchtune]] as const) {
    assert.deepEqual(detectConfigFormats(file, text), [], file);
  }
  // axolotl's names for the same arguments: its own format (axolotl.ts), never a Trainer recipe.
  assert.deepEqual(detectConfigFormats('axolotl.yaml', axolotl), ['axolotl']);
  // A JSON recipe holding DeepSpeed inline is the recipe's; a JSON whose Trainer keys sit deeper states nothing.
  assert.deepEqual(detectConfigFormats('args.json', '{"output_dir": "out", "per_device_train_batch_size": 2, "deepspeed": {"zero_optimization": {"stage": 3}}}'), ['hf-trainer-recipe']);
  assert.equal(setupOf('{"output_dir": "out", "per_device_train_batch_size": 2, "deepspeed": {"zero_optimization": {"stage": 3}}}', 'args.json').zeroStage?.value, 3);
  const nested = '{"runs": {"a": {"per_device_train_batch_size": 2, "output_dir": "x"}}}';
  assert.deepEqual([readConfigSetups('sweep.json', nested), checkConfig('sweep.json', nested, llamaPlan()).findings], [[], []]);
});

test('a half-typed recipe never throws: unfinished values state nothing, broken YAML is one malformed-config finding', () => {
  for (const text of ['per_device_train_batch_size: 4\nbf16: tru', 'per_device_train_batch_size: 4\nbf16: true\ngradient_accumulation_steps:', 'per_device_train_batch_size: 4\nfsdp: [full_shard, 3]\n', 'per_device_train_batch_size: 4\ndeepspeed: \n', 'per_device_train_batch_size: 2\nbf16: [true]\n']) {
    const findings = checkConfig('recipe.yaml', text, llamaPlan()).findings;
    assert.ok(!findings.some((f) => f.code === 'malformed-config'), `${text}: ${JSON.stringify(findings)}`);
    for (const f of findings) if (f.fix) applyTextEdits(text, f.fix.edits);
  }
  for (const text of ['per_device_train_batch_size: [4\nbf16: true\n', 'bf16: true\nbf16: false\nper_device_train_batch_size: 2\n', 'per_device_train_batch_size: 2\nbf16: "true\n', '- per_device_train_batch_size: 2\n']) {
    const findings = checkConfig('recipe.yaml', text, llamaPlan()).findings;
    assert.deepEqual(findings.map((f) => f.code), text.startsWith('- ') ? [] : ['malformed-config'], text);
  }
  assert.deepEqual(checkConfig('args.json', '{"output_dir": "out", "per_device_train_batch_size": 2,', llamaPlan()).findings.map((f) => f.code), ['malformed-config']);
});
