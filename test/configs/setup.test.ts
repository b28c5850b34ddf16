/**
 * Issue 14 acceptance, config side: a commented config for an 8B Llama on
 * 8× H100 with no sharding and fp32 gets a finding against the plan's setup
 * (ZeRO-3 + bf16, hand-written plan report in llamaPlan.ts); its fix writes
 * the plan's ZeRO stage and bf16, keeps the global batch, and keeps every
 * comment byte for byte — for DeepSpeed, Accelerate FSDP, Lightning,
 * torchtitan TOML, Megatron-LM arguments and Hugging Face TrainingArguments.
 */
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { applyTextEdits, checkConfig, fixAll, initConfigReaders, readConfigSetups, statedBatch } from '../../src/configs';
import { alexnetPlan } from './fixtures';
import { readExample } from './helpers';
import { llamaPlan } from './llamaPlan';

before(() => initConfigReaders());

const CASES = [
  { file: 'test/configs/data/llama/ds_config.json', format: 'deepspeed' },
  { file: 'test/configs/data/llama/accelerate_fsdp.yaml', format: 'accelerate' },
  { file: 'test/configs/data/llama/train_lightning.py', format: 'lightning' },
  { file: 'test/configs/data/llama/llama3_8b.toml', format: 'torchtitan' },
  { file: 'test/configs/data/llama/train_trainer.py', format: 'hf-trainer' },
] as const;

