/**
 * A hand-written DDP loop that accumulates without no_sync() all-reduces on every micro-step
 * (PlanOptions.allReduceEachMicroStepStages): torch's reducer syncs every backward run while
 * require_backward_grad_sync is True (nn/parallel/distributed.py forward). Priced by both searches: A all-reduce
 * rounds in the per-layer event simulator, each beside its own micro-step's backward, and (A−1) more all-reduces in the
 * block-stack estimate and replay, under the overlap rule both share (cost/overlap.ts). ZeRO-1 (DDP with
 * ZeroRedundancyOptimizer) all-reduces on the earlier micro-steps and reduce-scatters on the last, as today. The plan
 * says which it priced and why, and what no_sync() would save.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { PlanReport, TimelineEvent, ZeroStage } from '../../src/protocol/plan';
import type { PlanOptions } from '../../src/protocol/planOptions';
import { planModel, resolveCluster } from '../../src/planner/index';
import { setupLines } from '../../src/planner/format';
import { OVERLAPPED_COMPUTE_SLOWDOWN as S } from '../../src/planner/cost/overlap';
import { exampleModel, feasible } from './plannedExamples';

const a100x8 = resolveCluster('a100x8', {});
const EACH: Partial<PlanOptions> = { allReduceEachMicroStepStages: [0, 1], allReduceEachMicroStepSource: 'train_ddp.py (no no_sync)' };
/** torchvision.models.resnet50(): sum(p.numel() for p in m.parameters()) under torch 1.13 / torchvision 0.14. */
const RESNET50_PARAMS = 25_557_032;
/** bf16 with fp32 master weights: 16-bit gradients (memory/precision.ts). */
const BF16_GRADIENT_BYTES = 2;
/** The timeline rounds its times to the nanosecond (simulator/results.ts). */
const EPS = 1e-5;



const ms = (e: TimelineEvent): number => e.endMs - e.startMs;
const sum = (es: TimelineEvent[], f: (e: TimelineEvent) => number): number => es.reduce((a, e) => a + f(e), 0);
const noteOf = (r: PlanReport) => r.diagnostics.find((d) => /micro-steps all-reduces its gradients/.test(d.message));

/** A plan's gradient-sync events by micro-step, from the labels the simulator gives each pass ("conv1 (micro-step 2)"). */
function syncRounds(r: PlanReport): Map<number, TimelineEvent[]> {
  const rounds = new Map<number, TimelineEvent[]>();
  for (const e of r.timeline) {
    if (e.kind !== 'allreduce' && e.kind !== 'reducescatter') continue;
    const step = Number(/\(micro-step (\d+)\)$/.exec(e.layer)?.[1]);
    assert.ok(step > 0, `a sync outside any one micro-step: ${e.layer}`);
    rounds.set(step, [...(rounds.get(step) ?? []), e]);
  }
  return rounds;
}

test('per-layer search, ResNet-50 (examples/pytorch/resnet.py) on 8 A100s, 4 micro-steps: A all-reduce rounds, and the step grows by (A−1) all-reduces within the overlap rule', async () => {
  const resnet = await exampleModel('examples/pytorch/resnet.py', 'resnet50');
  assert.equal(resnet.totals.params, RESNET50_PARAMS);
  const plan = (zeroStage: ZeroStage, o: Partial<PlanOptions>, microBatch = 32) => feasible(planModel(resnet, a100x8, { batch: 1024, objective: 'throughput', strategies: 'dp', optimizer: 'momentum', precision: 'bf16', gpus: 8, pins: { zeroStage, microBatch }, ...o }));
  const gradientBytes = RESNET50_PARAMS * BF16_GRADIENT_BYTES;
  for (const zero of [0, 1] as const) {
    const once = plan(zero, {});
    const each = plan(zero, EACH);
    const A = each.plan.setup!.gradientAccumulation;
    assert.equal(A, 4);
    assert.equal(each.plan.layers.reduce((a, l) => a + l.allreduceBytes, 0), gradientBytes);
    // Syncing once: one round, the last micro-step's. Every micro-step: A rounds, each of every gradient.
    const onceRounds = syncRounds(once);
    const eachRounds = syncRounds(each);
    assert.deepEqual([...onceRounds.keys()], [A]);
    assert.deepEqual([...eachRounds.keys()].sort(), [1, 2, 3, 4]);
    for (const [step, events] of eachRounds) {
      assert.equal(sum(events, (e) => e.bytes ?? 0), gradientBytes, `micro-step ${step}`);
      // DDP's all-reduce on the earlier ones; the last is ZeRO-1's reduce-scatter as before.
      const kind = zero === 1 && step === A ? 'reducescatter' : 'allreduce';
      assert.ok(events.every((e) => e.kind === kind), `ZeRO-${zero} micro-step ${step}: ${events.map((e) => e.kind).join(', ')}`);
      // Each micro-step's buckets start beside that micro-step's backward: after its first backward began.
      const firstBackward = Math.min(...each.timeline.filter((e) => e.kind === 'backward' && e.layer.endsWith(`(micro-step ${step})`)).map((e) => e.startMs));
      assert.ok(events.every((e) => e.startMs >= firstBackward - EPS));
    }
    // The all-reduce one sync costs, as the plan prices it: the earlier rounds all take it (the last one too at ZeRO-0).
    const allReduceMs = sum(eachRounds.get(1)!, ms);
    for (let step = 2; step < A; step++) assert.ok(Math.abs(sum(eachRounds.get(step)!, ms) - allReduceMs) < EPS);
    if (zero === 0) assert.ok(Math.abs(sum(onceRounds.get(A)!, ms) - allReduceMs) < EPS);
    // The overlap rule: each hidden behind its backward, slowing it by s/(1+s) of the collective, at best; exposed whole at worst.
    const extra = each.plan.stepTimeMs - once.plan.stepTimeMs;
    assert.ok(extra >= (A - 1) * allReduceMs * (S / (1 + S)) - EPS && extra <= (A - 1) * allReduceMs + EPS, `ZeRO-${zero}: ${extra} ms for ${A - 1} × ${allReduceMs} ms`);
    // Said: which way, why, and what no_sync() would save, the difference the two plans show.
    assert.deepEqual([each.plan.setup!.gradientAccumulationSync, each.plan.setup!.gradientAccumulationSyncReason], ['every-micro-step', 'train_ddp.py (no no_sync)']);
    assert.equal(once.plan.setup!.gradientAccumulationSync, 'once');
    assert.match(once.plan.setup!.gradientAccumulationSyncReason!, /^assumed: the micro-steps before the last accumulate locally/);
    assert.match(setupLines(each.plan.setup!)[0]!, /gradients all-reduced every micro-step \(train_ddp\.py \(no no_sync\)\)/);
    const note = noteOf(each);
    assert.ok(note, each.diagnostics.map((d) => d.message).join('\n'));
    assert.equal(note.severity, 'info');
    assert.match(note.message, new RegExp(`the 3 before the last cost ${extra.toFixed(2)} ms per step .*with model\\.no_sync\\(\\):`));
    assert.equal(noteOf(once), undefined);
  }
  // One micro-step has nothing to accumulate: the option changes nothing and the report says nothing of it.
  const whole = plan(0, {}, 128);
  const wholeEach = plan(0, EACH, 128);
  assert.equal(wholeEach.plan.setup!.gradientAccumulation, 1);
  assert.equal(wholeEach.plan.stepTimeMs, whole.plan.stepTimeMs);
  assert.equal(wholeEach.plan.setup!.gradientAccumulationSync, undefined);
  // ZeRO-2 is not DDP: its micro-steps reduce-scatter as they did.
  assert.equal(plan(2, EACH).plan.stepTimeMs, plan(2, {}).plan.stepTimeMs);
});

