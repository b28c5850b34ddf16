import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { checkConfig, detectConfigFormats, fixAll, initConfigReaders } from '../../src/configs';
import { alexnetPlan, dataParallelPlan, twoNodePlan } from './fixtures';
import { readExample } from './helpers';

before(() => initConfigReaders());

const valueOf = (text: string, f: { range: { start: number; end: number } }): string => text.slice(f.range.start, f.range.end);

test('detection is content-based and says [] for unrelated files', () => {
  assert.deepEqual(detectConfigFormats('cfg.yaml', 'num_processes: 4\n'), ['accelerate']);
  assert.deepEqual(detectConfigFormats('x.json', '{"zero_optimization": {"stage": 1}}'), ['deepspeed']);
  assert.deepEqual(detectConfigFormats('t.py', 'import lightning as L\nL.Trainer(devices=2)'), ['lightning']);
  assert.deepEqual(detectConfigFormats('t.py', 'from transformers import Trainer\nTrainer(model=m)'), [], 'HF Trainer is not Lightning');
  assert.deepEqual(detectConfigFormats('k.py', 's = tf.distribute.MirroredStrategy()'), ['keras-mirrored']);
  assert.deepEqual(detectConfigFormats('run.sh', 'CUDA_VISIBLE_DEVICES=0,1 torchrun --nproc_per_node=2 t.py'), ['torchrun', 'cuda-visible-devices']);
  assert.deepEqual(detectConfigFormats('Makefile', 'train:\n\tpython -m torch.distributed.run --nproc_per_node 2 t.py'), ['torchrun']);
  assert.deepEqual(detectConfigFormats('notes.txt', 'torchrun --nproc_per_node=8'), []);
  assert.deepEqual(detectConfigFormats('package.json', '{"name": "x"}'), []);
});

test('Lightning: devices list, string devices, num_nodes and strategy objects are read from the tree', () => {
  const text = 'import pytorch_lightning as pl\nfrom pytorch_lightning.strategies import DDPStrategy\ntrainer = pl.Trainer(devices=[0, 1, 2, 3, 4, 5], strategy=DDPStrategy(find_unused_parameters=False))\n';
  const { findings } = checkConfig('train.py', text, alexnetPlan());
  const gpu = findings.find((f) => f.code === 'gpu-count')!;
  assert.equal(valueOf(text, gpu), '[0, 1, 2, 3, 4, 5]');
  assert.match(gpu.message, /^6 processes requested/);
  assert.equal(fixAll('train.py', text, alexnetPlan()).text, text.replace('[0, 1, 2, 3, 4, 5]', '[0, 1, 2, 3]'));
  // The fix's title names num_nodes only for a plan on more than one machine.
  assert.equal(gpu.fix!.title, 'Use 4 GPUs as planned (devices=4)');
  const overTwo = checkConfig('t.py', 'import lightning as L\nt = L.Trainer(devices=4, num_nodes=1)\n', twoNodePlan()).findings.find((f) => f.code === 'gpu-count')!;
  assert.equal(overTwo.fix!.title, 'Use 16 GPUs as planned (devices=8, num_nodes=2)');
  const advice = findings.find((f) => f.code === 'model-parallel-advice')!;
  assert.equal(valueOf(text, advice), 'DDPStrategy(find_unused_parameters=False)');

  const twoNodes = 'import lightning as L\nt = L.Trainer(devices="8", num_nodes=1)\n';
  const fixed = fixAll('t.py', twoNodes, twoNodePlan()).text;
  assert.equal(fixed, 'import lightning as L\nt = L.Trainer(devices="8", num_nodes=2)\n');
});

test('Lightning: expressions and CPU trainers are left alone', () => {
  const text = 'import lightning as L\nL.Trainer(devices=args.gpus)\nL.Trainer(accelerator="cpu", devices=8)\nL.Trainer(devices="auto")\n';
  assert.deepEqual(checkConfig('t.py', text, alexnetPlan()).findings, []);
});

