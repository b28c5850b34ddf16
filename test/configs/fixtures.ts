/**
 * Hand-written plan reports matching src/protocol/plan.ts, so the config room
 * can be tested without the planner. Numbers are chosen to make the messages
 * checkable: on 4 GPUs the AlexNet-like plan reaches 98% of the 8-GPU
 * throughput at 53% of its energy per sample.
 */
import type { LayerPlan, PlanReport, ScalingPoint } from '../../src/protocol/plan';

function layer(name: string, type: string, line: number, strategy: LayerPlan['strategy'], devices: number[], extra: Partial<LayerPlan> = {}): LayerPlan {
  const model = strategy === 'model' ? devices.length : 1;
  return {
    name, line, type, strategy,
    dataDegree: strategy === 'model' ? 1 : devices.length,
    modelDegree: model,
    devices, stage: 0,
    forwardMs: 1, backwardMs: 2, allreduceBytes: strategy === 'data' ? 1e6 : 0, allreduceMs: strategy === 'data' ? 0.5 : 0,
    transferMs: 0, memoryBytesPerGpu: 1e8, params: 1e6, activationBytes: 1e5,
    costSource: { kind: 'analytical' },
    reason: strategy === 'model' ? 'all-reduce 151 MB ≫ compute 2 ms' : 'compute dominates',
    ...extra,
  };
}

const point = (gpus: number, samplesPerSec: number, energyJPerSample: number, summary = 'data+model'): ScalingPoint =>
  ({ gpus, feasible: true, samplesPerSec, stepTimeMs: (128 / samplesPerSec) * 1000, energyJPerSample, summary });

export function alexnetPlan(overrides: Partial<PlanReport> = {}): PlanReport {
  const four = [0, 1, 2, 3];
  return {
    feasible: true,
    model: 'AlexNet',
    file: 'examples/pytorch/alexnet.py',
    batch: 128,
    objective: 'efficiency',
    strategies: 'hybrid',
    optimizer: 'sgd',
    cluster: { name: 'pcie4', gpus: 8, nodes: 1, gpuNames: Array(8).fill('NVIDIA A100'), source: 'preset:pcie4' },
    plan: {
      gpus: 4, stepTimeMs: 365.7, samplesPerSec: 350, energyJPerSample: 5.3,
      memoryPerGpuBytes: [2e9, 2e9, 2e9, 2e9],
      layers: [
        layer('conv1', 'Conv2d', 12, 'data', four),
        layer('conv2', 'Conv2d', 13, 'data', four),
        layer('fc6', 'Linear', 20, 'model', four, { splitDim: 'outputs' }),
        layer('fc7', 'Linear', 21, 'model', four, { splitDim: 'outputs' }),
        layer('fc8', 'Linear', 22, 'data', four),
      ],
    },
    baselines: {
      singleGpu: { gpus: 1, feasible: true, samplesPerSec: 100, stepTimeMs: 1280, energyJPerSample: 4 },
      dataParallel: { gpus: 4, feasible: true, samplesPerSec: 240, stepTimeMs: 533, energyJPerSample: 6 },
      owt: { gpus: 4, feasible: true, samplesPerSec: 330, stepTimeMs: 388, energyJPerSample: 5.5 },
    },
    scaling: [point(1, 100, 4, 'data'), point(2, 190, 4.4), point(4, 350, 5.3), point(8, 357, 10)],
    timeline: [],
    search: { method: 'chain-dp', exact: true, configurationsEvaluated: 120, elapsedMs: 3 },
    costSources: { analytical: 5 },
    diagnostics: [],
    ...overrides,
  };
}

/** The same model, planned pure data parallel on all 8 GPUs. */
export function dataParallelPlan(gpus = 8): PlanReport {
  const base = alexnetPlan();
  const devices = Array.from({ length: gpus }, (_, i) => i);
  return {
    ...base,
    objective: 'throughput',
    strategies: 'dp',
    plan: { ...base.plan, gpus, samplesPerSec: 357, layers: base.plan.layers.map((l) => ({ ...l, strategy: 'data', dataDegree: gpus, modelDegree: 1, devices, splitDim: undefined })) },
  };
}

/** 16 GPUs over two 8-GPU machines. */
export function twoNodePlan(): PlanReport {
  const base = dataParallelPlan(16);
  return {
    ...base,
    cluster: { name: 'two-dgx', gpus: 16, nodes: 2, gpuNames: Array(16).fill('NVIDIA H100'), source: 'file:cluster.json' },
    scaling: [...base.scaling, point(16, 650, 11, 'data')],
    plan: { ...base.plan, samplesPerSec: 650 },
  };
}

/** Two pipeline stages of two GPUs each. */
export function pipelinePlan(): PlanReport {
  const base = alexnetPlan();
  const stage = (n: string, t: string, line: number, s: number): LayerPlan =>
    ({ ...base.plan.layers[0]!, name: n, type: t, line, stage: s, devices: s === 0 ? [0, 1] : [2, 3], dataDegree: 2 });
  return {
    ...base,
    plan: {
      ...base.plan,
      layers: [stage('features.0', 'Conv2d', 10, 0), stage('features.3', 'Conv2d', 11, 0), stage('classifier.1', 'Linear', 15, 1)],
      pipeline: { stages: 2, microBatches: 4, schedule: '1f1b', bubbleFraction: 0.2 },
    },
  };
}
