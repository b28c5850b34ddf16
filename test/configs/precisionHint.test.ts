/** The precision a training config beside the model states (accelerate, DeepSpeed, Lightning). */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { before, test } from 'node:test';
import { initConfigReaders, precisionHint, precisionHintCandidates, readConfigSetups, withPrecisionFrom } from '../../src/configs';

before(() => initConfigReaders());

test('accelerate mixed_precision, DeepSpeed bf16/fp16.enabled and Lightning precision= each give the precision and say where', () => {
  assert.deepEqual(precisionHint([{ name: 'accelerate.yaml', text: 'distributed_type: MULTI_GPU\nnum_processes: 8\nmixed_precision: bf16\n' }]), { precision: 'bf16', source: 'accelerate.yaml (mixed_precision: bf16)', ampStyle: 'autocast', ampStyleSource: 'accelerate.yaml (mixed_precision: bf16: accelerate runs forward under torch.autocast)' });
  assert.equal(precisionHint([{ name: 'a.yaml', text: "distributed_type: MULTI_GPU\nmixed_precision: 'no'\n" }])?.precision, 'fp32');
  assert.deepEqual(precisionHint([{ name: 'ds.json', text: '{"train_batch_size": 64, "fp16": {"enabled": true}}' }]), { precision: 'fp16', source: 'ds.json (fp16.enabled)', ampStyle: 'master-weights', ampStyleSource: 'ds.json (fp16.enabled: DeepSpeed keeps fp32 master weights in its optimizer)' });
  assert.equal(precisionHint([{ name: 'ds.json', text: '{"train_batch_size": 64, "bf16": {"enabled": true}, "fp16": {"enabled": false}}' }])?.precision, 'bf16');
  assert.match(precisionHint([{ name: 'ds.json', text: '{"train_batch_size": 64}' }])?.source ?? '', /DeepSpeed trains in fp32/);
  // DeepSpeed's pydantic config takes "true" for a bool: bf16 it is.
  assert.equal(precisionHint([{ name: 'ds.json', text: '{"train_batch_size": 64, "bf16": {"enabled": "true"}}' }])?.precision, 'bf16');
  assert.equal(precisionHint([{ name: 'ds.json', text: '{"train_batch_size": 64, "bf16": {"enabled": 2}}' }]), undefined, 'unreadable: no hint rather than fp32');
  // "auto" is decided at launch by the HF Trainer: no guess.
  assert.equal(precisionHint([{ name: 'ds.json', text: '{"train_batch_size": "auto", "bf16": {"enabled": "auto"}}' }]), undefined);
  const lightning = 'import lightning as L\ntrainer = L.Trainer(devices=4, precision="bf16-mixed")\n';
  assert.deepEqual(precisionHint([{ name: 'train.py', text: lightning }]), { precision: 'bf16', source: 'train.py (Trainer precision="bf16-mixed")', ampStyle: 'autocast', ampStyleSource: 'train.py (Trainer precision="bf16-mixed")' });
  assert.equal(precisionHint([{ name: 'train.py', text: 'from pytorch_lightning import Trainer\ntrainer = Trainer(devices=2, precision=16)\n' }])?.precision, 'fp16');
  assert.equal(precisionHint([{ name: 'train.py', text: 'from pytorch_lightning import Trainer\ntrainer = Trainer(devices=2, precision=args.precision)\n' }]), undefined);
  assert.equal(precisionHint([{ name: 'model.py', text: 'import torch\n' }]), undefined);
});

