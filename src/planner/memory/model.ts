/**
 * The memory model: bytes per GPU held by weights, gradients, optimizer
 * state, saved activations and workspace, under a training setup (precision,
 * ZeRO/FSDP stage, HSDP, activation recompute, micro-batch, CPU offload).
 *
 * Model states follow the ZeRO paper (Rajbhandari et al., SC 2020, §3.1 and
 * Figure 1): with Ψ parameters, mixed-precision Adam holds 2Ψ (fp16/bf16
 * weights) + 2Ψ (gradients) + KΨ with K = 12 (fp32 master weights, momentum
 * and variance), i.e. 16Ψ; stage 1 divides the K part by the data-parallel
 * degree N_d, stage 2 also the gradients, stage 3 also the weights:
 *   (2 + 2 + K)Ψ → (4 + K/N_d)Ψ → (2 + (2+K)/N_d)Ψ → (2 + 2 + K)Ψ/N_d.
 * HSDP (PyTorch FSDP HYBRID_SHARD; ZeRO++ hpZ) shards within a node only, so
 * N_d is the part of the data-parallel group that shares a node.
 */
import type { AmpStyle, MemoryBreakdown, OptimizerKind, Precision, RecomputeMode, ZeroStage } from '../../protocol/plan';
import { optimizerStateBytes } from './optimizerState';
import { precisionBytes } from './precision';

/** Everything the memory model needs to know about how training runs. */
export interface MemorySetup {
  precision: Precision;
  /** How 16-bit training holds its tensors (precisionBytes); absent: master weights. */
  ampStyle?: AmpStyle;
  optimizer: OptimizerKind;
  zeroStage: ZeroStage;
  hybridShard: boolean;
  recompute: RecomputeMode;
  cpuOffload: boolean;
  /** Parameters and gradients in host memory too (ZeRO-Infinity / FSDP CPUOffload); implies cpuOffload. */
  paramOffload?: boolean;
  /**
   * ZeRO-2/3 accumulating over micro-steps under FSDP's no_sync (collectiveTiming.ts accumulatesUnsharded): every
   * GPU holds the full gradients of the parameters it trains until the last micro-step's reduce-scatter, on the GPU
   * even under offload. torch FSDP1's no_sync(): "FSDP will accumulate the full model gradients (instead of gradient
   * shards) until the eventual sync … When used with CPU offloading, the gradients will not be offloaded to CPU when
   * inside the context manager" (fully_sharded_data_parallel.py); FSDP2's set_requires_gradient_sync(False) keeps them
   * on the unsharded parameters (_fsdp_param_group.py post_backward). Held in the precision's gradient dtype: FSDP1's
   * autograd gradient, FSDP2's reduce_dtype where its MixedPrecisionPolicy sets one wider than param_dtype (not read).
   */
  unshardedGradients?: boolean;
}

/** Model-state bytes per parameter before any sharding (the ZeRO paper's 2 + 2 + K). */
export interface StateBytesPerParam {
  /** Of a parameter autocast casts (a Linear's or convolution's weight): its 16-bit copy included. */
  weights: number;
  gradients: number;
  /** fp32 master copy (mixed precision) plus the optimizer's state buffers (optimizerState.ts): the paper's K. */
  optimizer: number;
}

export function stateBytesPerParam(precision: Precision, optimizer: OptimizerKind, style?: AmpStyle): StateBytesPerParam {
  const b = precisionBytes(precision, style);
  return { weights: b.weight + b.castCopy, gradients: b.gradient, optimizer: b.master + optimizerStateBytes(optimizer, b.optimizerState) };
}

export interface ModelStateBytes {
  weights: number;
  gradients: number;
  optimizer: number;
}

/**
 * Per-GPU model-state bytes of `params` parameters (already divided by tensor
 * or pipeline parallelism) on a data-parallel group whose ZeRO shards span
 * `shards` GPUs. CPU offload (ZeRO-Offload, Ren et al., USENIX ATC 2021, §4:
 * "offloads the gradients, optimizer states and optimizer computation to CPU,
 * while keeping the parameters … on GPU") moves the optimizer part (master
 * weights and moments) and the reduced gradients to host memory;
 * parameter offload (ZeRO-Infinity's offload_param, Rajbhandari et al., SC 2021
 * §5; FSDP's CPUOffload(offload_params=True)) moves the weight shards and the
 * reduced gradient shards there too, so none stay on the GPU between uses:
 * what a layer needs is fetched into the gathered-unit workspace (memoryPerGpu).
 * `castParams`: how many of them autocast casts to 16 bits (all when not said);
 * only those hold a cast copy.
 */
export function modelStateBytes(params: number, setup: MemorySetup, shards: number, castParams = params): ModelStateBytes {
  const per = stateBytesPerParam(setup.precision, setup.optimizer, setup.ampStyle);
  const castCopy = precisionBytes(setup.precision, setup.ampStyle).castCopy;
  const n = Math.max(1, shards);
  const z = shards > 1 ? setup.zeroStage : 0;
  const cast = Math.min(Math.max(0, castParams), params);
  const unsharded = z >= 2 && !!setup.unshardedGradients;
  if (setup.paramOffload) return { weights: 0, gradients: unsharded ? params * per.gradients : 0, optimizer: 0 };
  return {
    weights: (params * (per.weights - castCopy) + cast * castCopy) / (z >= 3 ? n : 1),
    gradients: unsharded ? params * per.gradients : setup.cpuOffload ? 0 : (params * per.gradients) / (z >= 2 ? n : 1),
    optimizer: setup.cpuOffload ? 0 : (params * per.optimizer) / (z >= 1 ? n : 1),
  };
}

