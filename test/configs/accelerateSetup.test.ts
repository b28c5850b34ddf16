/**
 * What an Accelerate config states about the training setup, read from small
 * configs in Accelerate's own keys (accelerate docs, "FSDP" and "DeepSpeed"
 * config files; FSDP's ShardingStrategy enum, 1-based), and each dimension's
 * edit round-tripping: apply it, read again, get the new value, nothing else changed.
 */
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { initConfigReaders, readConfigSetups } from '../../src/configs';
import { applyTextEdits, combineFixes } from '../../src/configs/edits';
import type { StatedSetup } from '../../src/configs/setup';

before(() => initConfigReaders());
const FILE = 'accelerate.yaml';
const read = (text: string): StatedSetup => {
  const s = readConfigSetups(FILE, text);
  assert.equal(s.length, 1, text);
  return s[0]!;
};
const edit = (text: string, edits: ReturnType<NonNullable<NonNullable<StatedSetup['precision']>['set']>>): string => {
  assert.ok(edits, 'an edit');
  return applyTextEdits(text, edits);
};

const FSDP = `distributed_type: FSDP
fsdp_config:
  fsdp_sharding_strategy: HYBRID_SHARD
  fsdp_activation_checkpointing: true
  fsdp_offload_params: false
mixed_precision: bf16
num_processes: 16
num_machines: 2
`;

test('FSDP: sharding strategy as ZeRO stage + hybrid, checkpointing, offload, precision; each edit round-trips', () => {
  const s = read(FSDP);
  assert.equal(s.zeroStage?.value, 3);
  assert.equal(s.hybridShard?.value, true);
  assert.equal(s.recompute?.value, 'full');
  assert.equal(s.recompute?.stated, true);
  assert.equal(FSDP.slice(s.recompute!.range.start, s.recompute!.range.end), 'true');
  assert.equal(s.recompute?.matches?.('selective'), true, 'any recompute is "on"');
  assert.equal(s.recompute?.matches?.('none'), false);
  assert.equal(s.cpuOffload?.value, false);
  assert.equal(s.precision?.value, 'bf16');
  assert.equal(FSDP.slice(s.zeroStage!.range.start, s.zeroStage!.range.end), 'HYBRID_SHARD');

  const z2 = edit(FSDP, s.zeroStage!.set!(2));
  assert.equal(z2, FSDP.replace('HYBRID_SHARD', 'HYBRID_SHARD_ZERO2'));
  assert.deepEqual([read(z2).zeroStage?.value, read(z2).hybridShard?.value], [2, true]);
  const flat = edit(FSDP, s.hybridShard!.set!(false));
  assert.equal(flat, FSDP.replace('HYBRID_SHARD', 'FULL_SHARD'));
  // And back: from SHARD_GRAD_OP, hybrid ZeRO-3 is HYBRID_SHARD, hybrid ZeRO-2 HYBRID_SHARD_ZERO2; hybrid without sharding has no name.
  const grad = FSDP.replace('HYBRID_SHARD', 'SHARD_GRAD_OP');
  const g = read(grad);
  assert.equal(edit(grad, g.hybridShard!.set!(true, { zeroStage: 3 } as never)), FSDP);
  assert.equal(edit(grad, g.hybridShard!.set!(true, { zeroStage: 2 } as never)), FSDP.replace('HYBRID_SHARD', 'HYBRID_SHARD_ZERO2'));
  assert.equal(g.hybridShard!.set!(true, { zeroStage: 0 } as never), undefined);
  assert.equal(s.zeroStage!.set!(1), undefined, 'FSDP has no optimizer-only sharding');
  const noAc = edit(FSDP, s.recompute!.set!('none'));
  assert.equal(noAc, FSDP.replace('checkpointing: true', 'checkpointing: false'));
  assert.equal(read(noAc).recompute?.value, 'none');
  assert.equal(read(edit(FSDP, s.cpuOffload!.set!(true))).cpuOffload?.value, true);
  const fp32 = edit(FSDP, s.precision!.set!('fp32'));
  assert.equal(fp32, FSDP.replace('mixed_precision: bf16', "mixed_precision: 'no'"));
  assert.equal(read(fp32).precision?.value, 'fp32');
  assert.equal(read(edit(FSDP, s.precision!.set!('fp16'))).precision?.value, 'fp16');
  assert.ok(s.inexpressible.tensorParallel && s.inexpressible.pipelineStages);
  assert.equal(s.inexpressible.tensorParallel, 'Accelerate configs have no tensor, pipeline or context parallel degree; export the plan with `wap export --format torch-parallelize` (PyTorch DTensor) or write a torchtitan / Megatron-LM config');
});

