/**
 * The experts kernel a transformers MoE model runs (frontends/huggingface/expertsKernel.ts): transformers 5's default
 * grouped_mm runs each projection of a GPU's experts as one grouped GEMM, experts_implementation="eager" (every 4.x
 * release) loops over them one GEMM each. Qwen3-30B-A3B's 128 experts of 768 at top 8 see 256 rows each of a
 * 4096-token sample: 128 short GEMMs and launches per projection in the loop, one grouped kernel otherwise.
 */
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { expertOf } from '../../src/core/moe';
import type { AnalyzedModel, Diagnostic } from '../../src/core/ir';
import { initFrontends } from '../../src/frontends/index';
import { analyticalTimes } from '../../src/planner/cost/compute';
import { planModel, resolveCluster } from '../../src/planner/index';
import { hfScriptModel, layerNamed } from '../frontends/hfFixtures';

before(() => initFrontends());

const SEQ = 4096;

function qwenMoe(keywords = ''): { model: AnalyzedModel; diagnostics: Diagnostic[] } {
  return hfScriptModel('experts.py', `from transformers import AutoModelForCausalLM\nmodel = AutoModelForCausalLM.from_pretrained("./qwen3-30b-a3b"${keywords})\n`, { sequenceLength: SEQ });
}

const note = (d: readonly Diagnostic[]) => d.find((x) => x.code === 'hf-experts-kernel');

test('no experts_implementation named: grouped, as transformers 5 runs it by default, said with the keyword that prices the loop', () => {
  const { model, diagnostics } = qwenMoe();
  assert.equal(expertOf(layerNamed(model, 'model.layers.0.mlp.experts.5.gate_proj'))?.grouped, true);
  const said = note(diagnostics);
  assert.equal(said?.severity, 'info');
  assert.match(said?.message ?? '', /grouped_mm.*experts_implementation="eager"/);
  assert.equal(diagnostics.filter((d) => d.code === 'hf-experts-kernel').length, 1, 'said once, not per layer');
});

test('experts_implementation="eager" loops, "grouped_mm" groups, "batched_mm" is said as not modelled and marks the result incomplete', () => {
  const eager = qwenMoe(', experts_implementation="eager"');
  assert.equal(expertOf(layerNamed(eager.model, 'model.layers.0.mlp.experts.5.gate_proj'))?.grouped, undefined);
  assert.match(note(eager.diagnostics)?.message ?? '', /"eager": each expert runs its own GEMMs in a loop/);
  assert.equal(expertOf(layerNamed(qwenMoe(', experts_implementation="grouped_mm"').model, 'model.layers.0.mlp.experts.5.gate_proj'))?.grouped, true);
  const batched = qwenMoe(', experts_implementation="batched_mm"');
  assert.equal(note(batched.diagnostics)?.severity, 'warning');
  assert.equal(batched.model.completeness?.complete, false);
});

test('priced: a grouped expert projection costs less than the looped one (one launch and a full wave for 128 experts), the same FLOPs', () => {
  const grouped = layerNamed(qwenMoe().model, 'model.layers.0.mlp.experts.5.gate_proj');
  const looped = layerNamed(qwenMoe(', experts_implementation="eager"').model, 'model.layers.0.mlp.experts.5.gate_proj');
  assert.equal(grouped.workload.forwardFlops, looped.workload.forwardFlops);
  assert.deepEqual(grouped.inputShapes, [[SEQ * 8 / 128, 2048]]);
  const gpu = resolveCluster('h100x8').gpus[0]!;
  const time = (l: typeof grouped) => { const t = analyticalTimes(l, gpu, 1, 1, 1, 2, 'bf16'); return t.forwardMs + t.backwardMs; };
  assert.ok(time(grouped) < 0.5 * time(looped), `grouped ${time(grouped)} ms vs looped ${time(looped)} ms per expert`);
  // Spread over 8 GPUs each runs 16 of the experts in its grouped kernel: their share of a smaller batch.
  const at = (ep: number) => { const t = analyticalTimes(grouped, gpu, 1, 1, 1, 2, 'bf16', { expertParallel: ep }); return t.forwardMs + t.backwardMs; };
  assert.ok(at(8) >= at(1), `${at(8)} vs ${at(1)}`);
});

test('the whole plan: Qwen3-30B-A3B on 8 H100s steps faster grouped than looped', () => {
  const cluster = resolveCluster('h100x8');
  const step = (keywords: string) => {
    const out = planModel(qwenMoe(keywords).model, cluster, { batch: 32, objective: 'throughput', strategies: 'all', optimizer: 'adam', precision: 'bf16', gpus: 8, pins: { expertParallel: 1, tensorParallel: 1, pipelineStages: 1, zeroStage: 3, microBatch: 1, recompute: 'full' } });
    assert.ok(out.feasible, out.feasible ? '' : out.reason);
    return out.plan.stepTimeMs;
  };
  const [grouped, looped] = [step(''), step(', experts_implementation="eager"')];
  assert.ok(grouped < looped, `grouped ${grouped} ms vs looped ${looped} ms`);
});

