/**
 * Hugging Face TrainingArguments as a training config (configs/trainer.ts,
 * trainerSetup.ts): each keyword's reading (fsdp words, bf16/fp16, gradient
 * checkpointing, batch sizes and their defaults), what is left to the run
 * (expressions, auto_find_batch_size, deepspeed=), the quick-fix's exact
 * edits, half-typed calls, and the script as its own launcher.
 */
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { checkConfig, detectConfigFormats, fixAll, initConfigReaders, readConfigSetups, resolveLaunchedModel } from '../../src/configs';
import { llamaPlan } from './llamaPlan';

before(() => initConfigReaders());

const script = (args: string, head = 'from transformers import TrainingArguments\n'): string => `${head}args = TrainingArguments(output_dir="out", ${args})\n`;
const setupOf = (args: string) => {
  const text = script(args);
  assert.deepEqual(detectConfigFormats('ft.py', text), ['hf-trainer']);
  return readConfigSetups('ft.py', text)[0]!;
};

test('keywords and their defaults: micro-batch 8, accumulation 1, fp32, no FSDP, no checkpointing', () => {
  const s = setupOf('learning_rate=1e-4');
  assert.deepEqual(
    [s.precision?.value, s.precision?.stated, s.zeroStage?.value, s.hybridShard?.value, s.recompute?.value, s.microBatch?.value, s.microBatch?.stated, s.gradientAccumulation?.value],
    ['fp32', false, 0, false, 'none', 8, false, 1],
  );
  const t = setupOf('bf16=True, gradient_checkpointing=True, per_device_train_batch_size=4, gradient_accumulation_steps=8, fsdp="hybrid_shard auto_wrap"');
  assert.deepEqual([t.precision?.value, t.zeroStage?.value, t.hybridShard?.value, t.recompute?.value, t.microBatch?.value, t.gradientAccumulation?.value], ['bf16', 3, true, 'full', 4, 8]);
  assert.equal(setupOf('fp16=True').precision?.value, 'fp16');
  assert.equal(setupOf('tf32=True').precision?.value, 'tf32');
  assert.deepEqual([setupOf('fsdp=["shard_grad_op", "auto_wrap"]').zeroStage?.value, setupOf('fsdp=True').zeroStage?.value, setupOf('fsdp=""').zeroStage?.value], [2, 3, 0]);
  // SFTConfig (trl) is TrainingArguments underneath, and names itself in messages.
  const sft = readConfigSetups('sft.py', script('bf16=True', 'from trl import SFTConfig\n').replace('TrainingArguments(', 'SFTConfig('))[0]!;
  assert.deepEqual([sft.label, sft.precision?.value], ['Hugging Face SFTConfig', 'bf16']);
});

test('what the run decides is not stated: expressions, auto_find_batch_size, and ZeRO under deepspeed=', () => {
  const s = setupOf('bf16=args.bf16, per_device_train_batch_size=args.batch, gradient_checkpointing=cfg.gc, deepspeed="ds_config.json"');
  assert.deepEqual([s.precision, s.microBatch, s.recompute, s.zeroStage, s.cpuOffload], [undefined, undefined, undefined, undefined, undefined]);
  assert.equal(setupOf('auto_find_batch_size=True, per_device_train_batch_size=64').microBatch, undefined);
  // Behind a flag, TrainingArguments is one run's choice among several: not read.
  assert.deepEqual(readConfigSetups('ft.py', 'from transformers import TrainingArguments\nif fast:\n    args = TrainingArguments(output_dir="o", bf16=True)\n'), []);
});

test('FSDP offload is parameter offload: both offload dims on the fsdp words, no "not modelled" warning; the fix drops it when the plan does not offload, writes it when the plan does', () => {
  const text = script('fsdp="full_shard offload auto_wrap", bf16=True');
  const s = readConfigSetups('ft.py', text)[0]!;
  assert.deepEqual([s.zeroStage?.value, s.cpuOffload?.value, s.paramOffload?.value], [3, true, true]);
  assert.equal(text.slice(s.paramOffload!.range.start, s.paramOffload!.range.end), '"full_shard offload auto_wrap"');
  assert.deepEqual(checkConfig('ft.py', text, undefined).findings.filter((f) => f.code === 'setup-unmodelled'), []);
  // The plan: ZeRO-2, no offload, micro-batch 2. One edit rewrites the fsdp words (auto_wrap stays); the Trainer's
  // default micro-batch 8 × 1 on the plan's 8 replicas (64) becomes 2 × 4.
  const fixed = fixAll('ft.py', text, llamaPlan({ zeroStage: 2, recompute: 'none' })).text;
  assert.equal(fixed, script('fsdp="shard_grad_op auto_wrap", bf16=True, per_device_train_batch_size=2, gradient_accumulation_steps=4'));
  // A plan with parameter offload agrees with it, and writes FSDP's "offload" into a config without it.
  const offloading = llamaPlan({ cpuOffload: true, paramOffload: true, recompute: 'none', microBatch: 8, gradientAccumulation: 2 });
  assert.deepEqual(checkConfig('ft.py', text, offloading).findings.filter((f) => f.code === 'setup-differs'), []);
  const plain = script('fsdp="full_shard auto_wrap", bf16=True');
  assert.equal(fixAll('ft.py', plain, offloading).text, script('fsdp="full_shard offload auto_wrap", bf16=True'));
});