test('Keras: MirroredStrategy device lists keep their spelling; an argument-less strategy gets devices inserted', () => {
  const text = 'import tensorflow as tf\ns = tf.distribute.MirroredStrategy(devices=["/gpu:0", "/gpu:1"])\n';
  const f = checkConfig('k.py', text, alexnetPlan()).findings.find((x) => x.code === 'gpu-count')!;
  assert.match(f.message, /^MirroredStrategy mirrors over 2 GPUs; the plan uses 4 GPUs for 1\.8× the throughput/);
  assert.equal(fixAll('k.py', text, alexnetPlan()).text, text.replace('["/gpu:0", "/gpu:1"]', '["/gpu:0", "/gpu:1", "/gpu:2", "/gpu:3"]'));

  // A comment inside the list is not a device.
  const commented = 'import tensorflow as tf\ns = tf.distribute.MirroredStrategy(devices=["/gpu:0",  # first\n    "/gpu:1"])\n';
  assert.match(checkConfig('k.py', commented, alexnetPlan()).findings.find((x) => x.code === 'gpu-count')?.message ?? '', /^MirroredStrategy mirrors over 2 GPUs/);

  const bare = 'import tensorflow as tf\nstrategy = tf.distribute.MirroredStrategy()\n';
  assert.equal(fixAll('k.py', bare, alexnetPlan()).text, bare.replace('MirroredStrategy()', 'MirroredStrategy(devices=["/gpu:0", "/gpu:1", "/gpu:2", "/gpu:3"])'));
  // A plan on every GPU of the machine is what a bare MirroredStrategy() already does.
  assert.deepEqual(checkConfig('k.py', bare, dataParallelPlan(8)).findings.filter((x) => x.code === 'gpu-count'), []);
  const multi = checkConfig('k.py', bare, twoNodePlan()).findings;
  assert.deepEqual(multi.map((x) => x.code), ['multi-node']);
});

test('torchrun: every spelling of the flags is read and edited in place', () => {
  const plan = alexnetPlan();
  const cases: Array<[string, string]> = [
    ['torchrun --nproc_per_node=8 train.py', 'torchrun --nproc_per_node=4 train.py'],
    ['torchrun --nproc_per_node 8 train.py', 'torchrun --nproc_per_node 4 train.py'],
    ['torchrun --nproc-per-node=8 train.py --nproc_per_node=99', 'torchrun --nproc-per-node=4 train.py --nproc_per_node=99'],
    ['python3 -u -m torch.distributed.run --standalone --nproc_per_node "8" train.py', 'python3 -u -m torch.distributed.run --standalone --nproc_per_node "4" train.py'],
    ['NGPU=${NGPU:-8}\ntorchrun --nproc_per_node=$NGPU t.py', 'NGPU=${NGPU:-4}\ntorchrun --nproc_per_node=$NGPU t.py'],
    ['torchrun \\\n  --nnodes=2 \\\n  --nproc_per_node=8 t.py', 'torchrun \\\n  --nnodes=1 \\\n  --nproc_per_node=4 t.py'],
    ['torchrun --nproc_per_node " 8 " --nnodes=\'1\' train.py', 'torchrun --nproc_per_node " 4 " --nnodes=\'1\' train.py'],
  ];
  for (const [input, expected] of cases) {
    const text = `#!/bin/bash\n${input}\n`;
    assert.equal(fixAll('run.sh', text, plan).text, `#!/bin/bash\n${expected}\n`, input);
  }
  // Two machines wanted, --nnodes missing: inserted after the launcher.
  assert.equal(fixAll('run.sh', 'torchrun --nproc_per_node=4 t.py\n', twoNodePlan()).text, 'torchrun --nnodes=2 --nproc_per_node=8 t.py\n');
  // Computed values cannot be checked, and say so.
  assert.deepEqual(checkConfig('run.sh', 'torchrun --nproc_per_node=$(nvidia-smi -L | wc -l) t.py\n', plan).findings.map((f) => [f.severity, f.code]), [['info', 'launch-count-unread']]);
});

test('Makefile: make variables, recipes and the legacy launcher', () => {
  const file = 'examples/configs/Makefile';
  const text = readExample(file);
  const findings = checkConfig(file, text, dataParallelPlan(8)).findings;
  // The legacy recipe starts 4 processes behind CUDA_VISIBLE_DEVICES=0,1,2,3; the plan wants 8.
  const legacy = findings.find((f) => f.code === 'gpu-count')!;
  assert.equal(valueOf(text, legacy), '4');
  assert.match(legacy.message, /^4 processes requested; the plan uses 8 GPUs/);
  const fixed = fixAll(file, text, dataParallelPlan(8)).text;
  assert.ok(fixed.includes('CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7 $(PYTHON) -m torch.distributed.launch --nproc_per_node 8 \\'));
  // With the 4-GPU plan, `NGPU ?= 8` is the value that changes.
  const four = fixAll(file, text, alexnetPlan()).text;
  assert.ok(four.includes('NGPU ?= 4\n'));
});

