/** wap.precision → PlanOptions, and the server's precision hint from configs beside the model. */
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { before, test } from 'node:test';
import { initConfigReaders } from '../../src/configs';
import { withTrainingHints } from '../../src/server/trainingHints';
import { normalizeSettings, toPlanOptions } from '../../src/server/settings';

before(() => initConfigReaders());

test('wap.precision maps to options.precision with its source; auto and junk leave it to the planner', () => {
  const bf16 = toPlanOptions(normalizeSettings({ precision: 'bf16' }));
  assert.equal(bf16.precision, 'bf16');
  assert.equal(bf16.precisionSource, 'the wap.precision setting');
  assert.equal(toPlanOptions(normalizeSettings({ precision: 'auto' })).precision, undefined);
  assert.equal(normalizeSettings({ precision: 'int4' }).precision, 'auto');
  assert.equal(normalizeSettings({}).precision, 'auto');
});

test('without wap.precision the DeepSpeed config beside the model decides; an explicit setting wins over it', () => {
  const dir = mkdtempSync(join(tmpdir(), 'wap-precision-'));
  writeFileSync(join(dir, 'model.py'), 'import torch\n');
  const uri = pathToFileURL(join(dir, 'model.py')).href;
  const base = toPlanOptions(normalizeSettings({}));
  assert.equal(withTrainingHints(base, uri).precision, undefined, 'no config: the GPU decides');
  writeFileSync(join(dir, 'ds_config.json'), '{"train_micro_batch_size_per_gpu": 4, "bf16": {"enabled": true}}');
  const hinted = withTrainingHints(base, uri);
  assert.equal(hinted.precision, 'bf16');
  assert.equal(hinted.precisionSource, 'ds_config.json (bf16.enabled)');
  assert.equal(withTrainingHints(toPlanOptions(normalizeSettings({ precision: 'fp32' })), uri).precision, 'fp32');
  assert.equal(withTrainingHints(base, 'untitled:Untitled-1').precision, undefined);
});

test('wap.ampStyle maps to options.ampStyle with its source; without it an accelerate config beside the model says autocast', () => {
  const set = toPlanOptions(normalizeSettings({ ampStyle: 'pure' }));
  assert.deepEqual([set.ampStyle, set.ampStyleSource], ['pure', 'the wap.ampStyle setting']);
  assert.equal(normalizeSettings({ ampStyle: 'O2' }).ampStyle, 'auto');
  assert.equal(toPlanOptions(normalizeSettings({})).ampStyle, undefined);
  const dir = mkdtempSync(join(tmpdir(), 'wap-amp-'));
  writeFileSync(join(dir, 'model.py'), 'import torch\n');
  writeFileSync(join(dir, 'accelerate_config.yaml'), 'distributed_type: MULTI_GPU\nnum_processes: 8\nmixed_precision: bf16\n');
  const uri = pathToFileURL(join(dir, 'model.py')).href;
  const hinted = withTrainingHints(toPlanOptions(normalizeSettings({ precision: 'bf16' })), uri);
  assert.deepEqual([hinted.precision, hinted.precisionSource, hinted.ampStyle], ['bf16', 'the wap.precision setting', 'autocast']);
  assert.equal(withTrainingHints(toPlanOptions(normalizeSettings({ ampStyle: 'master-weights' })), uri).ampStyle, 'master-weights', 'the setting wins');
});

test('wap.weightGather maps to the stages gathered in the next forward, with its source; without it an FSDP config beside the model says SHARD_GRAD_OP’s', () => {
  const set = toPlanOptions(normalizeSettings({ weightGather: 'next-forward' }));
  assert.deepEqual([set.forwardGatherStages, set.forwardGatherSource], [[1, 2], 'the wap.weightGather setting']);
  assert.equal(normalizeSettings({ weightGather: 'sometimes' }).weightGather, 'auto');
  assert.equal(toPlanOptions(normalizeSettings({})).forwardGatherStages, undefined);
  const dir = mkdtempSync(join(tmpdir(), 'wap-gather-'));
  writeFileSync(join(dir, 'model.py'), 'import torch\n');
  writeFileSync(join(dir, 'fsdp.yaml'), 'distributed_type: FSDP\nfsdp_config:\n  fsdp_sharding_strategy: SHARD_GRAD_OP\nnum_processes: 8\n');
  const uri = pathToFileURL(join(dir, 'model.py')).href;
  const hinted = withTrainingHints(toPlanOptions(normalizeSettings({})), uri);
  assert.deepEqual(hinted.forwardGatherStages, [2]);
  assert.match(hinted.forwardGatherSource!, /^fsdp\.yaml \(FSDP: SHARD_GRAD_OP gathers/);
  assert.deepEqual(withTrainingHints(toPlanOptions(normalizeSettings({ weightGather: 'after-step' })), uri).forwardGatherStages, [], 'the setting wins');
});

test('wap.recompute: by default the code beside the model decides (gradient_checkpointing_enable pins full); auto searches whatever the code does; a mode pins it', () => {
  const dir = mkdtempSync(join(tmpdir(), 'wap-recompute-setting-'));
  writeFileSync(join(dir, 'finetune.py'), 'import torch\nmodel = build()\nmodel.gradient_checkpointing_enable()\n');
  const uri = pathToFileURL(join(dir, 'finetune.py')).href;
  assert.equal(normalizeSettings({}).recompute, 'code');
  assert.equal(normalizeSettings({ recompute: 'sometimes' }).recompute, 'code');
  const fromCode = withTrainingHints(toPlanOptions(normalizeSettings({})), uri);
  assert.deepEqual([fromCode.pins?.recompute, fromCode.recomputeSource], ['full', 'finetune.py:3 (model.gradient_checkpointing_enable())']);
  const searched = withTrainingHints(toPlanOptions(normalizeSettings({ recompute: 'auto' })), uri);
  assert.deepEqual([searched.pins?.recompute, searched.recomputeSource], [undefined, 'the wap.recompute setting']);
  const pinned = withTrainingHints(toPlanOptions(normalizeSettings({ recompute: 'selective' })), uri);
  assert.equal(pinned.pins?.recompute, 'selective');
});

test('a recompute the wap.recompute setting pins is not said to come from the code', async () => {
  const { planModel, resolveCluster } = await import('../../src/planner/index');
  const { gptModel } = await import('../planner/gptSpec');
  const options = { ...toPlanOptions(normalizeSettings({ recompute: 'full' })), optimizer: 'adam' as const, precision: 'bf16' as const };
  const plan = planModel(gptModel({ layers: 2, hidden: 256, heads: 4, seq: 128 }), resolveCluster('a100x8'), options);
  assert.ok(plan.feasible && plan.plan.setup?.recompute === 'full');
  assert.ok(!plan.diagnostics.some((d) => /the code switches gradient checkpointing on/.test(d.message)), plan.diagnostics.map((d) => d.message).join('\n'));
});
