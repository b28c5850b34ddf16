/**
 * `--format torch-parallelize`: the snippet parses as Python (CPython's own
 * parser, through /usr/bin/python3 with an argument array) and keys its
 * tensor-parallel plan by the model's real module names, for a hand-written
 * Llama plan and for a real plan of examples/pytorch/gpt.py.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { exportPlan, EXPORT_FORMATS } from '../../src/configs';
import { repeatedBlocks } from '../../src/configs/torchParallelize';
import { loadModel } from '../../src/cli/modelLoading';
import { CLUSTER_PRESETS, planModel, resolveCluster } from '../../src/planner/index';
import { llamaPlan } from './llamaPlan';
import { root } from './helpers';
import { join } from 'node:path';

function assertParses(code: string): void {
  const r = spawnSync('/usr/bin/python3', ['-c', 'import ast,sys; ast.parse(sys.stdin.read())'], { input: code, encoding: 'utf8', timeout: 20_000 });
  assert.equal(r.status, 0, `${r.stderr}\n${code}`);
}

const tpKeys = (code: string): string[] => [...code.matchAll(/^ {8}"([^"]+)": (ColwiseParallel|RowwiseParallel|SequenceParallel)\(\)/gm)].map((m) => m[1]!);

test('Llama plan with TP 2 and ZeRO-3: mesh 4×2, Colwise q/k/v/gate/up, Rowwise o/down, FSDP2 per block, checkpointing', () => {
  const plan = llamaPlan({ tensorParallel: 2 });
  const out = exportPlan(plan, 'torch-parallelize');
  assertParses(out.content);
  assert.match(out.content, /init_device_mesh\("cuda", \(4, 2\), mesh_dim_names=\("dp", "tp"\)\)/);
  assert.match(out.content, /"model\.layers\.31\.self_attn\.q_proj": ColwiseParallel\(\)/);
  assert.match(out.content, /"model\.layers\.0\.self_attn\.o_proj": RowwiseParallel\(\)/);
  assert.match(out.content, /"model\.layers\.7\.mlp\.down_proj": RowwiseParallel\(\)/);
  assert.match(out.content, /fully_shard\(model\.get_submodule\(name\), mesh=mesh\["dp"\], mp_policy=mp, reshard_after_forward=True\)/);
  assert.match(out.content, /param_dtype=torch\.bfloat16/);
  assert.match(out.content, /checkpoint_wrapper\(model\.get_submodule\(name\)\)/);
  assert.match(out.content, /"model\.layers\.0", "model\.layers\.1",/);
  const names = new Set(plan.plan.layers.map((l) => l.name));
  const keys = tpKeys(out.content);
  assert.equal(keys.length, 32 * 7 + 1, 'every split Linear of 32 blocks and lm_head');
  for (const k of keys) assert.ok(names.has(k), `${k} is a module of the plan`);
});

test('a pure data-parallel plan replicates with no tensor-parallel plan; placement is a renamed alias', () => {
  const out = exportPlan(llamaPlan({ zeroStage: 0, recompute: 'none' }), 'torch-parallelize');
  assertParses(out.content);
  assert.deepEqual(tpKeys(out.content), []);
  assert.match(out.content, /replicate\(model, device_mesh=mesh\["dp"\]\)/);
  assert.doesNotMatch(out.content, /fully_shard|checkpoint_wrapper/);
  const alias = exportPlan(llamaPlan(), 'placement');
  assert.match(alias.description, /'placement' was renamed 'torch-parallelize'/);
  assert.ok(EXPORT_FORMATS.includes('torch-parallelize') && !EXPORT_FORMATS.includes('placement'));
});

test('a real plan of examples/pytorch/gpt.py on h100x8: every tensor-parallel key is a layer the Python frontend read', async () => {
  const model = await loadModel(join(root, 'examples/pytorch/gpt.py'), {});
  const plan = planModel(model, resolveCluster('h100x8', {}), { batch: 32, objective: 'throughput', strategies: 'hybrid', optimizer: 'adam' });
  assert.ok(plan.feasible);
  const out = exportPlan(plan, 'torch-parallelize');
  assertParses(out.content);
  const names = new Set(model.layers.map((l) => l.name));
  const keys = tpKeys(out.content);
  const split = plan.plan.layers.filter((l) => l.modelDegree > 1 && /^(Linear|Embedding)$/.test(l.type));
  assert.equal(keys.length, split.length, out.content);
  for (const k of keys) assert.ok(names.has(k), `${k} is a module of gpt.py (${[...names].slice(0, 5).join(', ')}…)`);
  assert.ok(CLUSTER_PRESETS);
});

test('the autocast note appears only where FSDP2 does not carry the precision: 16-bit without ZeRO ≥ 2, never fp32', () => {
  const note = /torch\.autocast\("cuda", dtype=(torch\.\w+)\)/;
  assert.equal(note.exec(exportPlan(llamaPlan({ zeroStage: 0, recompute: 'none' }), 'torch-parallelize').content)?.[1], 'torch.bfloat16');
  assert.equal(note.exec(exportPlan(llamaPlan({ zeroStage: 1, precision: 'fp16', recompute: 'none' }), 'torch-parallelize').content)?.[1], 'torch.float16');
  assert.doesNotMatch(exportPlan(llamaPlan({ zeroStage: 0, precision: 'fp32', recompute: 'none' }), 'torch-parallelize').content, /autocast/);
  // ZeRO-3 sets param_dtype in FSDP2's MixedPrecisionPolicy instead.
  assert.doesNotMatch(exportPlan(llamaPlan({ zeroStage: 3 }), 'torch-parallelize').content, /autocast/);
});

test('a plan without a training setup (the per-layer search) takes its tensor-parallel degree from the layers', () => {
  const plan = llamaPlan({ tensorParallel: 2 });
  const bare = { ...plan, plan: { ...plan.plan, setup: undefined } };
  const out = exportPlan(bare, 'torch-parallelize');
  assertParses(out.content);
  assert.match(out.content, /init_device_mesh\("cuda", \(4, 2\), mesh_dim_names=\("dp", "tp"\)\)/);
  const dpOnly = llamaPlan({ tensorParallel: 1 });
  assert.match(exportPlan({ ...dpOnly, plan: { ...dpOnly.plan, setup: undefined } }, 'torch-parallelize').content, /init_device_mesh\("cuda", \(8, 1\)/);
});

test('every torch.distributed API the snippet calls is imported, for each ZeRO stage, recompute and TP degree', () => {
  const apis = ['fully_shard', 'MixedPrecisionPolicy', 'replicate', 'checkpoint_wrapper', 'parallelize_module', 'ColwiseParallel', 'RowwiseParallel', 'SequenceParallel', 'init_device_mesh'];
  for (const zeroStage of [0, 1, 2, 3] as const) {
    for (const tensorParallel of [1, 2]) {
      for (const recompute of ['none', 'full'] as const) {
        const code = exportPlan(llamaPlan({ zeroStage, tensorParallel, recompute }), 'torch-parallelize').content;
        const [head, body] = [code.slice(0, code.indexOf('\ndef ')), code.slice(code.indexOf('\ndef '))];
        for (const api of apis) {
          if (new RegExp(`\\b${api}\\(`).test(body)) assert.match(head, new RegExp(`import .*\\b${api}\\b`), `ZeRO-${zeroStage} TP ${tensorParallel} ${recompute}: ${api} is called but not imported`);
        }
      }
    }
  }
  const z2 = exportPlan(llamaPlan({ zeroStage: 2, tensorParallel: 1 }), 'torch-parallelize').content;
  assert.match(z2, /# FSDP2 over the data-parallel axis: ZeRO-2 \(weights stay gathered between forward and backward\)\./);
  assert.match(z2, /fully_shard\(model, mesh=mesh\["dp"\], mp_policy=mp, reshard_after_forward=False\)/);
  assert.doesNotMatch(exportPlan(llamaPlan({ zeroStage: 3 }), 'torch-parallelize').content, /weights stay gathered/);
});

test('repeated blocks: two numbered blocks are a repetition to wrap one by one; one block, or none, is not', () => {
  const layer = (name: string) => ({ name }) as Parameters<typeof repeatedBlocks>[0][number];
  const two = ['h.0.attn', 'h.0.mlp', 'h.1.attn', 'h.1.mlp', 'lm_head'].map(layer);
  assert.deepEqual(repeatedBlocks(two), ['h.0', 'h.1']);
  assert.deepEqual(repeatedBlocks(['h.0.attn', 'h.0.mlp', 'lm_head'].map(layer)), [], 'a single numbered block is not a repetition');
  assert.deepEqual(repeatedBlocks(['conv1', 'fc'].map(layer)), []);
});

test('a split layer parallelize_module has no style for is named for sharding by hand; an unsplit one is not', () => {
  const plan = llamaPlan({ tensorParallel: 2 });
  const base = plan.plan.layers[1]!;
  const layers = [
    ...plan.plan.layers,
    { ...base, name: 'model.vision.patch_conv', type: 'Conv2d', modelDegree: 2, params: 3 * 1024 * 14 * 14 },
    { ...base, name: 'model.norm', type: 'LlamaRMSNorm', modelDegree: 1, params: 4096 },
  ];
  const out = exportPlan({ ...plan, plan: { ...plan.plan, layers } }, 'torch-parallelize');
  assertParses(out.content);
  assert.match(out.content, /# model\.vision\.patch_conv \(Conv2d\) is split ×2 in the plan; parallelize_module has no style for Conv2d: shard it by hand\./);
  assert.doesNotMatch(out.content, /model\.norm \(LlamaRMSNorm\) is split/);
});

test('the export’s one-line description names the mesh, the tensor-parallel modules, FSDP2’s ZeRO stage and the checkpointed blocks', () => {
  const z3 = exportPlan(llamaPlan({ tensorParallel: 2 }), 'torch-parallelize').description;
  assert.equal(z3, 'PyTorch parallelize() for LlamaForCausalLM: mesh 4×2, 225 tensor-parallel module(s), FSDP2 ZeRO-3, checkpointing 32 blocks.');
  assert.match(exportPlan(llamaPlan({ tensorParallel: 2, zeroStage: 2 }), 'torch-parallelize').description, /, FSDP2 ZeRO-2,/);
  assert.doesNotMatch(exportPlan(llamaPlan({ tensorParallel: 2, zeroStage: 1 }), 'torch-parallelize').description, /FSDP2/);
  assert.doesNotMatch(exportPlan(llamaPlan({ tensorParallel: 2, recompute: 'none' }), 'torch-parallelize').description, /checkpointing/);
});

test('sequence parallel needs a tensor-parallel group: with TP 1 no norm gets SequenceParallel, whatever the setup says', () => {
  const withNorms = (tp: number) => {
    const plan = llamaPlan({ tensorParallel: tp, sequenceParallel: true });
    const norm = { ...plan.plan.layers[1]!, name: 'model.layers.0.input_layernorm', type: 'LlamaRMSNorm', modelDegree: 1, params: 4096 };
    return { ...plan, plan: { ...plan.plan, layers: [...plan.plan.layers, norm] } };
  };
  const two = exportPlan(withNorms(2), 'torch-parallelize');
  assert.match(two.content, /"model\.layers\.0\.input_layernorm": SequenceParallel\(\)/, 'with TP 2 the norm runs sequence-parallel');
  const one = exportPlan(withNorms(1), 'torch-parallelize');
  assertParses(one.content);
  assert.doesNotMatch(one.content, /SequenceParallel\(\)/);
  assert.deepEqual(tpKeys(one.content), []);
});

test('tensor parallel over every GPU (one data-parallel rank) replicates nothing', () => {
  const out = exportPlan(llamaPlan({ tensorParallel: 8, zeroStage: 0 }), 'torch-parallelize');
  assertParses(out.content);
  assert.match(out.content, /init_device_mesh\("cuda", \(1, 8\)/);
  assert.doesNotMatch(out.content, /replicate\(model/);
  assert.match(exportPlan(llamaPlan({ tensorParallel: 4, zeroStage: 0 }), 'torch-parallelize').content, /replicate\(model, device_mesh=mesh\["dp"\]\)/);
});

test('without FSDP2 the snippet says how to train the 16-bit style the plan priced: autocast, a bf16 model, or master weights', () => {
  const note = (ampStyle?: 'autocast' | 'master-weights' | 'pure') => exportPlan(llamaPlan({ zeroStage: 0, ...(ampStyle ? { ampStyle } : {}) }), 'torch-parallelize').content.split('\n').find((l) => l.startsWith('# Precision:'));
  assert.match(note('autocast') ?? '', /torch\.autocast\("cuda", dtype=torch\.bfloat16\), as the plan assumes/);
  assert.match(note('pure') ?? '', /model\.to\(torch\.bfloat16\); the optimizer keeps its state in torch\.bfloat16/);
  assert.match(note('master-weights') ?? '', /fp32 master copy; .*--amp-style autocast/);
  assert.equal(exportPlan(llamaPlan({ zeroStage: 3, ampStyle: 'autocast' }), 'torch-parallelize').content.includes('# Precision:'), false, 'FSDP2 states it in its MixedPrecisionPolicy');
});
