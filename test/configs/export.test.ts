import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { parse as parseYaml } from 'yaml';
import { checkConfig, exportPlan, EXPORT_FORMATS, initConfigReaders } from '../../src/configs';
import { alexnetPlan, dataParallelPlan, pipelinePlan, twoNodePlan } from './fixtures';

before(() => initConfigReaders());

test('DeepSpeed export parses and holds the plan: batch = micro × accum × world', () => {
  for (const plan of [alexnetPlan(), twoNodePlan(), pipelinePlan()]) {
    const out = exportPlan(plan, 'deepspeed');
    assert.equal(out.fileName, 'ds_config.json');
    const cfg = JSON.parse(out.content);
    const world = plan.plan.pipeline ? plan.plan.gpus / plan.plan.pipeline.stages : plan.plan.gpus;
    assert.equal(cfg.train_batch_size, plan.batch);
    assert.equal(cfg.train_batch_size, cfg.train_micro_batch_size_per_gpu * cfg.gradient_accumulation_steps * world);
    assert.equal(cfg.gradient_accumulation_steps, plan.plan.pipeline?.microBatches ?? 1);
    assert.equal(cfg.zero_optimization.stage, 1);
    // WAP's own check agrees with its export.
    assert.deepEqual(checkConfig(out.fileName, out.content, plan).findings.filter((f) => f.severity !== 'info'), []);
  }
});

test('DeepSpeed export is exactly the keys DeepSpeed needs, and logs every 100 steps rather than DeepSpeed’s default 10', () => {
  assert.deepEqual(JSON.parse(exportPlan(dataParallelPlan(8), 'deepspeed').content), {
    train_batch_size: dataParallelPlan(8).batch,
    train_micro_batch_size_per_gpu: dataParallelPlan(8).batch / 8,
    gradient_accumulation_steps: 1,
    zero_optimization: { stage: 1 },
    steps_per_print: 100,
    wall_clock_breakdown: false,
  });
});

test('DeepSpeed export for one GPU: ZeRO stage 0, since a single rank has nobody to shard optimizer state with', () => {
  const cfg = JSON.parse(exportPlan(dataParallelPlan(1), 'deepspeed').content);
  assert.equal(cfg.zero_optimization.stage, 0);
  assert.equal(JSON.parse(exportPlan(dataParallelPlan(2), 'deepspeed').content).zero_optimization.stage, 1);
});

test('DeepSpeed export rounds a batch that does not divide, and says so', () => {
  const plan = { ...dataParallelPlan(8), batch: 100 };
  const out = exportPlan(plan, 'deepspeed');
  const cfg = JSON.parse(out.content);
  assert.equal(cfg.train_batch_size, 96);
  assert.equal(cfg.train_micro_batch_size_per_gpu, 12);
  assert.match(out.description, /batch 100 does not split evenly over 8; rounded to 96/);
});