test('FSDP strategies by name and by enum number; absent keys take FSDP’s defaults (FULL_SHARD, no checkpointing, fp32)', () => {
  const strategy = (v: string) => {
    const s = read(`distributed_type: FSDP\nfsdp_config:\n  fsdp_sharding_strategy: ${v}\n`);
    return [s.zeroStage?.value, s.hybridShard?.value];
  };
  assert.deepEqual(strategy('FULL_SHARD'), [3, false]);
  assert.deepEqual(strategy('SHARD_GRAD_OP'), [2, false]);
  assert.deepEqual(strategy('NO_SHARD'), [0, false]);
  assert.deepEqual(strategy('HYBRID_SHARD_ZERO2'), [2, true]);
  assert.deepEqual(strategy('full_shard'), [3, false]);
  assert.deepEqual([1, 2, 3, 4, 5].map((n) => strategy(String(n))), [[3, false], [2, false], [0, false], [3, true], [2, true]]);
  const bare = 'distributed_type: FSDP\nnum_processes: 8\n';
  const s = read(bare);
  assert.deepEqual([s.zeroStage?.value, s.zeroStage?.stated, s.recompute?.value, s.recompute?.stated, s.cpuOffload?.value, s.precision?.value, s.precision?.stated], [3, false, 'none', false, false, 'fp32', false]);
  // Writing two keys of a missing fsdp_config creates the mapping once, holding both.
  const edits = [...s.recompute!.set!('full')!, ...s.cpuOffload!.set!(true)!];
  const written = applyTextEdits(bare, edits);
  assert.equal((written.match(/fsdp_config:/g) ?? []).length, 1, written);
  const again = read(written);
  assert.deepEqual([again.recompute?.value, again.cpuOffload?.value], ['full', true], written);
  // A missing mixed_precision is inserted.
  assert.equal(read(edit(bare, s.precision!.set!('bf16'))).precision?.value, 'bf16');
});

test('DEEPSPEED: zero_stage, optimizer offload, accumulation from deepspeed_config', () => {
  const text = `distributed_type: DEEPSPEED
deepspeed_config:
  zero_stage: 2
  offload_optimizer_device: cpu
  gradient_accumulation_steps: 4
mixed_precision: fp16
num_processes: 8
`;
  const s = read(text);
  assert.deepEqual([s.zeroStage?.value, s.cpuOffload?.value, s.gradientAccumulation?.value, s.precision?.value], [2, true, 4, 'fp16']);
  assert.equal(read(edit(text, s.zeroStage!.set!(3))).zeroStage?.value, 3);
  const off = edit(text, s.cpuOffload!.set!(false));
  assert.equal(off, text.replace('device: cpu', 'device: none'));
  assert.equal(read(off).cpuOffload?.value, false);
  assert.equal(read(text.replace('cpu', 'nvme')).cpuOffload?.value, true);
  assert.equal(read(edit(text, s.gradientAccumulation!.set!(8))).gradientAccumulation?.value, 8);
  // No zero_stage: DeepSpeed's default 0, not stated; an unknown stage is not read as one.
  const bare = read('distributed_type: DEEPSPEED\nnum_processes: 8\n');
  assert.deepEqual([bare.zeroStage?.value, bare.zeroStage?.stated, bare.cpuOffload?.value], [0, false, false]);
  assert.equal(read(text.replace('zero_stage: 2', 'zero_stage: 7')).zeroStage, undefined);
});