test('the fix writes the plan in the user’s own form: a list stays a list, quotes stay; ZeRO-1 and optimizer offload, which FSDP has no words for, as an inline DeepSpeed dict', () => {
  const list = script("fsdp=['full_shard'], bf16=True, per_device_train_batch_size=2, gradient_accumulation_steps=8, gradient_checkpointing=True");
  assert.equal(fixAll('ft.py', list, llamaPlan({ zeroStage: 2, hybridShard: true })).text, list.replace("['full_shard']", "['hybrid_shard_zero2', 'auto_wrap']"));
  const ddp = script('bf16=True, per_device_train_batch_size=2, gradient_accumulation_steps=8, gradient_checkpointing=True');
  const one = checkConfig('ft.py', ddp, llamaPlan({ zeroStage: 1 })).findings.find((f) => f.code === 'setup-differs');
  assert.match(one?.message ?? '', /trains with ZeRO 0; the plan .* uses ZeRO 1/);
  const fixedOne = fixAll('ft.py', ddp, llamaPlan({ zeroStage: 1 })).text;
  assert.ok(fixedOne.includes(', deepspeed={"zero_optimization": {"stage": 1}, "bf16": {"enabled": "auto"}, "fp16": {"enabled": "auto"}, "train_micro_batch_size_per_gpu": "auto", "gradient_accumulation_steps": "auto"})'), fixedOne);
  // Read back, the dict states ZeRO-1 and the config agrees with the plan.
  assert.equal(readConfigSetups('ft.py', fixedOne)[0]!.zeroStage?.value, 1);
  assert.deepEqual(checkConfig('ft.py', fixedOne, llamaPlan({ zeroStage: 1 })).findings.filter((f) => f.code === 'setup-differs'), []);
  // From FSDP to ZeRO-2 with the optimizer offloaded: FSDP goes off, the dict says both.
  const fsdp = script('fsdp="full_shard auto_wrap", bf16=True, per_device_train_batch_size=2, gradient_accumulation_steps=8, gradient_checkpointing=True');
  const offloaded = fixAll('ft.py', fsdp, llamaPlan({ zeroStage: 2, cpuOffload: true })).text;
  assert.ok(offloaded.includes('fsdp="", '), offloaded);
  const back = readConfigSetups('ft.py', offloaded)[0]!;
  assert.deepEqual([back.zeroStage?.value, back.cpuOffload?.value], [2, true]);
  // An inline dict's stage is rewritten in place.
  assert.equal(fixAll('ft.py', offloaded, llamaPlan({ zeroStage: 3, cpuOffload: true })).text, offloaded.replace('"stage": 2', '"stage": 3'));
  // TP has no TrainingArguments keyword: an info that says where to go instead.
  const tp = checkConfig('ft.py', ddp, llamaPlan({ zeroStage: 0, tensorParallel: 2 })).findings;
  assert.ok(tp.some((f) => f.code === 'cannot-express' && /TP 2, which a Hugging Face TrainingArguments cannot express: .*--format megatron/.test(f.message)), JSON.stringify(tp));
});

test('an agreeing config has no setup finding; a half-typed call is one malformed-config error, never a throw', () => {
  const agreeing = script('bf16=True, fsdp="full_shard auto_wrap", gradient_checkpointing=True, per_device_train_batch_size=2, gradient_accumulation_steps=8');
  assert.deepEqual(checkConfig('ft.py', agreeing, llamaPlan()).findings.filter((f) => f.code === 'setup-differs'), []);
  const broken = 'from transformers import TrainingArguments\nargs = TrainingArguments(output_dir="out", bf16=, fsdp="full_shard")\n';
  const findings = checkConfig('ft.py', broken, llamaPlan()).findings;
  assert.deepEqual(findings.map((f) => [f.code, f.severity]), [['malformed-config', 'error']]);
  assert.match(findings[0]!.message, /syntax error inside the TrainingArguments\(…\) call/);
});

test('a Trainer script is its own launcher, named as one (not as a Lightning script)', () => {
  const text = script('bf16=True', 'from transformers import AutoModelForCausalLM, Trainer, TrainingArguments\nmodel = AutoModelForCausalLM.from_pretrained("./llama")\n');
  const io = { read: (p: string) => (p === 'p/ft.py' ? text : undefined), list: () => ['ft.py'] };
  assert.deepEqual(resolveLaunchedModel('p/ft.py', text, io), { file: 'p/ft.py', how: 'the Hugging Face Trainer script ft.py' });
});
