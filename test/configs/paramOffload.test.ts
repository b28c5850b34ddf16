/**
 * Parameter offload as a setup dimension of every config format that has it: DeepSpeed `offload_param` (its JSON,
 * accelerate's offload_param_device, Lightning's DeepSpeedStrategy(offload_parameters=True), the Trainer's inline
 * dict) and FSDP's one offload switch, which moves parameters, gradients and optimizer state together
 * (accelerate's fsdp_offload_params, FSDPStrategy(cpu_offload=…), the Trainer's fsdp "offload", torchtitan's
 * enable_cpu_offload). Each is read with its text, pinned, compared with the plan, fixed and exported; a plan the
 * format has no words for (optimizer-only offload under FSDP, parameter offload below ZeRO-3 in DeepSpeed) is said.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { checkConfig, exportPlan, fixAll, initConfigReaders, pinnedOptions, readConfigSetups, type StatedSetup } from '../../src/configs';
import { analyzeSource } from '../../src/frontends/index';
import { planModel, resolveCluster } from '../../src/planner/index';
import type { PlanOptions } from '../../src/protocol/planOptions';
import { llamaPlan } from './llamaPlan';

before(() => initConfigReaders());

const setupOf = (file: string, text: string): StatedSetup => {
  const s = readConfigSetups(file, text);
  assert.equal(s.length, 1, text);
  return s[0]!;
};
/** [cpuOffload, paramOffload, the text paramOffload's range covers]. */
const offloads = (file: string, text: string) => {
  const s = setupOf(file, text);
  return [s.cpuOffload?.value, s.paramOffload?.value, s.paramOffload ? text.slice(s.paramOffload.range.start, s.paramOffload.range.end) : undefined];
};

const DS_ZERO3 = `{
  "fp16": {"enabled": true},
  "zero_optimization": {
    "stage": 3,
    "offload_optimizer": {"device": "cpu", "pin_memory": true},
    "offload_param": {"device": "cpu", "pin_memory": true}
  }
}
`;
const FSDP_YAML = 'compute_environment: LOCAL_MACHINE\ndistributed_type: FSDP\nfsdp_config:\n  fsdp_sharding_strategy: FULL_SHARD\n  fsdp_offload_params: true\nmixed_precision: bf16\nnum_processes: 8\n';
const DS_YAML = 'distributed_type: DEEPSPEED\ndeepspeed_config:\n  zero_stage: 3\n  offload_optimizer_device: cpu\n  offload_param_device: cpu\nmixed_precision: bf16\nnum_processes: 8\n';
const lightning = (strategy: string) => `import lightning as L\nfrom lightning.pytorch.strategies import FSDPStrategy, DeepSpeedStrategy\nfrom torch.distributed.fsdp import CPUOffload\n\ntrainer = L.Trainer(devices=8, strategy=${strategy}, precision="bf16-mixed")\n`;
const trainer = (args: string) => `from transformers import TrainingArguments\nargs = TrainingArguments(output_dir="out", bf16=True, ${args})\n`;

test('each format reads its parameter-offload key as the dimension, on its value', () => {
  assert.deepEqual(offloads('ds_config.json', DS_ZERO3), [true, true, '"cpu"']);
  assert.deepEqual(offloads('ds_config.json', DS_ZERO3.replace('"offload_param": {"device": "cpu"', '"offload_param": {"device": "none"')), [true, false, '"none"']);
  assert.deepEqual(offloads('accelerate.yaml', FSDP_YAML), [true, true, 'true']);
  assert.deepEqual(offloads('accelerate.yaml', FSDP_YAML.replace('params: true', 'params: false')), [false, false, 'false']);
  assert.deepEqual(offloads('accelerate.yaml', DS_YAML), [true, true, 'cpu']);
  assert.deepEqual(offloads('accelerate.yaml', DS_YAML.replace('offload_param_device: cpu', 'offload_param_device: none')), [true, false, 'none']);
  assert.deepEqual(offloads('train.py', lightning('FSDPStrategy(cpu_offload=True)')), [true, true, 'True']);
  assert.deepEqual(offloads('train.py', lightning('FSDPStrategy(cpu_offload=CPUOffload(offload_params=True))')), [true, true, 'CPUOffload(offload_params=True)']);
  assert.deepEqual(offloads('train.py', lightning('FSDPStrategy()'))[0], false);
  assert.deepEqual(offloads('train.py', lightning('DeepSpeedStrategy(stage=3, offload_optimizer=True, offload_parameters=True)')), [true, true, 'True']);
  assert.deepEqual(offloads('train.py', lightning('"deepspeed_stage_3_offload"')), [true, true, '"deepspeed_stage_3_offload"']);
  assert.deepEqual(offloads('ft.py', trainer('fsdp="full_shard offload auto_wrap"')), [true, true, '"full_shard offload auto_wrap"']);
  assert.deepEqual(offloads('ft.py', trainer('deepspeed={"zero_optimization": {"stage": 3, "offload_optimizer": {"device": "cpu"}, "offload_param": {"device": "cpu"}}}')), [true, true, '"cpu"']);
  assert.deepEqual(offloads('llama.toml', '[parallelism]\ndata_parallel_shard_degree = 8\n\n[training]\nenable_cpu_offload = true\n'), [true, true, 'true']);
});

