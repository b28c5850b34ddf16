/**
 * Fidelity: the planner's predictions against published training
 * measurements. Each row names the case, the published number with its
 * source, the prediction and prediction ÷ published. A row the planner
 * cannot evaluate yet (a precision it does not model, pins it does not
 * honour, a plan that does not fit) says so instead of printing a number.
 * Goal (issue 12): every row within ±20%, the median within 10%.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AnalyzedModel, AnalyzeOptions } from '../src/core/ir';
import { analyzeSource } from '../src/frontends/index';
import { lengthMix, microBatchOf, parseBatching, parseClusterSpec, parseLengthHistogram, pinsOfSetup, planModel, priceOverLengths, resolveCluster, type ClusterSpec, type LengthHistogram } from '../src/planner/index';
import type { ParallelPins, Precision } from '../src/protocol/plan';
import type { PlanOptions } from '../src/protocol/planOptions';
import { pending, type Row } from './fidelityRows';
import { megatronMoeRows } from './megatronMoe';

const root = join(__dirname, '..');

async function exampleModel(file: string, name?: string, source?: string, options: AnalyzeOptions = {}): Promise<AnalyzedModel> {
  const r = await analyzeSource(file, source ?? readFileSync(join(root, file), 'utf8'), options);
  const m = name ? r.models.find((x) => x.name === name) : r.models[0];
  if (!m) throw new Error(`no model ${name ?? ''} in ${file}`);
  return m;
}

/** nanoGPT's model file with GPTConfig's defaults replaced: the Megatron configurations (vocabulary 51,200, sequence 2,048). */
async function gpt(layers: number, hidden: number, heads: number): Promise<AnalyzedModel> {
  const file = 'examples/pytorch/gpt.py';
  let src = readFileSync(join(root, file), 'utf8');
  const set = (key: string, v: number) => (src = src.replace(new RegExp(`(${key}: int = )\\d+`), `$1${v}`));
  set('block_size', 2048);
  set('vocab_size', 51200);
  set('n_layer', layers);
  set('n_head', heads);
  set('n_embd', hidden);
  // Megatron-LM's --hidden-dropout and --attention-dropout default to 0.1 (arguments.py); nanoGPT's 0.0 keeps no masks.
  src = src.replace(/(dropout: float = )[\d.]+/, '$10.1');
  // The forward takes `idx` of any length ≤ block_size; Megatron trains on full 2,048-token sequences (as `--seq-len 2048`).
  return exampleModel(file, undefined, src, { sequenceLength: 2048 });
}

/** Selene (Megatron-LM's cluster): DGX A100 nodes, NVSwitch inside, 8 × 200 Gb/s HDR InfiniBand per node (25 GB/s per GPU). */
function selene(nodes: number): ClusterSpec {
  const a100 = resolveCluster('a100x8').gpus[0];
  const { index: _i, node: _n, ...gpu } = a100;
  return parseClusterSpec({ name: `${nodes}x DGX A100 (HDR IB)`, nodes, gpusPerNode: 8, gpu, intraNode: { bandwidthGBs: 300, latencyUs: 3, name: 'nvlink' }, interNode: { bandwidthGBs: 25, latencyUs: 5, name: 'ib' } }, 'bench:selene');
}

/** DGX-1 with the 32 GB V100 (DeepLearningExamples' BERT V100 rows): the 16 GB preset's GPU and links with its memory doubled (V100 datasheet: same clocks and 900 GB/s). */
function dgx1V100x32GB(): ClusterSpec {
  const base = resolveCluster('dgx1-v100');
  const { index: _i, node: _n, ...gpu } = base.gpus[0];
  return parseClusterSpec({ name: 'DGX-1 (8x V100 SXM2 32GB)', nodes: 1, gpusPerNode: 8, gpu: { ...gpu, name: 'Tesla V100-SXM2-32GB', memoryGB: 32 }, intraNode: base.intraNode, interNode: base.interNode }, 'bench:dgx1-32gb');
}

/** DGX A100 with the 40 GB A100 (the 20.06 BERT rows): the 80 GB preset's GPU with the 40 GB part's memory and 1,555 GB/s (A100 datasheet). */
function dgxA100x40GB(): ClusterSpec {
  const base = resolveCluster('a100x8');
  const { index: _i, node: _n, ...gpu } = base.gpus[0];
  return parseClusterSpec({ name: 'DGX A100 (8x A100 SXM4 40GB)', nodes: 1, gpusPerNode: 8, gpu: { ...gpu, name: 'A100-SXM4-40GB', memoryGB: 40, memoryBandwidthGBs: 1555 }, intraNode: base.intraNode, interNode: base.interNode }, 'bench:dgx-a100-40gb');
}

/**
 * BERT-large as DeepLearningExamples pre-trains it: bert_config.json (24 layers, hidden 1024, 16 heads,
 * intermediate 4096, 512 positions, 2 token types, vocab 30522), whose vocabulary run_pretraining.py pads to a
 * multiple of 8 (30528), built by WAP's Hugging Face catalogue as transformers' BertForPreTraining.
 * One difference stays: DLE's "dense sequence output" (on unless --no_dense_sequence_output) runs the MLM head
 * only on the masked tokens (≤ 20 of 128, ≤ 80 of 512); BertForPreTraining runs it on every token, ~9% more FLOPs.
 */
