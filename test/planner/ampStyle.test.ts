/**
 * How 16-bit training holds its tensors (AmpStyle) changes bytes, communication and time, in both searches:
 * torch.autocast keeps fp32 parameters and gradients (DDP all-reduces fp32) and casts each weight per forward;
 * DeepSpeed/Megatron/FSDP keep 16-bit weights with an fp32 master copy; "pure" keeps everything in 16 bits.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { analyzeSource } from '../../src/frontends/index';
import { planModel, resolveCluster, stateBytesPerParam } from '../../src/planner/index';
import type { AmpStyle, PlanReport } from '../../src/protocol/plan';
import type { PlanOptions } from '../../src/protocol/planOptions';
import { transformer } from './fixtures';

test('model states per parameter under Adam: master weights 2 + 2 + 12, autocast 4 + 2 (cast copy) + 4 + 8, pure 2 + 2 + 4', () => {
  assert.deepEqual(stateBytesPerParam('bf16', 'adam', 'master-weights'), { weights: 2, gradients: 2, optimizer: 12 });
  assert.deepEqual(stateBytesPerParam('bf16', 'adam', 'autocast'), { weights: 6, gradients: 4, optimizer: 8 });
  assert.deepEqual(stateBytesPerParam('bf16', 'adam', 'pure'), { weights: 2, gradients: 2, optimizer: 4 });
  assert.deepEqual(stateBytesPerParam('bf16', 'adam'), stateBytesPerParam('bf16', 'adam', 'master-weights'), 'the default is master weights');
  // fp32 has no 16-bit style: every style is the same 4 + 4 + 8.
  assert.deepEqual(stateBytesPerParam('fp32', 'adam', 'autocast'), { weights: 4, gradients: 4, optimizer: 8 });
});

test('per-layer search: autocast all-reduces fp32 gradients, holds fp32 weights, and pays a weight cast each pass; the plan says which style and why', () => {
  const model = transformer(2, 128, 512, 8);
  const plan = (ampStyle?: AmpStyle) => planModel(model, resolveCluster('a100x8', {}), { batch: 32, objective: 'throughput', strategies: 'dp', optimizer: 'adam', gpus: 4, precision: 'bf16', ...(ampStyle ? { ampStyle } : {}) }) as PlanReport;
  const master = plan();
  const autocast = plan('autocast');
  const pure = plan('pure');
  for (const r of [master, autocast, pure]) assert.ok(r.feasible);
  assert.equal(master.plan.setup!.ampStyle, 'master-weights');
  assert.match(master.plan.setup!.ampStyleReason!, /^default: .*--amp-style autocast/);
  assert.equal(autocast.plan.setup!.ampStyle, 'autocast');
  assert.equal(autocast.plan.setup!.ampStyleReason, 'requested');
  assert.ok(autocast.diagnostics.some((d) => /^autocast: \d+ layers run in fp32/.test(d.message)));
  const fc = (r: PlanReport) => r.plan.layers.find((l) => l.name === 'h.0.mlp.c_fc')!;
  assert.equal(fc(autocast).allreduceBytes, 2 * fc(master).allreduceBytes, 'fp32 .grad is what DDP reduces');
  assert.equal(fc(pure).allreduceBytes, fc(master).allreduceBytes);
  assert.ok(fc(autocast).forwardMs > fc(master).forwardMs, `${fc(autocast).forwardMs} vs ${fc(master).forwardMs}: the fp32 → bf16 weight cast`);
  const m = (r: PlanReport) => r.plan.setup!.memoryPerGpu;
  // fp32 weights (4 B) for every parameter, and a bf16 copy (2 B) only for those autocast casts: the Linears' and attention's, not the
  // embeddings' or LayerNorms'. Master weights hold 2 B each.
  const params = (ops: (op: string) => boolean) => model.layers.filter((l) => ops(l.op)).reduce((a, l) => a + l.workload.params, 0);
  const all = params(() => true);
  const cast = params((op) => op === 'linear' || op === 'mha');
  assert.ok(cast > 0 && cast < all, `${cast} of ${all}`);
  assert.ok(Math.abs(m(autocast).weights / m(master).weights - (4 * all + 2 * cast) / (2 * all)) < 1e-9, `${m(autocast).weights} vs ${m(master).weights}`);
  assert.ok(Math.abs(m(autocast).gradients / m(master).gradients - 2) < 1e-9);
  assert.ok(Math.abs(m(pure).optimizer / m(master).optimizer - 4 / 12) < 1e-9, 'bf16 moments, no master copy');
  // The LayerNorms' fp32 outputs, saved by the casts' consumers in bf16, and the norms' own fp32 inputs: more activations.
  assert.ok(m(autocast).activations > m(master).activations, `${m(autocast).activations} vs ${m(master).activations}`);
  assert.ok(autocast.plan.samplesPerSec < master.plan.samplesPerSec);
  // At fp32 there is no style to report.
  const fp32 = planModel(model, resolveCluster('a100x8', {}), { batch: 32, objective: 'throughput', strategies: 'dp', optimizer: 'adam', gpus: 4, precision: 'fp32', ampStyle: 'autocast' }) as PlanReport;
  assert.equal(fp32.plan.setup!.ampStyle, undefined);
  assert.ok(!fp32.diagnostics.some((d) => /^autocast:/.test(d.message)));
});

test('block-stack search (BERT-large, transformers): autocast’s fp32 gradients double the data-parallel bytes and its fp32 norms add activations', async () => {
  const src = ['from transformers import BertConfig, BertForPreTraining', 'config = BertConfig(hidden_size=1024, num_hidden_layers=24, num_attention_heads=16, intermediate_size=4096)', 'model = BertForPreTraining(config)', ''].join('\n');
  const model = (await analyzeSource('bert.py', src, { sequenceLength: 128 })).models[0]!;
  const options = (ampStyle: AmpStyle): PlanOptions => ({ batch: 256, objective: 'throughput', strategies: 'all', optimizer: 'adam', gpus: 8, precision: 'bf16', ampStyle, pins: { dataParallel: 8, tensorParallel: 1, pipelineStages: 1, zeroStage: 0, recompute: 'none', microBatch: 32 } });
  const master = planModel(model, resolveCluster('a100x8', {}), options('master-weights')) as PlanReport;
  const autocast = planModel(model, resolveCluster('a100x8', {}), options('autocast')) as PlanReport;
  assert.ok(master.feasible && autocast.feasible);
  assert.equal(autocast.plan.setup!.ampStyle, 'autocast');
  const layer = (r: PlanReport) => r.plan.layers.find((l) => l.name === 'bert.encoder.layer.5.intermediate.dense')!;
  assert.ok(layer(master), master.plan.layers.map((l) => l.name).slice(0, 30).join(' '));
  assert.equal(layer(autocast).allreduceBytes, 2 * layer(master).allreduceBytes);
  assert.ok(autocast.plan.setup!.memoryPerGpu.activations > master.plan.setup!.memoryPerGpu.activations);
  // BERT's 31.8 M embedding and 0.1 M LayerNorm parameters get no bf16 copy; its Linears' 302 M do.
  const all = model.layers.reduce((a, l) => a + l.workload.params, 0);
  const cast = model.layers.filter((l) => l.op === 'linear').reduce((a, l) => a + l.workload.params, 0);
  assert.ok(Math.abs(autocast.plan.setup!.memoryPerGpu.weights / master.plan.setup!.memoryPerGpu.weights - (4 * all + 2 * cast) / (2 * all)) < 1e-6);
  assert.ok(autocast.plan.setup!.mfu < master.plan.setup!.mfu, `MFU ${autocast.plan.setup!.mfu} vs ${master.plan.setup!.mfu}`);
  const syncBytes = (r: PlanReport) => r.timeline.filter((e) => e.kind === 'allreduce').reduce((a, e) => a + (e.bytes ?? 0), 0);
  assert.ok(Math.abs(syncBytes(autocast) / syncBytes(master) - 2) < 1e-6, `${syncBytes(autocast)} vs ${syncBytes(master)}`);
});