test('MULTI_GPU: no sharding; the plan’s ZeRO-3 becomes FSDP FULL_SHARD, ZeRO-1 cannot be written', () => {
  const text = 'distributed_type: MULTI_GPU\nnum_processes: 8\n';
  const s = read(text);
  assert.equal(s.zeroStage?.value, 0);
  assert.deepEqual(s.zeroStage!.set!(0), []);
  assert.equal(s.zeroStage!.set!(1), undefined);
  const z2 = edit(text, s.zeroStage!.set!(2));
  assert.equal(z2, 'distributed_type: FSDP\nnum_processes: 8\nfsdp_config:\n  fsdp_sharding_strategy: SHARD_GRAD_OP\n');
  assert.equal(read(z2).zeroStage?.value, 2);
  // Each reading's edits are for one fix: read afresh for another.
  const z3 = edit(text, read(text).zeroStage!.set!(3));
  assert.match(z3, /distributed_type: FSDP/);
  assert.equal(read(z3).zeroStage?.value, 3);
  assert.ok(s.inexpressible.recompute);
});

test('fixes combine preferred-first without clashes; identical edits are kept once; training changes are never combined', () => {
  const a = { start: 0, end: 2, newText: 'A' };
  const b = { start: 1, end: 3, newText: 'B' };
  const c = { start: 5, end: 6, newText: 'C' };
  const ins = { start: 4, end: 4, newText: 'I' };
  assert.deepEqual(combineFixes([{ title: 'b', edits: [b] }, { title: 'a', edits: [a], preferred: true }]), [a]);
  assert.deepEqual(combineFixes([{ title: 'a', edits: [a, c] }, { title: 'a2', edits: [a] }]), [a, c]);
  // A later fix repeating an accepted edit keeps its other edits.
  assert.deepEqual(combineFixes([{ title: 'a', edits: [a] }, { title: 'ac', edits: [{ ...a }, c] }]), [a, c]);
  assert.deepEqual(combineFixes([{ title: 't', edits: [c], changesTraining: true }]), []);
  // Two insertions at one offset clash (their order would be arbitrary); an insertion at an edit's end does not.
  assert.deepEqual(combineFixes([{ title: 'i', edits: [ins] }, { title: 'j', edits: [{ ...ins, newText: 'J' }] }]), [ins]);
  assert.deepEqual(combineFixes([{ title: 'a', edits: [a] }, { title: 'i', edits: [{ start: 2, end: 2, newText: 'x' }] }]), [a, { start: 2, end: 2, newText: 'x' }]);
  // A fix whose own edits overlap is dropped whole.
  assert.deepEqual(combineFixes([{ title: 'self', edits: [a, b] }, { title: 'c', edits: [c] }]), [c]);
  assert.equal(applyTextEdits('abcdef', [c, a]), 'AcdeC');
  assert.equal(applyTextEdits('abc', [{ start: 1, end: 1, newText: 'X' }]), 'aXbc');
  assert.throws(() => applyTextEdits('abcdef', [a, b]), /overlapping edits at offset 1/);
});

test('a plan that changes both the ZeRO stage and hybrid sharding gets one consistent FSDP strategy (HYBRID_SHARD_ZERO2), not two clashing edits', async () => {
  const { compareSetup } = await import('../../src/configs/setup');
  const { combineFixes: combine } = await import('../../src/configs/edits');
  const text = 'distributed_type: FSDP\nfsdp_config:\n  fsdp_sharding_strategy: FULL_SHARD\nmixed_precision: bf16\nnum_processes: 16\nnum_machines: 2\n';
  const want = {
    precision: 'bf16', precisionReason: '', zeroStage: 2, hybridShard: true, recompute: 'none', cpuOffload: false, microBatch: 1, gradientAccumulation: 1,
    dataParallel: 16, tensorParallel: 1, pipelineStages: 1, virtualStages: 1, contextParallel: 1, expertParallel: 1, sequenceParallel: false, mfu: 0.4,
  };
  const plan = { model: 'M', cluster: { name: 'c', gpus: 16, nodes: 2 }, plan: { setup: want } } as unknown as import('../../src/protocol/plan').PlanReport;
  const finding = compareSetup('accelerate', text, read(text), plan).find((f) => f.code === 'setup-differs');
  assert.ok(finding?.fix, 'a fix');
  const fixed = applyTextEdits(text, combine([finding.fix]));
  assert.equal(fixed, text.replace('FULL_SHARD', 'HYBRID_SHARD_ZERO2'));
  // The same when the strategy key is absent (FSDP's default FULL_SHARD): one key inserted, not two.
  const bare = 'distributed_type: FSDP\nfsdp_config:\n  fsdp_offload_params: false\nmixed_precision: bf16\nnum_processes: 16\n';
  const f2 = compareSetup('accelerate', bare, read(bare), plan).find((f) => f.code === 'setup-differs');
  const fixed2 = applyTextEdits(bare, combine([f2!.fix!]));
  assert.equal((fixed2.match(/fsdp_sharding_strategy/g) ?? []).length, 1, fixed2);
  assert.deepEqual([read(fixed2).zeroStage?.value, read(fixed2).hybridShard?.value], [2, true], fixed2);
});