test('CUDA_VISIBLE_DEVICES alone, and too few visible GPUs for torchrun', () => {
  const text = 'export CUDA_VISIBLE_DEVICES="0,1,2,3,4,5,6,7"\npython train.py\n';
  const f = checkConfig('run.sh', text, alexnetPlan()).findings;
  assert.deepEqual(f.map((x) => x.code), ['gpu-count']);
  assert.match(f[0]!.message, /^CUDA_VISIBLE_DEVICES exposes 8 GPUs; the plan reaches 98%/);
  assert.equal(fixAll('run.sh', text, alexnetPlan()).text, 'export CUDA_VISIBLE_DEVICES="0,1,2,3"\npython train.py\n');

  const short = 'CUDA_VISIBLE_DEVICES=0,1 torchrun --nproc_per_node=4 t.py\n';
  const mismatch = checkConfig('run.sh', short, undefined).findings;
  assert.deepEqual(mismatch.map((x) => [x.code, x.severity]), [['device-ids-mismatch', 'error']]);
  assert.match(mismatch[0]!.message, /lists 2 GPU\(s\) but --nproc_per_node starts 4 processes/);
});

test('accelerate: num_processes beyond NO distribution, gpu_ids shorter than num_processes', () => {
  const text = 'distributed_type: MULTI_GPU\nnum_processes: 4\ngpu_ids: 0,1\n';
  const f = checkConfig('a.yaml', text, undefined).findings;
  assert.deepEqual(f.map((x) => x.code), ['device-ids-mismatch']);
  const multi = 'distributed_type: MULTI_GPU\nnum_machines: 1\nnum_processes: 8\n';
  assert.equal(fixAll('a.yaml', multi, twoNodePlan()).text, 'distributed_type: MULTI_GPU\nnum_machines: 2\nnum_processes: 16\n');
});

test('accelerate: num_processes counts all machines while gpu_ids lists one machine', () => {
  // 2 machines × 4 processes each: 4 ids per machine is right, 2 are too few.
  assert.deepEqual(checkConfig('a.yaml', 'distributed_type: MULTI_GPU\nnum_machines: 2\nnum_processes: 8\ngpu_ids: 0,1,2,3\n', undefined).findings, []);
  const short = checkConfig('a.yaml', 'distributed_type: MULTI_GPU\nnum_machines: 2\nnum_processes: 8\ngpu_ids: 0,1\n', undefined).findings;
  assert.deepEqual(short.map((x) => x.code), ['device-ids-mismatch']);
  assert.match(short[0]!.message, /lists 2 GPU\(s\) but num_processes starts 4 processes per machine/);
  // Moving to the two-machine plan resizes gpu_ids to 8 per machine, not to the 16-process total.
  assert.equal(fixAll('a.yaml', 'distributed_type: MULTI_GPU\nnum_machines: 2\nnum_processes: 8\ngpu_ids: 0,1,2,3\n', twoNodePlan()).text,
    'distributed_type: MULTI_GPU\nnum_machines: 2\nnum_processes: 16\ngpu_ids: 0,1,2,3,4,5,6,7\n');
  // No num_machines (Accelerate reads 1): raising the total alone would put 16 processes on one machine, so no fix.
  const lone = checkConfig('a.yaml', 'distributed_type: MULTI_GPU\nnum_processes: 8\n', twoNodePlan()).findings.find((x) => x.code === 'gpu-count');
  assert.ok(lone);
  assert.equal(lone.fix, undefined);
});

