/**
 * Settings a config states that WAP reads but does not model: parameter
 * offload (DeepSpeed offload_param, the HF Trainer's ZeRO-3 template; FSDP's
 * offload_params through accelerate or Lightning; Lightning's
 * DeepSpeedStrategy(offload_parameters=True)) and NVMe optimizer offload. Each
 * is a warning on its value, with or without a plan, and the "your config"
 * line says it is approximate, never a silent number.
 */
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { checkConfig, initConfigReaders, readConfigSetups, versusLine, type RunSummary } from '../../src/configs';

before(() => initConfigReaders());

const unmodelled = (file: string, text: string) =>
  checkConfig(file, text, undefined).findings.filter((f) => f.code === 'setup-unmodelled').map((f) => [f.severity, text.slice(f.range.start, f.range.end), f.message]);

/** The ZeRO-3 config of the HF Trainer's DeepSpeed guide: everything "auto", optimizer and parameters offloaded to the CPU. */
const HF_ZERO3 = `{
  "fp16": {"enabled": "auto", "loss_scale": 0, "initial_scale_power": 16},
  "bf16": {"enabled": "auto"},
  "zero_optimization": {
    "stage": 3,
    "offload_optimizer": {"device": "cpu", "pin_memory": true},
    "offload_param": {"device": "cpu", "pin_memory": true},
    "overlap_comm": true,
    "stage3_prefetch_bucket_size": "auto"
  },
  "gradient_accumulation_steps": "auto",
  "train_batch_size": "auto",
  "train_micro_batch_size_per_gpu": "auto"
}
`;

test("DeepSpeed: the HF Trainer's ZeRO-3 template offloads parameters, which is a warning on offload_param.device; NVMe is priced as CPU and says so", () => {
  const found = unmodelled('ds_config_zero3.json', HF_ZERO3);
  assert.equal(found.length, 1);
  assert.equal(found[0][0], 'warning');
  assert.equal(found[0][1], '"cpu"');
  assert.match(found[0][2] as string, /^offload_param\.device "cpu": WAP does not model parameter offload: .*memory over-stated.*step time under-stated/);
  // The optimizer offload is modelled (ZeRO-Offload): no warning for it.
  const optimizerOnly = '{"zero_optimization": {"stage": 2, "offload_optimizer": {"device": "cpu"}}}';
  assert.deepEqual(unmodelled('ds_config.json', optimizerOnly), []);
  const nvme = unmodelled('ds_config.json', '{"zero_optimization": {"stage": 3, "offload_optimizer": {"device": "nvme"}}}');
  assert.deepEqual(nvme.map((f) => f[1]), ['"nvme"']);
  assert.match(nvme[0][2] as string, /planned as CPU memory/);
});

test('accelerate and Lightning: FSDP parameter offload and DeepSpeed offload_param_device / offload_parameters', () => {
  const fsdp = 'compute_environment: LOCAL_MACHINE\ndistributed_type: FSDP\nfsdp_config:\n  fsdp_sharding_strategy: FULL_SHARD\n  fsdp_offload_params: true\nnum_processes: 8\n';
  const a = unmodelled('accelerate_config.yaml', fsdp);
  assert.deepEqual(a.map((f) => f[1]), ['true']);
  assert.match(a[0][2] as string, /^fsdp_offload_params keeps parameters and gradients in CPU memory/);
  const ds = 'distributed_type: DEEPSPEED\ndeepspeed_config:\n  zero_stage: 3\n  offload_optimizer_device: cpu\n  offload_param_device: nvme\nnum_processes: 8\n';
  assert.deepEqual(unmodelled('accelerate_config.yaml', ds).map((f) => f[1]), ['nvme']);
  const lightning = (strategy: string) => `import lightning as L\nfrom lightning.pytorch.strategies import FSDPStrategy, DeepSpeedStrategy\ntrainer = L.Trainer(devices=8, strategy=${strategy})\n`;
  assert.deepEqual(unmodelled('train.py', lightning('FSDPStrategy(cpu_offload=True)')).map((f) => f[1]), ['True']);
  assert.deepEqual(unmodelled('train.py', lightning('DeepSpeedStrategy(stage=3, offload_optimizer=True, offload_parameters=True)')).map((f) => f[1]), ['True']);
  assert.deepEqual(unmodelled('train.py', lightning('DeepSpeedStrategy(stage=3, offload_optimizer=True)')), []);
});

test('"your config" says it is approximate when its config offloads parameters', () => {
  const setup = readConfigSetups('ds_config_zero3.json', HF_ZERO3)[0]!;
  const run: RunSummary = { feasible: true, gpus: 8, stepTimeMs: 3400, mfu: 0.41, memoryPerGpuBytes: 62e9, describe: '8 GPUs, ZeRO-3', warnings: [] };
  assert.match(versusLine(run, run, setup), /^your config \(approximate: parameter offload not modelled\): 3\.4 s\/step/);
  const plain = readConfigSetups('ds_config.json', '{"zero_optimization": {"stage": 3}}')[0]!;
  assert.match(versusLine(run, run, plain), /^your config: 3\.4 s\/step/);
});