async function bertLarge(seq: number): Promise<AnalyzedModel> {
  const src = [
    'from transformers import BertConfig, BertForPreTraining',
    'config = BertConfig(vocab_size=30528, hidden_size=1024, num_hidden_layers=24, num_attention_heads=16, intermediate_size=4096, max_position_embeddings=512, type_vocab_size=2)',
    'model = BertForPreTraining(config)',
    '',
  ].join('\n');
  // The config's 512 positions are the assumed length; DLE's phase 1 trains on 128 (as `--seq-len 128`).
  return exampleModel('bench/bert_large.py', 'model', src, { sequenceLength: seq });
}

/** A Llama decoder as transformers' LlamaForCausalLM builds it (WAP's Hugging Face catalogue), at `seq` tokens. */
async function llama(hidden: number, intermediate: number, layers: number, heads: number, kvHeads: number, vocab: number, seq: number): Promise<AnalyzedModel> {
  const src = [
    'from transformers import LlamaConfig, LlamaForCausalLM',
    `config = LlamaConfig(vocab_size=${vocab}, hidden_size=${hidden}, intermediate_size=${intermediate}, num_hidden_layers=${layers}, num_attention_heads=${heads}, num_key_value_heads=${kvHeads}, max_position_embeddings=${seq})`,
    'model = LlamaForCausalLM(config)',
    '',
  ].join('\n');
  return exampleModel('bench/llama.py', 'model', src, { sequenceLength: seq });
}

/**
 * Tokens/s per GPU of torchtitan's FSDP2 runs on 64 A100 80GB: ZeRO-3 over all 64 ranks, `localBatch` sequences
 * per GPU, bf16, AdamW, SDPA (fused) attention. docs/performance.md does not name the network: 8 nodes of DGX A100
 * (8 × 200 Gb/s HDR per node, as Selene) are assumed. torchtitan reduce-scatters gradients in fp32 by default
 * ([training] mixed_precision_reduce), which the plan prices (gradientReduceInFp32), as its config reader says.
 */
function torchtitanTokensPerSec(model: () => Promise<AnalyzedModel>, seq: number, localBatch: number, recompute: 'none' | 'full'): () => Promise<number | string> {
  return async () => {
    const gpus = 64;
    const opts: PlanOptions = { batch: gpus * localBatch, objective: 'throughput', strategies: 'all', optimizer: 'adam', gpus, maxGpus: gpus, precision: 'bf16', precisionSource: 'bench', gradientReduceInFp32: true, gradientReduceSource: "torchtitan's mixed_precision_reduce, float32 by default", attentionKernel: 'fused', pins: { dataParallel: gpus, tensorParallel: 1, pipelineStages: 1, contextParallel: 1, zeroStage: 3, microBatch: localBatch, recompute } };
    const out = planModel(await model(), selene(gpus / 8), opts);
    return pending(out, opts) ?? (out.feasible ? (gpus * localBatch * seq) / (out.plan.stepTimeMs / 1000) / gpus : 0);
  };
}

/**
 * `format`: the run's memory format. DeepLearningExamples' configs.yml sets `memory_format: nhwc` for its AMP
 * runs only; FP32 and TF32 train in PyTorch's default NCHW (AlexNet's WAP runs too).
 */
function imagesPerSec(model: () => Promise<AnalyzedModel>, cluster: () => ClusterSpec, batch: number, gpus: number, precision: Precision, format: 'channels_first' | 'channels_last' = 'channels_first'): () => Promise<number | string> {
  return async () => {
    // As the published runs trained: plain DDP, whole per-GPU batch at once, no recompute. DLE's ConvNets AMP is
    // native AMP (image_classification/training.py: `with autocast(enabled=self.amp)` over the fp32 model).
    const opts: PlanOptions = { batch, objective: 'throughput', strategies: 'dp', optimizer: 'momentum', gpus, maxGpus: gpus, precision, precisionSource: 'bench', ampStyle: 'autocast', ampStyleSource: 'bench', memoryFormat: format, pins: { zeroStage: 0, recompute: 'none', microBatch: batch / gpus } };
    const out = planModel(await model(), cluster(), opts);
    const point = out.scaling[gpus - 1];
    // The memory model is a separate question: an over-full plan still has a simulated step time, shown with the reason.
    if (!out.feasible && point && point.stepTimeMs > 0) {
      const note = out.diagnostics.find((x) => /not modelled/.test(x.message));
      if (note) return `pending (${note.message.replace(/;.*$/, '')})`;
      return `${Math.round((batch * 1000) / point.stepTimeMs)} (memory model: ${out.reason.replace(/^nothing fits on \d+ GPUs?: the smallest plan /, '')})`;
    }
    return pending(out, opts) ?? (out.feasible ? out.plan.samplesPerSec : 0);
  };
}