test('accelerate: the planned 16 processes crowded onto one machine of 8-GPU machines', () => {
  const plan = twoNodePlan();
  const text = 'distributed_type: MULTI_GPU\nnum_machines: 1\nnum_processes: 16\ngpu_ids: 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15\n';
  const f = checkConfig('a.yaml', text, plan).findings;
  assert.deepEqual(f.map((x) => [x.code, x.severity]), [['node-count', 'warning']]);
  assert.equal(valueOf(text, f[0]!), '1');
  assert.match(f[0]!.message, /1 machine requested for 16 processes, but the machines of 'two-dgx' have 8 GPUs each; the plan runs on 2 machines × 8 GPUs/);
  // One fix moves machines and per-machine ids together.
  assert.equal(fixAll('a.yaml', text, plan).text, 'distributed_type: MULTI_GPU\nnum_machines: 2\nnum_processes: 16\ngpu_ids: 0,1,2,3,4,5,6,7\n');
  // Too few ids for 16 on one machine: the ids finding no longer offers ids 0-15, which no machine has.
  const short = 'distributed_type: MULTI_GPU\nnum_machines: 1\nnum_processes: 16\ngpu_ids: 0,1,2,3\n';
  const g = checkConfig('a.yaml', short, plan).findings;
  assert.deepEqual(g.map((x) => x.code), ['device-ids-mismatch', 'node-count']);
  assert.equal(g[0]!.fix, undefined);
  assert.match(g[0]!.message, /only 8 GPUs each/);
  assert.equal(fixAll('a.yaml', short, plan).text, 'distributed_type: MULTI_GPU\nnum_machines: 2\nnum_processes: 16\ngpu_ids: 0,1,2,3,4,5,6,7\n');
  // torchrun says the same, fixing --nnodes and --nproc_per_node together.
  const run = 'torchrun --nnodes=1 --nproc_per_node=16 t.py\n';
  assert.deepEqual(checkConfig('run.sh', run, plan).findings.map((x) => x.code), ['node-count']);
  assert.equal(fixAll('run.sh', run, plan).text, 'torchrun --nnodes=2 --nproc_per_node=8 t.py\n');
  // Without a plan the config is internally consistent: nothing to say.
  assert.deepEqual(checkConfig('a.yaml', text, undefined).findings, []);
});

test('checkConfig uses the formats its caller already detected instead of detecting again', () => {
  const text = 'distributed_type: MULTI_GPU\nnum_processes: 4\ngpu_ids: 0,1\n';
  const detected = detectConfigFormats('a.yaml', text);
  assert.deepEqual(checkConfig('a.yaml', text, undefined, detected), checkConfig('a.yaml', text, undefined));
  // The given list is what gets checked: none means nothing is read, and a name detection would refuse is still honoured.
  assert.deepEqual(checkConfig('a.yaml', text, undefined, []), { formats: [], findings: [] });
  const other = checkConfig('notes.txt', text, undefined, ['accelerate']);
  assert.deepEqual(other.formats, ['accelerate']);
  assert.deepEqual(other.findings.map((f) => f.code), ['device-ids-mismatch']);
  assert.equal(fixAll('notes.txt', text, undefined, ['accelerate']).text, 'distributed_type: MULTI_GPU\nnum_processes: 4\ngpu_ids: 0,1,2,3\n');
});

test('a config that matches the plan is clean', () => {
  assert.deepEqual(checkConfig('a.yaml', 'distributed_type: MULTI_GPU\nnum_processes: 8\n', dataParallelPlan(8)).findings, []);
  assert.deepEqual(checkConfig('run.sh', 'torchrun --standalone --nproc_per_node=8 t.py\n', dataParallelPlan(8)).findings, []);
});

test('accelerate: non-contiguous gpu_ids are counted, kept and resized by id, not by position', () => {
  // Two processes on GPUs 0 and 2: two ids for two processes is right, whatever the ids are.
  assert.deepEqual(checkConfig('a.yaml', 'distributed_type: MULTI_GPU\nnum_processes: 2\ngpu_ids: 0,2\n', undefined).findings, []);
  assert.deepEqual(checkConfig('a.yaml', 'distributed_type: MULTI_GPU\nnum_processes: 3\ngpu_ids: 1,5,7\n', undefined).findings, []);
  // Too few: the user's ids stay first, the lowest free ids are added.
  const grow = checkConfig('a.yaml', 'distributed_type: MULTI_GPU\nnum_processes: 4\ngpu_ids: 1,3\n', undefined).findings;
  assert.deepEqual(grow.map((x) => x.code), ['device-ids-mismatch']);
  assert.equal(fixAll('a.yaml', 'distributed_type: MULTI_GPU\nnum_processes: 4\ngpu_ids: 1,3\n', undefined).text, 'distributed_type: MULTI_GPU\nnum_processes: 4\ngpu_ids: 1,3,0,2\n');
  // Too many: the first ids the user listed are kept.
  assert.equal(fixAll('a.yaml', 'distributed_type: MULTI_GPU\nnum_processes: 2\ngpu_ids: 2,5,7\n', undefined).text, 'distributed_type: MULTI_GPU\nnum_processes: 2\ngpu_ids: 2,5\n');
});

