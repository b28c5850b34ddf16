/**
 * Settings a config states that WAP reads but does not model exactly: NVMe
 * offload (DeepSpeed's ZeRO-Infinity, planned as CPU offload) and parameters
 * offloaded while the optimizer state stays on the GPU (planned with both
 * offloaded). Each is a warning on its value, with or without a plan, and the
 * "your config" line says it is approximate, never a silent number. Parameter
 * offload itself is planned (paramOffload.test.ts): no warning, no "approximate".
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

test("DeepSpeed: the HF Trainer's ZeRO-3 template (parameters and optimizer on the CPU) is planned, no warning; NVMe is planned as CPU and says so", () => {
  assert.deepEqual(unmodelled('ds_config_zero3.json', HF_ZERO3), []);
  const optimizerOnly = '{"zero_optimization": {"stage": 2, "offload_optimizer": {"device": "cpu"}}}';
  assert.deepEqual(unmodelled('ds_config.json', optimizerOnly), []);
  const nvme = unmodelled('ds_config.json', '{"zero_optimization": {"stage": 3, "offload_optimizer": {"device": "nvme"}}}');
  assert.deepEqual(nvme.map((f) => [f[0], f[1]]), [['warning', '"nvme"']]);
  assert.match(nvme[0][2] as string, /^offload_optimizer\.device "nvme": WAP plans it as CPU offload .*NVMe reads and writes each step are not modelled/);
  const both = unmodelled('ds_config_zero3.json', HF_ZERO3.replace(/"cpu"/g, '"nvme"'));
  assert.deepEqual(both.map((f) => (f[2] as string).split(':')[0]), ['offload_optimizer.device "nvme"', 'offload_param.device "nvme"']);
  // Parameters offloaded, optimizer state kept on the GPU: planned with both offloaded, which the warning says.
  const paramsOnly = unmodelled('ds_config.json', '{"zero_optimization": {"stage": 3, "offload_param": {"device": "cpu"}}}');
  assert.deepEqual(paramsOnly.map((f) => f[1]), ['"cpu"']);
  assert.match(paramsOnly[0][2] as string, /^offload_param without offload_optimizer offloads the parameters but not the optimizer state: WAP plans parameter offload with the optimizer state on the CPU too/);
});

test("DeepSpeed ZeRO++ (the ZeRO++ tutorial's keys): quantized weight gathers, hpZ's per-node shard and quantized gradients are each said, not priced; off, nothing is said", () => {
  const zeroPlusPlus = `{
  "zero_optimization": {
    "stage": 3,
    "reduce_bucket_size": 10000000,
    "reduce_scatter": true,
    "zero_quantized_weights": true,
    "zero_hpz_partition_size": 16,
    "zero_quantized_gradients": true,
    "contiguous_gradients": true,
    "overlap_comm": true
  }
}
`;
  const said = unmodelled('ds_config.json', zeroPlusPlus);
  assert.deepEqual(said.map((f) => [f[0], f[1]]), [['warning', 'true'], ['warning', '16'], ['warning', 'true']]);
  assert.match(said[0][2] as string, /^zero_quantized_weights \(ZeRO\+\+\): qwZ all-gathers the weights in int8; WAP prices ZeRO's collectives in the training precision/);
  assert.match(said[1][2] as string, /^zero_hpz_partition_size \(ZeRO\+\+\): .* understates the memory of the second shard$/);
  const off = zeroPlusPlus.replace(/true,\n    "zero_hpz/, 'false,\n    "zero_hpz').replace('16', '1').replace('"zero_quantized_gradients": true', '"zero_quantized_gradients": false');
  assert.deepEqual(unmodelled('ds_config.json', off), []);
});

test('accelerate and Lightning: FSDP and DeepSpeed parameter offload are planned (no warning); NVMe devices are warned', () => {
  const fsdp = 'compute_environment: LOCAL_MACHINE\ndistributed_type: FSDP\nfsdp_config:\n  fsdp_sharding_strategy: FULL_SHARD\n  fsdp_offload_params: true\nnum_processes: 8\n';
  assert.deepEqual(unmodelled('accelerate_config.yaml', fsdp), []);
  const ds = 'distributed_type: DEEPSPEED\ndeepspeed_config:\n  zero_stage: 3\n  offload_optimizer_device: cpu\n  offload_param_device: nvme\nnum_processes: 8\n';
  assert.deepEqual(unmodelled('accelerate_config.yaml', ds).map((f) => f[1]), ['nvme']);
  assert.deepEqual(unmodelled('accelerate_config.yaml', ds.replace('nvme', 'cpu')), []);
  const lightning = (strategy: string) => `import lightning as L\nfrom lightning.pytorch.strategies import FSDPStrategy, DeepSpeedStrategy\ntrainer = L.Trainer(devices=8, strategy=${strategy})\n`;
  assert.deepEqual(unmodelled('train.py', lightning('FSDPStrategy(cpu_offload=True)')), []);
  assert.deepEqual(unmodelled('train.py', lightning('DeepSpeedStrategy(stage=3, offload_optimizer=True, offload_parameters=True)')), []);
  assert.deepEqual(unmodelled('train.py', lightning('DeepSpeedStrategy(stage=3, offload_parameters=True)')).map((f) => f[1]), ['True']);
  assert.deepEqual(unmodelled('train.py', lightning('"deepspeed_stage_3_offload_nvme"')).map((f) => f[1]), ['"deepspeed_stage_3_offload_nvme"']);
  assert.deepEqual(unmodelled('train.py', lightning('DeepSpeedStrategy(stage=3, offload_optimizer=True, offload_parameters=True, offload_params_device="nvme")')).map((f) => f[1]), ['"nvme"']);
});

test('"your config" is exact for parameter offload and approximate for NVMe', () => {
  const run: RunSummary = { feasible: true, gpus: 8, stepTimeMs: 3400, mfu: 0.41, memoryPerGpuBytes: 62e9, describe: '8 GPUs, ZeRO-3', warnings: [] };
  const offloaded = readConfigSetups('ds_config_zero3.json', HF_ZERO3)[0]!;
  // A DeepSpeed JSON states no process count: the launcher does, so the plan chose it, and the line says so.
  const searched = 'your config \\(8 GPUs: nothing here states how many processes run it, so the plan chose\\)';
  assert.match(versusLine(run, run, offloaded), new RegExp(`^${searched}: 3\\.4 s/step`));
  const nvme = readConfigSetups('ds_config_zero3.json', HF_ZERO3.replace('"device": "cpu", "pin_memory": true}', '"device": "nvme", "pin_memory": true}'))[0]!;
  assert.match(versusLine(run, run, nvme), new RegExp(`^${searched} \\(approximate: NVMe offload not modelled\\): 3\\.4 s/step`));
  // Each phrase is said as it is, joined: never "… not read not modelled".
  const two = { ...nvme, unmodelled: [...nvme.unmodelled!, { range: { start: 0, end: 1 }, short: 'tensor parallelism not read', message: '' }] };
  assert.match(versusLine(run, run, two), new RegExp(`^${searched} \\(approximate: NVMe offload not modelled; tensor parallelism not read\\): 3\\.4 s/step`));
  const plain = readConfigSetups('ds_config.json', '{"zero_optimization": {"stage": 3}}')[0]!;
  assert.match(versusLine(run, run, plain), new RegExp(`^${searched}: 3\\.4 s/step`));
  assert.match(versusLine(run, run, { ...plain, world: 8, worldFrom: 'run.sh' }), /^your config \(8 GPUs, as run\.sh launches it\): 3\.4 s\/step/);
});
