/**
 * `--framework` / wap.framework (configs/namedFramework.ts, planner/search/frameworkLimits.ts): the plan keeps to what
 * the named framework runs (PyTorch DDP: ZeRO-1 only, as ZeroRedundancyOptimizer, no offload; Megatron-LM: ZeRO-1 as
 * its distributed optimizer, optimizer offload only) in both searches, prices its collectives its way, and a pin it
 * cannot run is infeasible with the framework's reason.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AnalyzedModel } from '../../src/core/ir';
import type { PlanOptions } from '../../src/protocol/planOptions';
import { analyzeSource } from '../../src/frontends/index';
import { planModel, resolveCluster } from '../../src/planner/index';
import { withNamedFramework } from '../../src/configs/namedFramework';
import { planOptionsFrom } from '../../src/cli/planFlags';
import { normalizeSettings, toPlanOptions } from '../../src/server/settings';
import { gptModel } from './gptSpec';

const root = new URL('../..', import.meta.url).pathname;
const BASE: PlanOptions = { batch: 64, objective: 'throughput', strategies: 'dp', optimizer: 'adam', precision: 'bf16', gpus: 8 };

function planned(model: AnalyzedModel, framework: Parameters<typeof withNamedFramework>[1] | undefined, extra: Partial<PlanOptions> = {}) {
  const options = { ...BASE, ...extra };
  return planModel(model, resolveCluster('a100x8', {}), framework ? withNamedFramework(options, framework, '--framework') : options);
}

test('each framework names its collectives and its limits, with who named it', () => {
  const ddp = withNamedFramework(BASE, 'ddp', '--framework');
  assert.deepEqual([ddp.forwardGatherStages, ddp.serialSyncStages, ddp.frameworkLimits?.zeroStages, ddp.frameworkLimits?.optimizerOffload], [[], [], [0, 1], false]);
  const ds = withNamedFramework(BASE, 'deepspeed', '--framework');
  // DeepSpeed's defaults: overlap_comm off below ZeRO-3, so ZeRO-0/1/2 reduce with nothing beside them.
  assert.deepEqual([ds.forwardGatherStages, ds.serialSyncStages, ds.frameworkLimits?.zeroStages], [[], [0, 1, 2], [0, 1, 2, 3]]);
  const fsdp = withNamedFramework(BASE, 'fsdp', '--framework');
  assert.deepEqual([fsdp.forwardGatherStages, fsdp.serialSyncStages, fsdp.frameworkLimits?.paramOffload], [[2], [], true]);
  const megatron = withNamedFramework(BASE, 'megatron', '--framework');
  assert.deepEqual([megatron.forwardGatherStages, megatron.frameworkLimits?.zeroStages, megatron.frameworkLimits?.optimizerOffload, megatron.frameworkLimits?.paramOffload], [[1], [0, 1], true, false]);
  assert.match(megatron.forwardGatherSource!, /^--framework \(--overlap-param-gather/);
});

test('the flag and the setting: --weight-gather still overrides the gather; a framework WAP does not know is a clear error', () => {
  const flagged = planOptionsFrom({ framework: 'megatron', 'weight-gather': 'after-step' });
  assert.deepEqual([flagged.frameworkLimits?.zeroStages, flagged.forwardGatherStages, flagged.forwardGatherSource], [[0, 1], [], '--weight-gather']);
  assert.throws(() => planOptionsFrom({ framework: 'horovod' }), /--framework must be one of ddp, fsdp, deepspeed, megatron, got 'horovod'/);
  const set = toPlanOptions(normalizeSettings({ framework: 'ddp' }));
  assert.match(set.frameworkLimits?.why ?? '', /^the wap.framework setting ddp: PyTorch DDP runs no ZeRO beyond ZeroRedundancyOptimizer/);
  assert.equal(normalizeSettings({ framework: 'jax' }).framework, 'auto');
  assert.equal(toPlanOptions(normalizeSettings({})).frameworkLimits, undefined);
});

test('block-stack search, a 13B GPT data parallel on 8 A100s: FSDP shards to ZeRO-3; DDP and Megatron keep ZeRO-1 with full recompute, slower, and refuse a ZeRO-3 pin', () => {
  // 40 × 5120 (13B): bf16 weights and gradients are 26 GB each, fp32 Adam state and master 157 GB, sharded 8 ways by ZeRO-1.
  const gpt = gptModel({ layers: 40, hidden: 5120, heads: 40, seq: 2048 });
  const fsdp = planned(gpt, 'fsdp');
  assert.ok(fsdp.feasible, fsdp.feasible ? '' : fsdp.reason);
  assert.equal(fsdp.plan.setup!.zeroStage, 3);
  for (const framework of ['ddp', 'megatron'] as const) {
    const r = planned(gpt, framework);
    assert.ok(r.feasible, r.feasible ? '' : r.reason);
    assert.deepEqual([r.plan.setup!.zeroStage, r.plan.setup!.recompute, r.plan.setup!.cpuOffload], [1, 'full', false], framework);
    assert.ok(r.plan.stepTimeMs > fsdp.plan.stepTimeMs, `${framework} ${r.plan.stepTimeMs} ms vs FSDP ${fsdp.plan.stepTimeMs} ms`);
    const deepest = planned(gpt, framework, { pins: { zeroStage: 3 } });
    assert.ok(!deepest.feasible);
    assert.match(deepest.reason, new RegExp(`pin zeroStage=3: --framework ${framework}: `));
  }
  // Megatron may offload its optimizer state: pinned, that is the setup it prices, at ZeRO-1.
  const offloaded = planned(gptModel({ layers: 24, hidden: 2048, heads: 16, seq: 2048 }), 'megatron', { pins: { cpuOffload: true } });
  assert.ok(offloaded.feasible, offloaded.feasible ? '' : offloaded.reason);
  assert.deepEqual([offloaded.plan.setup!.zeroStage, offloaded.plan.setup!.cpuOffload], [1, true]);
  const ddpOffload = planned(gptModel({ layers: 24, hidden: 2048, heads: 16, seq: 2048 }), 'ddp', { pins: { cpuOffload: true } });
  assert.ok(!ddpOffload.feasible && /pin cpuOffload: --framework ddp/.test(ddpOffload.reason));
});

test('per-layer search, VGG-16 (examples/pytorch/vgg.py): DDP refuses ZeRO-2/3 pins and plans ZeRO ≤ 1, and DeepSpeed is priced with its serial sync', async () => {
  const r = await analyzeSource('examples/pytorch/vgg.py', readFileSync(join(root, 'examples/pytorch/vgg.py'), 'utf8'));
  const vgg = r.models[0]!;
  for (const zero of [2, 3] as const) {
    const pinned = planned(vgg, 'ddp', { pins: { zeroStage: zero } });
    assert.ok(!pinned.feasible && pinned.reason.startsWith(`pin zeroStage=${zero}: --framework ddp`), pinned.feasible ? 'feasible' : pinned.reason);
  }
  const ddp = planned(vgg, 'ddp');
  assert.ok(ddp.feasible && ddp.plan.setup!.zeroStage <= 1);
  const deepspeed = planned(vgg, 'deepspeed', { pins: { zeroStage: 0 } });
  const plain = planned(vgg, undefined, { pins: { zeroStage: 0 } });
  assert.ok(deepspeed.feasible && plain.feasible);
  assert.equal(deepspeed.plan.setup!.gradientSync, 'serial');
  assert.match(deepspeed.plan.setup!.gradientSyncReason!, /^--framework \(DeepSpeed: without ZeRO/);
  assert.ok(deepspeed.plan.stepTimeMs > plain.plan.stepTimeMs, `DeepSpeed ${deepspeed.plan.stepTimeMs} ms vs overlapped ${plain.plan.stepTimeMs} ms`);
});