/**
 * Bytes one GPU's rank keeps in host memory for `params` parameters (and `frozenBytes` of frozen weights held on the
 * GPU without offload): what offload takes off the GPU, as the GPU would have held it (sharded alike).
 */
export function offloadedHostBytes(params: number, setup: MemorySetup, shards: number, frozenBytes = 0, castParams = params): number {
  if (!setup.cpuOffload && !setup.paramOffload) return 0;
  const total = (s: ModelStateBytes) => s.weights + s.gradients + s.optimizer;
  // The host holds the reduced shards whether or not the micro-steps before accumulated unsharded on the GPU.
  const offloaded = { ...setup, unshardedGradients: false };
  const kept = { ...offloaded, cpuOffload: false, paramOffload: false };
  return total(modelStateBytes(params, kept, shards, castParams)) - total(modelStateBytes(params, offloaded, shards, castParams)) + (setup.paramOffload ? frozenBytes : 0);
}

/**
 * Per-GPU bytes of frozen parameters (`requires_grad=False`; core/frozenParameters.ts): their weights alone, at the
 * dtype the setup holds weights in, with no gradient, master copy or optimizer state. Autocast caches its 16-bit
 * copy only of leaf tensors that require grad (aten/src/ATen/autocast_mode.cpp, cached_cast), so a frozen weight
 * holds none between uses. ZeRO-3 / FSDP shard them with the rest of the flat parameters.
 */
export function frozenWeightBytes(frozenParams: number, setup: MemorySetup, shards: number, quantized?: QuantizedShare): number {
  // Offloaded parameters include the frozen ones: FSDP and DeepSpeed offload whole flat parameters.
  if (setup.paramOffload) return 0;
  const z = shards > 1 ? setup.zeroStage : 0;
  return frozenHeldBytes(frozenParams, precisionBytes(setup.precision, setup.ampStyle).weight, quantized) / (z >= 3 ? Math.max(1, shards) : 1);
}

/** Of some frozen parameters, those stored quantized (LayerWorkload.quantized) and their bytes. */
export interface QuantizedShare {
  params: number;
  bytes: number;
}

/**
 * Bytes of frozen weights before any sharding: `weightBytes` each, but those stored quantized
 * (core/quantizedWeights.ts: bitsandbytes' 4-bit or int8 with their constants) at their own size.
 */
export function frozenHeldBytes(frozenParams: number, weightBytes: number, quantized?: QuantizedShare): number {
  const q = quantized && quantized.params > 0 ? quantized : { params: 0, bytes: 0 };
  return Math.max(0, frozenParams - q.params) * weightBytes + q.bytes;
}

/**
 * How many GPUs a ZeRO stage shards over: the whole data-parallel group, or
 * under HSDP only its members inside one node.
 */
export function shardCount(dataParallel: number, dataParallelPerNode: number, hybridShard: boolean): number {
  return hybridShard ? Math.max(1, Math.min(dataParallel, dataParallelPerNode)) : Math.max(1, dataParallel);
}

/**
 * Korthikanti et al. 2022 ("Reducing Activation Recomputation in Large
 * Transformer Models", Table 2 and §4): activation bytes of one transformer
 * layer with 16-bit activations, sequence s, micro-batch b, hidden h, heads a,
 * tensor-parallel t:
 * - none:       sbh(10 + 24/t + 5as/(ht)), or with sequence parallel sbh(34 + 5as/h)/t
 * - selective:  sbh(10 + 24/t),            or with sequence parallel 34sbh/t
 * - full:       2sbh (only the layer input), /t with sequence parallel
 * fp32 activations double the 16-bit terms (the 1-byte dropout masks stay; ignored here).
 */
export interface TransformerShape {
  seq: number;
  microBatch: number;
  hidden: number;
  heads: number;
}

export function transformerLayerActivationBytes(x: TransformerShape, opts: { tensorParallel?: number; sequenceParallel?: boolean; recompute: RecomputeMode; activationBytes?: number }): number {
  const { seq: s, microBatch: b, hidden: h, heads: a } = x;
  const t = Math.max(1, opts.tensorParallel ?? 1);
  const sp = !!opts.sequenceParallel && t > 1;
  const scale = (opts.activationBytes ?? 2) / 2;
  const sbh = s * b * h;
  let bytes: number;
  if (opts.recompute === 'full') bytes = (2 * sbh) / (sp ? t : 1);
  else if (opts.recompute === 'selective') bytes = sp ? (34 * sbh) / t : sbh * (10 + 24 / t);
  else bytes = sp ? (sbh * (34 + (5 * a * s) / h)) / t : sbh * (10 + 24 / t + (5 * a * s) / (h * t));
  return bytes * scale;
}

/** Sum of a breakdown's parts, filled in. */
export function breakdown(parts: Omit<MemoryBreakdown, 'total'>): MemoryBreakdown {
  return { ...parts, total: parts.weights + parts.gradients + parts.optimizer + parts.activations + parts.workspace };
}

export function addBreakdown(a: Omit<MemoryBreakdown, 'total'>, b: Omit<MemoryBreakdown, 'total'>): Omit<MemoryBreakdown, 'total'> {
  return { weights: a.weights + b.weights, gradients: a.gradients + b.gradients, optimizer: a.optimizer + b.optimizer, activations: a.activations + b.activations, workspace: a.workspace + b.workspace };
}
