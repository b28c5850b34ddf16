/**
 * A hand-written plan report for an 8B Llama (Hugging Face module names) on
 * 8× H100 (preset h100x8), in the shape src/protocol/plan.ts gives `plan.setup`.
 * The planner that fills `setup` lands on other branches; the config room is
 * tested against the contract with this fixture. Numbers follow Llama-3-8B:
 * 32 blocks, hidden 4096, MLP 14336, GQA with 8 KV heads, vocabulary 128256.
 */
import type { LayerPlan, PlanReport, TrainingSetup } from '../../src/protocol/plan';

const HIDDEN = 4096;
const MLP = 14336;
const KV = 1024;
const VOCAB = 128256;

function linear(name: string, line: number, inF: number, outF: number, tp: number, split: LayerPlan['splitDim'], devices: number[]): LayerPlan {
  return {
    name, line, type: 'Linear', strategy: tp > 1 ? 'hybrid' : 'data', dataDegree: devices.length / tp, modelDegree: tp, devices, stage: 0,
    ...(tp > 1 ? { splitDim: split } : {}),
    forwardMs: 1, backwardMs: 2, allreduceBytes: 0, allreduceMs: 0, transferMs: 0,
    memoryBytesPerGpu: (inF * outF * 18) / devices.length, params: inF * outF, activationBytes: 1e6,
    costSource: { kind: 'analytical' }, reason: 'compute dominates',
  };
}

export function llamaPlan(setup: Partial<TrainingSetup> = {}, batch = 128): PlanReport {
  const devices = [0, 1, 2, 3, 4, 5, 6, 7];
  const tp = setup.tensorParallel ?? 1;
  const layers: LayerPlan[] = [{ ...linear('model.embed_tokens', 60, VOCAB, HIDDEN, 1, undefined, devices), type: 'Embedding' }];
  for (let i = 0; i < 32; i++) {
    const p = `model.layers.${i}`;
    layers.push(
      linear(`${p}.self_attn.q_proj`, 20, HIDDEN, HIDDEN, tp, 'heads', devices),
      linear(`${p}.self_attn.k_proj`, 21, HIDDEN, KV, tp, 'heads', devices),
      linear(`${p}.self_attn.v_proj`, 22, HIDDEN, KV, tp, 'heads', devices),
      linear(`${p}.self_attn.o_proj`, 23, HIDDEN, HIDDEN, tp, 'inputs', devices),
      linear(`${p}.mlp.gate_proj`, 40, HIDDEN, MLP, tp, 'outputs', devices),
      linear(`${p}.mlp.up_proj`, 41, HIDDEN, MLP, tp, 'outputs', devices),
      linear(`${p}.mlp.down_proj`, 42, MLP, HIDDEN, tp, 'inputs', devices),
    );
  }
  layers.push(linear('lm_head', 70, HIDDEN, VOCAB, tp, 'outputs', devices));
  const full: TrainingSetup = {
    precision: 'bf16', precisionReason: 'H100 has bf16 tensor cores', zeroStage: 3, hybridShard: false, recompute: 'selective', cpuOffload: false, paramOffload: false,
    microBatch: 2, gradientAccumulation: 8, dataParallel: 8 / tp, tensorParallel: tp, pipelineStages: 1, virtualStages: 1, contextParallel: 1, expertParallel: 1,
    sequenceParallel: tp > 1, mfu: 0.41,
    memoryPerGpu: { weights: 4e9, gradients: 2e9, optimizer: 12e9, activations: 38e9, workspace: 2e9, total: 58e9 },
    ...setup,
  };
  const step = 2100;
  return {
    feasible: true, model: 'LlamaForCausalLM', file: 'llama.py', batch, objective: 'throughput', strategies: 'all', optimizer: 'adam',
    cluster: { name: 'h100x8', gpus: 8, nodes: 1, gpuNames: Array(8).fill('NVIDIA H100 SXM'), source: 'preset:h100x8' },
    plan: { gpus: 8, stepTimeMs: step, samplesPerSec: (batch / step) * 1000, energyJPerSample: 40, memoryPerGpuBytes: Array(8).fill(full.memoryPerGpu.total), layers, setup: full },
    baselines: {
      singleGpu: { gpus: 1, feasible: false, reason: 'out of memory', samplesPerSec: 0, stepTimeMs: 0, energyJPerSample: 0 },
      dataParallel: { gpus: 8, feasible: false, reason: 'out of memory', samplesPerSec: 0, stepTimeMs: 0, energyJPerSample: 0 },
      owt: { gpus: 8, feasible: false, reason: 'out of memory', samplesPerSec: 0, stepTimeMs: 0, energyJPerSample: 0 },
    },
    scaling: [{ gpus: 8, feasible: true, samplesPerSec: (batch / step) * 1000, stepTimeMs: step, energyJPerSample: 40, summary: 'data' }],
    timeline: [], search: { method: 'chain-dp', exact: true, configurationsEvaluated: 10, elapsedMs: 1 }, costSources: { analytical: layers.length }, diagnostics: [],
  };
}
