/**
 * Megatron-LM arguments (megatron/training/arguments.py): the parallel sizes,
 * batch sizes, --bf16/--fp16, --sequence-parallel, --recompute-granularity /
 * --recompute-activations and --use-distributed-optimizer (ZeRO-1), with
 * shell variables resolved, and edits that add, swap or drop only flags.
 */
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { applyTextEdits, initConfigReaders, readConfigSetups, statedBatch } from '../../src/configs';

before(() => initConfigReaders());
const FILE = 'pretrain_gpt.sh';
const read = (text: string) => readConfigSetups(FILE, text).find((s) => s.label === 'Megatron-LM launch')!;

const TEXT = `#!/bin/bash
TP=4
torchrun --nproc_per_node 8 pretrain_gpt.py \\
  --tensor-model-parallel-size $TP \\
  --pipeline-model-parallel-size=2 \\
  --context-parallel-size 1 \\
  --micro-batch-size 2 --global-batch-size 256 \\
  --fp16 \\
  --recompute-granularity full \\
  --use-distributed-optimizer \\
  --seq-length 4096
`;

test('values read from the arguments, through a shell variable', () => {
  const s = read(TEXT);
  assert.equal(s.tensorParallel?.value, 4);
  assert.equal(TEXT.slice(s.tensorParallel!.range.start, s.tensorParallel!.range.end), '4', 'the edit goes where the number is written');
  assert.equal(s.pipelineStages?.value, 2);
  assert.equal(s.contextParallel?.value, 1);
  assert.deepEqual([s.microBatch?.value, s.globalBatch?.value, s.gradientAccumulation?.value], [2, 256, 1]);
  assert.deepEqual([s.precision?.value, s.recompute?.value, s.zeroStage?.value, s.sequenceParallel?.value], ['fp16', 'full', 1, false]);
  assert.equal(TEXT.slice(s.anchor.start, s.anchor.end), '--tensor-model-parallel-size');
});

test('edits: numbers in place, precision flag swapped in place, flags added after the last Megatron argument or dropped with their line', () => {
  const s = read(TEXT);
  const apply = (edits: ReturnType<NonNullable<NonNullable<typeof s.precision>['set']>>) => applyTextEdits(TEXT, edits!);
  assert.equal(apply(s.tensorParallel!.set!(8)), TEXT.replace('TP=4', 'TP=8'));
  assert.equal(apply(s.pipelineStages!.set!(4)), TEXT.replace('size=2', 'size=4'));
  assert.equal(apply(s.precision!.set!('bf16')), TEXT.replace('--fp16', '--bf16'));
  // fp8 is Transformer Engine's --fp8-format beside the 16-bit flag already there (--fp16 here).
  assert.deepEqual(s.precision!.set!('fp8')!.map((e) => e.newText), [' --fp8-format hybrid']);
  // fp32: the --fp16 line goes, continuation and all.
  assert.equal(apply(s.precision!.set!('fp32')), TEXT.replace('  --fp16 \\\n', ''));
  assert.equal(apply(s.recompute!.set!('selective')), TEXT.replace('granularity full', 'granularity selective'));
  assert.equal(apply(s.recompute!.set!('none')), TEXT.replace('  --recompute-granularity full \\\n', ''));
  assert.equal(apply(s.zeroStage!.set!(0)), TEXT.replace('  --use-distributed-optimizer \\\n', ''));
  assert.match(apply(s.zeroStage!.set!(2)), /--use-distributed-optimizer[\s\S]*--use-megatron-fsdp --data-parallel-sharding-strategy optim_grads /, "ZeRO-2 is Megatron-FSDP's optim_grads");
  assert.deepEqual(s.zeroStage!.set!(1), []);
  // --sequence-parallel is added after the last Megatron argument (--use-distributed-optimizer).
  assert.equal(apply(s.sequenceParallel!.set!(true)), TEXT.replace('--use-distributed-optimizer', '--use-distributed-optimizer --sequence-parallel'));
  assert.equal(read(apply(s.sequenceParallel!.set!(true))).sequenceParallel?.value, true);
  assert.deepEqual(s.sequenceParallel!.set!(false), []);
  assert.deepEqual(s.gradientAccumulation!.set!(4), []);
  // A flag sharing its line with others is cut out with the space before it.
  assert.equal(apply(s.microBatch!.set!(1)), TEXT.replace('--micro-batch-size 2', '--micro-batch-size 1'));
});