test('how the config holds 16-bit tensors: accelerate and Lightning "-mixed" autocast, Lightning "-true" is pure, accelerate over DeepSpeed leaves it to DeepSpeed', () => {
  const style = (name: string, text: string) => precisionHint([{ name, text }])?.ampStyle;
  assert.equal(style('train.py', 'import lightning as L\ntrainer = L.Trainer(precision="bf16-true")\n'), 'pure');
  assert.equal(style('train.py', 'import lightning as L\ntrainer = L.Trainer(precision="16-true")\n'), 'pure');
  assert.equal(style('train.py', 'from pytorch_lightning import Trainer\ntrainer = Trainer(precision=16)\n'), 'autocast');
  assert.equal(style('train.py', 'import lightning as L\ntrainer = L.Trainer(precision="32-true")\n'), undefined, 'fp32 has no 16-bit style');
  assert.equal(style('acc.yaml', 'distributed_type: DEEPSPEED\nmixed_precision: bf16\n'), undefined, 'DeepSpeed decides');
  assert.equal(style('acc.yaml', "distributed_type: MULTI_GPU\nmixed_precision: 'no'\n"), undefined);
  const hint = precisionHint([{ name: 'acc.yaml', text: 'distributed_type: MULTI_GPU\nmixed_precision: bf16\n' }]);
  // --precision bf16 beside that config still autocasts; --precision fp16 is another run, and --amp-style wins.
  assert.deepEqual(withPrecisionFrom({ batch: 8, objective: 'throughput', strategies: 'dp', optimizer: 'adam', precision: 'bf16', precisionSource: '--precision' }, hint), { batch: 8, objective: 'throughput', strategies: 'dp', optimizer: 'adam', precision: 'bf16', precisionSource: '--precision', ampStyle: 'autocast', ampStyleSource: hint!.ampStyleSource });
  assert.equal(withPrecisionFrom({ batch: 8, objective: 'throughput', strategies: 'dp', optimizer: 'adam', precision: 'fp16' }, hint).ampStyle, undefined);
  assert.equal(withPrecisionFrom({ batch: 8, objective: 'throughput', strategies: 'dp', optimizer: 'adam', ampStyle: 'pure' }, hint).ampStyle, 'pure');
  assert.equal(withPrecisionFrom({ batch: 8, objective: 'throughput', strategies: 'dp', optimizer: 'adam' }, hint).precision, 'bf16');
});

test('broken configs give no hint rather than an error; the first config that states one wins', () => {
  assert.equal(precisionHint([{ name: 'ds.json', text: '{"train_batch_size": 64, "bf16": ' }]), undefined);
  const files = [
    { name: 'broken.yaml', text: 'num_processes: [\n' },
    { name: 'ds.json', text: '{"train_batch_size": 64, "bf16": {"enabled": true}}' },
  ];
  assert.equal(precisionHint(files)?.precision, 'bf16');
  assert.deepEqual(precisionHintCandidates(['b.py', 'a.yaml', 'README.md', 'ds.json', 'x.bin']), ['a.yaml', 'b.py', 'ds.json']);
  // A folder of many files: the model's own file is read whatever its name sorts as.
  const many = Array.from({ length: 100 }, (_, i) => `m${String(i).padStart(3, '0')}.py`);
  const picked = precisionHintCandidates([...many, 'zoo.py'], 'zoo.py');
  assert.deepEqual([picked.length, picked[0], picked[1], picked[63]], [64, 'zoo.py', 'm000.py', 'm062.py']);
});

test('the examples directory: its accelerate config keeps fp32', () => {
  const dir = 'examples/pytorch';
  const files = precisionHintCandidates(readdirSync(dir)).map((name) => ({ name, text: readFileSync(`${dir}/${name}`, 'utf8') }));
  assert.deepEqual(precisionHint(files), { precision: 'fp32', source: 'accelerate_config.yaml (mixed_precision: no)' });
});

test("a plain PyTorch loop's own autocast: its dtype (CUDA's float16 when absent) under torch.autocast; one that may not run says nothing", () => {
  const hint = (text: string) => precisionHint([{ name: 'train.py', text: `import torch\n${text}` }]);
  assert.deepEqual(hint('with torch.autocast(device_type="cuda", dtype=torch.bfloat16):\n    loss = model(x)\n'), {
    precision: 'bf16', source: 'train.py:2 (torch.autocast(device_type="cuda", dtype=torch.bfloat16))', ampStyle: 'autocast', ampStyleSource: 'train.py:2 (torch.autocast(device_type="cuda", dtype=torch.bfloat16))',
  });
  assert.equal(hint("with torch.amp.autocast('cuda', torch.float16):\n    pass\n")?.precision, 'fp16');
  assert.equal(hint('with torch.cuda.amp.autocast():\n    pass\n')?.precision, 'fp16');
  assert.equal(hint('from torch.cuda.amp import autocast\nwith autocast(dtype=torch.bfloat16):\n    pass\n')?.precision, 'bf16');
  // CPU autocast, a disabled or maybe-disabled one, a dtype WAP cannot read (nanoGPT's ptdtype), or a bare torch
  // autocast without its device: no hint.
  assert.equal(hint("with torch.autocast('cpu', dtype=torch.bfloat16):\n    pass\n"), undefined);
  assert.equal(hint('with torch.cuda.amp.autocast(enabled=False):\n    pass\n'), undefined);
  assert.equal(hint('with torch.cuda.amp.autocast(enabled=args.amp):\n    pass\n'), undefined);
  assert.equal(hint("ctx = torch.amp.autocast(device_type='cuda', dtype=ptdtype)\n"), undefined);
  assert.equal(hint('from torch import autocast\nwith autocast(device_type):\n    pass\n'), undefined);
});