test('pinnedOptions pins what the config offloads: parameters imply the optimizer state, no offload excludes parameters', () => {
  const base: PlanOptions = { batch: 64, objective: 'throughput', strategies: 'all', optimizer: 'adam' };
  const pins = (file: string, text: string) => {
    const p = pinnedOptions(base, setupOf(file, text), file).pins!;
    return [p.cpuOffload, p.paramOffload];
  };
  assert.deepEqual(pins('ds_config.json', DS_ZERO3), [true, true]);
  assert.deepEqual(pins('accelerate.yaml', FSDP_YAML), [true, true]);
  assert.deepEqual(pins('accelerate.yaml', FSDP_YAML.replace('params: true', 'params: false')), [false, false]);
  assert.deepEqual(pins('ds_config.json', '{"zero_optimization": {"stage": 2, "offload_optimizer": {"device": "cpu"}}}'), [true, false]);
  // Parameters without the optimizer state: the planner offloads both (and says the plan is approximate).
  assert.deepEqual(pins('ds_config.json', '{"zero_optimization": {"stage": 3, "offload_param": {"device": "cpu"}}}'), [true, true]);
  assert.deepEqual(pins('train.py', lightning('FSDPStrategy(cpu_offload=True)')), [true, true]);
});

const differs = (file: string, text: string, plan: ReturnType<typeof llamaPlan>) => checkConfig(file, text, plan).findings.filter((f) => f.code === 'setup-differs' || f.code === 'cannot-express');

test('the fix writes parameter offload where the plan disagrees, in each format’s own words', () => {
  // The plan keeps everything on the GPU (ZeRO-3, selective recompute): DeepSpeed's offload_param goes to "none".
  const noOffload = llamaPlan({ precision: 'fp16', recompute: 'none' });
  const ds = differs('ds_config.json', DS_ZERO3, noOffload);
  assert.deepEqual(ds.map((f) => [f.code, f.message]), [['setup-differs', "This DeepSpeed config trains with CPU offload, parameter offload; the plan for LlamaForCausalLM on 'h100x8' uses no offload, no parameter offload"]]);
  assert.equal(fixAll('ds_config.json', DS_ZERO3, noOffload).text, DS_ZERO3.replace(/"device": "cpu"/g, '"device": "none"'));
  // The plan offloads parameters: a ZeRO-3 config without offload gains both sections, and reads back agreeing.
  const offloading = llamaPlan({ precision: 'fp16', recompute: 'none', cpuOffload: true, paramOffload: true });
  const bare = '{\n  "fp16": {"enabled": true},\n  "zero_optimization": {"stage": 3}\n}\n';
  const written = fixAll('ds_config.json', bare, offloading).text;
  assert.deepEqual(JSON.parse(written).zero_optimization, { stage: 3, offload_optimizer: { device: 'cpu' }, offload_param: { device: 'cpu' } });
  assert.deepEqual(differs('ds_config.json', written, offloading), []);
  // accelerate FSDP: one key for both.
  const off = FSDP_YAML.replace('params: true', 'params: false');
  assert.equal(fixAll('accelerate.yaml', off, llamaPlan({ cpuOffload: true, paramOffload: true, recompute: 'none' })).text, FSDP_YAML);
  assert.equal(fixAll('accelerate.yaml', FSDP_YAML, llamaPlan({ recompute: 'none' })).text, off);
  // accelerate's DeepSpeed plugin and Lightning's DeepSpeedStrategy: their own keys.
  assert.equal(fixAll('accelerate.yaml', DS_YAML, llamaPlan({ cpuOffload: true, paramOffload: false, recompute: 'none' })).text, DS_YAML.replace('offload_param_device: cpu', 'offload_param_device: none'));
  const strategy = lightning('DeepSpeedStrategy(stage=3, offload_optimizer=True)');
  assert.equal(fixAll('train.py', strategy, llamaPlan({ cpuOffload: true, paramOffload: true, recompute: 'none' })).text, strategy.replace('offload_optimizer=True)', 'offload_optimizer=True, offload_parameters=True)'));
  const fsdpStrategy = lightning('FSDPStrategy(cpu_offload=True)');
  assert.equal(fixAll('train.py', fsdpStrategy, llamaPlan({ recompute: 'none' })).text, fsdpStrategy.replace('cpu_offload=True', 'cpu_offload=False'));
});