test('defaults when flags are absent; selective recompute from --recompute-activations; computed values are not settings', () => {
  const plain = 'python pretrain_gpt.py --tensor-model-parallel-size 2 --bf16 --recompute-activations --sequence-parallel\n';
  const s = read(plain);
  assert.deepEqual([s.precision?.value, s.recompute?.value, s.recompute?.stated, s.zeroStage?.value, s.sequenceParallel?.value], ['bf16', 'selective', false, 0, true]);
  assert.equal(s.gradientAccumulation, undefined, 'no --global-batch-size: accumulation is not derived');
  assert.equal(applyTextEdits(plain, s.precision!.set!('fp16')!), plain.replace('--bf16', '--fp16'));
  assert.equal(applyTextEdits(plain, s.recompute!.set!('full')!), plain.replace('--sequence-parallel', '--sequence-parallel --recompute-granularity full'));
  assert.equal(applyTextEdits(plain, s.zeroStage!.set!(1)!), plain.replace('--sequence-parallel', '--sequence-parallel --use-distributed-optimizer'));
  assert.equal(applyTextEdits(plain, s.sequenceParallel!.set!(false)!), plain.replace(' --sequence-parallel', ''));
  const none = read('python pretrain_gpt.py --tensor-model-parallel-size 2\n');
  assert.deepEqual([none.precision?.value, none.precision?.stated, none.recompute?.value, none.pipelineStages], ['fp32', false, 'none', undefined]);
  assert.deepEqual(none.recompute!.set!('none'), []);
  // No precision flag to swap: the wanted one is added after the last Megatron argument.
  const noFlagText = 'python pretrain_gpt.py --tensor-model-parallel-size 2\n';
  assert.equal(applyTextEdits(noFlagText, none.precision!.set!('bf16')!), 'python pretrain_gpt.py --tensor-model-parallel-size 2 --bf16\n');
  const computed = read('python pretrain_gpt.py --tensor-model-parallel-size $((N/2)) --micro-batch-size x\n');
  assert.deepEqual([computed.tensorParallel, computed.microBatch], [undefined, undefined]);
  assert.equal(readConfigSetups(FILE, 'python train.py --lr 0.1\n').find((x) => x.label === 'Megatron-LM launch'), undefined);
});

test('a size or degree of 0 states nothing: no zero batch, no zero-way parallelism', () => {
  const s = read(TEXT.replace('--global-batch-size 256', '--global-batch-size 0').replace('=2', '=0'));
  assert.equal(s.globalBatch, undefined);
  assert.equal(statedBatch(s), undefined, 'micro 2 without a data-parallel degree and a zero global batch: no batch');
  assert.equal(s.pipelineStages?.value ?? 1, 1);
  assert.equal(read(TEXT.replace('--micro-batch-size 2', '--micro-batch-size 02')).microBatch?.value, 2, 'leading zeros are still a number');
});