/** Comments as the test sees them (independent of the code under test): from '#', '//' or '/*' to the end of the line. */
function comments(text: string): string[] {
  return text.split('\n').map((l) => /(#|\/\/|\/\*).*$/.exec(l)?.[0]).filter((c): c is string => !!c && !/^#!/.test(c));
}

for (const { file, format } of CASES) {
  test(`${format}: ZeRO 0 + fp32 for Llama-8B on h100x8 → one setup finding; its fix writes ZeRO-3 and bf16, keeps the batch and every comment`, () => {
    const text = readExample(file);
    const plan = llamaPlan();
    const before = readConfigSetups(file, text)[0]!;
    assert.equal(before.zeroStage?.value, 0);
    assert.equal(before.precision?.value, 'fp32');
    const finding = checkConfig(file, text, plan).findings.find((f) => f.code === 'setup-differs');
    assert.ok(finding?.fix, `a setup finding with a fix for ${file}`);
    assert.match(finding.message, /fp32.*ZeRO 0.*the plan for LlamaForCausalLM on 'h100x8' uses bf16, ZeRO 3/);
    assert.match(finding.fix.title, /ZeRO-3 \+ bf16/);
    assert.match(finding.fix.title, /keeps the global batch/);

    const fixed = fixAll(file, text, plan).text;
    const after = readConfigSetups(file, fixed)[0]!;
    assert.equal(after.zeroStage?.value, 3, fixed);
    assert.equal(after.precision?.value, 'bf16', fixed);
    assert.deepEqual(comments(fixed), comments(text), 'every comment survives byte for byte');
    const batch = statedBatch(before);
    if (batch !== undefined) assert.equal(statedBatch(after), batch, 'the global batch stays');
    assert.ok(!checkConfig(file, fixed, plan).findings.some((f) => f.code === 'setup-differs' && /ZeRO|bf16|fp32/.test(f.message)), 'fixed: no ZeRO/precision difference left');
  });
}

test('DeepSpeed: micro-batch follows the plan at the same train_batch_size; changing the batch is a separate fix, never in Fix all', () => {
  const file = 'test/configs/data/llama/ds_config.json';
  const text = readExample(file);
  const plan = llamaPlan();
  const fixed = fixAll(file, text, plan).text;
  assert.match(fixed, /"train_batch_size": 1024,/);
  assert.match(fixed, /"train_micro_batch_size_per_gpu": 2,/);
  assert.match(fixed, /"gradient_accumulation_steps": 64,/);
  const batchFix = checkConfig(file, text, plan).findings.find((f) => f.code === 'batch-differs')?.fix;
  assert.ok(batchFix);
  assert.match(batchFix.title, /^Change the training batch to the plan's 128 \(changes training/);
  assert.ok(!batchFix.preferred);
});

test('a fix that contradicts a comment says so in its title', () => {
  const file = 'test/configs/data/llama/ds_config.json';
  const setup = checkConfig(file, readExample(file), llamaPlan()).findings.find((f) => f.code === 'setup-differs')!;
  assert.match(setup.fix!.title, /the comment .*"\/\/ stage 0: plain data parallel, every GPU holds everything".* will no longer be true/);
  assert.match(setup.fix!.title, /"\/\/ fp32 training"/);

  const yaml = '# all eight GPUs of the box\nnum_processes: 8\ndistributed_type: MULTI_GPU\n';
  const gpu = checkConfig('accelerate.yaml', yaml, alexnetPlan()).findings.find((f) => f.code === 'gpu-count')!;
  assert.match(gpu.fix!.title, /^Use 4 GPUs as planned .*the comment "# all eight GPUs of the box" will no longer be true/);
  const plain = 'num_processes: 8\ndistributed_type: MULTI_GPU\n';
  assert.doesNotMatch(checkConfig('accelerate.yaml', plain, alexnetPlan()).findings.find((f) => f.code === 'gpu-count')!.fix!.title, /comment/);
});

test('a dimension the format cannot express gets a diagnostic pointing to an export that can', () => {
  const plan = llamaPlan({ tensorParallel: 2 });
  for (const file of ['test/configs/data/llama/ds_config.json', 'test/configs/data/llama/accelerate_fsdp.yaml', 'test/configs/data/llama/train_lightning.py']) {
    const f = checkConfig(file, readExample(file), plan).findings.find((x) => x.code === 'cannot-express' && /TP 2/.test(x.message));
    assert.ok(f, file);
    assert.match(f.message, /cannot express.*torch-parallelize/);
  }
  // torchtitan has the words: it is written, not flagged.
  const toml = 'test/configs/data/llama/llama3_8b.toml';
  const fixed = fixAll(toml, readExample(toml), plan).text;
  assert.match(fixed, /^tensor_parallel_degree = 2$/m);
  assert.match(fixed, /^data_parallel_shard_degree = 4$/m);
});

test('Megatron-LM arguments: --fp16 becomes --bf16 in place, recompute and micro-batch follow the plan at the same --global-batch-size', () => {
  const file = 'test/configs/data/llama/pretrain_llama.sh';
  const text = readExample(file);
  const plan = llamaPlan({ tensorParallel: 2 });
  const s = readConfigSetups(file, text).find((x) => x.label === 'Megatron-LM launch')!;
  assert.equal(s.tensorParallel?.value, 1, '$TP resolves through TP=1');
  const fixed = fixAll(file, text, plan).text;
  assert.match(fixed, /^TP=2$/m, 'the one assignment $TP refers to is what changes');
  assert.match(fixed, /--micro-batch-size 2\n/);
  assert.match(fixed, /--global-batch-size 256\n/);
  assert.match(fixed, /--bf16 .*--recompute-granularity selective/);
  assert.match(fixed, /--sequence-parallel\n/);
  // The plan's ZeRO stage is Megatron-FSDP's strategy on the distributed optimizer.
  assert.equal(readConfigSetups(file, fixed).find((x) => x.label === 'Megatron-LM launch')!.zeroStage?.value, plan.plan.setup!.zeroStage);
  assert.doesNotMatch(fixed, /--fp16/);
  assert.deepEqual(comments(fixed), comments(text));
});

test('a batch of zero or a fraction is no batch: the global batch is not stated (torchtitan as DeepSpeed)', () => {
  const toml = readExample('test/configs/data/llama/llama3_8b.toml');
  const [setup] = readConfigSetups('llama3_8b.toml', toml);
  assert.equal(statedBatch(setup!), 4 * 8, 'local_batch_size 4 on data_parallel_shard_degree 8');
  assert.equal(readConfigSetups('llama3_8b.toml', toml.replace(/local_batch_size = 4/, 'local_batch_size = 1'))[0]!.microBatch?.value, 1, 'one sequence per GPU is a batch');
  for (const bad of ['0', '2.5', '-4']) {
    const [broken] = readConfigSetups('llama3_8b.toml', toml.replace(/local_batch_size = 4/, `local_batch_size = ${bad}`));
    assert.equal(broken!.microBatch, undefined, `local_batch_size = ${bad}`);
    assert.equal(statedBatch(broken!), undefined, `local_batch_size = ${bad}`);
  }
  const ds = (micro: number) => readConfigSetups('ds_config.json', JSON.stringify({ train_micro_batch_size_per_gpu: micro, gradient_accumulation_steps: 1 }))[0]!;
  assert.equal(ds(0).microBatch, undefined);
});

test('torchtitan HSDP: shard over one node and replicate across nodes (shard × replicate = the data-parallel degree)', () => {
  const toml = readExample('test/configs/data/llama/llama3_8b.toml').replace('data_parallel_replicate_degree = 8', 'data_parallel_replicate_degree = 16');
  const hsdp = fixAll('llama3_8b.toml', toml, llamaPlan({ zeroStage: 3, hybridShard: true, shardGroup: 8, dataParallel: 16, tensorParallel: 1, recompute: 'none', precision: 'fp32' })).text;
  assert.match(hsdp, /^data_parallel_shard_degree = 8$/m);
  assert.match(hsdp, /^data_parallel_replicate_degree = 2$/m, 'not left at 16, which would shard over one rank');
  // With context parallelism the shard group holds CP ranks too: one node of 8 is 4 data-parallel shards × CP 2, replicated twice.
  const withCp = fixAll('llama3_8b.toml', toml, llamaPlan({ zeroStage: 3, hybridShard: true, shardGroup: 8, contextParallel: 2, dataParallel: 8, tensorParallel: 1, recompute: 'none', precision: 'fp32' })).text;
  assert.match(withCp, /^data_parallel_shard_degree = 4$/m);
  assert.match(withCp, /^data_parallel_replicate_degree = 2$/m);
  // A shard group that context parallelism does not divide into whole data-parallel shards: torchtitan derives the shard (-1).
  const uneven = fixAll('llama3_8b.toml', toml, llamaPlan({ zeroStage: 3, hybridShard: true, shardGroup: 6, contextParallel: 4, dataParallel: 6, tensorParallel: 1, recompute: 'none', precision: 'fp32' })).text;
  assert.match(uneven, /^data_parallel_shard_degree = -1$/m);
  assert.match(uneven, /^data_parallel_replicate_degree = 16$/m, 'the replicate degree is left as the user set it');
  const full = fixAll('llama3_8b.toml', toml, llamaPlan({ zeroStage: 3, hybridShard: false, shardGroup: 16, dataParallel: 16, tensorParallel: 1, recompute: 'none', precision: 'fp32' })).text;
  assert.match(full, /^data_parallel_shard_degree = 16$/m);
  assert.match(full, /^data_parallel_replicate_degree = 1$/m);
});

test('torchtitan replicate 8 × shard 1 is plain DDP over 8, not HSDP: nothing is sharded to replicate', () => {
  const [s] = readConfigSetups('llama3_8b.toml', readExample('test/configs/data/llama/llama3_8b.toml'));
  assert.deepEqual([s!.zeroStage?.value, s!.hybridShard?.value, s!.dataParallel?.value], [0, false, 8]);
  // A derived shard degree (-1) or an invalid 0 states no data-parallel degree.
  for (const shard of ['-1', '0']) {
    const [d] = readConfigSetups('llama3_8b.toml', readExample('test/configs/data/llama/llama3_8b.toml').replace('data_parallel_shard_degree = 1', `data_parallel_shard_degree = ${shard}`));
    assert.equal(d!.dataParallel, undefined, `shard ${shard}`);
  }
});

test('pinned options: a world the model-parallel degrees do not divide gives no data-parallel degree, so no batch is derived from it', async () => {
  const { pinnedOptions } = await import('../../src/configs');
  const base = { batch: 64, objective: 'throughput' as const, strategies: 'all' as const, optimizer: 'adam' as const };
  const dim = <T>(value: T) => ({ value, stated: true, range: { start: 0, end: 1 } });
  const setup = { label: 'test', anchor: { start: 0, end: 1 }, inexpressible: {}, world: 6, tensorParallel: dim(4), microBatch: dim(2) };
  const uneven = pinnedOptions(base, setup as never, 'cfg');
  assert.equal(uneven.batch, 64, '6 GPUs over TP 4 is 1.5 data-parallel ranks: the batch stays as given');
  assert.equal(uneven.gpus, 6);
  const even = pinnedOptions(base, { ...setup, world: 8 } as never, 'cfg');
  assert.equal(even.batch, 2 * 2, 'micro 2 × DP 2');
});

test('torchtitan fsdp_reshard_after_forward = "never" keeps gathered weights between forward and backward: ZeRO-2, not 3', () => {
  const toml = readExample('test/configs/data/llama/llama3_8b.toml').replace('data_parallel_shard_degree = 1', 'data_parallel_shard_degree = -1');
  assert.equal(readConfigSetups('llama3_8b.toml', toml)[0]!.zeroStage?.value, 3, 'FSDP2 reshards by default');
  const never = toml.replace('[parallelism]', '[parallelism]\nfsdp_reshard_after_forward = "never"');
  assert.equal(readConfigSetups('llama3_8b.toml', never)[0]!.zeroStage?.value, 2);
});

test('torchtitan ZeRO-2 writes fsdp_reshard_after_forward = "never"; ZeRO-3 adds no reshard key the config did not have', () => {
  const toml = readExample('test/configs/data/llama/llama3_8b.toml');
  const [s] = readConfigSetups('llama3_8b.toml', toml);
  const plan = llamaPlan({ dataParallel: 8, tensorParallel: 1 });
  const z2 = applyTextEdits(toml, s!.zeroStage!.set!(2, plan.plan.setup!)!);
  assert.match(z2, /^fsdp_reshard_after_forward = "never"$/m);
  assert.match(z2, /^data_parallel_shard_degree = 8$/m);
  const z3 = applyTextEdits(toml, s!.zeroStage!.set!(3, plan.plan.setup!)!);
  assert.doesNotMatch(z3, /fsdp_reshard_after_forward/);
  assert.match(z3, /^data_parallel_shard_degree = 8$/m);
});

test('torchtitan expert_parallel_degree is the expert-parallel degree, 1 where [parallelism] does not state it, and a plan with EP writes it there', () => {
  const toml = readExample('test/configs/data/llama/llama3_8b.toml');
  const [plain] = readConfigSetups('llama3_8b.toml', toml);
  assert.deepEqual([plain!.expertParallel?.value, plain!.expertParallel?.stated], [1, false]);
  const written = applyTextEdits(toml, plain!.expertParallel!.set!(8)!);
  assert.match(written, /^expert_parallel_degree = 8$/m);
  const [again] = readConfigSetups('llama3_8b.toml', written);
  assert.deepEqual([again!.expertParallel?.value, again!.expertParallel?.stated], [8, true]);
});