test('block-stack search, nanoGPT (examples/pytorch/gpt.py) on 8 A100s, 8 micro-batches: (A−1) more all-reduces, each as exposed as the last one\'s, at ZeRO-0 and ZeRO-1 alike', async () => {
  const gpt = await exampleModel('examples/pytorch/gpt.py', 'model');
  const plan = (zeroStage: ZeroStage, o: Partial<PlanOptions>, pipelineStages = 1) => feasible(planModel(gpt, a100x8, {
    batch: 64, objective: 'throughput', strategies: 'all', optimizer: 'adam', precision: 'bf16', gpus: 8,
    pins: { zeroStage, dataParallel: 8 / pipelineStages, tensorParallel: 1, pipelineStages, contextParallel: 1, microBatch: 1, recompute: 'none' }, ...o,
  }));
  const once0 = plan(0, {});
  assert.equal(once0.search.method, 'parallel3d');
  const A = once0.plan.setup!.gradientAccumulation;
  assert.equal(A, 8);
  // The plan's own numbers: its gradient all-reduce starts with the last backward and ends E after it.
  const sync = once0.timeline.find((e) => e.kind === 'allreduce' && /gradients/.test(e.layer))!;
  assert.equal(sync.bytes, gpt.totals.params * BF16_GRADIENT_BYTES);
  const lastBackward = once0.timeline.filter((e) => e.kind === 'backward' && e.microBatch === A - 1)[0]!;
  assert.ok(Math.abs(sync.startMs - lastBackward.startMs) < EPS);
  const exposed = sync.endMs - lastBackward.endMs;
  // By the overlap rule (cost/overlap.ts), an all-reduce C beside backward D exposes C·s/(1+s) when it ends within
  // the slowed backward, C − D otherwise: here it does, so C = E·(1+s)/s, and each earlier micro-batch adds the same E.
  const backwardMs = ms(lastBackward);
  const allReduceMs = (exposed * (1 + S)) / S;
  assert.ok(exposed > 0 && allReduceMs < backwardMs * (1 + S), `C ${allReduceMs} ms beside D ${backwardMs} ms`);
  for (const zero of [0, 1] as const) {
    const once = zero === 0 ? once0 : plan(1, {});
    const each = plan(zero, EACH);
    const extra = each.plan.stepTimeMs - once.plan.stepTimeMs;
    // ZeRO-1's earlier micro-batches all-reduce as ZeRO-0's do (its last one reduce-scatters, in both plans).
    assert.ok(Math.abs(extra - (A - 1) * allReduceMs * (S / (1 + S))) < 1e-6, `ZeRO-${zero}: ${extra} ms, by hand ${(A - 1) * exposed} ms`);
    assert.deepEqual([each.plan.setup!.gradientAccumulationSync, once.plan.setup!.gradientAccumulationSync], ['every-micro-step', 'once']);
    assert.match(noteOf(each)!.message, new RegExp(`each of the 8 micro-steps all-reduces its gradients \\(train_ddp\\.py \\(no no_sync\\)\\): the 7 before the last cost ${extra.toFixed(2)} ms per step`));
  }
  // A pipeline's micro-batches are one schedule's, which syncs once (torch.distributed.pipelining's no_sync): unchanged.
  const piped = plan(0, {}, 2);
  const pipedEach = plan(0, EACH, 2);
  assert.equal(pipedEach.plan.stepTimeMs, piped.plan.stepTimeMs);
  assert.equal(pipedEach.plan.setup!.gradientAccumulationSync, undefined);
  assert.equal(noteOf(pipedEach), undefined);
});