test('a fix that changes the pipeline degree names the comment that still says the old one', async () => {
  const { checkConfig } = await import('../../src/configs');
  const { llamaPlan } = await import('./llamaPlan');
  const text = `#!/bin/bash
TP=4
PP=2  # pp 2 across the two halves of the box
torchrun --nproc_per_node 8 pretrain_gpt.py \\
  --tensor-model-parallel-size $TP \\
  --pipeline-model-parallel-size $PP \\
  --micro-batch-size 2 --global-batch-size 256 \\
  --fp16
`;
  const plan = llamaPlan({ precision: 'fp16', zeroStage: 0, recompute: 'none', tensorParallel: 4, pipelineStages: 1, sequenceParallel: false, microBatch: 2, dataParallel: 2 }, 256);
  const finding = checkConfig(FILE, text, plan).findings.find((f) => f.code === 'setup-differs');
  assert.ok(finding?.fix, JSON.stringify(checkConfig(FILE, text, plan).findings.map((f) => f.message)));
  assert.match(finding.fix.title, /the comment "# pp 2 across the two halves of the box" will no longer be true/);
  assert.match(applyTextEdits(text, finding.fix.edits), /^PP=1 {2}# pp 2/m, 'the value changes, the prose is the user’s to fix');
});

test('a fix that drops a recompute flag names the comment that says it is on (no value is replaced, so only the dimension’s prose finds it)', async () => {
  const { checkConfig } = await import('../../src/configs');
  const { llamaPlan } = await import('./llamaPlan');
  const text = `#!/bin/bash
torchrun --nproc_per_node 8 pretrain_gpt.py \\
  --tensor-model-parallel-size 4 \\
  --micro-batch-size 2 --global-batch-size 256 \\
  --fp16 \\
  --recompute-granularity selective  # selective recompute: activations would not fit
`;
  const plan = llamaPlan({ precision: 'fp16', zeroStage: 0, recompute: 'none', tensorParallel: 4, pipelineStages: 1, sequenceParallel: false, microBatch: 2, dataParallel: 2 }, 256);
  const finding = checkConfig(FILE, text, plan).findings.find((f) => f.code === 'setup-differs');
  assert.ok(finding?.fix, JSON.stringify(checkConfig(FILE, text, plan).findings.map((f) => f.message)));
  assert.match(finding.fix.title, /the comment "# selective recompute: activations would not fit" will no longer be true/);
});

test('Megatron-LM’s own Llama 3 8B launch (TP 1 with --sequence-parallel): Megatron disables sequence parallel at TP 1, so a TP-1 plan without it is no difference', async () => {
  const { readFileSync } = await import('node:fs');
  const { checkConfig } = await import('../../src/configs');
  const { planModel, resolveCluster } = await import('../../src/planner/index');
  const { gptModel } = await import('../planner/gptSpec');
  const text = readFileSync('test/fixtures/megatron-llama/train_llama3_8b_h100_fp8.sh', 'utf8');
  const s = read(text);
  assert.deepEqual([s.tensorParallel?.value, s.sequenceParallel?.value, s.sequenceParallel?.stated], [1, false, true]);
  const plan = planModel(gptModel({ layers: 8, hidden: 2048, heads: 16, seq: 512 }), resolveCluster('h100x8', {}), { batch: 128, objective: 'throughput', strategies: 'all', optimizer: 'adam', precision: 'bf16', gpus: 8, pins: { dataParallel: 8, tensorParallel: 1, pipelineStages: 1, contextParallel: 1, zeroStage: 1, microBatch: 1 } });
  assert.ok(plan.feasible, plan.feasible ? '' : plan.reason);
  const findings = checkConfig('train_llama3_8b_h100_fp8.sh', text, plan).findings;
  assert.ok(!findings.some((f) => /sequence parallel/i.test(f.message)), findings.map((f) => f.message).join('\n'));
  // At TP 2 the flag is sequence parallel, which a plan without it differs from.
  const tp2 = read(text.replace('TP_SIZE=1', 'TP_SIZE=2'));
  assert.deepEqual([tp2.tensorParallel?.value, tp2.sequenceParallel?.value], [2, true]);
  // A fix to a TP-2 plan without sequence parallel drops the flag with the TP edit, which would otherwise switch it on.
  const tp2Plan = planModel(gptModel({ layers: 8, hidden: 2048, heads: 16, seq: 512 }), resolveCluster('h100x8', {}), { batch: 128, objective: 'throughput', strategies: 'all', optimizer: 'adam', precision: 'bf16', gpus: 8, pins: { dataParallel: 4, tensorParallel: 2, pipelineStages: 1, contextParallel: 1, zeroStage: 1, microBatch: 1, sequenceParallel: false } });
  assert.ok(tp2Plan.feasible, tp2Plan.feasible ? '' : tp2Plan.reason);
  const edits = s.tensorParallel!.set!(2, tp2Plan.plan.setup)!;
  const fixed = applyTextEdits(text, edits);
  assert.deepEqual([read(fixed).tensorParallel?.value, read(fixed).sequenceParallel?.value], [2, false]);
  assert.doesNotMatch(fixed, /--sequence-parallel/);
  // With a plan that keeps sequence parallel, the flag stays.
  assert.match(applyTextEdits(text, s.tensorParallel!.set!(2, { ...tp2Plan.plan.setup!, sequenceParallel: true })!), /--sequence-parallel/);
});

test("Megatron's FSDP paths: Megatron-FSDP's sharding strategy (quoted or not) is the ZeRO stage and takes a plan's; --use-torch-fsdp2 is ZeRO-3", () => {
  // The flags the Megatron-FSDP README requires, as its example launches write them.
  const mfsdp = `torchrun --nproc_per_node 8 pretrain_gpt.py \\
  --tensor-model-parallel-size 2 \\
  --use-megatron-fsdp \\
  --data-parallel-sharding-strategy optim_grads_params \\
  --no-gradient-accumulation-fusion \\
  --use-distributed-optimizer \\
  --ckpt-format fsdp_dtensor \\
  --overlap-grad-reduce --overlap-param-gather
`;
  const s = read(mfsdp);
  assert.equal(s.zeroStage?.value, 3);
  assert.equal(mfsdp.slice(s.zeroStage!.range.start, s.zeroStage!.range.end), 'optim_grads_params');
  assert.equal(applyTextEdits(mfsdp, s.zeroStage!.set!(2)!), mfsdp.replace('optim_grads_params', 'optim_grads'));
  const quoted = read(mfsdp.replace('strategy optim_grads_params', 'strategy="optim_grads"'));
  assert.equal(quoted.zeroStage?.value, 2);
  // ZeRO-2 under Megatron-FSDP gathers the updated weights the way its overlap flags say.
  assert.deepEqual(quoted.weightGather?.inForward, [1]);
  // Megatron's default strategy is no_shard: the flag alone shards nothing.
  assert.equal(read(mfsdp.replace('  --data-parallel-sharding-strategy optim_grads_params \\\n', '')).zeroStage?.value, 0);
  const torch = read(mfsdp.replace(/--use-megatron-fsdp \\\n.*optim_grads_params \\\n/, '--use-torch-fsdp2 \\\n'));
  assert.equal(torch.zeroStage?.value, 3);
  assert.equal(torch.zeroStage!.set!(1), undefined, 'torch FSDP2 runs only full sharding');
  // A launch on the distributed optimizer takes a ZeRO-3 plan as Megatron-FSDP, and reads back as ZeRO-3.
  const fixed = applyTextEdits(TEXT, read(TEXT).zeroStage!.set!(3)!);
  assert.match(fixed, /--use-megatron-fsdp --data-parallel-sharding-strategy optim_grads_params/);
  assert.equal(read(fixed).zeroStage?.value, 3);
});

test('expert parallelism: --expert-model-parallel-size is read and fixed in place; absent, a plan with EP adds it; formats with no words for it say where it is set', async () => {
  const { checkConfig } = await import('../../src/configs');
  const { llamaPlan } = await import('./llamaPlan');
  const moe = TEXT.replace('  --context-parallel-size 1 \\\n', '  --context-parallel-size 1 \\\n  --expert-model-parallel-size 2 \\\n');
  const s = read(moe);
  assert.equal(s.expertParallel?.value, 2);
  assert.equal(s.expertParallel?.stated, true);
  assert.equal(applyTextEdits(moe, s.expertParallel!.set!(8)!), moe.replace('--expert-model-parallel-size 2', '--expert-model-parallel-size 8'));
  // Unstated: Megatron's default 1; a plan that spreads experts writes the flag after the last Megatron argument.
  const plain = read(TEXT);
  assert.deepEqual([plain.expertParallel?.value, plain.expertParallel?.stated], [1, false]);
  assert.match(applyTextEdits(TEXT, plain.expertParallel!.set!(4)!), /--use-distributed-optimizer --expert-model-parallel-size 4/);
  const plan = llamaPlan({ precision: 'fp16', zeroStage: 1, recompute: 'full', tensorParallel: 4, pipelineStages: 2, contextParallel: 1, expertParallel: 4, sequenceParallel: false, microBatch: 2, dataParallel: 1 }, 256);
  const finding = checkConfig(FILE, moe, plan).findings.find((f) => f.code === 'setup-differs');
  assert.match(finding?.message ?? '', /EP 2.*EP 4|expert parallelism/, JSON.stringify(checkConfig(FILE, moe, plan).findings.map((f) => f.message)));
  assert.match(applyTextEdits(moe, finding!.fix!.edits), /--expert-model-parallel-size 4/);
  // A DeepSpeed JSON has no words for it: the plan's EP is said, with where it is set instead.
  const ds = checkConfig('ds_config.json', JSON.stringify({ train_micro_batch_size_per_gpu: 2, zero_optimization: { stage: 1 }, fp16: { enabled: true } }), llamaPlan({ precision: 'fp16', zeroStage: 1, expertParallel: 4, microBatch: 2, dataParallel: 8 }, 16));
  assert.ok(ds.findings.some((f) => f.code === 'cannot-express' && /EP 4.*set where the MoE layers are built/.test(f.message)), JSON.stringify(ds.findings.map((f) => f.message)));
  // "Your config" runs the EP it states, and a format without one runs none: neither is left to the search.
  const { pinnedOptions, readConfigSetups: readAll } = await import('../../src/configs');
  const base = { batch: 256, objective: 'throughput' as const, strategies: 'all' as const, optimizer: 'adam' as const };
  assert.equal(pinnedOptions(base, s, FILE).pins?.expertParallel, 2);
  const dsSetup = readAll('ds_config.json', JSON.stringify({ train_micro_batch_size_per_gpu: 2, zero_optimization: { stage: 1 } }))[0]!;
  assert.equal(pinnedOptions(base, dsSetup, 'ds_config.json').pins?.expertParallel, 1);
});
