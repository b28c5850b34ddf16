/**
 * Expert tensor parallelism in training configs: Megatron-LM's --expert-tensor-parallel-size (default: the attention's
 * --tensor-model-parallel-size, arguments.py) and torchtitan's [parallelism] expert_tensor_parallel_degree (default 1,
 * acting only with expert parallelism), read, compared with a plan, fixed in place, pinned for "your config", and
 * written by the Megatron export with --moe-grouped-gemm when the plan priced grouped experts.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { applyTextEdits, checkConfig, initConfigReaders, pinnedOptions, readConfigSetups } from '../../src/configs';
import { megatronArguments } from '../../src/configs/megatronExport';
import { llamaPlan } from './llamaPlan';

before(() => initConfigReaders());
const LAUNCH = join(__dirname, '..', 'fixtures', 'megatron-moe', 'train_qwen3_30b_a3b.sh');
const TEXT = readFileSync(LAUNCH, 'utf8');
const megatron = (text: string) => readConfigSetups('train_qwen3_30b_a3b.sh', text).find((s) => s.label === 'Megatron-LM launch')!;
const base = { batch: 256, objective: 'throughput' as const, strategies: 'all' as const, optimizer: 'adam' as const };
const moePlan = (over: Parameters<typeof llamaPlan>[0]) => llamaPlan({ precision: 'bf16', zeroStage: 1, recompute: 'none', pipelineStages: 1, contextParallel: 1, microBatch: 1, ...over }, 256);

test('Megatron: the stated --expert-tensor-parallel-size is read through its shell variable and pinned for "your config"', () => {
  const s = megatron(TEXT);
  assert.deepEqual([s.tensorParallel?.value, s.expertParallel?.value, s.expertTensorParallel?.value, s.expertTensorParallel?.stated], [2, 8, 1, true]);
  assert.equal(s.expertsKernel?.grouped, true);
  const pins = pinnedOptions(base, s, LAUNCH).pins!;
  assert.deepEqual([pins.tensorParallel, pins.expertParallel, pins.expertTensorParallel], [2, 8, 1]);
  // A plan that splits the experts over the tensor pair fixes the variable where it is set.
  const plan = moePlan({ tensorParallel: 2, expertParallel: 8, expertTensorParallel: 2, dataParallel: 8, sequenceParallel: true });
  const finding = checkConfig('train_qwen3_30b_a3b.sh', TEXT, plan).findings.find((f) => f.code === 'setup-differs');
  assert.match(finding?.message ?? '', /experts split over 1 tensor rank.*experts split over 2 tensor ranks|expert tensor parallelism/);
  assert.match(applyTextEdits(TEXT, finding!.fix!.edits), /\nETP=2\n/);
});

test('Megatron without the flag: experts follow TP, so only a plan that keeps them whole at TP > 1 adds it', () => {
  const text = TEXT.replace('    --expert-tensor-parallel-size $ETP\n', '');
  const s = megatron(text);
  assert.deepEqual([s.expertTensorParallel?.value, s.expertTensorParallel?.stated], [2, false]);
  assert.equal(pinnedOptions(base, s, LAUNCH).pins?.expertTensorParallel, 2, 'the run splits experts over its TP');
  const whole = moePlan({ tensorParallel: 2, expertParallel: 8, expertTensorParallel: 1, dataParallel: 8, sequenceParallel: true });
  const finding = checkConfig('train_qwen3_30b_a3b.sh', text, whole).findings.find((f) => f.code === 'setup-differs');
  assert.ok(finding, 'ETP 1 differs from the default');
  assert.match(applyTextEdits(text, finding!.fix!.edits), /--expert-tensor-parallel-size 1/);
  // A plan at TP 4 with experts split 4 ways needs only the TP edit: the default follows it.
  const wider = moePlan({ tensorParallel: 4, expertParallel: 4, expertTensorParallel: 4, dataParallel: 4, sequenceParallel: true });
  const edits = checkConfig('train_qwen3_30b_a3b.sh', text, wider).findings.find((f) => f.code === 'setup-differs')?.fix?.edits ?? [];
  assert.doesNotMatch(applyTextEdits(text, edits), /--expert-tensor-parallel-size/);
  assert.match(applyTextEdits(text, edits), /\nTP=4\n/);
});

test('torchtitan: expert_tensor_parallel_degree defaults to 1 with expert parallelism, and to TP without it', () => {
  const toml = (extra: string) => `[parallelism]\ntensor_parallel_degree = 2\nexpert_parallel_degree = 8\n${extra}`;
  const read = (text: string) => readConfigSetups('qwen3_moe.toml', text).find((s) => s.expertParallel)!;
  assert.deepEqual([read(toml('')).expertTensorParallel?.value, read(toml('')).expertTensorParallel?.stated], [1, false]);
  assert.equal(read(toml('expert_tensor_parallel_degree = 2\n')).expertTensorParallel?.value, 2);
  const noExperts = read('[parallelism]\ntensor_parallel_degree = 2\n');
  assert.equal(noExperts.expertTensorParallel?.value, 2, 'no effect when ep = 1: experts split as the rest of the block');
  const plan = moePlan({ tensorParallel: 2, expertParallel: 8, expertTensorParallel: 2, dataParallel: 8, sequenceParallel: true });
  const finding = checkConfig('qwen3_moe.toml', toml(''), plan).findings.find((f) => f.code === 'setup-differs');
  assert.match(applyTextEdits(toml(''), finding!.fix!.edits), /expert_tensor_parallel_degree = 2/);
});

test('the Megatron export writes the expert split where it differs from TP, and --moe-grouped-gemm where the plan priced grouped experts', () => {
  const args = (over: Parameters<typeof llamaPlan>[0]) => megatronArguments(moePlan(over));
  const whole = args({ tensorParallel: 2, expertParallel: 8, expertTensorParallel: 1, expertsKernel: 'grouped', dataParallel: 8, sequenceParallel: true });
  assert.ok(whole.value.includes('--expert-tensor-parallel-size 1') && whole.value.includes('--moe-grouped-gemm'), whole.value.join(' '));
  const split = args({ tensorParallel: 2, expertParallel: 8, expertTensorParallel: 2, expertsKernel: 'loop', dataParallel: 8, sequenceParallel: true });
  assert.ok(!split.value.some((a) => a.startsWith('--expert-tensor-parallel-size') || a === '--moe-grouped-gemm'), split.value.join(' '));
  assert.ok(split.notes.some((n) => /--moe-grouped-gemm/.test(n)));
  // Read back, the written arguments state the plan's split.
  const back = megatron(`torchrun pretrain_gpt.py ${whole.value.join(' ')}\n`);
  assert.deepEqual([back.expertTensorParallel?.value, back.expertsKernel?.grouped], [1, true]);
});

test('Megatron’s token dispatcher: the stated all-to-all, else its default allgather, reaches both plans; the export writes the all-to-all it priced', async () => {
  const { withStatedFramework } = await import('../../src/configs/evaluate');
  const stated = withStatedFramework(base, megatron(TEXT), 'train_qwen3_30b_a3b.sh');
  assert.deepEqual([stated.tokenDispatcher, stated.tokenDispatcherSource], ['alltoall', 'train_qwen3_30b_a3b.sh (Megatron-LM --moe-token-dispatcher-type alltoall)']);
  const unstated = withStatedFramework(base, megatron(TEXT.replace('    --moe-token-dispatcher-type alltoall\n', '')), 'train_qwen3_30b_a3b.sh');
  assert.equal(unstated.tokenDispatcher, 'allgather');
  assert.match(unstated.tokenDispatcherSource ?? '', /without --moe-token-dispatcher-type: its default allgather/);
  const flex = withStatedFramework(base, megatron(TEXT.replace('--moe-token-dispatcher-type alltoall', '--moe-token-dispatcher-type flex')), 'train_qwen3_30b_a3b.sh');
  assert.equal(flex.tokenDispatcher, 'alltoall');
  const written = megatronArguments(moePlan({ tensorParallel: 2, expertParallel: 8, expertTensorParallel: 1, tokenDispatcher: 'alltoall', dataParallel: 8, sequenceParallel: true })).value;
  assert.ok(written.includes('--moe-token-dispatcher-type alltoall'), written.join(' '));
  const dense = megatronArguments(moePlan({ tensorParallel: 2, dataParallel: 4, sequenceParallel: true })).value;
  assert.ok(!dense.some((a) => a.startsWith('--moe-')), dense.join(' '));
});

test('the model’s own plan beside a Megatron launch prices that launch’s dispatcher and experts kernel, as its config check does', async () => {
  const { withTrainingHintsFrom } = await import('../../src/configs/trainingHints');
  const model = { name: 'model.py', text: 'from transformers import AutoModelForCausalLM\nmodel = AutoModelForCausalLM.from_pretrained("Qwen/Qwen3-30B-A3B")\n' };
  const options = withTrainingHintsFrom(base, [model, { name: 'train_qwen3_30b_a3b.sh', text: TEXT }], 'model.py');
  assert.deepEqual([options.tokenDispatcher, options.expertsKernel], ['alltoall', 'grouped']);
  assert.match(options.tokenDispatcherSource ?? '', /^train_qwen3_30b_a3b\.sh \(Megatron-LM --moe-token-dispatcher-type alltoall\)/);
  const defaulted = withTrainingHintsFrom(base, [model, { name: 'train.sh', text: TEXT.replace('    --moe-token-dispatcher-type alltoall\n', '') }], 'model.py');
  assert.equal(defaulted.tokenDispatcher, 'allgather');
});

test('Megatron’s routing as WAP cannot price it is said on the launch: dropless by default, or the capacity factor it states', () => {
  const notes = (text: string) => checkConfig('train_qwen3_30b_a3b.sh', text, moePlan({ tensorParallel: 2, expertParallel: 8, expertTensorParallel: 1, dataParallel: 8, sequenceParallel: true })).findings.filter((f) => f.code === 'setup-unmodelled');
  const dropless = notes(TEXT);
  assert.equal(dropless.length, 1);
  assert.match(dropless[0]!.message, /routes dropless here \(no --moe-expert-capacity-factor\)/);
  assert.equal(TEXT.slice(dropless[0]!.range.start, dropless[0]!.range.end), '--num-experts 128');
  const capped = notes(TEXT.replace('    --moe-router-topk 8\n', '    --moe-router-topk 8\n    --moe-expert-capacity-factor 1.25\n'));
  assert.match(capped[0]?.message ?? '', /^--moe-expert-capacity-factor 1\.25: an expert takes up to that factor/);
  // A dense launch says nothing of routing.
  assert.equal(notes(TEXT.replace('    --num-experts 128\n', '')).length, 0);
});