test('Accelerate export parses and holds the plan, single and multi machine', () => {
  const one = exportPlan(alexnetPlan(), 'accelerate');
  const cfg = parseYaml(one.content);
  assert.equal(cfg.num_processes, 4);
  assert.equal(cfg.num_machines, 1);
  assert.equal(cfg.distributed_type, 'MULTI_GPU');
  assert.equal(cfg.gpu_ids, '0,1,2,3');
  assert.equal(cfg.mixed_precision, 'no');
  assert.deepEqual(checkConfig(one.fileName, one.content, alexnetPlan()).findings.map((f) => f.code), ['model-parallel-advice']);
  assert.match(one.content, /^machine_rank: 0$/m, 'one machine: no per-machine rank to set');
  assert.match(exportPlan(twoNodePlan(), 'accelerate').content, /^machine_rank: 0 # set to 0…1 on each machine$/m);

  const two = parseYaml(exportPlan(twoNodePlan(), 'accelerate').content);
  assert.deepEqual([two.num_processes, two.num_machines, two.gpu_ids, two.main_process_port], [16, 2, 'all', 29500]);
  const single = parseYaml(exportPlan({ ...alexnetPlan(), plan: { ...alexnetPlan().plan, gpus: 1 } }, 'accelerate').content);
  assert.equal(single.distributed_type, 'NO', "quoted, so YAML 1.1 readers do not turn it into false");
});

test('torchrun export: single node standalone, multi node with c10d rendezvous; WAP reads both back clean', () => {
  const one = exportPlan(dataParallelPlan(8), 'torchrun');
  assert.match(one.content, /^torchrun --standalone --nproc_per_node=8 "\$TRAIN_SCRIPT" "\$@"$/m);
  assert.deepEqual(checkConfig(one.fileName, one.content, dataParallelPlan(8)).findings, []);
  const two = exportPlan(twoNodePlan(), 'torchrun');
  assert.match(two.content, /torchrun --nnodes=2 --nproc_per_node=8 \\\n {2}--rdzv_id=wap-AlexNet --rdzv_backend=c10d --rdzv_endpoint="\$RDZV_HOST:29500"/);
  assert.deepEqual(checkConfig(two.fileName, two.content, twoNodePlan()).findings, []);
});

test('hostfile and Horovod exports list the machines and slots', () => {
  const host = exportPlan(twoNodePlan(), 'hostfile');
  assert.deepEqual(host.content.split('\n').filter((l) => l && !l.startsWith('#')), ['node0 slots=8', 'node1 slots=8']);
  assert.match(host.content, /# Launch: deepspeed --hostfile=hostfile --num_nodes=2 --num_gpus=8 train\.py/);
  assert.match(exportPlan(twoNodePlan(), 'horovod').content, /^horovodrun -np 16 -H node0:8,node1:8 python train\.py "\$@"$/m);
  assert.match(exportPlan(alexnetPlan(), 'horovod').content, /^horovodrun -np 4 -H localhost:4 python train\.py/m);
});

test('an uneven plan (9 GPUs on 8-GPU machines) exports the real 8 + 1 split, never 2 × 8', () => {
  const plan = { ...twoNodePlan(), plan: { ...dataParallelPlan(9).plan } };
  const host = exportPlan(plan, 'hostfile');
  assert.deepEqual(host.content.split('\n').filter((l) => l && !l.startsWith('#')), ['node0 slots=8', 'node1 slots=1']);
  assert.match(host.content, /# Launch: deepspeed --hostfile=hostfile --num_nodes=2 train\.py/, 'no single --num_gpus for unequal machines');
  assert.match(exportPlan(plan, 'horovod').content, /^horovodrun -np 9 -H node0:8,node1:1 python train\.py "\$@"$/m);
  const run = exportPlan(plan, 'torchrun');
  assert.match(run.content, /^SLOTS=\(8 1\)$/m);
  assert.match(run.content, /^NODE_INDEX="\$\{NODE_INDEX:\?set NODE_INDEX to this machine's index, 0…1\}"$/m, 'indices 0 and 1 for 2 machines');
  assert.match(run.content, /torchrun --nnodes=2 --nproc_per_node="\$NPROC" \\/);
  assert.match(run.description, /8 \+ 1 processes on 2 machines/);
  const run2 = checkConfig(run.fileName, run.content, plan);
  assert.deepEqual(run2.findings.filter((f) => f.severity !== 'info'), [], 'WAP reads its own uneven torchrun script without complaint');
  // The per-machine count is the machine's own slot: said as not compared, not read as a number.
  assert.deepEqual(run2.findings.map((f) => f.code), ['launch-count-unread']);
  const acc = exportPlan(plan, 'accelerate');
  const cfg = parseYaml(acc.content);
  assert.deepEqual([cfg.num_processes, cfg.num_machines], [9, 2], 'the real total, not 16');
  assert.match(acc.content, /split unevenly over 2 machines \(8 \+ 1\), which Accelerate cannot express/);
  assert.match(acc.content, /it starts num_processes \/ num_machines processes on every machine/);
  assert.match(acc.description, /Accelerate cannot launch that/);
});

test('every export format produces a named, described file', () => {
  for (const format of EXPORT_FORMATS) {
    const out = exportPlan(alexnetPlan(), format);
    assert.ok(out.fileName && out.content.endsWith('\n') && out.description.length > 20, format);
  }
});