/**
 * Sequences/s of DLE's BERT pre-training: DDP with the allreduce after gradient accumulation, `microBatch`
 * sequences per GPU per pass (the README's "Batch size / GPU") and `accumulated` per GPU per optimizer step
 * (run_pretraining.py divides train_batch_size by gradient_accumulation_steps). LAMB keeps Adam's two moments
 * (You et al., ICLR 2020). DLE's BertSelfAttention is eager (matmul, softmax, dropout, matmul: modeling.py), so
 * the scores go through HBM; no activation checkpointing (--checkpoint_activations is off in the benchmark).
 */
function sequencesPerSec(seq: number, cluster: () => ClusterSpec, microBatch: number, accumulated: number, gpus: number, precision: Precision, lengths: 'padded' | 'lddl' = 'padded'): () => Promise<number | string> {
  return async () => {
    const batch = accumulated * gpus;
    // Master weights: DLE's run_pretraining.sh passes --allreduce_post_accumulation_fp16, under which
    // run_pretraining.py calls model.half() without autocast and FusedLAMBAMP keeps the fp32 copy (20.06: apex O2).
    const opts: PlanOptions = { batch, objective: 'throughput', strategies: 'dp', optimizer: 'adam', gpus, maxGpus: gpus, precision, precisionSource: 'bench', ampStyle: 'master-weights', ampStyleSource: 'bench', attentionKernel: 'unfused', pins: { zeroStage: 0, recompute: 'none', microBatch } };
    const out = planModel(await bertLarge(seq), cluster(), opts);
    const why = pending(out, opts);
    if (why || !out.feasible) return why ?? 0;
    if (lengths === 'padded') return out.plan.samplesPerSec;
    // As `wap plan --seq-lengths bench/data/wikipedia-bert-phase2-lengths.json --batching bins:64 --pad-multiple 8`.
    const mix = lengthMix(wikipediaLengths(), LDDL_BATCHING, microBatchOf(out), seq);
    const repriced = await priceOverLengths(out, mix, LDDL_BATCHING, async (tokens) => planModel(await bertLarge(tokens), cluster(), { ...opts, gpus: out.plan.gpus, pins: pinsOfSetup(out.plan.setup!) }));
    return repriced.samplesPerSec;
  };
}

/**
 * The lengths of the Wikipedia pre-training set at 512 tokens (Krell et al., 2021; 16.3 M sequences, mean 255.8
 * tokens). DLE's phase 2 builds its set from Wikipedia with the same recipe (create_pretraining_data's
 * short_seq_prob 0.1, 512 tokens), through LDDL.
 */
function wikipediaLengths(): LengthHistogram {
  return parseLengthHistogram(JSON.parse(readFileSync(join(root, 'bench/data/wikipedia-bert-phase2-lengths.json'), 'utf8')));
}

/** LDDL as DLE runs phase 2: bins of 64 tokens (the Jan 2022 changelog), each batch padded to its longest rounded up to 8 (lddl/torch/bert.py's sequence_length_alignment). */
const LDDL_BATCHING = parseBatching('bins:64', 8);

/** Narayanan et al. (SC'21) eq. 3: FLOPs per iteration with activation recompute, 96·B·s·l·h²·(1 + s/6h + V/16lh). */
function megatronFlops(batch: number, seq: number, layers: number, hidden: number, vocab: number): number {
  return 96 * batch * seq * layers * hidden * hidden * (1 + seq / (6 * hidden) + vocab / (16 * layers * hidden));
}

/** Model FLOPs per iteration, no recompute (Korthikanti et al., 2022, §6.5: the numerator of MFU), 72·B·s·l·h²·(1 + s/6h + V/12lh). */
function modelFlops(batch: number, seq: number, layers: number, hidden: number, vocab: number): number {
  return 72 * batch * seq * layers * hidden * hidden * (1 + seq / (6 * hidden) + vocab / (12 * layers * hidden));
}

/** As megatron(), in the unit the paper reports: the step's throughput in FLOP/s per GPU, hardware (recompute counted) or model FLOPs. */
function megatron(layers: number, hidden: number, heads: number, gpus: number, batch: number, pins: ParallelPins, flops: 'hardware' | 'mfu' = 'hardware'): () => Promise<number | string> {
  return async () => {
    // Megatron-LM (2021) ran eager attention: scores and probabilities go through HBM (no FlashAttention yet).
    const opts: PlanOptions = { batch, objective: 'throughput', strategies: 'all', optimizer: 'adam', gpus, maxGpus: gpus, precision: 'fp16', precisionSource: 'bench', pins, attentionKernel: 'unfused' };
    // Probe first on a small model: a planner that ignores pins would search thousands of GPUs for nothing.
    // Its blocks must hold most FLOPs (a 64-wide toy is all LM head and goes to the per-layer search).
    const probe = planModel(await gpt(8, 2048, 16), resolveCluster('a100x8'), { ...opts, gpus: 2, maxGpus: 2, batch: 2, pins: { tensorParallel: 2 } });
    const why = probe.diagnostics.find((x) => /not honoured/.test(x.message));
    if (why) return 'pending pins (search3d)';
    // Table 1's runs predate sequence parallelism (Korthikanti et al., 2022) and sharded optimizer state in Megatron-LM.
    const cluster = selene(gpus / 8);
    const out = planModel(await gpt(layers, hidden, heads), cluster, { ...opts, pins: { zeroStage: 0, sequenceParallel: false, ...pins } });
    const p = pending(out, opts);
    if (p) return p;
    if (!out.feasible) return 'infeasible';
    const perGpu = (f: number) => f / (out.plan.stepTimeMs / 1000) / gpus / 1e12;
    if (flops === 'mfu') return (100 * perGpu(modelFlops(batch, 2048, layers, hidden, 51200))) / cluster.gpus[0].peakTflops!.fp16!;
    return perGpu(megatronFlops(batch, 2048, layers, hidden, 51200));
  };
}

