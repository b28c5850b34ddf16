/** The precision a training config beside the model states (accelerate, DeepSpeed, Lightning). */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { before, test } from 'node:test';
import { initConfigReaders, precisionHint, precisionHintCandidates } from '../../src/configs';

before(() => initConfigReaders());

test('accelerate mixed_precision, DeepSpeed bf16/fp16.enabled and Lightning precision= each give the precision and say where', () => {
  assert.deepEqual(precisionHint([{ name: 'accelerate.yaml', text: 'distributed_type: MULTI_GPU\nnum_processes: 8\nmixed_precision: bf16\n' }]), { precision: 'bf16', source: 'accelerate.yaml (mixed_precision: bf16)' });
  assert.equal(precisionHint([{ name: 'a.yaml', text: "distributed_type: MULTI_GPU\nmixed_precision: 'no'\n" }])?.precision, 'fp32');
  assert.deepEqual(precisionHint([{ name: 'ds.json', text: '{"train_batch_size": 64, "fp16": {"enabled": true}}' }]), { precision: 'fp16', source: 'ds.json (fp16.enabled)' });
  assert.equal(precisionHint([{ name: 'ds.json', text: '{"train_batch_size": 64, "bf16": {"enabled": true}, "fp16": {"enabled": false}}' }])?.precision, 'bf16');
  assert.match(precisionHint([{ name: 'ds.json', text: '{"train_batch_size": 64}' }])?.source ?? '', /DeepSpeed trains in fp32/);
  // DeepSpeed's pydantic config takes "true" for a bool: bf16 it is.
  assert.equal(precisionHint([{ name: 'ds.json', text: '{"train_batch_size": 64, "bf16": {"enabled": "true"}}' }])?.precision, 'bf16');
  assert.equal(precisionHint([{ name: 'ds.json', text: '{"train_batch_size": 64, "bf16": {"enabled": 2}}' }]), undefined, 'unreadable: no hint rather than fp32');
  // "auto" is decided at launch by the HF Trainer: no guess.
  assert.equal(precisionHint([{ name: 'ds.json', text: '{"train_batch_size": "auto", "bf16": {"enabled": "auto"}}' }]), undefined);
  const lightning = 'import lightning as L\ntrainer = L.Trainer(devices=4, precision="bf16-mixed")\n';
  assert.deepEqual(precisionHint([{ name: 'train.py', text: lightning }]), { precision: 'bf16', source: 'train.py (Trainer precision="bf16-mixed")' });
  assert.equal(precisionHint([{ name: 'train.py', text: 'from pytorch_lightning import Trainer\ntrainer = Trainer(devices=2, precision=16)\n' }])?.precision, 'fp16');
  assert.equal(precisionHint([{ name: 'train.py', text: 'from pytorch_lightning import Trainer\ntrainer = Trainer(devices=2, precision=args.precision)\n' }]), undefined);
  assert.equal(precisionHint([{ name: 'model.py', text: 'import torch\n' }]), undefined);
});

test('broken configs give no hint rather than an error; the first config that states one wins', () => {
  assert.equal(precisionHint([{ name: 'ds.json', text: '{"train_batch_size": 64, "bf16": ' }]), undefined);
  const files = [
    { name: 'broken.yaml', text: 'num_processes: [\n' },
    { name: 'ds.json', text: '{"train_batch_size": 64, "bf16": {"enabled": true}}' },
  ];
  assert.equal(precisionHint(files)?.precision, 'bf16');
  assert.deepEqual(precisionHintCandidates(['b.py', 'a.yaml', 'README.md', 'ds.json', 'x.bin']), ['a.yaml', 'b.py', 'ds.json']);
});

test('the examples directory: its accelerate config keeps fp32', () => {
  const dir = 'examples/pytorch';
  const files = precisionHintCandidates(readdirSync(dir)).map((name) => ({ name, text: readFileSync(`${dir}/${name}`, 'utf8') }));
  assert.deepEqual(precisionHint(files), { precision: 'fp32', source: 'accelerate_config.yaml (mixed_precision: no)' });
});
