/**
 * The report's `plan.setup`: the training setup a chosen plan runs under,
 * flat (precision and why, ZeRO, recompute, micro-batching, the parallel
 * degrees), with its MFU and memory per GPU.
 */
import type { AnalyzedModel } from '../core/ir';
import type { TrainingSetup } from '../protocol/plan';
import type { LayerConfig } from './cost/configs';
import type { NodeOption } from './cost/tables';
import type { Topology } from './cost/topology';
import type { Candidate } from './evaluate';
import { modelFlopsPerSample } from './cost/modelFlops';
import { peakTflops, type PrecisionChoice } from './memory/index';
import { membersPerNode } from './search/parallel3d/sharding';
import { stageOption } from './simulator/pipeline';

type Degrees = { dp: number; tp: number; others: NonNullable<TrainingSetup['otherDegrees']> };

/**
 * The plan's data × tensor degrees: per-layer plans may mix configurations, so
 * report the one holding most of the parameters (most of the compute when
 * nothing has parameters): what a Megatron/DeepSpeed launch would be set to.
 * The other configurations are listed too, so the one line does not hide them.
 */
function degrees(options: NodeOption[]): Degrees {
  const weight = new Map<string, { c: LayerConfig; params: number; ms: number; layers: number }>();
  for (const o of options) {
    // As the layer rows report it: a replicated layer ('rep') runs on its k GPUs too.
    const c: LayerConfig = o.config;
    const key = `${c.d}x${c.k}`;
    const w = weight.get(key) ?? { c, params: 0, ms: 0, layers: 0 };
    w.params += o.memory.weights;
    w.ms += o.forwardMs + o.backwardMs;
    w.layers++;
    weight.set(key, w);
  }
  const ranked = [...weight.values()].sort((a, b) => b.params - a.params || b.ms - a.ms);
  const best = ranked[0];
  const others = ranked.slice(1).map((w) => ({ dataParallel: w.c.d, tensorParallel: w.c.k, layers: w.layers }));
  return { dp: best?.c.d ?? 1, tp: best?.c.k ?? 1, others };
}

/**
 * What a data-parallel degree that does not divide the global batch means for the run: a per-device batch is one
 * number, so `r` replicas take one sample more than the rest (or, with a padding sampler and a per-device batch of
 * the larger share, the step runs `dp × ⌈batch/dp⌉` samples). Undefined when the batch splits evenly.
 */
export function unevenSplitNote(batch: number, dp: number): string | undefined {
  const r = batch % dp;
  if (dp <= 1 || r === 0) return undefined;
  const big = Math.ceil(batch / dp);
  const take = (n: number): string => `${n} take${n === 1 ? 's' : ''}`;
  return `the batch of ${batch} does not split evenly over ${dp} data-parallel GPUs: ${take(r)} ${big} samples and ${take(dp - r)} ${big - 1}, so the step is priced at ${big} per GPU; a per-device batch of ${big} trains ${big * dp} samples a step, ${Math.floor(batch / dp) * dp} with ${big - 1}`;
}

/** GPUs in the first GPU's node: HSDP shards within a node. */
function gpusInNode(topo: Topology): number {
  const node = topo.gpus[0]?.node;
  return topo.gpus.filter((g) => g.node === node).length;
}

export function trainingSetup(c: Candidate, model: AnalyzedModel, topo: Topology, batch: number, precision: PrecisionChoice, fitsThrough?: string): TrainingSetup {
  let dp: number;
  let tp: number;
  let others: Degrees['others'];
  let microBatch: number;
  let accumulation: number;
  let stages = 1;
  if (c.pipeline) {
    const p = c.pipeline;
    stages = p.stages.length;
    const all = p.stages.flatMap((st) => st.layers.map((l) => stageOption(st, l)));
    ({ dp, tp, others } = degrees(all));
    microBatch = p.microBatch / dp;
    accumulation = p.microBatches;
  } else {
    const t = c.tables!;
    ({ dp, tp, others } = degrees(t.layers.map((_, i) => t.options[i][c.choice![i]])));
    accumulation = Math.max(1, c.setup.microSteps);
    // The largest share, as the tables price it: 128 over 5 replicas is 26 on the slowest (unevenSplitNote says so).
    microBatch = Math.ceil(Math.ceil(batch / dp) / accumulation);
  }
  const modelFlops = modelFlopsPerSample(model) * batch;
  let peak = 0;
  // The peak the FLOPs run at: TF32's for the share of fp32 convolutions that run on TF32 tensor cores.
  const tf32Share = precision.tf32FlopShare ?? 0;
  const peakOf = (gpu: (typeof topo.gpus)[number]): number => {
    const own = peakTflops(gpu, precision.precision).tflops;
    return tf32Share > 0 ? 1 / (tf32Share / peakTflops(gpu, 'tf32').tflops + (1 - tf32Share) / own) : own;
  };
  for (let d = 0; d < c.n; d++) peak += peakOf(topo.gpus[d]) * 1e12;
  const seconds = c.summary.stepTimeMs / 1000;
  const s: TrainingSetup = {
    precision: precision.precision,
    precisionReason: precision.reason,
    ...(precision.amp ? { ampStyle: precision.amp.style, ampStyleReason: precision.amp.reason } : {}),
    zeroStage: dp > 1 ? c.setup.zeroStage : 0,
    hybridShard: dp > 1 && c.setup.hybridShard,
    ...(dp > 1 && c.setup.zeroStage > 0 ? { shardGroup: c.setup.hybridShard ? membersPerNode(gpusInNode(topo), tp, dp) : dp } : {}),
    recompute: c.setup.recompute,
    cpuOffload: c.setup.cpuOffload,
    paramOffload: !!c.setup.paramOffload,
    microBatch: Number.isInteger(microBatch) ? microBatch : Number(microBatch.toFixed(3)),
    gradientAccumulation: accumulation,
    dataParallel: dp,
    tensorParallel: tp,
    pipelineStages: stages,
    virtualStages: 1,
    contextParallel: 1,
    expertParallel: 1,
    sequenceParallel: false,
    ...(others.length ? { otherDegrees: others } : {}),
    mfu: seconds > 0 && peak > 0 ? modelFlops / seconds / peak : 0,
    memoryPerGpu: c.memory,
    ...(c.hostBytes ? { hostMemoryPerGpu: c.hostBytes } : {}),
  };
  if (fitsThrough) s.fitsThrough = fitsThrough;
  return s;
}