const WAP = 'Shin et al., ICASSP 2019 (WAP), Table 2';
const TORCHTITAN = 'pytorch/torchtitan docs/performance.md: FSDP2 on 64 A100 80GB, WPS (tokens/s per GPU); network not stated (DGX A100 HDR assumed)';
/**
 * The abstract's 530B run: 2,240 A100s at 54.2% MFU with sequence parallelism and selective recompute, 42.1% with
 * full recompute. The layout is MT-NLG's on the same 2,240 GPUs (Smith et al., 2022: TP8 × PP35 × DP8, micro-batch 1,
 * global batch 1,920; 105 layers, hidden 20480, 128 heads). At global batch 2,240 (1F1B interleaving then fits,
 * 280 micro-batches a multiple of 35) the predictions are 64.4% and 45.5%, ratios 1.19 and 1.08.
 */
const KORTHIKANTI = 'Korthikanti et al., MLSys 2023 ("Reducing Activation Recomputation in Large Transformer Models"), abstract; layout and batch of MT-NLG (Smith et al., 2022)';
const DLE_RN50 = 'NVIDIA DeepLearningExamples, PyTorch/Classification/ConvNets/resnet50v1.5 README, "Training performance" (pytorch-21.03; batch/GPU from configs.yml)';
const MEGATRON = 'Narayanan et al., SC\'21 (Megatron-LM), Table 1';
const DLE_BERT = 'NVIDIA DeepLearningExamples, PyTorch/LanguageModeling/BERT README, "Training performance results" (pytorch:21.11-py3)';
const BERT_A100 = `${DLE_BERT}, "Pre-training NVIDIA DGX A100 (8x A100 80GB)": batch/GPU 128 TF32, 256 AMP (phase 1), 16 TF32, 32 AMP (phase 2)`;
// That table's "Batch size / GPU" column holds train_batch_size, the per-GPU batch before run_pretraining.py divides it by the accumulation steps.
const BERT_V100 = `${DLE_BERT}, "Pre-training NVIDIA DGX-1 With 32G": batch/GPU 4096 (phase 1), 2048 (phase 2) ÷ accumulation steps 128 FP32, 64 AMP (phase 1), 512 FP32, 256 AMP (phase 2)`;
/**
 * The same table's own scaling, 8 GPUs ÷ 8 × 1 GPU: 7248 / 7504 = 96.6% at TF32 but 16621 / 19760 = 84.1% at AMP.
 * Native AMP keeps fp32 parameters, so DDP all-reduces the same fp32 gradients in both runs: the extra loss follows the
 * per-GPU image rate, not the gradient traffic WAP models.
 */
const RN50_AMP_SCALING = 'published 8-GPU scaling is 84% at AMP vs 97% at TF32 with the same fp32 gradient all-reduce: the loss follows the image rate (input pipeline), which WAP does not model';
/**
 * The same README as of the pytorch:20.06-py3 container, before LDDL and before the dense-sequence MLM head (its
 * run_pretraining.py lists neither option): every phase-2 sequence is padded to 512 and the head runs on every
 * token, as modelled. Micro-batches are its "Batch size / GPU" ÷ "Accumulation steps".
 */
const BERT_2006 = 'NVIDIA DeepLearningExamples, PyTorch/LanguageModeling/BERT README, "Training performance results" (pytorch:20.06-py3)';
const BERT_2006_V100 = `${BERT_2006}, "Pre-training NVIDIA DGX-1 With 32G": micro-batch 8 FP32, 16 AMP (phase 1), 2 FP32, 4 AMP (phase 2)`;
const BERT_2006_A100 = `${BERT_2006}, "Pre-training NVIDIA DGX A100 (8x A100 40GB)": micro-batch 54 TF32, 64 AMP (phase 1), 8 TF32, 16 AMP (phase 2)`;
/**
 * 20.06 was the first container for the A100. On the same model and sequence length (phase 1, no binning), the 21.11
 * container ran 317 vs 234 seq/s at TF32 and 580 vs 415 at AMP on one GPU: 1.35-1.40x. Not all of it is software:
 * 21.11 ran on the 80 GB part (2,039 vs 1,555 GB/s) with micro-batches 128/256 for 54/64, which the model itself
 * prices at 1.11x (TF32) and 1.17x (AMP); the ~1.2x left is the containers' difference.
 */
