/**
 * Fidelity rows for mixture-of-experts training: Megatron-Core's published Mixtral 8x7B throughput, predicted on the
 * graph WAP's Hugging Face catalogue builds from Mixtral's config.json, with Megatron's layout pinned.
 */
import { join } from 'node:path';
import type { AnalyzedModel } from '../src/core/ir';
import { analyzeSource } from '../src/frontends/index';
import { parseClusterSpec, planModel, resolveCluster, type ClusterSpec } from '../src/planner/index';
import type { ParallelPins } from '../src/protocol/plan';
import type { PlanOptions } from '../src/protocol/planOptions';
import { pending, type Row } from './fidelityRows';

const root = join(__dirname, '..');

/**
 * Megatron-Core's MoE README (megatron/core/transformer/moe/README.md): "Mixtral 8X7B bf16 training to achieve
 * 438 TFLOPS as of MCore v0.8", and under "Reference Best Parallel Mapping" the v0.8 mapping for Mixtral 8x7B
 * (dropless, all-to-all dispatcher, BF16): 64 GPUs, sequence 4096, TP1 EP8 PP4 VP8, micro-batch 1, global batch 256,
 * on 8×H100 80GB servers with 4th-generation NVLink and 8×400 Gbit/s InfiniBand.
 */
const MCORE_MOE = 'Megatron-Core MoE README (megatron/core/transformer/moe): 438 TFLOPS for Mixtral 8x7B as of MCore v0.8, with its v0.8 reference mapping (64 H100, seq 4096, TP1 EP8 PP4 VP8, MBS 1, GBS 256, dropless, all-to-all)';

/**
 * The README's run is dropless: every expert takes whatever its router sends it, and the step waits for the busiest
 * one, where WAP prices balanced routing (each expert T·k/E tokens). How much that costs is measured elsewhere:
 * Megatron-MoE-ModelZoo's Qwen3-235B-A22B long-context table (best_practice/Qwen3) reports 295 TFLOPS with forced
 * balance and 237 dropless on the same 32 H100 nodes at 16K tokens, 1.24x.
 */
const DROPLESS = 'dropless routing: the busiest expert sets the pace where WAP prices balanced routing (T·k/E tokens each); Megatron-MoE-ModelZoo measures forced balance 1.24x faster than dropless (Qwen3-235B, 295 vs 237 TFLOPS); Megatron also fuses SwiGLU and RoPE, priced here as separate element-wise kernels';

/** Eight DGX H100 servers as the README describes them: the h100x8 preset's GPU and NVLink, 8 × 400 Gbit/s InfiniBand per server (50 GB/s per GPU). */
function dgxH100(nodes: number): ClusterSpec {
  const base = resolveCluster('h100x8');
  const { index: _i, node: _n, ...gpu } = base.gpus[0];
  return parseClusterSpec({ name: `${nodes}x DGX H100 (NDR IB)`, nodes, gpusPerNode: 8, gpu, intraNode: base.intraNode, interNode: { bandwidthGBs: 50, latencyUs: 5, name: 'ib' } }, 'bench:dgx-h100');
}

/**
 * Mixtral 8x7B as transformers' MixtralForCausalLM builds it from the checkpoint's config.json, at `seq` tokens.
 * Megatron-Core runs its RMSNorms as Transformer Engine's fused kernel (TENorm), not transformers' Python module,
 * so the norms are priced fused: the same graph, the kernel Megatron launches.
 */
async function mixtral8x7b(seq: number): Promise<AnalyzedModel> {
  const src = "from transformers import AutoModelForCausalLM\nmodel = AutoModelForCausalLM.from_pretrained('./test/fixtures/huggingface/mixtral-8x7b')\n";
  const analyzed = await analyzeSource(join(root, 'bench/mixtral.py'), src, { sequenceLength: seq });
  const model = analyzed.models.find((m) => m.name === 'model');
  if (!model) throw new Error('no Mixtral model from the fixture config');
  return { ...model, layers: model.layers.map((l) => (l.attrs.eagerFp32 === true ? { ...l, attrs: { ...l.attrs, eagerFp32: false } } : l)) };
}

/** Megatron's MoE shape, as its reported TFLOP/s count it: hidden, heads, query groups, FFN width, top-k, layers, vocabulary. */
interface MoeShape {
  hidden: number;
  heads: number;
  groups: number;
  ffn: number;
  topK: number;
  layers: number;
  vocab: number;
}

/**
 * Model FLOPs of one step as Megatron-LM reports TFLOP/s (training.py, num_floating_point_operations): three passes of
 * two FLOPs per multiply-add, per token and layer the query and output projections (2h²), the key and value ones at
 * the query-group share (2h²·g/a), the full-length scores and context (2·s·h; causal masking not subtracted), the top-k
 * experts' SwiGLU MLPs (3·h·f each), and once per token the logits (h·V).
 */
function megatronMoeFlops(batch: number, seq: number, m: MoeShape): number {
  const perLayer = 2 * m.hidden * m.hidden * (1 + m.groups / m.heads) + 2 * seq * m.hidden + 3 * m.hidden * m.ffn * m.topK;
  return 6 * batch * seq * (m.layers * perLayer + m.hidden * m.vocab);
}

function megatronMoeTflops(model: () => Promise<AnalyzedModel>, shape: MoeShape, seq: number, gpus: number, batch: number, pins: ParallelPins): () => Promise<number | string> {
  return async () => {
    // Megatron's distributed optimizer (ZeRO-1) with bf16, fp32 master weights and, at bf16, fp32 gradients (arguments.py
    // sets accumulate_allreduce_grads_in_fp32), flash attention (TE), no recompute.
    const opts: PlanOptions = { batch, objective: 'throughput', strategies: 'all', optimizer: 'adam', gpus, maxGpus: gpus, precision: 'bf16', precisionSource: 'bench', ampStyle: 'fp32-gradients', ampStyleSource: 'Megatron-LM at bf16', attentionKernel: 'fused', pins: { zeroStage: 1, recompute: 'none', ...pins } };
    const out = planModel(await model(), dgxH100(gpus / 8), opts);
    const why = pending(out, opts);
    if (why || !out.feasible) return why ?? 0;
    return megatronMoeFlops(batch, seq, shape) / (out.plan.stepTimeMs / 1000) / gpus / 1e12;
  };
}

export function megatronMoeRows(): Row[] {
  const mixtral = { hidden: 4096, heads: 32, groups: 8, ffn: 14336, topK: 2, layers: 32, vocab: 32000 };
  return [
    {
      case: 'Mixtral 8x7B (seq 4096), 64× H100, TP1 EP8 PP4 VP8, MBS1 b256, bf16, Megatron-Core v0.8',
      published: 438,
      unit: 'TFLOP/s/GPU',
      source: MCORE_MOE,
      note: DROPLESS,
      predict: megatronMoeTflops(() => mixtral8x7b(4096), mixtral, 4096, 64, 256, { tensorParallel: 1, expertParallel: 8, pipelineStages: 4, virtualStages: 8, microBatch: 1 }),
    },
  ];
}