test('Accelerate distributed_type follows the GPU count the fix writes: NO stays NO for one GPU, becomes MULTI_GPU for several', () => {
  const oneGpu = alexnetPlan();
  oneGpu.plan = { ...oneGpu.plan, gpus: 1, layers: oneGpu.plan.layers.map((l) => ({ ...l, devices: [0], dataDegree: 1 })) };
  const twoProcs = 'compute_environment: LOCAL_MACHINE\ndistributed_type: NO\nnum_machines: 1\nnum_processes: 2\n';
  const f = checkConfig('accelerate_config.yaml', twoProcs, oneGpu).findings.find((x) => x.code === 'distributed-type')!;
  assert.equal(f.fix, undefined, 'MULTI_GPU would contradict a one-GPU plan');
  assert.match(f.message, /the plan uses one GPU, so num_processes: 1 is the fix/);
  assert.equal(fixAll('accelerate_config.yaml', twoProcs, oneGpu).text, twoProcs.replace('num_processes: 2', 'num_processes: 1'));
  // Without a plan, or with a multi-GPU one, switching distribution on is the fix.
  assert.equal(checkConfig('accelerate_config.yaml', twoProcs, undefined).findings.find((x) => x.code === 'distributed-type')!.fix!.title, 'Set distributed_type to MULTI_GPU');
  const single = twoProcs.replace('num_processes: 2', 'num_processes: 1');
  assert.equal(fixAll('accelerate_config.yaml', single, alexnetPlan()).text, 'compute_environment: LOCAL_MACHINE\ndistributed_type: MULTI_GPU\nnum_machines: 1\nnum_processes: 4\n');
  assert.equal(fixAll('accelerate_config.yaml', single, oneGpu).text, single, 'one process, one GPU: nothing to change');
  assert.deepEqual(checkConfig('accelerate_config.yaml', single, undefined).findings.filter((x) => x.code === 'distributed-type'), [], 'NO with one process is consistent');
});

test('Lightning without a strategy: "auto" is DDP from two devices on (the model-parallel advice then applies), one device is no DDP', () => {
  const advice = (devices: string) =>
    checkConfig('train.py', `import lightning as L\ntrainer = L.Trainer(devices=${devices})\n`, alexnetPlan()).findings.filter((f) => f.code === 'model-parallel-advice');
  assert.equal(advice('2').length, 1, 'two devices run DDP');
  assert.match(advice('2')[0]!.message, /^DP on 2 GPUs/);
  assert.deepEqual(advice('1'), [], 'one device runs no DDP');
});

test('Lightning devices="0,1,2,3" cut to one GPU keeps its trailing comma: "0," is a list of ids, "0" would mean no GPU', async () => {
  const { dataParallelPlan } = await import('./fixtures');
  const text = 'import lightning as L\nt = L.Trainer(devices="0,1,2,3")\n';
  assert.equal(fixAll('t.py', text, dataParallelPlan(1)).text, text.replace('"0,1,2,3"', '"0,"'));
  assert.equal(fixAll('t.py', text, dataParallelPlan(2)).text, text.replace('"0,1,2,3"', '"0,1"'));
});

test('9 processes on 3 machines for a plan of 8 + 1 GPUs on 2: the machine count is flagged, but no fix, since Accelerate cannot run 9 processes evenly on 2 machines', async () => {
  const plan = { ...twoNodePlan(), plan: { ...dataParallelPlan(9).plan } };
  const text = 'distributed_type: MULTI_GPU\nnum_machines: 3\nnum_processes: 9\n';
  const nodes = checkConfig('accelerate.yaml', text, plan).findings.find((f) => f.code === 'node-count');
  assert.ok(nodes, 'the machine count is flagged');
  assert.equal(nodes.fix, undefined);
  // An even plan (16 GPUs as 8 + 8) on 4 machines gets its fix.
  const even = checkConfig('accelerate.yaml', 'distributed_type: MULTI_GPU\nnum_machines: 4\nnum_processes: 16\n', twoNodePlan()).findings.find((f) => f.code === 'node-count');
  assert.equal(even?.fix?.title, 'Use 2 machine(s) as planned');
});

test('the Accelerate GPU-count fix names num_machines only for a plan on several machines', () => {
  const one = checkConfig('accelerate.yaml', 'distributed_type: MULTI_GPU\nnum_processes: 8\n', alexnetPlan()).findings.find((f) => f.code === 'gpu-count');
  assert.ok(one?.fix);
  assert.match(one.fix.title, /num_processes: 4/);
  assert.doesNotMatch(one.fix.title, /num_machines/);
  const two = checkConfig('accelerate.yaml', 'distributed_type: MULTI_GPU\nnum_machines: 1\nnum_processes: 8\n', twoNodePlan()).findings.find((f) => f.code === 'gpu-count');
  assert.equal(two!.fix!.title, 'Use 16 GPUs as planned (num_processes: 16, num_machines: 2)');
});