const FIRST_A100_CONTAINER = 'first A100 container (20.06): 21.11 ran phase 1 (no binning) 1.35x faster at TF32, 1.40x at AMP, on the 80 GB A100 with larger micro-batches (1.11x, 1.17x of that predicted)';
/**
 * The 21.11 FP32 phase-1 rows on V100: the same GPU ran 50 seq/s in 21.11 against 40 in 20.06 (micro-batch 32 vs 8),
 * 1.25x, where WAP predicts 39.4 vs 40.0 (0.99x). Part of it is the model: 21.11's run_pretraining.py runs the MLM
 * head on the masked tokens only (dense sequence output, on unless --no_dense_sequence_output), about 9% of the FLOPs
 * of the BertForPreTraining WAP plans. The AMP rows of the same table carry the same difference.
 */
const DENSE_SEQUENCE_OUTPUT = '21.11 ran FP32 phase 1 on V100 1.25x faster than 20.06 (50 vs 40 seq/s), WAP predicts 0.99x; part is its dense sequence output (MLM head on masked tokens only, ~9% fewer FLOPs than the BertForPreTraining WAP plans)';
/** The Jan 2022 changelog: "Binned pretraining for phase2 with LDDL using a bin size of 64". */
const BINNED = 'lengths: Krell et al. 2021 Wikipedia histogram (mean 256 of 512 tokens), LDDL bins of 64 padded to a multiple of 8';