test('model.set_experts_implementation("eager") after loading switches the experts to the loop, as transformers 5 does at run time', () => {
  const { model } = hfScriptModel('experts.py', 'from transformers import AutoModelForCausalLM\nmodel = AutoModelForCausalLM.from_pretrained("./qwen3-30b-a3b")\nmodel.set_experts_implementation("eager")\n', { sequenceLength: SEQ });
  assert.equal(expertOf(layerNamed(model, 'model.layers.0.mlp.experts.5.gate_proj'))?.grouped, undefined);
  assert.match(note(model.diagnostics)?.message ?? '', /"eager"/);
});

test("routing is priced as the rows each expert gathers, not as the catalogue's tree of splits that hands them out", () => {
  const { model } = qwenMoe();
  const gpu = resolveCluster('h100x8').gpus[0]!;
  const bookkeeping = model.layers.filter((l) => l.name.startsWith('model.layers.0.mlp.routed_tokens.'));
  // 128 = 2^7: six levels of two-way splits above the experts' own (2 + 4 + … + 64 nodes).
  assert.equal(bookkeeping.length, 126);
  for (const l of bookkeeping) assert.deepEqual(analyticalTimes(l, gpu, 1, 1, 1, 2, 'bf16'), { forwardMs: 0, backwardMs: 0 }, l.name);
  // An expert's gather reads and writes its own 256 rows of 2048, not its parent section's 512 too: at a micro-batch
  // of 64 (bytes, not launches, dominate) it costs 2/3 of the same split priced as a plain one (read 512, write 256).
  const gather = layerNamed(model, 'model.layers.0.mlp.experts.5.tokens');
  assert.deepEqual(gather.outputShape, [SEQ * 8 / 128, 2048]);
  const { expert: _expert, ...plainAttrs } = gather.attrs as Record<string, unknown>;
  const plain = { ...gather, attrs: plainAttrs as typeof gather.attrs };
  const fwd = (l: typeof gather) => analyticalTimes(l, gpu, 64, 1, 1, 2, 'bf16').forwardMs;
  const ratio = fwd(gather) / fwd(plain);
  assert.ok(ratio > 0.55 && ratio < 0.75, `gathered ${fwd(gather)} ms vs plain ${fwd(plain)} ms`);
});

test("a framework's experts kernel overrides the code's: Megatron without --moe-grouped-gemm loops (SequentialMLP), with it groups", async () => {
  const { readConfigSetups, initConfigReaders, withStatedFramework } = await import('../../src/configs');
  await initConfigReaders();
  const launch = (grouped: boolean) => `torchrun --nproc_per_node 8 pretrain_gpt.py --tensor-model-parallel-size 1 --micro-batch-size 1 --bf16${grouped ? ' --moe-grouped-gemm' : ''}\n`;
  const base = { batch: 32, objective: 'throughput' as const, strategies: 'all' as const, optimizer: 'adam' as const, precision: 'bf16' as const, gpus: 8, pins: { expertParallel: 1, tensorParallel: 1, pipelineStages: 1, zeroStage: 3 as const, microBatch: 1, recompute: 'full' as const } };
  const optionsFor = (grouped: boolean) => withStatedFramework(base, readConfigSetups('pretrain.sh', launch(grouped))[0]!, 'pretrain.sh');
  assert.deepEqual([optionsFor(false).expertsKernel, optionsFor(true).expertsKernel], ['loop', 'grouped']);
  const model = qwenMoe().model;
  const cluster = resolveCluster('h100x8');
  const plan = (grouped: boolean) => {
    const out = planModel(model, cluster, optionsFor(grouped));
    assert.ok(out.feasible, out.feasible ? '' : out.reason);
    return out;
  };
  const [looped, grouped] = [plan(false), plan(true)];
  assert.ok(grouped.plan.stepTimeMs < looped.plan.stepTimeMs, `${grouped.plan.stepTimeMs} vs ${looped.plan.stepTimeMs} ms`);
  assert.ok(looped.diagnostics.some((d) => /experts priced one GEMM per expert, in a loop: pretrain\.sh \(Megatron-LM without --moe-grouped-gemm: SequentialMLP/.test(d.message)), JSON.stringify(looped.diagnostics.map((d) => d.message)));
  // The code's own choice (transformers 5's default grouped_mm) is what a loop-running framework replaces: the same step as eager.
  const { expertsKernel: _kernel, expertsKernelSource: _source, ...sameFramework } = optionsFor(false);
  const eager = planModel(qwenMoe(', experts_implementation="eager"').model, cluster, sameFramework);
  assert.ok(eager.feasible);
  assert.ok(Math.abs(eager.plan.stepTimeMs - looped.plan.stepTimeMs) < 1e-6 * looped.plan.stepTimeMs, `${eager.plan.stepTimeMs} vs ${looped.plan.stepTimeMs}`);
});