test("Hugging Face Trainer's TrainingArguments(bf16=True) / fp16 / tf32, and trl's SFTConfig: the precision, under autocast; an unreadable or flagged one says nothing", () => {
  const hint = (text: string) => precisionHint([{ name: 'finetune.py', text: `from transformers import TrainingArguments\nfrom trl import SFTConfig\n${text}` }]);
  assert.deepEqual(hint('args = TrainingArguments(output_dir="out", per_device_train_batch_size=8,\n    bf16=True, gradient_accumulation_steps=4)\n'), {
    precision: 'bf16', source: 'finetune.py:3 (TrainingArguments(… bf16=True …))', ampStyle: 'autocast', ampStyleSource: 'finetune.py:3 (TrainingArguments(… bf16=True …))',
  });
  assert.equal(hint('cfg = SFTConfig(output_dir="out", fp16=True)\n')?.precision, 'fp16');
  assert.deepEqual(hint('args = transformers.TrainingArguments("out", tf32=True)\n'), { precision: 'tf32', source: 'finetune.py:3 (transformers.TrainingArguments(… tf32=True …))' });
  // With deepspeed= the Trainer hands bf16 to DeepSpeed's engine: 16-bit weights with fp32 masters, not autocast.
  assert.deepEqual(hint('args = TrainingArguments("out", bf16=True, deepspeed="ds_config.json")\n'), {
    precision: 'bf16', source: 'finetune.py:3 (TrainingArguments(… bf16=True …))', ampStyle: 'master-weights', ampStyleSource: 'finetune.py:3 (TrainingArguments(… bf16=True …)) with deepspeed=',
  });
  assert.equal(hint('args = TrainingArguments("out", bf16=True, deepspeed=None)\n')?.ampStyle, 'autocast');
  for (const text of ['args = TrainingArguments("out", bf16=torch.cuda.is_bf16_supported())\n', 'if args.bf16:\n    targs = TrainingArguments("out", bf16=True)\n', 'args = MyArguments(bf16=True)\n']) {
    assert.equal(hint(text), undefined, text);
  }
});

test('TrainingArguments with neither bf16 nor fp16 trains in fp32 (the Trainer\'s defaults), unless **kwargs or deepspeed= may decide; the Trainer config reader agrees', () => {
  const hint = (text: string) => precisionHint([{ name: 'finetune.py', text: `from transformers import TrainingArguments\n${text}` }]);
  assert.deepEqual(hint('args = TrainingArguments(output_dir="out", per_device_train_batch_size=8)\n'), {
    precision: 'fp32', source: 'finetune.py:2 (TrainingArguments(…) sets neither bf16 nor fp16: the Trainer trains in fp32)',
  });
  assert.equal(hint('args = TrainingArguments("out", bf16=False, fp16=False)\n')?.precision, 'fp32');
  assert.equal(hint('cfg = SFTConfig(output_dir="out")\n')?.precision, 'fp32');
  for (const text of ['args = TrainingArguments("out", **config)\n', 'args = TrainingArguments("out", deepspeed="ds_config.json")\n', 'args = TrainingArguments("out", bf16=args.bf16)\n', 'args = TrainingArguments("out", fp16=False, bf16=use_bf16)\n']) {
    assert.equal(hint(text), undefined, text);
  }
  // A config that states a precision beside the script wins over the Trainer's defaults (accelerate launch's mixed
  // precision applies when no flag is set); a flag in the script still comes first.
  const accelerate = { name: 'accelerate.yaml', text: 'distributed_type: MULTI_GPU\nmixed_precision: bf16\n' };
  const script = (args: string) => ({ name: 'finetune.py', text: `from transformers import TrainingArguments\nargs = TrainingArguments("out"${args})\n` });
  assert.equal(precisionHint([script(''), accelerate], 'finetune.py')?.precision, 'bf16');
  assert.equal(precisionHint([script(', fp16=True'), accelerate], 'finetune.py')?.precision, 'fp16');
  // "your config" reads the same precision from the call.
  const setup = (args: string) => readConfigSetups('finetune.py', script(args).text)[0]?.precision;
  assert.deepEqual([setup('')?.value, setup('')?.stated], ['fp32', false]);
  assert.equal(setup(', **config'), undefined);
  assert.equal(setup(', deepspeed="ds_config.json"'), undefined);
  assert.equal(setup(', bf16=args.bf16'), undefined);
  assert.equal(setup(', bf16=True, deepspeed="ds_config.json"')?.value, 'bf16');
});

