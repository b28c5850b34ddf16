/**
 * Argument lists kept in shell variables (configs/shellExpansion.ts): `"${ARGS[@]}"` arrays and `$DS_ARGS` option
 * strings are read where they are written, by the Trainer command-line reader, the torchrun GPU count and the launch
 * precision; what cannot be expanded (`"$@"`, an array appended to) is said, not taken as transformers' defaults.
 */
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { checkConfig, detectConfigFormats, fixAll, initConfigReaders, precisionHint, readConfigSetups } from '../../src/configs';
import { expandCommand, findArrays } from '../../src/configs/shellExpansion';
import { findAssignments, splitCommands } from '../../src/configs/shellWords';
import { llamaPlan } from './llamaPlan';

before(() => initConfigReaders());

const ARRAY_SCRIPT = `#!/bin/bash
ARGS=(
  --model_name_or_path meta-llama/Meta-Llama-3-8B
  # --bf16, switched off for now (a comment, not an element)
  --fp16
  --per_device_train_batch_size 4
  --output_dir "out (final)"
)
accelerate launch --num_processes 8 sft.py "\${ARGS[@]}"
`;

test('an array’s elements keep their offsets, past comments, quotes and parentheses; one assigned twice or appended to is the run’s', () => {
  const arrays = findArrays(ARRAY_SCRIPT);
  const words = arrays.get('ARGS');
  assert.ok(Array.isArray(words));
  assert.deepEqual(words.map((w) => w.raw), ['--model_name_or_path', 'meta-llama/Meta-Llama-3-8B', '--fp16', '--per_device_train_batch_size', '4', '--output_dir', '"out (final)"']);
  for (const w of words) assert.equal(ARRAY_SCRIPT.slice(w.start, w.end), w.raw);
  assert.equal(findArrays('A=(--bf16)\nA+=(--fp16)\n').get('A'), 'run');
  assert.equal(findArrays('A=(--bf16)\nif x; then\n  A=(--fp16)\nfi\n').get('A'), 'run');
  assert.deepEqual(findArrays('declare -a B=( --x 1 )\n# C=(--y)\n').get('B'), [{ raw: '--x', start: 15, end: 18 }, { raw: '1', start: 19, end: 20 }]);
  assert.equal(findArrays('# C=(--y)\n').size, 0);
});

test('the Trainer arguments in an array are read and fixed where they are written; missing ones go after the script word', () => {
  assert.ok(detectConfigFormats('run.sh', ARRAY_SCRIPT).includes('hf-trainer-args'));
  const s = readConfigSetups('run.sh', ARRAY_SCRIPT).find((x) => x.label === 'Hugging Face Trainer command line')!;
  assert.deepEqual([s.precision?.value, s.microBatch?.value, s.world], ['fp16', 4, 8]);
  assert.equal(ARRAY_SCRIPT.slice(s.microBatch!.range.start, s.microBatch!.range.end), '4');
  assert.equal(s.unmodelled, undefined);
  const fixed = fixAll('run.sh', ARRAY_SCRIPT, llamaPlan()).text;
  assert.equal(
    fixed,
    ARRAY_SCRIPT.replace('  --fp16\n', '  --bf16\n')
      .replace('--per_device_train_batch_size 4', '--per_device_train_batch_size 2')
      .replace('sft.py "${ARGS[@]}"', 'sft.py --fsdp "full_shard auto_wrap" --gradient_checkpointing --gradient_accumulation_steps 2 "${ARGS[@]}"'),
  );
  assert.deepEqual(checkConfig('run.sh', fixed, llamaPlan()).findings, []);
});

test('an option string splits wherever it stands; a single value stays the run’s; "$@" is said to be unread', () => {
  const text = 'DS_ARGS="--deepspeed ds.json --bf16"\nBS=4\ntorchrun --nproc_per_node 8 train.py --per_device_train_batch_size $BS --fp16 False $DS_ARGS "$@"\n';
  const s = readConfigSetups('run.sh', text)[0]!;
  assert.equal(s.precision?.value, 'bf16');
  assert.equal(s.link?.path, 'ds.json');
  assert.equal(text.slice(s.link!.range.start, s.link!.range.end), 'ds.json');
  assert.equal(s.microBatch, undefined, '$BS is one value, the run’s');
  const unread = s.unmodelled?.find((u) => u.short === '"$@" not read');
  assert.ok(unread, JSON.stringify(s.unmodelled));
  assert.match(unread.message, /train\.py is also passed "\$@", which WAP cannot read/);
  assert.ok(checkConfig('run.sh', text, undefined).findings.some((f) => f.code === 'setup-unmodelled' && f.message === unread.message));
  // An array WAP cannot expand is unread as well; a value after an option is not an argument list.
  const words = splitCommands('A=(--x)\nA+=(--y)\ntorchrun t.py "${A[@]}" --model $MODEL $EXTRA\n').at(-1)!;
  const { unread: hidden } = expandCommand(words, findArrays('A=(--x)\nA+=(--y)\n'), []);
  assert.deepEqual(hidden.map((w) => w.raw), ['"${A[@]}"', '$EXTRA']);
});

test('torchrun $DISTRIBUTED_ARGS (Megatron’s examples) counts its GPUs, and the launch flag in an array is the precision', () => {
  const text = [
    '#!/bin/bash',
    'GPUS_PER_NODE=8',
    'NNODES=2',
    'DISTRIBUTED_ARGS="--nproc_per_node $GPUS_PER_NODE --nnodes $NNODES --master_addr localhost"',
    'GPT_ARGS="--tensor-model-parallel-size 4 --pipeline-model-parallel-size 2 --micro-batch-size 2 --global-batch-size 256 --bf16"',
    'torchrun $DISTRIBUTED_ARGS pretrain_gpt.py $GPT_ARGS',
    '',
  ].join('\n');
  const gpus = checkConfig('run.sh', text, llamaPlan()).findings.find((f) => f.format === 'torchrun');
  assert.equal(gpus?.message, "16 processes requested, but cluster 'h100x8' has 8 GPUs; the plan uses 8");
  assert.equal(text.slice(gpus.range.start, gpus.range.end), '8', 'at GPUS_PER_NODE’s value');
  const launch = 'ACC=(--num_processes 8 --mixed_precision fp16)\naccelerate launch "${ACC[@]}" train.py\n';
  assert.equal(precisionHint([{ name: 'train.py', text: 'import torch\n' }, { name: 'run.sh', text: launch }], 'train.py')?.precision, 'fp16');
});

test('a Makefile has no arrays, and a half-typed array never throws', () => {
  assert.deepEqual(expandCommand(splitCommands('train:\n\ttorchrun t.py $(ARGS)\n').at(-1)!, new Map(), findAssignments('', [], true)).unread, []);
  for (const cut of ['ARGS=(', 'ARGS=( --bf16 "unterminated', 'ARGS=( --bf16 )\ntorchrun t.py "${ARGS[@']) {
    assert.doesNotThrow(() => readConfigSetups('run.sh', `${cut}\n`));
    assert.doesNotThrow(() => findArrays(cut));
  }
});