export default async function (): Promise<Array<{ title: string; rows: Array<Record<string, string | number>> }>> {
  const alexnet = () => exampleModel('examples/pytorch/alexnet.py');
  const rn50 = () => exampleModel('examples/pytorch/resnet.py', 'resnet50');
  const pcie4 = () => resolveCluster(undefined);
  const v100 = () => resolveCluster('dgx1-v100');
  const a100 = () => resolveCluster('a100x8');
  const cases: Row[] = [
    { case: 'AlexNet b128, 1× TITAN Xp, fp32', published: 2560, unit: 'img/s', source: WAP, predict: imagesPerSec(alexnet, pcie4, 128, 1, 'fp32') },
    { case: 'AlexNet b128, 4× TITAN Xp DP (PCIe, no P2P), fp32', published: 1473, unit: 'img/s', source: WAP, predict: imagesPerSec(alexnet, pcie4, 128, 4, 'fp32') },
    { case: 'ResNet-50 v1.5 b112, 1× V100 16GB, FP32', published: 367, unit: 'img/s', source: `${DLE_RN50}, DGX-1 16GB`, predict: imagesPerSec(rn50, v100, 112, 1, 'fp32') },
    { case: 'ResNet-50 v1.5 b112/GPU, 8× V100 16GB (DGX-1), FP32', published: 2855, unit: 'img/s', source: `${DLE_RN50}, DGX-1 16GB`, predict: imagesPerSec(rn50, v100, 8 * 112, 8, 'fp32') },
    { case: 'ResNet-50 v1.5 b256, 1× V100 16GB, AMP', published: 1200, unit: 'img/s', source: `${DLE_RN50}, DGX-1 16GB`, predict: imagesPerSec(rn50, v100, 256, 1, 'fp16', 'channels_last') },
    { case: 'ResNet-50 v1.5 b256/GPU, 8× V100 16GB (DGX-1), AMP', published: 8322, unit: 'img/s', source: `${DLE_RN50}, DGX-1 16GB`, predict: imagesPerSec(rn50, v100, 8 * 256, 8, 'fp16', 'channels_last') },
    { case: 'ResNet-50 v1.5 b256, 1× A100 80GB, TF32', published: 938, unit: 'img/s', source: `${DLE_RN50}, DGX A100`, predict: imagesPerSec(rn50, a100, 256, 1, 'tf32') },
    { case: 'ResNet-50 v1.5 b256/GPU, 8× A100 80GB (DGX A100), TF32', published: 7248, unit: 'img/s', source: `${DLE_RN50}, DGX A100`, predict: imagesPerSec(rn50, a100, 8 * 256, 8, 'tf32') },
    { case: 'ResNet-50 v1.5 b256, 1× A100 80GB, AMP', published: 2470, unit: 'img/s', source: `${DLE_RN50}, DGX A100`, predict: imagesPerSec(rn50, a100, 256, 1, 'fp16', 'channels_last') },
    { case: 'ResNet-50 v1.5 b256/GPU, 8× A100 80GB (DGX A100), AMP', published: 16621, unit: 'img/s', source: `${DLE_RN50}, DGX A100`, note: RN50_AMP_SCALING, predict: imagesPerSec(rn50, a100, 8 * 256, 8, 'fp16', 'channels_last') },
    { case: 'GPT 1.7B (24×2304, 24 heads), 32× A100, TP1 PP1, b512, fp16', published: 137, unit: 'TFLOP/s/GPU', source: MEGATRON, predict: megatron(24, 2304, 24, 32, 512, { tensorParallel: 1, pipelineStages: 1, dataParallel: 32, recompute: 'full' }) },
    { case: 'GPT 18B (40×6144, 48 heads), 256× A100, TP8 PP1, b1024, fp16', published: 135, unit: 'TFLOP/s/GPU', source: MEGATRON, predict: megatron(40, 6144, 48, 256, 1024, { tensorParallel: 8, pipelineStages: 1, dataParallel: 32, recompute: 'full' }) },
    { case: 'GPT 145B (80×12288, 96 heads), 1536× A100, TP8 PP8, b2304, fp16', published: 148, unit: 'TFLOP/s/GPU', source: MEGATRON, predict: megatron(80, 12288, 96, 1536, 2304, { tensorParallel: 8, pipelineStages: 8, dataParallel: 24, recompute: 'full' }) },
    { case: 'GPT 1T (128×25600, 160 heads), 3072× A100, TP8 PP64, b3072, fp16', published: 163, unit: 'TFLOP/s/GPU', source: MEGATRON, predict: megatron(128, 25600, 160, 3072, 3072, { tensorParallel: 8, pipelineStages: 64, dataParallel: 6, recompute: 'full' }) },
    { case: 'GPT 530B (105×20480, 128 heads), 2240× A100, TP8+SP PP35 DP8, selective recompute, b1920, fp16', published: 54.2, unit: 'MFU %', source: KORTHIKANTI, predict: megatron(105, 20480, 128, 2240, 1920, { tensorParallel: 8, pipelineStages: 35, dataParallel: 8, microBatch: 1, sequenceParallel: true, recompute: 'selective' }, 'mfu') },
    { case: 'GPT 530B (105×20480, 128 heads), 2240× A100, TP8 PP35 DP8, full recompute, b1920, fp16', published: 42.1, unit: 'MFU %', source: KORTHIKANTI, predict: megatron(105, 20480, 128, 2240, 1920, { tensorParallel: 8, pipelineStages: 35, dataParallel: 8, microBatch: 1, recompute: 'full' }, 'mfu') },
    ...megatronMoeRows(),
    { case: 'Llama 2 13B (seq 4096) FSDP2 64× A100, local batch 2, no recompute, bf16', published: 2162, unit: 'tokens/s/GPU', source: TORCHTITAN, predict: torchtitanTokensPerSec(() => llama(5120, 13824, 40, 40, 40, 32000, 4096), 4096, 2, 'none') },
    { case: 'Llama 2 70B (seq 4096) FSDP2 64× A100, local batch 2, full recompute, bf16', published: 353, unit: 'tokens/s/GPU', source: TORCHTITAN, predict: torchtitanTokensPerSec(() => llama(8192, 28672, 80, 64, 8, 32000, 4096), 4096, 2, 'full') },
    { case: 'Llama 3 70B (seq 8192) FSDP2 64× A100, local batch 1, full recompute, bf16', published: 331, unit: 'tokens/s/GPU', source: TORCHTITAN, predict: torchtitanTokensPerSec(() => llama(8192, 28672, 80, 64, 8, 128256, 8192), 8192, 1, 'full') },
    { case: 'BERT-large phase 1 (seq 128) b128×64 acc, 1× A100 80GB, TF32', published: 317, unit: 'seq/s', source: BERT_A100, predict: sequencesPerSec(128, a100, 128, 8192, 1, 'tf32') },
    { case: 'BERT-large phase 1 (seq 128) b128×64 acc/GPU, 8× A100 80GB (DGX A100), TF32', published: 2505, unit: 'seq/s', source: BERT_A100, predict: sequencesPerSec(128, a100, 128, 8192, 8, 'tf32') },
    { case: 'BERT-large phase 1 (seq 128) b256×32 acc, 1× A100 80GB, AMP', published: 580, unit: 'seq/s', source: BERT_A100, predict: sequencesPerSec(128, a100, 256, 8192, 1, 'fp16') },
    { case: 'BERT-large phase 1 (seq 128) b256×32 acc/GPU, 8× A100 80GB (DGX A100), AMP', published: 4591, unit: 'seq/s', source: BERT_A100, predict: sequencesPerSec(128, a100, 256, 8192, 8, 'fp16') },
    { case: 'BERT-large phase 2 (seq 512) b16×256 acc, 1× A100 80GB, TF32', published: 110, unit: 'seq/s', source: `${BERT_A100}; ${BINNED}`, predict: sequencesPerSec(512, a100, 16, 4096, 1, 'tf32', 'lddl') },
    { case: 'BERT-large phase 2 (seq 512) b16×256 acc/GPU, 8× A100 80GB (DGX A100), TF32', published: 860, unit: 'seq/s', source: `${BERT_A100}; ${BINNED}`, predict: sequencesPerSec(512, a100, 16, 4096, 8, 'tf32', 'lddl') },
    { case: 'BERT-large phase 2 (seq 512) b32×128 acc, 1× A100 80GB, AMP', published: 210, unit: 'seq/s', source: `${BERT_A100}; ${BINNED}`, predict: sequencesPerSec(512, a100, 32, 4096, 1, 'fp16', 'lddl') },
    { case: 'BERT-large phase 2 (seq 512) b32×128 acc/GPU, 8× A100 80GB (DGX A100), AMP', published: 1657, unit: 'seq/s', source: `${BERT_A100}; ${BINNED}`, predict: sequencesPerSec(512, a100, 32, 4096, 8, 'fp16', 'lddl') },
    { case: 'BERT-large phase 1 (seq 128) b32×128 acc, 1× V100 32GB, FP32', published: 50, unit: 'seq/s', source: BERT_V100, note: DENSE_SEQUENCE_OUTPUT, predict: sequencesPerSec(128, dgx1V100x32GB, 32, 4096, 1, 'fp32') },
    { case: 'BERT-large phase 1 (seq 128) b32×128 acc/GPU, 8× V100 32GB (DGX-1), FP32', published: 387, unit: 'seq/s', source: BERT_V100, note: DENSE_SEQUENCE_OUTPUT, predict: sequencesPerSec(128, dgx1V100x32GB, 32, 4096, 8, 'fp32') },
    { case: 'BERT-large phase 1 (seq 128) b64×64 acc, 1× V100 32GB, AMP', published: 224, unit: 'seq/s', source: BERT_V100, predict: sequencesPerSec(128, dgx1V100x32GB, 64, 4096, 1, 'fp16') },
    { case: 'BERT-large phase 1 (seq 128) b64×64 acc/GPU, 8× V100 32GB (DGX-1), AMP', published: 1746, unit: 'seq/s', source: BERT_V100, predict: sequencesPerSec(128, dgx1V100x32GB, 64, 4096, 8, 'fp16') },
    { case: 'BERT-large phase 2 (seq 512) b4×512 acc, 1× V100 32GB, FP32', published: 19, unit: 'seq/s', source: `${BERT_V100}; ${BINNED}`, predict: sequencesPerSec(512, dgx1V100x32GB, 4, 2048, 1, 'fp32', 'lddl') },
    { case: 'BERT-large phase 2 (seq 512) b4×512 acc/GPU, 8× V100 32GB (DGX-1), FP32', published: 149.6, unit: 'seq/s', source: `${BERT_V100}; ${BINNED}`, predict: sequencesPerSec(512, dgx1V100x32GB, 4, 2048, 8, 'fp32', 'lddl') },
    { case: 'BERT-large phase 2 (seq 512) b8×256 acc, 1× V100 32GB, AMP', published: 75, unit: 'seq/s', source: `${BERT_V100}; ${BINNED}`, predict: sequencesPerSec(512, dgx1V100x32GB, 8, 2048, 1, 'fp16', 'lddl') },
    { case: 'BERT-large phase 2 (seq 512) b8×256 acc/GPU, 8× V100 32GB (DGX-1), AMP', published: 586, unit: 'seq/s', source: `${BERT_V100}; ${BINNED}`, predict: sequencesPerSec(512, dgx1V100x32GB, 8, 2048, 8, 'fp16', 'lddl') },
    { case: 'BERT-large phase 1 (seq 128) mb8, 1x V100 32GB, FP32, 20.06', published: 40, unit: 'seq/s', source: BERT_2006_V100, predict: sequencesPerSec(128, dgx1V100x32GB, 8, 65536, 1, 'fp32') },
    { case: 'BERT-large phase 1 (seq 128) mb8/GPU, 8x V100 32GB (DGX-1), FP32, 20.06', published: 317, unit: 'seq/s', source: BERT_2006_V100, predict: sequencesPerSec(128, dgx1V100x32GB, 8, 8192, 8, 'fp32') },
    { case: 'BERT-large phase 1 (seq 128) mb16, 1x V100 32GB, AMP, 20.06', published: 158, unit: 'seq/s', source: BERT_2006_V100, predict: sequencesPerSec(128, dgx1V100x32GB, 16, 65536, 1, 'fp16') },
    { case: 'BERT-large phase 1 (seq 128) mb16/GPU, 8x V100 32GB (DGX-1), AMP, 20.06', published: 1203, unit: 'seq/s', source: BERT_2006_V100, predict: sequencesPerSec(128, dgx1V100x32GB, 16, 8192, 8, 'fp16') },
    { case: 'BERT-large phase 2 (seq 512, padded) mb2, 1x V100 32GB, FP32, 20.06', published: 9, unit: 'seq/s', source: BERT_2006_V100, predict: sequencesPerSec(512, dgx1V100x32GB, 2, 32768, 1, 'fp32') },
    { case: 'BERT-large phase 2 (seq 512, padded) mb2/GPU, 8x V100 32GB (DGX-1), FP32, 20.06', published: 72, unit: 'seq/s', source: BERT_2006_V100, predict: sequencesPerSec(512, dgx1V100x32GB, 2, 4096, 8, 'fp32') },
    { case: 'BERT-large phase 2 (seq 512, padded) mb4, 1x V100 32GB, AMP, 20.06', published: 33, unit: 'seq/s', source: BERT_2006_V100, predict: sequencesPerSec(512, dgx1V100x32GB, 4, 32768, 1, 'fp16') },
    { case: 'BERT-large phase 2 (seq 512, padded) mb4/GPU, 8x V100 32GB (DGX-1), AMP, 20.06', published: 262, unit: 'seq/s', source: BERT_2006_V100, predict: sequencesPerSec(512, dgx1V100x32GB, 4, 4096, 8, 'fp16') },
    { case: 'BERT-large phase 1 (seq 128) mb54, 1x A100 40GB, TF32, 20.06', published: 234, unit: 'seq/s', source: BERT_2006_A100, note: FIRST_A100_CONTAINER, predict: sequencesPerSec(128, dgxA100x40GB, 54, 65232, 1, 'tf32') },
    { case: 'BERT-large phase 1 (seq 128) mb54/GPU, 8x A100 40GB (DGX A100), TF32, 20.06', published: 1777, unit: 'seq/s', source: BERT_2006_A100, note: FIRST_A100_CONTAINER, predict: sequencesPerSec(128, dgxA100x40GB, 54, 8154, 8, 'tf32') },
    { case: 'BERT-large phase 1 (seq 128) mb64, 1x A100 40GB, AMP, 20.06', published: 415, unit: 'seq/s', source: BERT_2006_A100, note: FIRST_A100_CONTAINER, predict: sequencesPerSec(128, dgxA100x40GB, 64, 65536, 1, 'fp16') },
    { case: 'BERT-large phase 1 (seq 128) mb64/GPU, 8x A100 40GB (DGX A100), AMP, 20.06', published: 3231, unit: 'seq/s', source: BERT_2006_A100, note: FIRST_A100_CONTAINER, predict: sequencesPerSec(128, dgxA100x40GB, 64, 8192, 8, 'fp16') },
    { case: 'BERT-large phase 2 (seq 512, padded) mb8, 1x A100 40GB, TF32, 20.06', published: 41, unit: 'seq/s', source: BERT_2006_A100, note: FIRST_A100_CONTAINER, predict: sequencesPerSec(512, dgxA100x40GB, 8, 32768, 1, 'tf32') },
    { case: 'BERT-large phase 2 (seq 512, padded) mb8/GPU, 8x A100 40GB (DGX A100), TF32, 20.06', published: 318, unit: 'seq/s', source: BERT_2006_A100, note: FIRST_A100_CONTAINER, predict: sequencesPerSec(512, dgxA100x40GB, 8, 4096, 8, 'tf32') },
    { case: 'BERT-large phase 2 (seq 512, padded) mb16, 1x A100 40GB, AMP, 20.06', published: 78, unit: 'seq/s', source: BERT_2006_A100, note: FIRST_A100_CONTAINER, predict: sequencesPerSec(512, dgxA100x40GB, 16, 32768, 1, 'fp16') },
    { case: 'BERT-large phase 2 (seq 512, padded) mb16/GPU, 8x A100 40GB (DGX A100), AMP, 20.06', published: 620, unit: 'seq/s', source: BERT_2006_A100, note: FIRST_A100_CONTAINER, predict: sequencesPerSec(512, dgxA100x40GB, 16, 4096, 8, 'fp16') },
  ];
  const rows: Array<Record<string, string | number>> = [];
  const ratios: number[] = [];
  // Rows whose published run did other work than the modelled one (a note says what) are also counted apart.
  const unnotedRatios: number[] = [];
  for (const c of cases) {
    let predicted: number | string;
    try {
      predicted = await c.predict();
    } catch (err) {
      predicted = `error: ${err instanceof Error ? err.message : String(err)}`;
    }
    // "1234 (memory model: …)" still predicts a throughput; its ratio counts, the note says what else is wrong.
    const leading = typeof predicted === 'string' ? /^(\d+(?:\.\d+)?) \(memory model/.exec(predicted) : null;
    const value = typeof predicted === 'number' ? predicted : leading ? Number(leading[1]) : undefined;
    const ratio = value !== undefined && value > 0 ? value / c.published : undefined;
    if (ratio !== undefined) ratios.push(ratio);
    if (ratio !== undefined && !c.note) unnotedRatios.push(ratio);
    rows.push({
      case: c.case,
      published: c.published,
      unit: c.unit,
      predicted: typeof predicted === 'number' ? Math.round(predicted * 10) / 10 : predicted,
      ratio: ratio !== undefined ? ratio.toFixed(2) : '—',
      within20: ratio !== undefined ? (Math.abs(ratio - 1) <= 0.2 ? 'yes' : 'NO') : '—',
      source: c.source,
      note: c.note ?? '',
    });
  }
  const sorted = [...ratios].sort((a, b) => a - b);
  const median = sorted.length ? sorted[Math.floor(sorted.length / 2)] : NaN;
  const medianAbs = ratios.length ? [...ratios.map((r) => Math.abs(r - 1))].sort((a, b) => a - b)[Math.floor(ratios.length / 2)] : NaN;
  const summary = [
    { measure: 'rows with a prediction', value: `${ratios.length} of ${cases.length}` },
    { measure: 'rows within ±20%', value: `${ratios.filter((r) => Math.abs(r - 1) <= 0.2).length} of ${ratios.length}` },
    { measure: 'median ratio', value: Number.isFinite(median) ? median.toFixed(2) : '—' },
    { measure: 'median |ratio − 1|', value: Number.isFinite(medianAbs) ? `${(medianAbs * 100).toFixed(0)}%` : '—' },
    { measure: 'rows within ±20%, rows with a note left out', value: `${unnotedRatios.filter((r) => Math.abs(r - 1) <= 0.2).length} of ${unnotedRatios.length}` },
  ];
  return [
    { title: 'Fidelity: predictions vs published training measurements (goal: every row within ±20%, median within 10%)', rows },
    { title: 'Fidelity summary', rows: summary },
  ];
}