const torchLib = '/usr/lib/python3/dist-packages/torch';

test("torch 1.13's own files: its DDP AMP test trains under fp16 autocast; autocast calls that may not run give no hint", { skip: !existsSync(torchLib) && 'needs python3-torch' }, () => {
  const lib = torchLib;
  const read = (file: string) => precisionHint([{ name: file.split('/').pop()!, text: readFileSync(`${lib}/${file}`, 'utf8') }]);
  // `from torch.cuda.amp import GradScaler, autocast` … `with autocast():` around the DDP model's forward.
  const ddp = read('testing/_internal/distributed/distributed_test.py');
  assert.equal(ddp?.precision, 'fp16');
  assert.match(ddp?.source ?? '', /^distributed_test\.py:\d+ \(autocast\(\)\)$/);
  // enabled=<variable>, **kwargs: not knowable.
  for (const file of ['nn/parallel/parallel_apply.py', 'utils/checkpoint.py', 'testing/_internal/common_fsdp.py']) assert.equal(read(file), undefined, file);
});

test("a model loaded with torch_dtype=torch.bfloat16 trains in pure bf16 (its optimizer state too), over a Trainer's autocast, but not over DeepSpeed's fp32 master weights", async () => {
  const { loadDtypeHint, withLoadDtype } = await import('../../src/configs/loadDtypeHint');
  const script = (load: string, extra = '') => ({ name: 'sft.py', text: `import torch\nfrom transformers import AutoModelForCausalLM, TrainingArguments\nmodel = AutoModelForCausalLM.from_pretrained("./llama-2-7b"${load})\n${extra}` });
  const hint = (files: Array<{ name: string; text: string }>) => withLoadDtype(precisionHint(files, 'sft.py'), loadDtypeHint(files, 'sft.py'));
  const bf16 = hint([script(', torch_dtype=torch.bfloat16')]);
  assert.deepEqual([bf16?.precision, bf16?.ampStyle], ['bf16', 'pure']);
  assert.equal(bf16!.source, 'sft.py:3 (AutoModelForCausalLM.from_pretrained(… torch.bfloat16 …))');
  assert.match(bf16!.ampStyleSource ?? '', /: parameters loaded in bf16 keep their gradients and optimizer state in bf16$/);
  assert.equal(hint([script(', dtype="float16"')])?.ampStyle, 'pure');
  assert.equal(hint([script(', torch_dtype=torch.bfloat16', 'args = TrainingArguments("out", bf16=True)\n')])?.ampStyle, 'pure');
  const deepspeed = { name: 'ds_config.json', text: '{"train_micro_batch_size_per_gpu": 4, "bf16": {"enabled": true}}' };
  assert.equal(hint([script(', torch_dtype=torch.bfloat16'), deepspeed])?.ampStyle, 'master-weights');
  for (const load of [', torch_dtype="auto"', ', torch_dtype=torch.float32', ', torch_dtype=dtype', '']) assert.equal(loadDtypeHint([script(load)], 'sft.py'), undefined, load);
  assert.equal(loadDtypeHint([{ name: 'sft.py', text: 'if args.bf16:\n    model = AutoModelForCausalLM.from_pretrained("x", torch_dtype=torch.bfloat16)\n' }], 'sft.py'), undefined);
  // QLoRA: prepare_model_for_kbit_training casts what bitsandbytes left in bf16 to fp32, which then trains under autocast.
  const qlora = hint([script(', torch_dtype=torch.bfloat16, quantization_config=bnb', 'from peft import prepare_model_for_kbit_training\nmodel = prepare_model_for_kbit_training(model)\n')]);
  assert.deepEqual([qlora?.precision, qlora?.ampStyle], ['bf16', 'autocast']);
  assert.match(qlora!.ampStyleSource ?? '', /^sft\.py:5 \(prepare_model_for_kbit_training\): it casts the parameters bitsandbytes does not quantize from bf16 to fp32/);
  // Behind a flag, the cast is one run's choice: the load dtype stands.
  assert.equal(hint([script(', torch_dtype=torch.bfloat16', 'if args.kbit:\n    model = prepare_model_for_kbit_training(model)\n')])?.ampStyle, 'pure');
});