test('Lightning FSDPStrategy: ZeRO stage and hybrid changing together write one sharding_strategy', async () => {
  const { checkConfig } = await import('../../src/configs');
  const text = 'import lightning as L\nfrom lightning.pytorch.strategies import FSDPStrategy\n\ntrainer = L.Trainer(devices=8, num_nodes=2, strategy=FSDPStrategy(sharding_strategy="FULL_SHARD"), precision="bf16-mixed")\n';
  const stated = readConfigSetups('train.py', text)[0]!;
  assert.deepEqual([stated.zeroStage?.value, stated.hybridShard?.value], [3, false]);
  assert.equal(stated.world, 16, 'devices=8 on each of num_nodes=2');
  assert.equal(readConfigSetups('t.py', 'import lightning as L\nt = L.Trainer(devices=[0, 1, 2, 3])\n')[0]!.world, 4, 'a device list on one node');
  assert.equal(readConfigSetups('t.py', 'import lightning as L\nt = L.Trainer(devices=n)\n')[0]!.world, undefined, 'devices it cannot read');
  assert.equal(readConfigSetups('t.py', 'import lightning as L\nt = L.Trainer(devices=1)\n')[0]!.world, 1, 'one device is a world of one');
  assert.equal(readConfigSetups('t.py', 'import lightning as L\nt = L.Trainer(devices=[0, 1,  # the fast pair\n    2])\n')[0]!.world, 3, 'a comment inside the list is not a device');
  assert.equal(readConfigSetups('t.py', 'import lightning as L\nt = L.Trainer(devices=0)\n')[0]!.world, undefined, 'devices=0 trains on no GPU');
  const want = {
    precision: 'bf16', precisionReason: '', zeroStage: 2, hybridShard: true, recompute: 'none', cpuOffload: false, microBatch: 1, gradientAccumulation: 1,
    dataParallel: 16, tensorParallel: 1, pipelineStages: 1, virtualStages: 1, contextParallel: 1, expertParallel: 1, sequenceParallel: false, mfu: 0.4,
  };
  const plan = {
    model: 'M', batch: 16, cluster: { name: 'c', gpus: 16, nodes: 2 }, scaling: [],
    plan: { gpus: 16, samplesPerSec: 1, energyJPerSample: 0, layers: [], setup: want },
  } as unknown as import('../../src/protocol/plan').PlanReport;
  // The edits refer to the parsed call, so the comparison runs inside checkConfig.
  const finding = checkConfig('train.py', text, plan).findings.find((f) => f.code === 'setup-differs');
  const fixed = applyTextEdits(text, combineFixes([finding!.fix!]));
  assert.equal(fixed, text.replace('"FULL_SHARD"', '"_HYBRID_SHARD_ZERO2"'));
});