test('what a format cannot say is said, not rewritten: optimizer-only offload under FSDP, parameter offload below ZeRO-3 in DeepSpeed', () => {
  const optimizerOnly = llamaPlan({ cpuOffload: true, paramOffload: false, recompute: 'none' });
  for (const text of [FSDP_YAML, FSDP_YAML.replace('params: true', 'params: false')]) {
    const found = differs('accelerate.yaml', text, optimizerOnly);
    assert.deepEqual(found.map((f) => f.code), ['cannot-express'], text);
    assert.match(found[0]!.message, /^The plan uses CPU offload, which a Accelerate config cannot express: FSDP's offload moves the parameters and gradients with the optimizer state; it has no optimizer-only offload/);
  }
  const zero2 = '{"bf16": {"enabled": true}, "zero_optimization": {"stage": 2, "offload_optimizer": {"device": "cpu"}}}';
  const found = differs('ds_config.json', zero2, llamaPlan({ zeroStage: 2, cpuOffload: true, paramOffload: true, recompute: 'none' }));
  assert.deepEqual(found.map((f) => f.code), ['cannot-express']);
  assert.match(found[0]!.message, /^The plan uses parameter offload, which a DeepSpeed config cannot express: DeepSpeed offloads parameters \(offload_param\) only at ZeRO stage 3/);
});

test('exports write parameter offload: DeepSpeed offload_param at ZeRO-3, accelerate fsdp_offload_params, torchtitan enable_cpu_offload; optimizer-only offload under FSDP is a note', () => {
  const report = llamaPlan({ cpuOffload: true, paramOffload: true });
  assert.deepEqual(JSON.parse(exportPlan(report, 'deepspeed').content).zero_optimization, { stage: 3, offload_optimizer: { device: 'cpu' }, offload_param: { device: 'cpu' } });
  assert.match(exportPlan(report, 'accelerate').content, /\n {2}fsdp_offload_params: true\n/);
  assert.match(exportPlan(report, 'torchtitan').content, /\nenable_cpu_offload = true\n/);
  const optimizerOnly = llamaPlan({ cpuOffload: true, paramOffload: false });
  const accelerate = exportPlan(optimizerOnly, 'accelerate');
  assert.match(accelerate.content, /\n {2}fsdp_offload_params: false\n/);
  assert.match(accelerate.description, /offloads the optimizer state alone, which FSDP cannot/);
  assert.deepEqual(JSON.parse(exportPlan(optimizerOnly, 'deepspeed').content).zero_optimization, { stage: 3, offload_optimizer: { device: 'cpu' } });
});

test('a real plan: Llama-2-7B on one 16 GB V100 from a ZeRO-3 config with offload_param — parameter offload, no weights on the GPU, and the config agrees', async () => {
  const file = join(__dirname, '..', 'fixtures', 'huggingface', 'llama-2-7b', 'config.json');
  const model = (await analyzeSource(file, readFileSync(file, 'utf8'), { sequenceLength: 2048 })).models[0]!;
  const setup = setupOf('ds_config.json', DS_ZERO3);
  const options = pinnedOptions({ batch: 8, objective: 'throughput', strategies: 'all', optimizer: 'adam', gpus: 1 }, setup, 'ds_config.json');
  const report = planModel(model, resolveCluster('dgx1-v100'), options);
  assert.ok(report.feasible, report.feasible ? '' : report.reason);
  const s = report.plan.setup!;
  assert.deepEqual([s.paramOffload, s.cpuOffload, s.precision, s.memoryPerGpu.weights], [true, true, 'fp16', 0]);
  assert.ok(s.memoryPerGpu.total < 16e9, `${s.memoryPerGpu.total}`);
  assert.deepEqual(checkConfig('ds_config.json', DS_ZERO3, report).findings.filter((f) => /offload/.test(f.message)), []);
});