test('Lightning strategy strings: ZeRO stage and offload changing together write one strategy name; "_offload" is the optimizer at stage 2, parameters too at stage 3', async () => {
  const { checkConfig } = await import('../../src/configs');
  const text = 'import lightning as L\n\ntrainer = L.Trainer(devices=8, strategy="deepspeed_stage_2", precision="bf16-mixed")\n';
  const stated = readConfigSetups('train.py', text)[0]!;
  assert.deepEqual([stated.zeroStage?.value, stated.cpuOffload?.value, stated.paramOffload?.value], [2, false, false]);
  const planOf = (setup: Record<string, unknown>) => {
    const plan = eightGpuPlan({ precision: 'bf16', ...setup });
    return { ...plan, batch: 8, scaling: [], plan: { ...plan.plan, gpus: 8, samplesPerSec: 1, energyJPerSample: 0, layers: [] } } as typeof plan;
  };
  const findings = (plan: ReturnType<typeof planOf>) => checkConfig('train.py', text, plan).findings;
  const everything = findings(planOf({ zeroStage: 3, cpuOffload: true, paramOffload: true })).find((f) => f.code === 'setup-differs');
  assert.equal(applyTextEdits(text, combineFixes([everything!.fix!])), text.replace('deepspeed_stage_2', 'deepspeed_stage_3_offload'));
  assert.match(everything!.fix!.title, /^Use the plan's ZeRO-3 \+ parameter offload /);
  const optimizerOnly = findings(planOf({ zeroStage: 2, cpuOffload: true, paramOffload: false })).find((f) => f.code === 'setup-differs');
  assert.equal(applyTextEdits(text, combineFixes([optimizerOnly!.fix!])), text.replace('deepspeed_stage_2', 'deepspeed_stage_2_offload'));
  // ZeRO-3 with the optimizer state offloaded alone has no strategy name: said, and the stage is not written without it.
  const noName = findings(planOf({ zeroStage: 3, cpuOffload: true, paramOffload: false }));
  assert.match(noName.find((f) => f.code === 'cannot-express')?.message ?? '', /^The plan uses CPU offload, which a Lightning Trainer cannot express: Lightning's strategy names offload the optimizer state alone at ZeRO-1\/2/);
  assert.equal(noName.find((f) => f.code === 'setup-differs')?.fix, undefined);
  // Each alone reads back.
  const z3 = readConfigSetups('train.py', text.replace('deepspeed_stage_2', 'deepspeed_stage_3_offload'))[0]!;
  assert.deepEqual([z3.zeroStage?.value, z3.cpuOffload?.value, z3.paramOffload?.value], [3, true, true]);
  const fsdp = readConfigSetups('train.py', text.replace('deepspeed_stage_2', 'fsdp_cpu_offload'))[0]!;
  assert.deepEqual([fsdp.zeroStage?.value, fsdp.cpuOffload?.value, fsdp.paramOffload?.value], [3, true, true]);
  const z2 = readConfigSetups('train.py', text.replace('deepspeed_stage_2', 'deepspeed_stage_2_offload'))[0]!;
  assert.deepEqual([z2.zeroStage?.value, z2.cpuOffload?.value, z2.paramOffload?.value], [2, true, false]);
  const ds = readConfigSetups('train.py', text.replace('deepspeed_stage_2', 'deepspeed'))[0]!;
  assert.deepEqual([ds.zeroStage?.value, ds.cpuOffload?.value], [2, false]);
});

test('Lightning DeepSpeedStrategy objects: stage 0–3 read from the keyword (default 2), anything else states no stage', () => {
  const withStage = (arg: string) =>
    readConfigSetups('train.py', `import lightning as L\nfrom lightning.pytorch.strategies import DeepSpeedStrategy\n\ntrainer = L.Trainer(devices=8, strategy=DeepSpeedStrategy(${arg}))\n`)[0]!;
  assert.equal(withStage('stage=3, offload_optimizer=True').zeroStage?.value, 3);
  assert.equal(withStage('stage=3, offload_optimizer=True').cpuOffload?.value, true);
  assert.equal(withStage('stage=1').zeroStage?.value, 1);
  assert.equal(withStage('').zeroStage?.value, 2, "DeepSpeedStrategy's default stage");
  assert.equal(withStage('stage=4').zeroStage, undefined);
});

test('Lightning precision written in Lightning 2 spelling: 32-true, 16-mixed, bf16-mixed; read back the same', async () => {
  const { checkConfig } = await import('../../src/configs');
  const text = 'import lightning as L\n\ntrainer = L.Trainer(devices=8, precision="bf16-mixed")\n';
  assert.equal(readConfigSetups('train.py', text)[0]!.precision?.value, 'bf16');
  for (const [precision, spelled] of [['fp32', '"32-true"'], ['fp16', '"16-mixed"'], ['tf32', '"32-true"']] as const) {
    const want = {
      precision, precisionReason: '', zeroStage: 0, hybridShard: false, recompute: 'none', cpuOffload: false, microBatch: 1, gradientAccumulation: 1,
      dataParallel: 8, tensorParallel: 1, pipelineStages: 1, virtualStages: 1, contextParallel: 1, expertParallel: 1, sequenceParallel: false, mfu: 0.4,
    };
    const plan = {
      model: 'M', batch: 8, cluster: { name: 'c', gpus: 8, nodes: 1 }, scaling: [],
      plan: { gpus: 8, samplesPerSec: 1, energyJPerSample: 0, layers: [], setup: want },
    } as unknown as import('../../src/protocol/plan').PlanReport;
    const fix = checkConfig('train.py', text, plan).findings.find((f) => f.code === 'setup-differs')?.fix;
    assert.ok(fix, precision);
    const written = applyTextEdits(text, combineFixes([fix]));
    assert.equal(written, text.replace('"bf16-mixed"', spelled), precision);
    assert.equal(readConfigSetups('train.py', written)[0]!.precision?.value, precision === 'tf32' ? 'fp32' : precision);
  }
});

test('Lightning FSDPStrategy sharding strategies read as ZeRO stages: FULL_SHARD 3, SHARD_GRAD_OP 2, HYBRID_SHARD 3 hybrid, NO_SHARD 0', () => {
  const read = (strategy: string) =>
    readConfigSetups('train.py', `import lightning as L\nfrom lightning.pytorch.strategies import FSDPStrategy\n\ntrainer = L.Trainer(devices=8, num_nodes=2, strategy=FSDPStrategy(sharding_strategy="${strategy}"))\n`)[0]!;
  const got = (s: string) => [read(s).zeroStage?.value, read(s).hybridShard?.value];
  assert.deepEqual(got('FULL_SHARD'), [3, false]);
  assert.deepEqual(got('SHARD_GRAD_OP'), [2, false]);
  assert.deepEqual(got('HYBRID_SHARD'), [3, true]);
  assert.deepEqual(got('_HYBRID_SHARD_ZERO2'), [2, true]);
  assert.deepEqual(got('NO_SHARD'), [0, false]);
});

test('Lightning setups read by readConfigSetups keep working edits after their syntax tree is freed, whatever is parsed in between', () => {
  const text = 'import lightning as L\nfrom lightning.pytorch.strategies import FSDPStrategy, DeepSpeedStrategy\n\ntrainer = L.Trainer(devices=8, strategy=FSDPStrategy(sharding_strategy="FULL_SHARD"), precision="bf16-mixed")\n';
  const fsdp = readConfigSetups('train.py', text)[0]!;
  const ds = readConfigSetups('ds.py', 'import lightning as L\nt = L.Trainer(devices=2, strategy=DeepSpeedStrategy(stage=2))\n')[0]!;
  const plain = readConfigSetups('plain.py', "import lightning as L\nt = L.Trainer(devices=2, strategy='ddp', accumulate_grad_batches=4)\n")[0]!;
  // Other parses reuse the freed trees' wasm memory.
  for (let i = 0; i < 20; i++) readConfigSetups('other.py', `import lightning as L\nt = L.Trainer(devices=2, precision="16-mixed")\n${'#'.repeat(i * 7)}\n`);
  assert.equal(edit(text, fsdp.precision!.set!('fp16', undefined as never)), text.replace('"bf16-mixed"', '"16-mixed"'));
  assert.equal(edit(text, fsdp.zeroStage!.set!(2, undefined as never)), text.replace('"FULL_SHARD"', '"SHARD_GRAD_OP"'));
  assert.equal(edit(text, fsdp.cpuOffload!.set!(true, undefined as never)), text.replace('"FULL_SHARD")', '"FULL_SHARD", cpu_offload=True)'));
  assert.equal(fsdp.recompute!.matches!('none'), true, 'no checkpointing policy: recompute none matches');
  const dsText = 'import lightning as L\nt = L.Trainer(devices=2, strategy=DeepSpeedStrategy(stage=2))\n';
  assert.equal(edit(dsText, ds.zeroStage!.set!(3, undefined as never)), dsText.replace('stage=2', 'stage=3'));
  const plainText = "import lightning as L\nt = L.Trainer(devices=2, strategy='ddp', accumulate_grad_batches=4)\n";
  assert.equal(edit(plainText, plain.gradientAccumulation!.set!(8, undefined as never)), plainText.replace('=4', '=8'));
  assert.equal(edit(plainText, plain.zeroStage!.set!(2, undefined as never)), plainText.replace("'ddp'", "'deepspeed_stage_2'"));
  // From DDP, ZeRO-3 is Lightning's own FSDP (full shard), not DeepSpeed's stage 3.
  assert.equal(edit(plainText, plain.zeroStage!.set!(3, undefined as never)), plainText.replace("'ddp'", "'fsdp'"));
});

test('Lightning "fsdp" strategy strings: offload on and off stay in the FSDP family, ZeRO-2 or none leave it', () => {
  const text = 'import lightning as L\nt = L.Trainer(devices=8, strategy="fsdp_cpu_offload")\n';
  const s = readConfigSetups('train.py', text)[0]!;
  assert.deepEqual([s.zeroStage?.value, s.cpuOffload?.value], [3, true]);
  assert.equal(edit(text, s.cpuOffload!.set!(false, { zeroStage: 3 } as never)), text.replace('fsdp_cpu_offload', 'fsdp'));
  assert.equal(edit(text, s.zeroStage!.set!(3, { cpuOffload: false } as never)), text.replace('fsdp_cpu_offload', 'fsdp'));
  assert.equal(edit(text, s.zeroStage!.set!(2, { cpuOffload: false } as never)), text.replace('fsdp_cpu_offload', 'deepspeed_stage_2'));
  assert.equal(edit(text, s.zeroStage!.set!(0, { cpuOffload: false } as never)), text.replace('fsdp_cpu_offload', 'ddp'));
});

/** A plan for model M on one node of 8 GPUs, data parallel, fp32 and nothing saved unless `setup` says otherwise. */
function eightGpuPlan(setup: Record<string, unknown>): import('../../src/protocol/plan').PlanReport {
  const want = {
    precision: 'fp32', precisionReason: '', zeroStage: 0, hybridShard: false, recompute: 'none', cpuOffload: false, microBatch: 1, gradientAccumulation: 1,
    dataParallel: 8, tensorParallel: 1, pipelineStages: 1, virtualStages: 1, contextParallel: 1, expertParallel: 1, sequenceParallel: false, mfu: 0.4, ...setup,
  };
  return { model: 'M', cluster: { name: 'c', gpus: 8, nodes: 1 }, plan: { setup: want } } as unknown as import('../../src/protocol/plan').PlanReport;
}

test('a config that differs from the plan only in its micro-batch says that, and nothing about the setup', async () => {
  const { compareSetup } = await import('../../src/configs/setup');
  const { readDeepspeedSetup } = await import('../../src/configs/deepspeedSetup');
  const { parseJsonConfig } = await import('../../src/configs/jsonDoc');
  const text = '{"train_batch_size": 64, "train_micro_batch_size_per_gpu": 8, "gradient_accumulation_steps": 1, "bf16": {"enabled": true}, "zero_optimization": {"stage": 0}}';
  const plan = eightGpuPlan({ precision: 'bf16', microBatch: 4, gradientAccumulation: 2 });
  const findings = compareSetup('deepspeed', text, readDeepspeedSetup(text, parseJsonConfig(text)), plan);
  assert.deepEqual(findings.map((f) => [f.code, f.message]), [['setup-differs', "This DeepSpeed config's micro-batch 8 differs from the plan's 4"]]);
});

test('a setup difference no key of the config can write is reported without a fix (an empty fix would do nothing)', async () => {
  const { compareSetup } = await import('../../src/configs/setup');
  const text = 'distributed_type: MULTI_GPU\nnum_processes: 8\n';
  const plan = eightGpuPlan({ zeroStage: 1 });
  const finding = compareSetup('accelerate', text, read(text), plan).find((f) => f.code === 'setup-differs');
  assert.ok(finding, 'the difference is reported');
  assert.match(finding.message, /uses ZeRO 1$/);
  assert.equal(finding.fix, undefined);
});

test('insertions at one offset merge into one edit; insertions elsewhere and replacements stay apart', async () => {
  const { mergeInsertions } = await import('../../src/configs/setup');
  assert.deepEqual(mergeInsertions([{ start: 5, end: 5, newText: 'a' }, { start: 5, end: 5, newText: 'b' }]), [{ start: 5, end: 5, newText: 'ab' }]);
  const apart = [{ start: 5, end: 5, newText: 'a' }, { start: 9, end: 9, newText: 'b' }];
  assert.deepEqual(mergeInsertions(apart), apart);
  const replaced = [{ start: 5, end: 8, newText: 'x' }, { start: 5, end: 5, newText: 'y' }];
  assert.deepEqual(mergeInsertions(replaced), replaced);
});
